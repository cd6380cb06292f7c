"""The sm_100a rotary forward at block size 128 (issue 20; docs/block-sizes.md), in
block-attn-emulate against the float64 reference.

A 128-token block is one work item whose two 64-row query halves both go to the kernel's one
softmax warpgroup, in turn: the MMA warp names the half in the S record's position field
(unused otherwise: rotary tiles hold one sequence), and the softmax warpgroup offsets its
stores, its log-sum-exp and its causal mask by 64 rows for half 1. The rotary warpgroup turns
both query halves (the second at positions 64 on), k and, with rotate_v, v into the rotated
ring. The lengths cover an empty and a one-token sequence, partial blocks around the block and
its half (63-65, 127-129) and a long one; one SM and three (a CTA then takes several blocks, and
the rings wrap). Each output must also miss the un-rotated reference (and the reference without
the positions tensor, or without rotated v, for those variants).

Emulated only: no Blackwell GPU has run these kernels.
"""

from __future__ import annotations


import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 300)

CASES = [
    # both table layouts, positions, rotate_v, every head dim the sm_100a forward at 128 takes
    # with rotary embeddings, both dtypes
    em.Case("forward", 128, "bf16", "half_split", block_size=128),
    em.Case("forward", 128, "f16", "interleaved", positions=True, rotate_v=True, block_size=128),
    em.Case("forward", 64, "f16", "half_split", positions=True, block_size=128),
    em.Case("forward", 96, "bf16", "interleaved", rotate_v=True, block_size=128),
    em.Case("forward", 32, "bf16", "half_split", positions=True, rotate_v=True, block_size=128),
    # with causal blocks and the log-sum-exp: the half's mask rows and lse rows
    em.Case("forward", 64, "bf16", "interleaved", causal=True, lse=True, block_size=128),
]


@pytest.fixture(scope="module")
def kernels(emulated_kernel):
    return lambda case: emulated_kernel(case, "sm_100a")


@pytest.mark.parametrize("sms", (1, 3))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rotary_forward_b128_matches_reference(case, sms, kernels):
    base = kernels(case)
    tensors = em.make_problem(case, lengths=LENGTHS, seed=5)
    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    assert em.check_close(case, got, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (got[name] != em.POISON).all()
    # The rotation matters: the outputs miss the reference without it, and without the
    # variant's positions tensor or rotated v.
    plain = em.Case(case.kind, case.head_dim, case.dtype, causal=case.causal, lse=case.lse, block_size=128)
    assert em.check_close(case, got, em.reference_outputs(plain, tensors)) != []
    if case.positions:
        no_positions = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(case, got, em.reference_outputs(case, no_positions)) != []
    if case.rotate_v:
        unrotated_v = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, positions=case.positions,
                              causal=case.causal, lse=case.lse, block_size=128)
        assert em.check_close(case, got, em.reference_outputs(unrotated_v, tensors)) != []
