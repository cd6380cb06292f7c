"""The grouped-query rotary backward above head dim 128 (issues 20 and 21) in block-attn-emulate
against the float64 reference, on both chips.

Above head dim 128 the grouped backward makes an item (a block and a k/v head) in D / 64 passes
over 64-column chunks of the head dim (KernelPlan::groupPasses; docs/pipeline.md, "Grouped-query
attention"). With rotary embeddings K (and V with rotate_v) are rotated in place once an item and
stay rotated in their "kv" slot through the passes; Q, loaded again every pass, is rotated every
pass; each pass's gradient chunk (dQ_j per query head, dV_j and dK_j summed over the group) is
turned back on its own before its single rounding (warpspec.rotate_tile with head_dim = D and
pair_offset = 32 j: an interleaved chunk holds its pairs whole). Half-split embeddings, whose
pairs are D / 2 apart, were built in session 21 by loading pair-complete 64-column chunks (one box
of two 64-byte pieces under the 128-byte swizzle, warpspec.tma_load pair_halves); they passed here
but missed the float64 reference on an H100, and are refused since session 22 (the emulator now
refuses such a box; docs/head-dims.md, "The pair-halves layout on hardware"). The angles computed in the
kernel from rotary_theta (session 19: K, V and Q turned in a loop of passes that is not unrolled)
are checked at two bases (test_grouped_rotary_theta_large_head_dim_backward_matches_reference: both
chips, 192 and 256, bf16 and f16, positions, rotate_v, causal + dlse, G = 2 and MQA, blocks 32 and
64; with BLOCKATTN_EMULATE_FULL=1 every variant of those).

Checked on the jagged lengths (empty sequences, a one-token block, partial tiles), every gradient
element written, the gradients missing the reference without rotation, without the positions
tensor and without v rotated. The default sample keeps `make check` fast (both chips, 192 and 256,
positions, rotate_v, causal + dlse, G = 2 and MQA, 1 and 3 SMs); BLOCKATTN_EMULATE_FULL=1 runs
the whole matrix (both chips, 192 and 256, bf16 and f16, G = 2, 4 and MQA, the table variants,
plain and causal + dlse, blocks of 16, 32, 64, 1 and 3 SMs).
"""

from __future__ import annotations

import dataclasses
import itertools
import os

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 200, 7)


def case(head_dim, dtype, group, positions=False, rotate_v=False, causal=False, lse=False,
         block_size=64, rotary="interleaved", theta=None):
    return em.Case("backward", head_dim, dtype, rotary, positions=positions, rotate_v=rotate_v,
                   group=group, causal=causal, lse=lse, block_size=block_size, rotary_theta=theta)


# (chip, case, query heads, SMs): query heads / G k/v heads (MQA where it is 1).
SAMPLE = [
    ("sm_90a", case(192, "bf16", 2, positions=True), 4, 3),
    ("sm_90a", case(256, "f16", 2, rotate_v=True, causal=True, lse=True), 2, 1),  # MQA
    ("sm_100a", case(256, "bf16", 2, positions=True, rotate_v=True), 2, 3),  # MQA
    ("sm_100a", case(192, "f16", 2, causal=True, lse=True, block_size=32), 4, 1),
    # Half-split: whole rows of pair-complete 64-column chunks, each two 32-column pieces under
    # the 64-byte swizzle (session 23; session 21's one box of two 64-byte pieces under the
    # 128-byte swizzle missed the float64 reference on an H100).
    ("sm_90a", case(192, "bf16", 2, positions=True, rotate_v=True, rotary="half_split"), 4, 3),
    ("sm_90a", case(256, "f16", 2, causal=True, lse=True, block_size=16, rotary="half_split"), 2, 1),
    ("sm_100a", case(256, "bf16", 2, rotate_v=True, rotary="half_split"), 4, 1),
    ("sm_100a", case(192, "f16", 2, positions=True, causal=True, lse=True, block_size=32,
                     rotary="half_split"), 2, 3),
]


def full_matrix():
    cases = []
    variants = ((False, False), (True, False), (False, True), (True, True))
    for chip, d, dtype, (group, heads), (positions, rotate_v), mode, bs, rotary in itertools.product(
            ("sm_90a", "sm_100a"), (192, 256), ("bf16", "f16"), ((2, 4), (4, 8), (2, 2)), variants,
            ((False, False), (True, True)), (16, 32, 64), ("interleaved", "half_split")):
        sms = 1 if (bs + heads) % 2 else 3
        cases.append((chip, case(d, dtype, group, positions, rotate_v, *mode, block_size=bs,
                                 rotary=rotary), heads, sms))
    return cases


CASES = full_matrix() if os.environ.get("BLOCKATTN_EMULATE_FULL") == "1" else SAMPLE


def case_id(x):
    if isinstance(x, em.Case):
        return x.name
    return x if isinstance(x, str) else f"{x}"



