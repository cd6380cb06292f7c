"""Block size 128 on sm_100a with causal blocks and the log-sum-exp (issue 20;
docs/block-sizes.md), in block-attn-emulate against the float64 reference.

A 128-token block is one work item whose two 64-row query halves go to the two softmax
replicas, replica r always taking half r. Both replicas run one body, so the half is a run-time
value: the causal mask's rows are offset by `64 * warpspec.replica_id`
(`warpspec.softmax ... causal dynamic_row_offset(%off)`), each replica stores its half's
log-sum-exp at its own rows, and the backward's replica reads its half's dlse (at the block's
row when its half is empty). The lengths cover empty and one-token sequences, partial blocks
around the block and its half (63-65, 127-129, 191, 193), a long sequence and tiny ones. Each
feature matters: the causal outputs miss the non-causal reference, the dlse gradients miss the
reference without dlse, and everything misses the block-64 reference.

Emulated only: no Blackwell GPU has run these kernels.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_causal_lse import check_outputs

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

# Jagged: an empty sequence, one token, a block's partial second half (65, 129, 191, 193), an
# empty second half (1, 2, 63, 64, 127 - 128 = a block of 127), a full block and a long one.
LENGTHS = (0, 1, 127, 128, 129, 300, 2, 0, 3, 64, 65, 193, 1, 63)

CASES = [
    # the forward: causal, lse, both; every head dim the sm_100a forward at 128 takes (the
    # output in 64-column chunks above 128), both dtypes
    em.Case("forward", 128, "bf16", causal=True, lse=True, block_size=128),
    em.Case("forward", 64, "f16", causal=True, block_size=128),
    em.Case("forward", 32, "bf16", lse=True, block_size=128),
    em.Case("forward", 96, "f16", causal=True, lse=True, block_size=128),
    em.Case("forward", 192, "bf16", causal=True, lse=True, block_size=128),
    em.Case("forward", 256, "f16", causal=True, block_size=128),
    em.Case("forward", 128, "f16", lse=True, block_size=128),
    em.Case("forward", 256, "bf16", lse=True, block_size=128),
    em.Case("forward", 192, "f16", causal=True, block_size=128),
    # the backward: causal, dlse, both; head dims 32-128 (the sm_100a backward at 128)
    em.Case("backward", 128, "bf16", causal=True, block_size=128),
    em.Case("backward", 128, "f16", lse=True, block_size=128),
    em.Case("backward", 64, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 32, "f16", causal=True, lse=True, block_size=128),
    em.Case("backward", 96, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 64, "f16", lse=True, block_size=128),
    em.Case("backward", 32, "bf16", causal=True, block_size=128),
    em.Case("backward", 96, "f16", causal=True, block_size=128),
]


@pytest.fixture(scope="module")
def kernels(emulated_kernel):
    return lambda case: emulated_kernel(case, "sm_100a")


def run(case, kernels, lengths, sms, seed=1):
    tensors = em.make_problem(case, lengths=lengths)
    base = kernels(case)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms, seed=seed)
    return tensors, out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_reference(case, kernels):
    # Two SMs: each persistent CTA takes several blocks, reusing the rings' slots.
    tensors, out = run(case, kernels, LENGTHS, sms=2)
    check_outputs(case, tensors, out)
    as64 = dataclasses.replace(case, block_size=64)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []


# One SM (one CTA takes every block) with another completion order of the MMAs, and a batch
# whose last block is a lone token at the end of the tensors: an empty second half whose
# row + 64 lies past T, where the backward's replica 1 must read dlse at the block's row.
@pytest.mark.parametrize("case", [
    em.Case("forward", 64, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 64, "f16", causal=True, lse=True, block_size=128),
], ids=lambda c: c.name)
def test_one_sm_lone_last_token(case, kernels):
    tensors, out = run(case, kernels, (129, 5, 200, 1), sms=1, seed=5)
    check_outputs(case, tensors, out)


# Many tiny sequences (0 to 9 tokens, runs of empty ones): most blocks have an empty second
# half, whose replica stores no row and reads dlse at the block's row.
@pytest.mark.parametrize("case", [
    em.Case("forward", 128, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 128, "bf16", causal=True, lse=True, block_size=128),
], ids=lambda c: c.name)
def test_tiny_sequences(case, kernels):
    lengths = tuple(int(x) for x in np.random.default_rng(11).integers(0, 10, size=60))
    tensors, out = run(case, kernels, lengths + (70,), sms=2, seed=3)
    check_outputs(case, tensors, out)
