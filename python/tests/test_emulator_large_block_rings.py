"""The sm_90a backward at block size 128 with two consumers and the load slot split into two
rings (`--large-block-rings=2`, issue 20; docs/block-sizes.md, "Two rings"), in
block-attn-emulate against the float64 reference.

The producer loads q's halves and k into a slot of "qk", then v and dO's halves into a slot of
"vdo"; each consumer makes its half's S (from "qk"), then dP (taking "vdo" only there), dS,
dQ, then dK (giving "qk" back after its product) before dV (giving "vdo" and the other's P and
dS back after its product). The emulator checks the protocol (a buffer overwritten while a
product still reads it, or read before its copy landed, is reported) and the numerics: on one
SM (one CTA walks every block and reuses every ring's slot), two and three, on empty and
one-token sequences, partial blocks around the block and its half (63-65, 127-129, 191-193),
a long sequence and tiny ones; every gradient element written, and the gradients miss the
block-64 reference. The two rings change when the slots are given back, not the arithmetic:
the gradients equal the one-ring kernel's bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_large_block_consumers import LENGTHS, check_case, compile_case

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

FLAGS = ["--large-block-rings=2"]

# Head dims 128 and 96 have one slot of each ring, 64 two, 32 four; causal with dlse at 128
# (one consumer by default there: the rings ask for two), causal at 64, dlse at 32.
CASES = [
    em.Case("backward", 128, "bf16", block_size=128),
    em.Case("backward", 128, "f16", block_size=128),
    em.Case("backward", 96, "bf16", block_size=128),
    em.Case("backward", 64, "bf16", block_size=128),
    em.Case("backward", 32, "f16", block_size=128, lse=True),
    em.Case("backward", 128, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 64, "f16", causal=True, block_size=128),
]

# With l2-prefetch=on the producer asks for each ring's tiles into L2 before it waits for its
# slot (every copy's row computed before the first acquire).
L2_CASES = [
    em.Case("backward", 128, "bf16", block_size=128),
    em.Case("backward", 64, "f16", causal=True, lse=True, block_size=128),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("sms", [1, 2, 3])
def test_large_block_rings_match_reference(case, sms, tmp_path):
    check_case(case, FLAGS, sms, tmp_path)


@pytest.mark.parametrize("case", L2_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("sms", [1, 3])
def test_large_block_rings_l2_prefetch_matches_reference(case, sms, tmp_path):
    check_case(case, FLAGS + ["--l2-prefetch=on"], sms, tmp_path)


@pytest.mark.parametrize("case", [CASES[0], CASES[3]], ids=lambda c: c.name)
def test_large_block_rings_equal_one_ring(case, tmp_path):
    """The same products in the same order (only the slots' release points move): the
    gradients equal the one-ring two-consumer kernel's bit for bit."""
    tensors = em.make_problem(case, lengths=LENGTHS)
    outs = []
    for name, flags in (("rings", FLAGS), ("one", ["--large-block-consumers=2"])):
        base = compile_case(case, tmp_path / name, flags)
        outs.append(em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                               {"softmax_scale": case.head_dim ** -0.5}, num_sms=2, seed=2))
    for name in case.outputs:
        np.testing.assert_array_equal(outs[0][name], outs[1][name], err_msg=name)
