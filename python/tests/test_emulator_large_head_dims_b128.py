"""Head dims 192 and 256 at block size 128 (issue 20; docs/head-dims.md), the forward and the
backward on both chips, in block-attn-emulate against the float64 reference.

A 128-token block is one work item whose two 64-row query halves each see all of its keys
(S is 64 x 128 at the full depth); each half's O is made in 64-column chunks of the head dim
(P times a 128 x 64 view of V) and stored at the half's rows and the chunk's column. On
sm_90a one consumer runs both halves from one slot; on sm_100a softmax replica r drains half
r's chunks of O from tensor memory. The lengths: empty and one-token sequences, partial
blocks around the block (127-129) and its half (63-65), 191-193, a long sequence and tiny
ones; on one SM (one persistent CTA takes every block) and three. Every output element is
written, and the outputs miss the block-64 reference (the block size matters).

The sm_90a backward streams a block's q, k, v and dO in 64-column chunk slots, three passes a
block (q and k for S, v and dO for dP, q, k and dO for the gradients), to two consumers, one per
query half, that hand each other P and dS; on one SM one persistent CTA reuses every slot of
every ring across all blocks. The sm_100a backward streams the same chunk slots to its MMA
warp, which accumulates both query halves' S and dP over the chunks in tensor memory (two slots
of a ring held at once) and makes each gradient in 64-column chunks; softmax replica r takes
query half r and key half r (emulated only: no Blackwell GPU has run it).
"""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 127, 128, 129, 700, 2, 0, 3, 64, 65, 191, 193, 1, 63)

CASES = [
    ("sm_90a", em.Case("forward", 192, "bf16", block_size=128)),
    ("sm_90a", em.Case("forward", 256, "f16", block_size=128)),
    ("sm_100a", em.Case("forward", 192, "f16", block_size=128)),
    ("sm_100a", em.Case("forward", 256, "bf16", block_size=128)),
]
BACKWARD_CASES = [
    ("sm_90a", em.Case("backward", 192, "bf16", block_size=128)),
    ("sm_90a", em.Case("backward", 256, "f16", block_size=128)),
    ("sm_100a", em.Case("backward", 256, "bf16", block_size=128)),
    ("sm_100a", em.Case("backward", 192, "f16", block_size=128)),
]
# Causal blocks and the log-sum-exp.
MODE_CASES = [
    ("sm_90a", em.Case("forward", 256, "bf16", causal=True, lse=True, block_size=128)),
    ("sm_90a", em.Case("forward", 192, "f16", causal=True, block_size=128)),
    ("sm_90a", em.Case("forward", 192, "bf16", lse=True, block_size=128)),
    ("sm_90a", em.Case("backward", 256, "bf16", causal=True, lse=True, block_size=128)),
    ("sm_90a", em.Case("backward", 192, "f16", lse=True, block_size=128)),
    ("sm_100a", em.Case("backward", 192, "bf16", causal=True, lse=True, block_size=128)),
    ("sm_100a", em.Case("backward", 256, "f16", causal=True, block_size=128)),
    ("sm_100a", em.Case("backward", 256, "bf16", lse=True, block_size=128)),
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    root = tmp_path_factory.mktemp("emulated-large-head-dims-b128")
    cache = {}

    def get(chip: str, case: em.Case) -> pathlib.Path:
        if (chip, case) not in cache:
            out = root / chip
            subprocess.run([find_compiler(), *case.compiler_flags(chip), "-o", str(out), "--quiet"], check=True)
            cache[chip, case] = out / f"k_{case.name}"
        return cache[chip, case]

    return get


def check(chip, case, sms, kernels):
    tensors = em.make_problem(case, lengths=LENGTHS)
    base = kernels(chip, case)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all(), name
    as64 = dataclasses.replace(case, block_size=64)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []
    return out, tensors


@pytest.mark.parametrize("chip,case", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
@pytest.mark.parametrize("sms", [1, 3])
def test_forward_matches_reference(chip, case, sms, kernels):
    check(chip, case, sms, kernels)


@pytest.mark.parametrize("chip,case", MODE_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_causal_and_lse_match_reference(chip, case, kernels):
    out, tensors = check(chip, case, 3, kernels)
    if case.causal:
        # The causal mask matters, in the second query half too (row_offset(64)).
        plain = dataclasses.replace(case, causal=False)
        assert em.check_close(case, out, em.reference_outputs(plain, tensors)) != []
    if case.kind == "backward" and case.lse:
        # So does dlse (the reference without it is far).
        without = dataclasses.replace(case, lse=False)
        assert em.check_close(case, out, em.reference_outputs(without, tensors)) != []


@pytest.mark.parametrize("chip,case", BACKWARD_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
@pytest.mark.parametrize("sms", [1, 3])
def test_backward_matches_reference(chip, case, sms, kernels):
    check(chip, case, sms, kernels)
