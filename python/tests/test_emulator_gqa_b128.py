"""The grouped-query backward at block size 128 (issues 20 and 21) in block-attn-emulate against
the float64 reference, on both chips.

The work item is a block of 128 tokens and a k/v head: K and V (128 rows) come once, then Q and
dO of each of the G query heads in 64-row halves. sm_90a: two consumer warpgroups, consumer i on
query half i and key half i, each summing its key half's dK and dV over the group in registers
and handing each head's P_i and dS_i to the other through the one-slot ring "pds<i>". sm_100a:
two softmax replicas (replica r on half r) and the group's dV and dK summed in tensor memory by
the MMA warp. The emulator checks the protocol (a buffer overwritten while a product still reads
it is reported) and the numerics: on one SM (one CTA walks every item and reuses every slot) and
on three, on empty and one-token sequences, partial blocks around the block and its half (63-65,
127-129, 191-193) and a long sequence; every gradient element is written, the gradients miss
the block-64 reference and the reference of another k/v head mapping.

Above head dim 64 (96 and 128) an item is made in passes over column chunks of the head dim (two
of 64 columns at 128, three of 32 at 96): each pass recomputes S and dP at full depth and sums its
chunk of dV and dK over the group; dQ's chunk is stored per head and pass. sm_100a builds them for
every group (a group of 2 since session 20: its MMA warp's loop over the other head runs to a count
ptxas cannot read, which had laid the heads out straight and spilled).

Above head dim 128 (192 and 256, sm_90a, session 21) an item's K, V and a head's Q, dO do not fit
shared memory next to P and dS: the producer streams 64-column chunks of a query half and K (then
dO's and V's) through the ring "chunks", S and dP are accumulated over them in each of the D / 64
passes, and each pass's "qdo" slot holds its chunk of Q, dO and K for dV, dK and dQ. sm_100a the
same since session 22: the same producer and rings, the MMA warp accumulating each half's S and dP
over the chunks in tensor memory. Rotary embeddings there stay refused
(test_grouped_large_block_refusals).

The default sample keeps `make check` fast (above head dim 128 on fewer lengths, WIDE_LENGTHS);
BLOCKATTN_EMULATE_FULL=1 runs the whole matrix on every length
(G = 2, 4 and MQA, head dims 32, 64, 96 and 128, bf16 and f16, plain, causal, dlse, both chips,
1 and 3 SMs; at 192 and 256 both chips with G = 2, 3, 4, 8 and MQA).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 300, 2, 3)
FULL = os.environ.get("BLOCKATTN_EMULATE_FULL") == "1"
# Above head dim 128 an item costs the emulator several times one at 128 (64-column chunks
# streamed every pass): the sample's wide cases take the edges of the first two blocks and their
# halves, on 10 of the 19 items a head (test_emulator_gqa_b128_rotary.py too); the full matrix
# every length.
WIDE_LENGTHS = (0, 1, 63, 65, 127, 129, 193, 2, 3)


def lengths_of(c: em.Case):
    """The sequence lengths of case `c`'s problem."""
    return WIDE_LENGTHS if c.head_dim > 128 and not FULL else LENGTHS


def case(head_dim, dtype, group, causal=False, lse=False):
    return em.Case("backward", head_dim, dtype, group=group, causal=causal, lse=lse, block_size=128)