@pytest.mark.parametrize("chip,c,heads,sms", CASES, ids=case_id)
def test_grouped_rotary_large_head_dim_backward_matches_reference(chip, c, heads, sms, emulated_kernel):
    base = emulated_kernel(c, chip)
    tensors = em.make_problem(c, lengths=LENGTHS, heads=heads, seed=sms + heads)
    assert tensors["dk"].shape[1] == heads // c.group and tensors["dq"].shape[1] == heads
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": c.head_dim ** -0.5}, num_sms=sms, seed=sms)
    assert em.check_close(c, out, em.reference_outputs(c, tensors)) == []
    for name in c.outputs:
        assert (out[name] != em.POISON).all(), name
    # The rotation matters: the gradients miss the reference without it, and without the
    # variant's positions tensor or rotated v.
    plain = dataclasses.replace(c, rotary="none", positions=False, rotate_v=False)
    assert em.check_close(c, out, em.reference_outputs(plain, tensors)) != []
    if c.positions:
        no_positions = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(c, out, em.reference_outputs(c, no_positions)) != []
    if c.rotate_v:
        unrotated_v = dataclasses.replace(c, rotate_v=False)
        assert em.check_close(c, out, em.reference_outputs(unrotated_v, tensors)) != []


# Angles computed in the kernel from rotary_theta (session 19): K (and V) and each pass's Q are
# turned in a loop of passes that is not unrolled (warpspec.rotate pass_loop, Rotary.cpp), each
# pass's gradient chunks from theta at the pass's pairs. Two bases, so that a kernel that ignored
# its own would be caught; the reference's tables are made in float64 from the case's base.
THETA_SAMPLE = [
    ("sm_90a", case(256, "bf16", 2, positions=True, rotate_v=True, theta=10000.0), 4, 3),
    ("sm_90a", case(192, "f16", 2, causal=True, lse=True, theta=500.0), 2, 1),  # MQA
    ("sm_100a", case(192, "bf16", 2, rotate_v=True, causal=True, lse=True, theta=500.0), 4, 3),
    ("sm_100a", case(256, "f16", 2, positions=True, block_size=32, theta=10000.0), 2, 1),  # MQA
    # Half-split (session 23: pair-complete chunks as 64-byte-swizzled pieces).
    ("sm_90a", case(256, "bf16", 2, rotate_v=True, causal=True, lse=True, theta=10000.0,
                    rotary="half_split"), 4, 3),
    ("sm_100a", case(192, "f16", 2, positions=True, block_size=16, theta=500.0,
                     rotary="half_split"), 4, 1),
]


def full_theta_matrix():
    cases = []
    variants = ((False, False), (True, False), (False, True), (True, True))
    for chip, d, dtype, (group, heads), (positions, rotate_v), mode, bs, rotary in itertools.product(
            ("sm_90a", "sm_100a"), (192, 256), ("bf16", "f16"), ((2, 4), (2, 2)), variants,
            ((False, False), (True, True)), (32, 64), ("interleaved", "half_split")):
        sms = 1 if (bs + heads) % 2 else 3
        theta = 500.0 if positions else 10000.0
        cases.append((chip, case(d, dtype, group, positions, rotate_v, *mode, block_size=bs, theta=theta,
                                 rotary=rotary), heads, sms))
    return cases


THETA_CASES = full_theta_matrix() if os.environ.get("BLOCKATTN_EMULATE_FULL") == "1" else THETA_SAMPLE


@pytest.mark.parametrize("chip,c,heads,sms", THETA_CASES, ids=case_id)
def test_grouped_rotary_theta_large_head_dim_backward_matches_reference(chip, c, heads, sms,
                                                                        emulated_kernel):
    base = emulated_kernel(c, chip)
    tensors = em.make_problem(c, lengths=LENGTHS, heads=heads, seed=sms + heads)
    assert "cos" not in tensors and "sin" not in tensors  # the kernel takes no tables
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": c.head_dim ** -0.5}, num_sms=sms, seed=sms)
    assert em.check_close(c, out, em.reference_outputs(c, tensors)) == []
    for name in c.outputs:
        assert (out[name] != em.POISON).all(), name
    # The angles matter: the gradients miss the reference without rotation, at the other base,
    # and without the variant's positions tensor or rotated v.
    plain = dataclasses.replace(c, rotary="none", positions=False, rotate_v=False, rotary_theta=None)
    assert em.check_close(c, out, em.reference_outputs(plain, tensors)) != []
    other_base = dataclasses.replace(c, rotary_theta=10500.0 - c.rotary_theta)
    assert em.check_close(c, out, em.reference_outputs(other_base, tensors)) != []
    if c.positions:
        no_positions = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(c, out, em.reference_outputs(c, no_positions)) != []
    if c.rotate_v:
        unrotated_v = dataclasses.replace(c, rotate_v=False)
        assert em.check_close(c, out, em.reference_outputs(unrotated_v, tensors)) != []
