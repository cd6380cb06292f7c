"""The grouped-query backward at block size 128 with rotary embeddings (issues 20 and 21) in
block-attn-emulate against the float64 reference, on both chips.

The work item is a block of 128 tokens and a k/v head (test_emulator_gqa_b128.py). With rotary
embeddings K (and V with rotate_v) are rotated in place once an item, each query head's Q halves
in place in its "qdo" slot (the second half at row and position + 64), dQ is turned back per head
and query half, dK (and dV) once after the group per key half (docs/rotary.md, "Grouped-query
backward"). sm_90a: the scores warpgroup rotates, the accumulate warpgroups turn dK and dV back;
sm_100a: the softmax warpgroup rotates and signals the MMA warp through the ring "rotated".
Checked: both layouts, positions from the sequence and from a positions tensor, rotate_v, causal
with dlse, G = 2 and MQA, one SM (one CTA reuses every slot) and three, on empty, one-token and
partial blocks around the block and its half (63-65, 127-129, 191-193); every gradient element
is written, and the gradients miss the reference without rotary embeddings, of the other layout
and with the halves' positions not offset (the second query half rotated at the block's
position).

At head dims 96 and 128 (interleaved; every group on both chips) an item is made in
three passes over 32-column chunks of the head dim (two over 64-column ones at 128): K (V) stay
rotated through the passes, Q is rotated again every pass, and each pass's chunk of dQ, dK (dV)
is turned back on its own (sm_100a: in the softmax warpgroup, K, V and Q turned in a loop of
passes that is not unrolled). Half-split at 128 (both chips): every tensor is loaded in
pair-complete 64-column chunks (columns [32 j, 32 j + 32) and their partners 64 on), each two
32-column pieces under the 64-byte swizzle, two TMA boxes that fill their swizzle span (session
23; session 21's one box of two 64-byte pieces under the 128-byte swizzle passed here but missed
the float64 reference on an H100), each chunk rotated as a half-split part, each pass's gradient
chunk turned back on its own and stored as two 32-column pieces; tables and rotary_theta.
Half-split at 96 (both chips, session 24): pair-complete 32-column chunks (columns [16 j, 16 j +
16) and their partners 48 on), each two 16-column pieces under the 32-byte swizzle
(`chunk_cols = 16`), two TMA boxes of 32 bytes that fill the 32-byte span; the rotation, the
wgmma / tcgen05 descriptors (32-byte swizzle mode) and the gradient stores (16-column staging
pieces, 16-column boxes) follow the layout.

At head dims 192 and 256 (sm_90a, session 22; sm_100a, session 24) K, V, Q and dO are streamed
in 64-column chunks (ring "chunks"; test_emulator_gqa_b128.py's WIDE cases): every chunk is
rotated in place as it lands, each time it is streamed (q's and K's for S, V's with rotate_v for
dP; half-split ones loaded pair-complete as pieces), and the pass's chunks of Q and K in "qdo";
each gradient chunk is turned back on its own. On sm_90a the scores warpgroup rotates (the "qdo"
chunks before the head's "pds" commit); on sm_100a a rotary warpgroup between the producer and
the MMA warp rotates every slot and signals it through the ring "rotated", and the softmax
warpgroup turns the chunks back. Both layouts, positions, rotate_v, causal + dlse, G = 2, 3, 4
and MQA, 1 and 3 SMs, tables and rotary_theta. A planted bug (the streamed chunks after the
first rotated with pair 0's angles) failed the sample's 192 cases of both layouts on sm_90a; on
sm_100a (the rotary warpgroup's loop, session 24) it failed the three table cases (192 both
layouts, 256 half-split).

The default sample keeps `make check` fast (its cases above head dim 128 on fewer lengths:
WIDE_LENGTHS); BLOCKATTN_EMULATE_FULL=1 runs the wider matrix, every case on every length
(both chips, head dims 32 and 64, bf16 and f16, both layouts, plain / positions / rotate_v /
both, plain and causal + dlse, G = 2 and MQA, 1 and 3 SMs; and at 96 and 128, interleaved,
the same variants: sm_90a G = 2 and MQA, sm_100a G = 2 and 4 with two k/v heads and MQA; and
half-split at 96 and 128, the same variants, both chips, G = 2, 3 and MQA).
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
# test_emulator_gqa_b128.py's lengths: above head dim 128 (every chunk rotated each time it is
# streamed) fewer of them in the sample.
from test_emulator_gqa_b128 import FULL, case_id, lengths_of

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)


def case(head_dim, dtype, rotary, group, positions=False, rotate_v=False, causal=False, lse=False):
    return em.Case("backward", head_dim, dtype, rotary, positions=positions, rotate_v=rotate_v,
                   group=group, causal=causal, lse=lse, block_size=128)


# (chip, case, query heads, SMs): both chips, both layouts, a positions tensor, rotate_v,
# causal + dlse, G = 2 and MQA (heads == group), one SM and three.
SAMPLE = [
    ("sm_90a", case(64, "bf16", "half_split", 2), 4, 1),
    ("sm_90a", case(32, "f16", "interleaved", 4, positions=True, rotate_v=True, causal=True,
                    lse=True), 4, 3),
    ("sm_100a", case(64, "f16", "interleaved", 2, rotate_v=True), 2, 3),
    ("sm_100a", case(32, "bf16", "half_split", 4, positions=True, causal=True, lse=True), 8, 1),
    # sm_90a at head dim 96 (interleaved): an item in three passes over 32-column chunks of the
    # head dim, each chunk of dQ, dK, dV turned back on its own.
    ("sm_90a", case(96, "bf16", "interleaved", 2, positions=True, rotate_v=True), 4, 3),
    ("sm_90a", case(96, "f16", "interleaved", 4, rotate_v=True, causal=True, lse=True), 4, 1),
    # At 128: two passes of 64 columns; accumulate warpgroup 1 at the launch's 128 registers
    # with its own setmaxnreg (explicit_regs), G = 2 with rotate_v (where it spilled without).
    ("sm_90a", case(128, "bf16", "interleaved", 2, positions=True, rotate_v=True), 4, 3),
    # sm_100a at 96 and 128 (interleaved, groups of 3 and more; session 20): the same passes,
    # the softmax warpgroup rotating K (V) and each pass's Q and turning each chunk back. G = 4
    # with two k/v heads, and MQA with causal + dlse.
    ("sm_100a", case(96, "bf16", "interleaved", 4, positions=True, rotate_v=True), 8, 3),
    ("sm_100a", case(128, "f16", "interleaved", 4, rotate_v=True, causal=True, lse=True), 4, 1),
    # A group of 2 there (session 20: the MMA warp's loop over the other head runs to a count
    # ptxas cannot read, as without rotary embeddings).
    ("sm_100a", case(128, "bf16", "interleaved", 2, positions=True, rotate_v=True, causal=True,
                     lse=True), 4, 3),
    # Half-split at 128: every tensor loaded in pair-complete 64-column chunks (columns
    # [32 j, 32 j + 32) and their partners D / 2 on), each two 32-column pieces under the
    # 64-byte swizzle (session 23; session 21's one box of two 64-byte pieces under the 128-byte
    # swizzle missed the float64 reference on an H100), each chunk rotated as a half-split part,
    # each pass's gradient chunk turned back on its own and stored as two 32-column pieces.
    # Both chips, G = 2, 3 and 4.
    ("sm_90a", case(128, "bf16", "half_split", 2, positions=True, rotate_v=True), 4, 3),
    ("sm_90a", case(128, "f16", "half_split", 3, causal=True, lse=True), 6, 1),
    ("sm_100a", case(128, "f16", "half_split", 4, rotate_v=True, causal=True, lse=True), 8, 1),
    ("sm_100a", case(128, "bf16", "half_split", 2, positions=True), 4, 3),
    ("sm_100a", case(128, "bf16", "half_split", 3, positions=True, rotate_v=True), 3, 3),
    # G = 4 and 8 there (session 25: every partition pins its shared-memory addresses, where the
    # producer spilled at G = 4 and 8 and with positions): G = 8 with positions (MQA), G = 4
    # with two k/v heads, positions, rotate_v, causal + dlse.
    ("sm_90a", case(128, "f16", "half_split", 8, positions=True), 8, 3),
    ("sm_90a", case(128, "bf16", "half_split", 4, positions=True, rotate_v=True, causal=True,
                    lse=True), 8, 1),
    # Half-split at 96 (session 24): every tensor loaded in pair-complete 32-column chunks
    # (columns [16 j, 16 j + 16) and their partners 48 on), each two 16-column pieces under the
    # 32-byte swizzle (chunk_cols = 16), three passes, each gradient chunk turned back on its
    # own and stored as two 16-column pieces. Both chips, G = 2, 3 and MQA, positions, rotate_v,
    # causal + dlse.
    ("sm_90a", case(96, "bf16", "half_split", 2, positions=True, rotate_v=True), 4, 3),
    ("sm_90a", case(96, "f16", "half_split", 3, causal=True, lse=True), 6, 1),
    ("sm_100a", case(96, "bf16", "half_split", 2, positions=True, causal=True, lse=True), 4, 3),
    ("sm_100a", case(96, "f16", "half_split", 4, rotate_v=True), 4, 1),
    # Session 25: G = 8 with causal + dlse, spilled until the softmax warpgroup's loop over the
    # heads ran to a pinned count (and the producer's to an opaque one).
    ("sm_100a", case(96, "bf16", "half_split", 8, positions=True, rotate_v=True, causal=True,
                     lse=True), 8, 3),
    # ... and with angles from rotary_theta (each chunk's part turned by theta^(-2i/D) of its own
    # pairs, i from 32 j).
    ("sm_90a", dataclasses.replace(case(128, "bf16", "half_split", 4, rotate_v=True),
                                   rotary_theta=10000.0), 8, 3),
    ("sm_100a", dataclasses.replace(case(128, "f16", "half_split", 2, positions=True, causal=True,
                                         lse=True), rotary_theta=500.0), 4, 1),
    # sm_90a at 192 and 256 (session 22): K, V, Q and dO streamed in 64-column chunks (ring
    # "chunks"), each chunk rotated in place by the scores warpgroup as it lands (every time it
    # is streamed), the pass's chunks of Q and K in "qdo" before the head's "pds" commit; each
    # gradient chunk turned back on its own. G = 2, 3 and MQA, 1 and 3 SMs.
    ("sm_90a", case(192, "bf16", "interleaved", 2, positions=True, rotate_v=True), 4, 3),
    ("sm_90a", case(256, "f16", "interleaved", 3, rotate_v=True, causal=True, lse=True), 6, 3),
    ("sm_90a", case(192, "f16", "interleaved", 4, causal=True, lse=True), 4, 1),
    ("sm_90a", case(256, "bf16", "interleaved", 2, positions=True), 4, 3),
    # G = 4 with positions and rotate_v, causal + dlse, two k/v heads (session 26: the group a
    # loop in the accumulate warpgroups, which spilled their item loop's counter until the
    # stores' column offsets (pinned_steps) were added in 64 bits, as immediate offsets).
    ("sm_90a", case(256, "f16", "interleaved", 4, positions=True, rotate_v=True, causal=True,
                    lse=True), 8, 1),
    # Half-split there (session 23): every streamed chunk loaded pair-complete as two 32-column
    # pieces under the 64-byte swizzle, rotated as a half-split part, each gradient chunk
    # stored as two 32-column pieces.
    ("sm_90a", case(192, "bf16", "half_split", 3, positions=True, rotate_v=True), 6, 3),
    ("sm_90a", case(256, "f16", "half_split", 2, causal=True, lse=True), 4, 1),
    ("sm_90a", case(256, "bf16", "half_split", 4, rotate_v=True), 4, 3),
    # With rotate_v (session 26): every chunk's items turned in two runs of 4 pairs
    # (split_items); at 256 dV and dK turned back with the tables indexed in 32 bits
    # (narrow_index). rotate_v without positions, causal + dlse, and dlse alone.
    ("sm_90a", case(256, "f16", "half_split", 2, rotate_v=True, causal=True, lse=True), 4, 1),
    ("sm_90a", case(192, "f16", "half_split", 2, rotate_v=True, lse=True), 4, 3),
    # sm_100a at 192 and 256 (session 24): a rotary warpgroup between the producer and the MMA
    # warp rotates every streamed chunk slot in place and signals the ring "rotated" (the MMA warp
    # waits on it after each slot it gets); the softmax warpgroup turns dQ's chunks and the
    # group's summed dV's and dK's back. Both layouts, positions, rotate_v, causal + dlse, G = 2
    # and MQA, 1 and 3 SMs.
    ("sm_100a", case(192, "bf16", "interleaved", 2, positions=True, rotate_v=True), 4, 3),
    ("sm_100a", case(256, "f16", "half_split", 3, causal=True, lse=True), 3, 1),
    ("sm_100a", case(192, "f16", "half_split", 2, rotate_v=True), 4, 3),
    # dlse without causal blocks, rotate_v (session 25: spilled 4-8 bytes until the softmax
    # warpgroup's shared-memory addresses came from pinned bases).
    ("sm_100a", case(192, "bf16", "half_split", 3, rotate_v=True, lse=True), 6, 1),
    ("sm_100a", dataclasses.replace(case(256, "bf16", "interleaved", 4, positions=True, rotate_v=True,
                                         causal=True, lse=True), rotary_theta=10000.0), 8, 3),
]


def full_matrix():
    cases = []
    for chip, d, dtype, rotary, (positions, rotate_v), (causal, lse), (group, heads), sms in \
            itertools.product(("sm_90a", "sm_100a"), (32, 64), ("bf16", "f16"),
                              ("half_split", "interleaved"),
                              ((False, False), (True, False), (False, True), (True, True)),
                              ((False, False), (True, True)), ((2, 4), (4, 4)), (1, 3)):
        # Both dtypes and SM counts over the matrix, not each with every other axis.
        if (dtype == "f16") != (sms == 3):
            continue
        cases.append((chip, case(d, dtype, rotary, group, positions, rotate_v, causal, lse),
                      heads, sms))
    # Head dims 96 and 128: interleaved (half-split below).
    for chip, d, dtype, (positions, rotate_v), (causal, lse), (group, heads), sms in \
            itertools.product(("sm_90a", "sm_100a"), (96, 128), ("bf16", "f16"),
                              ((False, False), (True, False), (False, True), (True, True)),
                              ((False, False), (True, True)), ((2, 4), (4, 8), (4, 4)), (1, 3)):
        if (dtype == "f16") != (sms == 3):
            continue
        # sm_90a: G = 2 and MQA (session 19); sm_100a: G = 2, and 4 with two k/v heads, and MQA.
        if (group, heads) not in (((2, 4), (4, 4)) if chip == "sm_90a" else ((2, 4), (4, 8), (4, 4))):
            continue
        cases.append((chip, case(d, dtype, "interleaved", group, positions, rotate_v, causal,
                                 lse), heads, sms))
    # Half-split at 96 (16-column pieces, session 24) and 128 (32-column pieces, session 23):
    # both chips, G = 2, 3 and MQA.
    for chip, d, dtype, (positions, rotate_v), (causal, lse), (group, heads), sms in \
            itertools.product(("sm_90a", "sm_100a"), (96, 128), ("bf16", "f16"),
                              ((False, False), (True, False), (False, True), (True, True)),
                              ((False, False), (True, True)), ((2, 4), (3, 6), (4, 4)), (1, 3)):
        if (dtype == "f16") != (sms == 3):
            continue
        cases.append((chip, case(d, dtype, "half_split", group, positions, rotate_v, causal,
                                 lse), heads, sms))
    return cases


# The full matrix keeps the sample's cases above head dim 128 (the matrix stops at 128), on every
# length.
CASES = full_matrix() + [x for x in SAMPLE if x[1].head_dim > 128] if FULL else SAMPLE


def halves_at_block_position(c: em.Case, tensors: dict) -> dict:
    """The reference of a kernel that would rotate the second query (key) half at the block's
    position instead of + 64: with a positions tensor, rows 64-127 of each block read the
    positions of rows 0-63 (from the sequence: the positions are made explicit first)."""
    cu = tensors["cu_seqlens"]
    positions = np.asarray(tensors["positions"]) if c.positions else np.concatenate(
        [np.arange(cu[i + 1] - cu[i]) for i in range(len(cu) - 1)]).astype(np.int32)
    wrong = positions.copy()
    for s in range(len(cu) - 1):
        for start in range(cu[s], cu[s + 1], 128):
            second = np.arange(start + 64, min(start + 128, cu[s + 1]))
            wrong[second] = positions[second - 64]
    out = dict(tensors)
    out["positions"] = wrong.astype(np.int32)
    return out


@pytest.mark.parametrize("chip,c,heads,sms", CASES, ids=case_id)
def test_grouped_large_block_rotary_backward_matches_reference(chip, c, heads, sms, emulated_kernel):
    base = emulated_kernel(c, chip)
    tensors = em.make_problem(c, lengths=lengths_of(c), heads=heads, seed=sms + heads + 7)
    kv_heads = heads // c.group
    assert tensors["dk"].shape[1] == kv_heads and tensors["dq"].shape[1] == heads
    # Above head dim 128 every chunk is rotated each time it is streamed (2 x 2 x D / 64 times
    # per pass and query head): one CTA of the wide cases runs past the emulator's default
    # livelock limit of 4e8 instructions.
    extra = ("--max-instructions=2000000000",) if c.head_dim > 128 else ()
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": c.head_dim ** -0.5}, num_sms=sms, seed=sms,
                     extra_args=extra)
    assert em.check_close(c, out, em.reference_outputs(c, tensors)) == []
    for name in c.outputs:
        assert (out[name] != em.POISON).all(), name
    # The rotation matters, in its layout, and at each half's own positions.
    rotated = {"dq", "dk"} | ({"dv"} if c.rotate_v else set())
    plain = dataclasses.replace(c, rotary="none", positions=False, rotate_v=False)
    other = dataclasses.replace(
        c, rotary="interleaved" if c.rotary == "half_split" else "half_split")
    for wrong in (plain, other):
        misses = em.check_close(c, out, em.reference_outputs(wrong, tensors))
        assert rotated <= {m.split(":")[0] for m in misses}, wrong.name
    explicit = dataclasses.replace(c, positions=True)
    misses = em.check_close(c, out, em.reference_outputs(explicit,
                                                         halves_at_block_position(c, tensors)))
    assert rotated <= {m.split(":")[0] for m in misses}


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_grouped_large_block_rotary_theta(chip, tmp_path):
    """rotary_theta (angles computed in the kernel) builds and compiles for the grouped block-128
    backward too (ptxas with no spills is checked by test/Tools/block-attn-compile)."""
    cases = [case(64, "bf16", "half_split", 4),
             # in passes over column chunks: both layouts at 96 and 128
             case(128, "bf16", "interleaved", 3, positions=True),
             case(128, "bf16", "half_split", 3, positions=True),
             case(96, "bf16", "half_split", 2, rotate_v=True)]
    # above head dim 128: streamed chunks rotated as they land (sm_90a session 22, sm_100a 24)
    cases += [case(256, "bf16", "interleaved", 3, rotate_v=True),
              case(192, "bf16", "interleaved", 2, positions=True),
              case(256, "bf16", "half_split", 2, rotate_v=True)]
    if chip == "sm_90a":
        cases += [case(96, "bf16", "interleaved", 2), case(96, "f16", "interleaved", 4, rotate_v=True)]
    for c in cases:
        run = subprocess.run([find_compiler(), *c.compiler_flags(chip), "--rotary-theta=10000",
                              "-o", str(tmp_path / "k"), "--quiet"], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