# (chip, case, query heads, SMs): G = 2, 4 and MQA (Hkv = 1), head dims 32 and 64, bf16 and f16,
# causal, dlse, one SM and three.
SAMPLE = [
    ("sm_90a", case(64, "bf16", 2), 4, 1),
    ("sm_90a", case(32, "f16", 4, causal=True, lse=True), 4, 3),
    ("sm_100a", case(64, "f16", 2, causal=True, lse=True), 2, 3),
    ("sm_100a", case(32, "bf16", 4), 8, 1),
    # sm_90a above head dim 64: an item in passes over column chunks of the head dim (two of 64
    # columns at 128, three of 32 at 96). MQA: one k/v head.
    ("sm_90a", case(128, "bf16", 2, causal=True, lse=True), 4, 1),
    ("sm_90a", case(96, "f16", 4), 4, 3),
    ("sm_90a", case(128, "f16", 4), 8, 3),
    ("sm_90a", case(96, "bf16", 2, causal=True, lse=True), 2, 1),
    # sm_100a above head dim 64 (groups of 3 and more): the same passes, the MMA warp's operands
    # pinned after the query head. MQA: one k/v head (G = 4 and 8).
    ("sm_100a", case(128, "bf16", 4, causal=True, lse=True), 8, 1),
    ("sm_100a", case(96, "f16", 4), 4, 3),
    ("sm_100a", case(128, "f16", 8), 8, 3),
    ("sm_100a", case(96, "bf16", 4, causal=True, lse=True), 8, 1),
    # sm_100a, a group of 2 above head dim 64 (two k/v heads): the MMA warp's loop over the other
    # head of each pass runs to G pinned after the k/v head.
    ("sm_100a", case(128, "bf16", 2, causal=True, lse=True), 4, 1),
    ("sm_100a", case(128, "f16", 2, causal=True, lse=True), 4, 3),
    ("sm_100a", case(96, "bf16", 2, causal=True, lse=True), 4, 3),
    ("sm_100a", case(96, "f16", 2), 4, 1),
]

# sm_90a above head dim 128 (192 and 256): K, V, Q and dO streamed in 64-column chunks (S and dP
# accumulated over them, every pass), an item made in D / 64 passes of one 64-column chunk of dV
# and dK summed over the group. G = 2 and 4; MQA at 192.
WIDE = [
    ("sm_90a", case(192, "bf16", 2), 4, 1),
    ("sm_90a", case(192, "f16", 4, causal=True, lse=True), 8, 3),
    ("sm_90a", case(256, "bf16", 4, causal=True, lse=True), 4, 1),
    ("sm_90a", case(256, "f16", 2, lse=True), 4, 3),
    ("sm_90a", case(192, "bf16", 3, causal=True), 6, 3),
    # sm_100a (session 22): the same chunks, S and dP accumulated in tensor memory.
    ("sm_100a", case(192, "bf16", 2), 4, 1),
    ("sm_100a", case(192, "f16", 4, causal=True, lse=True), 8, 3),
    ("sm_100a", case(256, "bf16", 4, causal=True, lse=True), 4, 1),
    ("sm_100a", case(256, "f16", 2, lse=True), 4, 3),
    ("sm_100a", case(256, "bf16", 3, causal=True), 6, 3),
]
SAMPLE += WIDE


def full_matrix():
    cases = []
    for chip, d, dtype, (group, heads), (causal, lse), sms in itertools.product(
            ("sm_90a", "sm_100a"), (32, 64, 96, 128), ("bf16", "f16"), ((2, 4), (4, 8), (4, 4)),
            ((False, False), (True, False), (False, True), (True, True)), (1, 3)):
        cases.append((chip, case(d, dtype, group, causal, lse), heads, sms))
    # Above head dim 128: both chips (64-column chunks streamed), G = 2, 3, 4, 8 and MQA.
    for chip, d, dtype, (group, heads), (causal, lse), sms in itertools.product(
            ("sm_90a", "sm_100a"), (192, 256), ("bf16", "f16"), ((2, 4), (3, 6), (4, 8), (8, 8), (4, 4)),
            ((False, False), (True, False), (False, True), (True, True)), (1, 3)):
        cases.append((chip, case(d, dtype, group, causal, lse), heads, sms))
    return cases


CASES = full_matrix() if FULL else SAMPLE


def case_id(x):
    if isinstance(x, em.Case):
        return x.name
    return x if isinstance(x, str) else f"{x}"



