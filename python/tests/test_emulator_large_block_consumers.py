"""The sm_90a backward at block size 128 with one consumer warpgroup per query half
(`--large-block-consumers=2`, issue 20; docs/block-sizes.md, "Two consumers"), in
block-attn-emulate against the float64 reference.

Both consumers take every slot of the load ring; consumer i makes query half i's P, dS and dQ
and hands P_i and dS_i to the other through the one-slot ring "pds<i>", then makes key half
i's dV and dK from both halves' P and dS. The emulator checks the protocol (a buffer
overwritten while a product still reads it is reported) and the numerics: on one SM (one CTA
walks every block and reuses every ring's slot) and on several, on empty and one-token
sequences, partial blocks around the block and its half (63-65, 127-129, 191-193), a long
sequence and tiny ones; every gradient element written, and the gradients miss the block-64
reference.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_causal_lse import check_outputs

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 300, 2, 0, 3, 5, 1)

CASES = [
    em.Case("backward", 128, "bf16", block_size=128),
    em.Case("backward", 128, "f16", block_size=128),
    em.Case("backward", 64, "bf16", block_size=128),
    em.Case("backward", 64, "f16", block_size=128),
    em.Case("backward", 96, "bf16", block_size=128),
    em.Case("backward", 32, "f16", block_size=128),
    em.Case("backward", 128, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 64, "f16", causal=True, block_size=128),
]

FLAGS = ["--large-block-consumers=2"]

# With l2-prefetch=on the producer asks for the next block's tiles into L2 before it waits for
# the slot (the block's second query half is loaded 64 rows in: its coordinates are computed
# before the acquire); for the two consumers and for the one-consumer kernel.
L2_CASES = [
    (em.Case("backward", 128, "bf16", block_size=128), FLAGS + ["--l2-prefetch=on"]),
    (em.Case("backward", 64, "f16", causal=True, lse=True, block_size=128), FLAGS + ["--l2-prefetch=on"]),
    (em.Case("backward", 128, "f16", block_size=128), ["--l2-prefetch=on"]),
]


def compile_case(case: em.Case, out: pathlib.Path, flags=FLAGS) -> pathlib.Path:
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), *flags, "-o", str(out), "--quiet"],
                   check=True)
    return out / f"k_{case.name}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("sms", [1, 2, 3])
def test_large_block_consumers_match_reference(case, sms, tmp_path):
    check_case(case, FLAGS, sms, tmp_path)


@pytest.mark.parametrize("case,flags", L2_CASES, ids=lambda x: x.name if isinstance(x, em.Case) else "-".join(x))
@pytest.mark.parametrize("sms", [1, 3])
def test_large_block_l2_prefetch_matches_reference(case, flags, sms, tmp_path):
    check_case(case, flags, sms, tmp_path)


def check_case(case, flags, sms, tmp_path):
    base = compile_case(case, tmp_path / "k", flags)
    tensors = em.make_problem(case, lengths=LENGTHS)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms, seed=sms)
    check_outputs(case, tensors, out)
    as64 = em.Case(case.kind, case.head_dim, case.dtype, causal=case.causal, lse=case.lse)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []


def test_large_block_consumers_refuse_rotary(tmp_path):
    """Rotary embeddings rotate the slot in place: two consumers sharing it are refused."""
    case = em.Case("backward", 128, "bf16", "interleaved", block_size=128)
    run = subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), *FLAGS,
                          "-o", str(tmp_path / "k"), "--quiet"], capture_output=True, text=True)
    assert run.returncode != 0
    assert "large-block-consumers=2 applies to the sm_90a backward at block size 128" in run.stderr
