"""Rotary embeddings at block size 128 above head dim 128 (issue 20; docs/head-dims.md,
"Rotary embeddings at block size 128 above head dim 128") in block-attn-emulate against the
float64 reference: the forward on sm_90a and sm_100a, at head dims 192 and 256, half-split and
interleaved tables, a positions tensor, rotate_v, causal blocks with the log-sum-exp, both dtypes,
and a grouped-query forward (two query heads per k/v head).

The designs compose: a 128-token block is one work item whose two 64-row query halves each
see all 128 keys, with O made in 64-column chunks per half. On sm_90a the one consumer rotates
its slot (both query halves, the second at position + 64; k; v with rotate_v) in place before
the first product; on sm_100a the rotary warpgroup does, in the load ring's slot (the ring
`rotated` only signals above head dim 128), and the one softmax warpgroup takes both halves in
turn, naming its half from the S record. The lengths cover an empty and a one-token sequence,
partial blocks around the block and its half (63-65, 127-129) and a long one, on one SM (one
CTA takes every block and reuses the one slot) and three (`make check`: each case on one of
them, in turn, so that every shape runs on both over its layouts; BLOCKATTN_EMULATE_FULL=1: every
case on both). A sample, not the full matrix (that is
`scripts/emulate_kernels.py --kinds forward --block-sizes 128 --head-dims 192,256 --rotary
half_split,interleaved`). The same with angles computed in the kernel from `rotary_theta`
(test_rotary_theta_forward_b128_wide_matches_reference; the reference's tables are made in
float64 at the kernel's base).

The backward (session 18) on sm_90a with interleaved pairs: the column-pass backward streams the
block in 64-column chunk slots, three passes, to two consumers (one per query half); each chunk
of q and k (of v with rotate_v) holds whole interleaved pairs and is rotated in place in its slot
(consumer 0 turns k, consumer 1 both query halves, the second at position + 64; in the dP pass
consumer j % 2 turns v_j), each waiting for the other's signal before its products; dQ, dK (dV)
are turned back chunk by chunk. On sm_100a (session 19) a rotary warpgroup between the load and
the MMA warp rotates each chunk slot in place (the query halves at their positions, k; v in the
dP pass with rotate_v) and signals the MMA warp through a ring without buffers; one softmax
warpgroup takes both halves and turns each gradient chunk back. With half-split pairs (session 20,
both chips) the producer loads pair-complete chunks instead: chunk j is columns [32 j, 32 j + 32)
and their partners [D / 2 + 32 j, ...); session 20 loaded it as one box of a rank-4 tensor map,
which the hardware lands padded (refused in session 22), session 23 as two 32-column pieces
under the 64-byte swizzle (two boxes of the ordinary map, `chunk_cols = 32`); it is rotated in place as an interleaved chunk (pairs 32 j on: by the consumers on sm_90a, by the
rotary warpgroup on sm_100a), and each gradient chunk is stored as two 32-column pieces. The
backward with angles computed in the kernel from rotary_theta (interleaved pairs in session 20,
half-split ones in session 21; test_rotary_theta_backward_b128_wide_matches_reference): each
chunk's angles are those of pairs 32 j on at the rows' head dim (a half-split chunk holds pairs
32 j on too, in the pair-complete order), and the gradients are turned back from theta too.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_gqa_b128 import case_id

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 300)


def with_sms(cases):
    """(chip, case, SMs): every case on one SM (one CTA reuses the slots) and on three with
    BLOCKATTN_EMULATE_FULL=1; else each on one of them, in turn, and a half-split case on the
    other than the interleaved case of its shape, so that `make check` runs each shape on both
    in half the time (these wide cases take 4-7 s each)."""
    if os.environ.get("BLOCKATTN_EMULATE_FULL") == "1":
        return [(chip, case, sms) for chip, case in cases for sms in (1, 3)]
    return [(chip, case, (1, 3)[(i + (case.rotary == "half_split")) % 2])
            for i, (chip, case) in enumerate(cases)]


CASES = [
    ("sm_90a", em.Case("forward", 192, "bf16", "half_split", block_size=128)),
    ("sm_90a", em.Case("forward", 256, "f16", "interleaved", positions=True, rotate_v=True, block_size=128)),
    ("sm_90a", em.Case("forward", 256, "bf16", "half_split", causal=True, lse=True, block_size=128)),
    ("sm_100a", em.Case("forward", 256, "bf16", "half_split", positions=True, rotate_v=True, block_size=128)),
    ("sm_100a", em.Case("forward", 192, "f16", "interleaved", causal=True, lse=True, block_size=128)),
    # grouped-query (two query heads per k/v head)
    ("sm_90a", em.Case("forward", 192, "f16", "interleaved", positions=True, group=2, block_size=128)),
]


def emulate_checked(case, chip, lengths, seed, sms, emulated_kernel):
    """Emulates the case's kernel on `sms` SMs against the float64 reference; every output
    element written. Returns the outputs and the inputs."""
    base = emulated_kernel(case, chip)
    tensors = em.make_problem(case, lengths=lengths, seed=seed)
    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    assert em.check_close(case, got, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (got[name] != em.POISON).all()
    return got, tensors


def assert_misses_positions_and_rotated_v(case, got, tensors):
    """With a positions tensor the outputs miss the reference without it; with rotate_v, the one
    whose v is not rotated."""
    if case.positions:
        no_positions = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(case, got, em.reference_outputs(case, no_positions)) != []
    if case.rotate_v:
        unrotated_v = dataclasses.replace(case, rotate_v=False)
        assert em.check_close(case, got, em.reference_outputs(unrotated_v, tensors)) != []


@pytest.mark.parametrize("chip,case,sms", with_sms(CASES), ids=case_id)
def test_rotary_forward_b128_wide_matches_reference(chip, case, sms, emulated_kernel):
    got, tensors = emulate_checked(case, chip, LENGTHS, 7, sms, emulated_kernel)
    # The rotation matters (and the block size): the outputs miss the reference without it,
    # without the variant's positions tensor or rotated v, and at block size 64.
    plain = em.Case(case.kind, case.head_dim, case.dtype, group=case.group, causal=case.causal, lse=case.lse,
                    block_size=128)
    assert em.check_close(case, got, em.reference_outputs(plain, tensors)) != []
    as64 = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, positions=case.positions,
                   rotate_v=case.rotate_v, group=case.group, causal=case.causal, lse=case.lse)
    assert em.check_close(case, got, em.reference_outputs(as64, tensors)) != []
    assert_misses_positions_and_rotated_v(case, got, tensors)


def assert_theta_matters(case, got, tensors):
    """A kernel from rotary_theta takes no tables, and its angles matter: the outputs miss the
    reference without rotation, at the other base, without the positions tensor or rotated v,
    and at block size 64."""
    assert "cos" not in tensors and "sin" not in tensors
    plain = em.Case(case.kind, case.head_dim, case.dtype, causal=case.causal, lse=case.lse, block_size=128)
    assert em.check_close(case, got, em.reference_outputs(plain, tensors)) != []
    other_base = dataclasses.replace(case, rotary_theta=10500.0 - case.rotary_theta)
    assert em.check_close(case, got, em.reference_outputs(other_base, tensors)) != []
    as64 = dataclasses.replace(case, block_size=64)
    assert em.check_close(case, got, em.reference_outputs(as64, tensors)) != []
    other_layout = dataclasses.replace(case, rotary="interleaved" if case.rotary == "half_split" else "half_split")
    assert em.check_close(case, got, em.reference_outputs(other_layout, tensors)) != []
    assert_misses_positions_and_rotated_v(case, got, tensors)


# Angles computed in the kernel from theta (issue 20): the sm_100a rotary warpgroup and the
# sm_90a consumer turn k (and v) in a loop of passes (Rotary.cpp); the query halves unrolled.
# Two bases, so that a kernel that ignored its own would be caught.
THETA_CASES = [
    ("sm_90a", em.Case("forward", 256, "bf16", "half_split", block_size=128, rotary_theta=10000.0)),
    ("sm_90a", em.Case("forward", 192, "f16", "interleaved", positions=True, rotate_v=True, causal=True, lse=True,
                       block_size=128, rotary_theta=500.0)),
    ("sm_100a", em.Case("forward", 256, "f16", "interleaved", rotate_v=True, block_size=128, rotary_theta=500.0)),
    ("sm_100a", em.Case("forward", 192, "bf16", "half_split", positions=True, causal=True, lse=True, block_size=128,
                        rotary_theta=10000.0)),
]


@pytest.mark.parametrize("chip,case,sms", with_sms(THETA_CASES), ids=case_id)
def test_rotary_theta_forward_b128_wide_matches_reference(chip, case, sms, emulated_kernel):
    got, tensors = emulate_checked(case, chip, LENGTHS, 11, sms, emulated_kernel)
    assert_theta_matters(case, got, tensors)


# (chip, head dim, dtype, flags), with interleaved pairs (sm_90a session 18; sm_100a session
# 19: the rotary warpgroup rotates each chunk slot in place between the load and the MMA warp, one
# softmax warpgroup takes both halves). Half-split ones load pair-complete chunks: session 20 as one
# box of two 64-byte pieces under the 128-byte swizzle, which passed here but missed the float64
# reference on an H100 (refused in session 22; the emulator now lands such a box padded, as the
# hardware does); since session 23 as two 32-column pieces under the 64-byte swizzle (two boxes
# that fill their span, `chunk_cols = 32`), on both chips.
# The chips whose half-split backward at block size 128 above head dim 128 is built (pair-complete
# chunks as two 64-byte-swizzled pieces, session 23).
PIECE_CHIPS = ("sm_90a", "sm_100a")
BACKWARD_SHAPES = [
    ("sm_90a", 192, "bf16", {}),
    ("sm_90a", 256, "f16", dict(positions=True, rotate_v=True)),
    ("sm_90a", 256, "bf16", dict(rotate_v=True, causal=True, lse=True)),
    ("sm_90a", 192, "f16", dict(positions=True, causal=True, lse=True)),
    # rotate_v at 192 (session 21): the producer warpgroup rotates the chunk slots.
    ("sm_90a", 192, "f16", dict(rotate_v=True, lse=True)),
    # Positions, dlse, no rotate_v or causal blocks at 192 (session 23): the producer rotates,
    # every partition with pinned addresses (as every kernel at 256 and with theta).
    ("sm_90a", 192, "bf16", dict(positions=True, lse=True)),
    ("sm_100a", 256, "bf16", {}),
    ("sm_100a", 192, "f16", dict(positions=True, rotate_v=True)),
    ("sm_100a", 192, "bf16", dict(rotate_v=True, causal=True, lse=True)),
    ("sm_100a", 256, "f16", dict(positions=True, causal=True, lse=True)),
]
BACKWARD_CASES = [(chip, em.Case("backward", d, dtype, layout, block_size=128, **flags))
                  for layout in ("interleaved", "half_split") for chip, d, dtype, flags in BACKWARD_SHAPES
                  if layout == "interleaved" or chip in PIECE_CHIPS]
# Jagged: empty and one-token sequences, partial blocks around the block and its half, and
# blocks whose second query half is empty (1-64 tokens).
BACKWARD_LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 300, 2, 191, 193)


@pytest.mark.parametrize("chip,case,sms", with_sms(BACKWARD_CASES), ids=case_id)
def test_rotary_backward_b128_wide_matches_reference(chip, case, sms, emulated_kernel):
    got, tensors = emulate_checked(case, chip, BACKWARD_LENGTHS, 11, sms, emulated_kernel)
    # The rotation matters (and the block size, and the positions tensor, rotated v, causal
    # blocks and dlse): the gradients miss each of those references.
    plain = em.Case(case.kind, case.head_dim, case.dtype, causal=case.causal, lse=case.lse, block_size=128)
    assert em.check_close(case, got, em.reference_outputs(plain, tensors)) != []
    as64 = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, positions=case.positions,
                   rotate_v=case.rotate_v, causal=case.causal, lse=case.lse)
    assert em.check_close(case, got, em.reference_outputs(as64, tensors)) != []
    # ... and the other pair layout (a half-split kernel that paired columns as interleaved ones).
    other_layout = dataclasses.replace(case, rotary="interleaved" if case.rotary == "half_split" else "half_split")
    assert em.check_close(case, got, em.reference_outputs(other_layout, tensors)) != []
    assert_misses_positions_and_rotated_v(case, got, tensors)
    if case.causal:
        assert em.check_close(case, got, em.reference_outputs(dataclasses.replace(case, causal=False),
                                                              tensors)) != []


# Angles from theta in the backward (interleaved: session 20; half-split ones, on the pair-complete
# chunks, session 21, refused in session 22, rebuilt on 64-byte-swizzled pieces in session 23):
# the same chunk rotations (pairs 32 j on of the rows' head dim) and
# turned-back gradient chunks, with the angles computed in the kernel. Two bases, so that a kernel
# that ignored its own would be caught.
THETA_BACKWARD_CASES = [
    ("sm_90a", em.Case("backward", 256, "f16", "interleaved", block_size=128, rotary_theta=10000.0)),
    ("sm_90a", em.Case("backward", 192, "bf16", "interleaved", positions=True, rotate_v=True, causal=True,
                       lse=True, block_size=128, rotary_theta=500.0)),
    ("sm_100a", em.Case("backward", 256, "bf16", "interleaved", rotate_v=True, block_size=128,
                        rotary_theta=500.0)),
    ("sm_100a", em.Case("backward", 192, "f16", "interleaved", positions=True, causal=True, lse=True,
                        block_size=128, rotary_theta=10000.0)),
    ("sm_90a", em.Case("backward", 192, "f16", "half_split", block_size=128, rotary_theta=10000.0)),
    ("sm_90a", em.Case("backward", 256, "bf16", "half_split", positions=True, rotate_v=True, causal=True,
                       lse=True, block_size=128, rotary_theta=500.0)),
    ("sm_100a", em.Case("backward", 192, "bf16", "half_split", rotate_v=True, causal=True, lse=True,
                        block_size=128, rotary_theta=500.0)),
]


@pytest.mark.parametrize("chip,case,sms", with_sms(THETA_BACKWARD_CASES), ids=case_id)
def test_rotary_theta_backward_b128_wide_matches_reference(chip, case, sms, emulated_kernel):
    got, tensors = emulate_checked(case, chip, BACKWARD_LENGTHS, 13, sms, emulated_kernel)
    assert_theta_matters(case, got, tensors)
    # ... and without causal blocks.
    if case.causal:
        assert em.check_close(case, got, em.reference_outputs(dataclasses.replace(case, causal=False),
                                                              tensors)) != []
