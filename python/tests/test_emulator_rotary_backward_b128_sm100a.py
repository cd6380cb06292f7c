"""The sm_100a rotary backward at block size 128 (issue 20; docs/block-sizes.md), in
block-attn-emulate against the float64 reference.

A 128-token block is one work item. The rotary warpgroup turns both 64-row query halves (the
second at row and position + 64), k and, with rotate_v, v in the load ring's slot, in place,
and signals the MMA warp; the MMA warp sends the block's record (with its position) to the one
softmax warpgroup, which takes both query halves and both key halves of the block in turn and
turns each 64-row gradient back at its own half's rows and positions (dQ_h at query half h,
dV_j and dK_j at key half j) before its single rounding. The lengths cover an empty and a
one-token sequence, partial blocks around the block and its half (63-65, 127-129) and a long
one; one SM and three (a CTA then takes several blocks, and the rings wrap). Each gradient
must also miss the un-rotated reference (and the reference without the positions tensor,
without rotated v, without causal blocks or without dlse, for those variants).

The wider matrix (every head dim, dtype, layout and variant, with and without causal and dlse):
``python3 scripts/emulate_kernels.py --chips sm_100a --kinds backward --block-sizes 128
--head-dims 32,64,96,128 --rotary half_split,interleaved`` (``--modes plain,causal_lse`` for those).

Emulated only: no Blackwell GPU has run these kernels.
"""

from __future__ import annotations

import dataclasses
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 300)

CASES = [
    # both table layouts, positions, rotate_v, every head dim, both dtypes
    em.Case("backward", 128, "bf16", "half_split", block_size=128),
    em.Case("backward", 128, "f16", "interleaved", positions=True, rotate_v=True, block_size=128),
    em.Case("backward", 64, "f16", "half_split", positions=True, block_size=128),
    em.Case("backward", 96, "bf16", "interleaved", rotate_v=True, block_size=128),
    em.Case("backward", 32, "bf16", "half_split", positions=True, rotate_v=True, block_size=128),
    # with causal blocks and dlse: the second half's mask rows and dlse rows
    em.Case("backward", 64, "bf16", "interleaved", causal=True, lse=True, block_size=128),
]


@pytest.fixture(scope="module")
def kernels(emulated_kernel):
    return lambda case: emulated_kernel(case, "sm_100a")


def misses(case, got, tensors, other_case=None, other_tensors=None):
    other_case = other_case or case
    want = em.reference_outputs(other_case, other_tensors if other_tensors is not None else tensors)
    return em.check_close(case, got, want) != []


@pytest.mark.parametrize("sms", (1, 3))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rotary_backward_b128_matches_reference(case, sms, kernels):
    base = kernels(case)
    tensors = em.make_problem(case, lengths=LENGTHS, seed=7)
    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms, seed=sms)
    assert em.check_close(case, got, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (got[name] != em.POISON).all(), name
    # Each feature matters: the gradients miss the reference without it.
    assert misses(case, got, tensors, dataclasses.replace(case, rotary="none", positions=False,
                                                           rotate_v=False))
    if case.positions:
        assert misses(case, got, tensors,
                      other_tensors={n: t for n, t in tensors.items() if n != "positions"})
    if case.rotate_v:
        assert misses(case, got, tensors, dataclasses.replace(case, rotate_v=False))
    if case.causal:
        assert misses(case, got, tensors, dataclasses.replace(case, causal=False))
    if case.lse:
        no_dlse = dataclasses.replace(case, lse=False)
        assert em.check_close(no_dlse, got, em.reference_outputs(no_dlse, tensors)) != []
    assert misses(case, got, tensors, dataclasses.replace(case, block_size=64))