@pytest.mark.parametrize("chip,c,heads,sms", CASES, ids=case_id)
def test_grouped_large_block_backward_matches_reference(chip, c, heads, sms, emulated_kernel):
    base = emulated_kernel(c, chip)
    tensors = em.make_problem(c, lengths=lengths_of(c), heads=heads, seed=sms + heads)
    kv_heads = heads // c.group
    assert tensors["dk"].shape[1] == kv_heads and tensors["dq"].shape[1] == heads
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": c.head_dim ** -0.5}, num_sms=sms, seed=sms)
    assert em.check_close(c, out, em.reference_outputs(c, tensors)) == []
    for name in c.outputs:
        assert (out[name] != em.POISON).all(), name
    # The block is 128 tokens: the block-64 reference is missed.
    as64 = dataclasses.replace(c, block_size=64)
    assert em.check_close(c, out, em.reference_outputs(as64, tensors)) != []
    # Each mode changes the result.
    if c.causal:
        plain = dataclasses.replace(c, causal=False)
        assert em.check_close(c, out, em.reference_outputs(plain, tensors)) != []
    if c.lse:
        no_dlse = dataclasses.replace(c, lse=False)
        assert em.check_close(no_dlse, out, em.reference_outputs(no_dlse, tensors)) != []
    if kv_heads > 1:
        # Query head h on k/v head (h / G + 1) % Hkv instead of h / G: another result.
        order = [(j + 1) % kv_heads for j in range(kv_heads)]
        wrong = dict(tensors)
        wrong["k"] = np.ascontiguousarray(tensors["k"][:, order])
        wrong["v"] = np.ascontiguousarray(tensors["v"][:, order])
        assert em.check_close(c, out, em.reference_outputs(c, wrong)) != []


# group-roles=query-halves (sm_90a, opt-in; docs/pipeline.md, "Query halves"): a load warpgroup
# and two consumers, consumer i on query half i of every head (S, P, dP, dS, dQ's chunk) and key
# half i's dV and dK (the pass's chunk) summed over the group, P and dS handed to the other
# through the one-slot ring "pds<i>". G = 2 and 4 (and MQA), head dims 32 to 128 (passes at 96
# and 128), bf16 and f16, causal with dlse, partial blocks (LENGTHS), 1 and 3 SMs.
QUERY_HALVES = [
    (case(64, "bf16", 2), 4, 1),
    (case(64, "f16", 4, causal=True, lse=True), 8, 3),
    (case(128, "bf16", 2, causal=True, lse=True), 4, 1),
    (case(128, "f16", 4), 4, 3),
    (case(96, "bf16", 4, causal=True, lse=True), 8, 3),
    (case(32, "f16", 2, causal=True, lse=True), 4, 1),
]


def compile_query_halves(c, directory):
    out = directory / "query_halves"
    subprocess.run([find_compiler(), *c.compiler_flags("sm_90a"), "--group-roles=query-halves",
                    "-o", str(out), "--quiet"], check=True)
    return out / f"k_{c.name}"


@pytest.mark.parametrize("c,heads,sms", QUERY_HALVES, ids=case_id)
def test_query_halves_backward_matches_reference(c, heads, sms, tmp_path):
    base = compile_query_halves(c, tmp_path)
    # The option's partitions: a load and two consumers, the rings "pds0" and "pds1".
    ptx = base.with_suffix(".ptx").read_text()
    assert ptx.count("setmaxnreg") == 3
    tensors = em.make_problem(c, lengths=LENGTHS, heads=heads, seed=sms + heads + 7)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": c.head_dim ** -0.5}, num_sms=sms, seed=sms)
    assert em.check_close(c, out, em.reference_outputs(c, tensors)) == []
    for name in c.outputs:
        assert (out[name] != em.POISON).all(), name
    as64 = dataclasses.replace(c, block_size=64)
    assert em.check_close(c, out, em.reference_outputs(as64, tensors)) != []


def test_query_halves_refusals(tmp_path):
    """The option is refused with rotary embeddings (both consumers would rotate the shared K
    and Q in place), on sm_100a and at blocks of up to 64, by name."""
    rotary = em.Case("backward", 64, "bf16", "interleaved", group=2, block_size=128)
    for c, chip, words in (
            (rotary, "sm_90a", "group-roles=query-halves does not apply with rotary embeddings"),
            (case(64, "bf16", 2), "sm_100a",
             "group-roles=query-halves applies to the sm_90a grouped-query backward at block "
             "size 128"),
            (em.Case("backward", 64, "bf16", group=2), "sm_90a",
             "group-roles=query-halves applies to the sm_90a grouped-query backward at block "
             "size 128")):
        run = subprocess.run([find_compiler(), *c.compiler_flags(chip), "--group-roles=query-halves",
                              "-o", str(tmp_path / "k"), "--quiet"], capture_output=True, text=True)
        assert run.returncode != 0, c.name
        assert words in run.stderr, run.stderr
