"""Grouped-query and multi-query attention's forward on the GPU (issue 21).

q has Hq = G * Hkv heads, k and v Hkv; query head h attends with k/v head
h // G. Checked against the float64 reference (blockattn.reference.forward,
which takes k and v with fewer heads) on jagged lengths, and against the same
kernel's plain attention on k and v repeated G times (the definition), for
G = 1, 2, 4, 8 and MQA (Hkv = 1), both dtypes, head dims 64 and 128, with and
without rotary. Tolerances are test_forward_gpu's.

The backward sums dk and dv over each group inside the kernel: its dq, dk,
dv (dk, dv with Hkv heads) are checked against the float64 reference's
gradients (blockattn.reference.backward, which sums over the group) for
G = 1, 2, 4, 8, MQA and fp16, with test_backward_gpu's tolerances; bits
equal to the repeated-heads kernel's are not expected for dk and dv (the
group's sum is in f32 before one rounding, not bf16 gradients summed).
With rotary embeddings (issue 21) the grouped backward rotates K (and V) once
an item and each query head's Q, and turns the gradients back: checked
against the reference's rotary gradients for both layouts, a positions
tensor and rotate_v, G = 2, 4 and MQA, head dims 64 and 128, and with interleaved
embeddings at head dims 192 and 256 (test_backward_large_head_dims_rotary*; from rotary_theta,
launched directly: test_backward_large_head_dims_rotary_theta*), half-split ones there since
session 23 in 64-byte-swizzled pieces (test_backward_large_head_dims_half_split_rotary*; session
21's one-box chunks missed the reference on an H100).

Kernels (the coordinator prebuilds them: scripts/gpu_gqa.sh prebuild DIR):
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 64,128 --dtypes bf16,f16 --groups 1,2,3,4,8
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward \
        --head-dims 64,128 --dtypes bf16 --rotary half_split --groups 2,4
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 64,128 --dtypes bf16,f16 --groups 4 [--causal] [--lse]
    (each of --causal, --lse and both; scripts/gpu_gqa.sh prebuild builds them all)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 64,128 --dtypes bf16,f16 --rotary half_split,interleaved \
        --rotary-variants plain,pos,rv,pos_rv --groups 2,4
    (the grouped rotary backward; a kernel that is not prebuilt compiles on first use)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 32,64 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8 [--causal] [--lse]
    (the grouped backward at block size 128, test_backward_block_size_128*)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 32,64 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8 \
        --rotary half_split,interleaved --rotary-variants plain,pos,rv,pos_rv [--causal --lse]
    (with rotary embeddings, test_backward_block_size_128_rotary*)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
        --head-dims 96,128 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8,16 [--causal] [--lse]
    (head dims 96 and 128 at block size 128, test_backward_block_size_128_wide*)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
        --head-dims 192,256 --block-sizes 128 --dtypes bf16,f16 --groups 2,3,4,8 [--causal] [--lse]
    (head dims 192 and 256 at block size 128, test_backward_block_size_128_chunked*; with
    --rotary interleaved,half_split --rotary-variants plain,pos,rv,pos_rv [--causal --lse],
    test_backward_block_size_128_chunked_rotary*)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from . import reference_torch
from .test_backward_gpu import check_grads as backward_check_grads
from .test_forward_gpu import GUARD_ROWS, check, cu_seqlens_of

EDGE_LENGTHS = [0, 1, 63, 64, 65, 2000, 0, 130, 7, 0]
# (Hq, Hkv): G = 1, 2, 4, 8, and multi-query attention (Hkv = 1) at G = 4 and 3.
GROUPS = [(4, 4), (4, 2), (8, 2), (8, 1), (4, 1), (3, 1)]


def make_inputs(lengths, hq, hkv, head_dim, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    cu = cu_seqlens_of(lengths)
    T = int(cu[-1])

    def randn(heads):
        return torch.randn((T, heads, head_dim), generator=g, device="cuda", dtype=torch.float32).to(dtype)

    return randn(hq), randn(hkv), randn(hkv), cu


def float64_reference(q, k, v, cu, rotary=None):
    """blockattn.reference.forward on the inputs' exact values, as a CUDA float64 tensor."""
    # One Rotary object serves the kernels and the reference.
    o = reference.forward(*(reference_torch.to_numpy(t) for t in (q, k, v)), cu.cpu().numpy(),
                          rotary=rotary)
    return torch.from_numpy(np.ascontiguousarray(o)).to("cuda")


def run_case(lengths, hq, hkv, head_dim, dtype=torch.bfloat16, seed=0):
    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    T = q.shape[0]
    buffer = torch.full((T + 2 * GUARD_ROWS, hq, head_dim), float("nan"), dtype=dtype, device="cuda")
    o = buffer[GUARD_ROWS:GUARD_ROWS + T]
    blockattn.block_attention(q, k, v, cu, out=o)
    torch.cuda.synchronize()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    check(o, float64_reference(q, k, v, cu), dtype)
    return q, k, v, cu, o


@pytest.mark.parametrize("hq,hkv", GROUPS, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_jagged_edges(hq, hkv, head_dim):
    run_case(EDGE_LENGTHS, hq, hkv, head_dim)


@pytest.mark.parametrize("hq,hkv", [(4, 2), (8, 1)])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_fp16(hq, hkv, head_dim):
    run_case(EDGE_LENGTHS, hq, hkv, head_dim, dtype=torch.float16)


@pytest.mark.parametrize("hq,hkv", [(8, 2), (16, 2), (16, 4)])
def test_equals_repeated_heads(hq, hkv):
    """The grouped kernel gives what the plain kernel gives on k and v repeated G times: the
    same f32 arithmetic, so the same bits; and the kv head a query head reads matters (k
    tiled instead of repeated gives another output)."""
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 1500, size=40)
    q, k, v, cu, o = run_case(lengths, hq, hkv, 128, seed=5)
    group = hq // hkv
    plain = blockattn.block_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1), cu)
    assert torch.equal(o, plain)
    tiled = blockattn.block_attention(q, k.repeat(1, group, 1), v.repeat(1, group, 1), cu)
    assert not torch.equal(o, tiled)


def test_single_long_sequence_mqa():
    run_case([100_003], 8, 1, 128)


def test_rotary():
    cos, sin = (torch.from_numpy(t.astype(np.float32)).cuda() for t in reference.rope_tables(2048, 128))
    rotary = blockattn.Rotary(cos, sin)
    for hq, hkv in [(4, 2), (8, 2), (4, 1)]:
        q, k, v, cu = make_inputs(EDGE_LENGTHS, hq, hkv, 128, torch.bfloat16, seed=9)
        o = blockattn.block_attention(q, k, v, cu, rotary=rotary)
        check(o, float64_reference(q, k, v, cu, rotary), torch.bfloat16)


def float64_grads(q, k, v, cu, do, rotary=None):
    """blockattn.reference.backward on the inputs' exact values (dk, dv summed over each
    group), as CUDA float64 tensors."""
    grads = reference.backward(*(reference_torch.to_numpy(t) for t in (q, k, v, do)), cu.cpu().numpy(),
                               rotary=rotary)
    return [torch.from_numpy(np.ascontiguousarray(g)).to("cuda") for g in grads]


def check_grads(got, want, dtype):
    """test_backward_gpu's check (its tolerances), after the gradients' shapes (dk and dv have
    k's heads)."""
    for name, g, r in zip(("dq", "dk", "dv"), got, want):
        assert g.shape == r.shape, f"{name}: shape {tuple(g.shape)}, expected {tuple(r.shape)}"
    backward_check_grads(got, want, dtype)


def grad_output_like(q, seed):
    """dO from its own seeded generator: the same seed gives the same dO (torch.randn_like
    draws from the global generator, a different dO on every call)."""
    g = torch.Generator(device="cuda").manual_seed(seed + 1_000_003)
    return torch.randn(q.shape, generator=g, device="cuda", dtype=torch.float32).to(q.dtype)


def run_backward_case(lengths, hq, hkv, head_dim, dtype=torch.bfloat16, seed=0):
    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    do = grad_output_like(q, seed)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    blockattn.block_attention(*leaves, cu).backward(do)
    torch.cuda.synchronize()
    grads = [t.grad for t in leaves]
    check_grads(grads, float64_grads(q, k, v, cu, do), dtype)
    return grads


@pytest.mark.parametrize("hq,hkv", GROUPS, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_jagged_edges(hq, hkv, head_dim):
    run_backward_case(EDGE_LENGTHS, hq, hkv, head_dim)


@pytest.mark.parametrize("hq,hkv", [(4, 2), (8, 1)])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_fp16(hq, hkv, head_dim):
    run_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, dtype=torch.float16)


def test_backward_random_batch_and_deterministic():
    """Many tiles (every CTA runs several items), and two runs give the same bits: the group's
    sum has a fixed order, no atomics."""
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 1500, size=40)
    first = run_backward_case(lengths, 16, 2, 128, seed=11)
    second = run_backward_case(lengths, 16, 2, 128, seed=11)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def test_backward_dq_equals_repeated_heads():
    """dq is per query head, as the plain kernel's on k and v repeated G times (the same
    products, so the same bits); dk and dv are sums over the group in f32 and are only
    checked against the reference."""
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 8, 2, 128, torch.bfloat16, seed=12)
    do = grad_output_like(q, 12)  # the dO run_backward_case draws for seed 12
    dq, dk, dv = run_backward_case(EDGE_LENGTHS, 8, 2, 128, seed=12)
    leaves = [t.clone().requires_grad_(True) for t in (q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))]
    blockattn.block_attention(*leaves, cu).backward(do)
    assert torch.equal(dq, leaves[0].grad)


def test_backward_kvpacked():
    """block_attention_kvpacked's grouped backward: one [T, 2, Hkv, D] gradient for kv."""
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 8, 2, 64, torch.bfloat16, seed=13)
    do = torch.randn_like(q)
    ql, kv = q.clone().requires_grad_(True), torch.stack([k, v], dim=1).requires_grad_(True)
    blockattn.block_attention_kvpacked(ql, kv, cu).backward(do)
    check_grads([ql.grad, kv.grad[:, 0], kv.grad[:, 1]], float64_grads(q, k, v, cu, do), torch.bfloat16)


def rotary_of(T, head_dim, interleaved, positions, rotate_v, seed):
    """A blockattn.Rotary (standard tables of 2048 positions; with `positions`, random
    positions anywhere in them) that serves the kernels and the reference."""
    cos, sin = (torch.from_numpy(t.astype(np.float32)).cuda() for t in reference.rope_tables(2048, head_dim))
    pos = None
    if positions:
        g = torch.Generator(device="cuda").manual_seed(seed)
        pos = torch.randint(0, 2048, (T,), generator=g, device="cuda", dtype=torch.int32)
    return blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)


# (Hq, Hkv, head dim, positions, rotate_v): G = 2 and 4, MQA, both head dims (the sm_90a
# kernel's roles differ: serial at 64; at 128 pipelined, pipelined-dq with rotate_v and the
# sequence's positions), each variant.
ROTARY_BACKWARD = [
    (4, 2, 64, False, False),
    (8, 2, 64, True, True),
    (4, 1, 64, False, True),
    (4, 2, 128, False, False),
    (8, 2, 128, True, False),
    (8, 2, 128, False, True),
    (4, 1, 128, True, True),
]


@pytest.mark.parametrize("interleaved", [pytest.param(False, id="half_split"),
                                         pytest.param(True, id="interleaved")])
@pytest.mark.parametrize("hq,hkv,head_dim,positions,rotate_v", ROTARY_BACKWARD,
                         ids=lambda x: str(x))
def test_backward_rotary(hq, hkv, head_dim, positions, rotate_v, interleaved):
    """The grouped rotary backward against the float64 reference's rotary gradients (dk and
    dv summed over the group, turned back once), on jagged lengths (empty sequences, one
    token, partial blocks)."""
    q, k, v, cu = make_inputs(EDGE_LENGTHS, hq, hkv, head_dim, torch.bfloat16, seed=21)
    rotary = rotary_of(q.shape[0], head_dim, interleaved, positions, rotate_v, seed=22)
    do = grad_output_like(q, 21)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    blockattn.block_attention(*leaves, cu, rotary=rotary).backward(do)
    torch.cuda.synchronize()
    check_grads([t.grad for t in leaves], float64_grads(q, k, v, cu, do, rotary), torch.bfloat16)


def test_backward_rotary_fp16_and_deterministic():
    """fp16, many tiles, and two runs give the same bits (the group's sum has a fixed order)."""
    rng = np.random.default_rng(23)
    lengths = rng.integers(0, 1500, size=40)
    q, k, v, cu = make_inputs(lengths, 16, 4, 128, torch.float16, seed=23)
    rotary = rotary_of(q.shape[0], 128, False, True, False, seed=24)
    do = grad_output_like(q, 23)
    runs = []
    for _ in range(2):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        blockattn.block_attention(*leaves, cu, rotary=rotary).backward(do)
        runs.append([t.grad for t in leaves])
    check_grads(runs[0], float64_grads(q, k, v, cu, do, rotary), torch.float16)
    for a, b in zip(*runs):
        assert torch.equal(a, b)


def test_not_a_multiple_raises():
    q, k, v, cu = make_inputs([130, 5], 6, 4, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="k: 4 heads, but q has 6"):
        blockattn.block_attention(q, k, v, cu)


def test_after_plain_call_fast_path():
    """A plain call registers the fast path of its configuration; a grouped call with the
    same q config then goes around it (the native record refuses k's heads) and still
    launches the grouped kernel."""
    q, k, v, cu = make_inputs([300, 64, 5], 8, 8, 128, torch.bfloat16, seed=4)
    blockattn.block_attention(q, k, v, cu)
    blockattn.block_attention(q, k, v, cu)
    kg, vg = k[:, :2].contiguous(), v[:, :2].contiguous()
    o = blockattn.block_attention(q, kg, vg, cu)
    check(o, float64_reference(q, kg, vg, cu), torch.bfloat16)


def test_kvpacked():
    """block_attention_kvpacked with kv [T, 2, Hkv, D]: the grouped kernel reads k and v as
    the two slices of one tensor (token stride 2 Hkv D)."""
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 8, 2, 128, torch.bfloat16, seed=6)
    kv = torch.stack([k, v], dim=1)
    o = blockattn.block_attention_kvpacked(q, kv, cu)
    check(o, float64_reference(q, k, v, cu), torch.bfloat16)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_causal_and_lse(head_dim, dtype, causal, lse):
    """The grouped backward with the causal mask and dlse (at head dim 128 two consumer
    warpgroups each recompute S and dS for their columns of dv, dk and dq), against
    blockattn.reference.backward with the group's sum."""
    hq, hkv = 8, 2
    q, k, v, cu = make_inputs(EDGE_LENGTHS, hq, hkv, head_dim, dtype, seed=head_dim + 7)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, causal=causal, return_lse=lse)
    o, l = result if lse else (result, None)
    g = torch.Generator(device="cuda").manual_seed(5)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((hq, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    args = [reference_torch.to_numpy(t) for t in (q, k, v, do)]
    want = reference.backward(*args, cu.cpu().numpy(), causal=causal,
                              dlse=None if dlse is None else reference_torch.to_numpy(dlse))
    check_grads([t.grad for t in leaves], [torch.from_numpy(np.ascontiguousarray(w)).cuda() for w in want],
                dtype)


# The grouped backward at block size 128 (issues 20 and 21): without rotary embeddings, up to
# head dim 128 on both chips (above 64 in column passes); sm_90a runs a scores warpgroup and an accumulate warpgroup per key half (dV and dK
# summed over the group in registers). Lengths around the block and its half; G = 2, 4, 8 and
# MQA; both dtypes; causal and dlse; deterministic (the group's sum in a fixed order).
B128_LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 2000, 0, 300, 7]
B128_GROUPS = [(4, 2), (8, 2), (8, 1), (4, 1)]


def run_b128_backward(hq, hkv, head_dim, dtype=torch.bfloat16, causal=False, lse=False, seed=0,
                      lengths=B128_LENGTHS, rotary_flags=None):
    """`rotary_flags`: (interleaved, positions, rotate_v) for a rotary call (rotary_of)."""
    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    rotary = None if rotary_flags is None else rotary_of(q.shape[0], head_dim, *rotary_flags, seed=seed + 9)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=128, causal=causal, return_lse=lse,
                                       rotary=rotary)
    o, l = result if lse else (result, None)
    g = torch.Generator(device="cuda").manual_seed(seed + 5)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((hq, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    torch.cuda.synchronize()
    args = [reference_torch.to_numpy(t) for t in (q, k, v, do)]
    want = reference.backward(*args, cu.cpu().numpy(), block_size=128, causal=causal, rotary=rotary,
                              dlse=None if dlse is None else reference_torch.to_numpy(dlse))
    grads = [t.grad for t in leaves]
    check_grads(grads, [torch.from_numpy(np.ascontiguousarray(w)).cuda() for w in want], dtype)
    return grads


@pytest.mark.parametrize("hq,hkv", B128_GROUPS, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [32, 64])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_backward_block_size_128(hq, hkv, head_dim, dtype):
    run_b128_backward(hq, hkv, head_dim, dtype, seed=hq + head_dim)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("head_dim", [32, 64])
def test_backward_block_size_128_causal_and_lse(head_dim, causal, lse):
    run_b128_backward(8, 2, head_dim, causal=causal, lse=lse, seed=head_dim + 3)


def assert_b128_backward_deterministic(lengths_seed, *args, **kwargs):
    """Many items (40 random lengths up to 1500: every CTA runs several, the rings wrap), and two
    runs of run_b128_backward give the same bits."""
    lengths = np.random.default_rng(lengths_seed).integers(0, 1500, size=40)
    first = run_b128_backward(*args, lengths=lengths, **kwargs)
    second = run_b128_backward(*args, lengths=lengths, **kwargs)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def test_backward_block_size_128_random_batch_and_deterministic():
    """Many items (every CTA runs several; the rings wrap), and two runs give the same bits."""
    assert_b128_backward_deterministic(21, 16, 2, 64, seed=21)


# With rotary embeddings (issues 20 and 21): K (and V) rotated once an item, each head's Q in
# its two halves (the second at + 64), dQ turned back per head, dK (dV) once per key half after
# the group. Every variant (both layouts, positions, rotate_v), G = 2, 4, 8 and MQA, both
# dtypes, causal with dlse, and two runs giving the same bits. Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 32,64 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8 \
#         --rotary half_split,interleaved --rotary-variants plain,pos,rv,pos_rv [--causal --lse]
B128_ROTARY = [
    (4, 2, 64, (False, False, False)),
    (8, 2, 64, (True, False, False)),
    (8, 1, 32, (False, True, False)),
    (4, 1, 64, (True, True, True)),
    (4, 2, 32, (False, False, True)),
    (16, 2, 64, (True, False, True)),
]


@pytest.mark.parametrize("hq,hkv,head_dim,flags", B128_ROTARY, ids=str)
def test_backward_block_size_128_rotary(hq, hkv, head_dim, flags):
    run_b128_backward(hq, hkv, head_dim, seed=hq + head_dim + 31, rotary_flags=flags)


@pytest.mark.parametrize("head_dim", [32, 64])
def test_backward_block_size_128_rotary_fp16_causal_lse(head_dim):
    run_b128_backward(8, 2, head_dim, torch.float16, causal=True, lse=True, seed=head_dim + 41,
                      rotary_flags=(False, True, True))


def test_backward_block_size_128_rotary_random_batch_and_deterministic():
    assert_b128_backward_deterministic(43, 16, 2, 64, seed=43, rotary_flags=(True, False, True))


# Head dims 96 and 128 at block size 128 (sm_90a, session 18; sm_100a, groups of 3 and more
# session 19, a group of 2 session 20, (4, 2) here; no sm_100a GPU yet): an item in passes over column
# chunks of the head dim (three of 32 columns at 96, two of 64 at 128), each recomputing S and
# dP and summing its chunk of dV and dK over the group. G = 2, 4, 8, 16 and MQA, both dtypes,
# causal and dlse, deterministic.
@pytest.mark.parametrize("hq,hkv", B128_GROUPS + [(16, 1)], ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [96, 128])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_backward_block_size_128_wide(hq, hkv, head_dim, dtype):
    run_b128_backward(hq, hkv, head_dim, dtype, seed=hq + head_dim)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("head_dim", [96, 128])
def test_backward_block_size_128_wide_causal_and_lse(head_dim, causal, lse):
    run_b128_backward(4, 2, head_dim, causal=causal, lse=lse, seed=head_dim + 3)


def test_backward_block_size_128_wide_random_batch_and_deterministic():
    """Many items at head dim 128 (every CTA runs several; the one-slot rings wrap), two runs
    giving the same bits."""
    assert_b128_backward_deterministic(22, 8, 1, 128, seed=22)


# With interleaved rotary embeddings at head dims 96 and 128 (sm_90a, session 19; at 128
# accumulate warpgroup 1 keeps the launch's 128 registers with its own setmaxnreg): the same passes, K (V) rotated once an item, Q again every pass, each pass's chunk of dQ, dK (dV) turned
# back on its own. Every variant, G = 2, 4, 8 and MQA, both dtypes, causal with dlse,
# deterministic. Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 96,128 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8 \
#         --rotary interleaved --rotary-variants plain,pos,rv,pos_rv [--causal --lse]
B128_WIDE_ROTARY = [
    (4, 2, 96, (True, False, False)),
    (8, 2, 96, (True, True, False)),
    (8, 1, 96, (True, False, True)),
    (4, 1, 96, (True, True, True)),
    (16, 2, 96, (True, True, True)),
    (4, 2, 128, (True, False, True)),
    (8, 4, 128, (True, True, True)),
    (8, 1, 128, (True, True, False)),
    # G = 3 (sm_100a builds groups of 3 and more here since session 20, compiled and emulated
    # only; on an sm_100a GPU the G = 2 cases above are refused by the compiler).
    (12, 4, 96, (True, True, True)),
    (12, 4, 128, (True, False, True)),
]


@pytest.mark.parametrize("hq,hkv,head_dim,flags", B128_WIDE_ROTARY, ids=str)
def test_backward_block_size_128_wide_rotary(hq, hkv, head_dim, flags):
    run_b128_backward(hq, hkv, head_dim, seed=hq + head_dim + 37, rotary_flags=flags)


@pytest.mark.parametrize("head_dim", [96, 128])
def test_backward_block_size_128_wide_rotary_fp16_causal_lse(head_dim):
    run_b128_backward(8, 2, head_dim, torch.float16, causal=True, lse=True, seed=head_dim + 47,
                      rotary_flags=(True, True, True))


def test_backward_block_size_128_wide_rotary_random_batch_and_deterministic():
    assert_b128_backward_deterministic(44, 8, 2, 96, seed=44, rotary_flags=(True, False, True))


# With half-split rotary embeddings at head dim 128 (both chips; sm_90a run on an H100 in
# session 27, sm_100a compiled and emulated only): every tensor loaded in pair-complete 64-column chunks (columns [32 j, 32 j + 32) and
# their partners 64 on), each two 32-column pieces under the 64-byte swizzle, two TMA boxes that
# fill their swizzle span (session 23; session 21's one box of two 64-byte pieces under the
# 128-byte swizzle missed the float64 reference on an H100), each chunk rotated as a half-split
# part, each pass's gradient chunk turned back on its own and stored as two 32-column pieces.
# At head dim 96 (session 24; sm_90a run on an H100 in session 27): pair-complete
# 32-column chunks (columns [16 j, 16 j + 16) and their partners 48 on), each two 16-column pieces
# under the 32-byte swizzle (`chunk_cols = 16`), two 32-byte TMA boxes that fill the 32-byte span,
# three passes, each gradient chunk stored as two 16-column pieces (16-column boxes, 32-byte
# swizzle): these cases are the hardware check of the 32-byte-swizzled layout.
# Every variant, G = 2, 3, 4 and MQA, both dtypes, causal with dlse, deterministic. Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 96,128 --block-sizes 128 --dtypes bf16,f16 --groups 2,3,4,8 \
#         --rotary half_split --rotary-variants plain,pos,rv,pos_rv [--causal --lse]
B128_WIDE_HALF_SPLIT = [
    (4, 2, 128, (False, False, False)),
    (8, 2, 128, (False, True, False)),
    (8, 1, 128, (False, False, True)),
    (8, 4, 128, (False, True, True)),
    (12, 4, 128, (False, True, True)),
    (16, 4, 128, (False, False, True)),
    (4, 2, 96, (False, False, False)),
    (8, 2, 96, (False, True, False)),
    (8, 1, 96, (False, False, True)),
    (12, 4, 96, (False, True, True)),
]


@pytest.mark.parametrize("hq,hkv,head_dim,flags", B128_WIDE_HALF_SPLIT, ids=str)
def test_backward_block_size_128_wide_half_split_rotary(hq, hkv, head_dim, flags):
    run_b128_backward(hq, hkv, head_dim, seed=hq + head_dim + 53, rotary_flags=flags)


@pytest.mark.parametrize("head_dim", [96, 128])
def test_backward_block_size_128_wide_half_split_rotary_fp16_causal_lse(head_dim):
    run_b128_backward(12, 4, head_dim, torch.float16, causal=True, lse=True, seed=59 + head_dim,
                      rotary_flags=(False, True, True))


@pytest.mark.parametrize("head_dim", [96, 128])
def test_backward_block_size_128_wide_half_split_rotary_random_batch_and_deterministic(head_dim):
    assert_b128_backward_deterministic(45, 8, 2, head_dim, seed=45 + head_dim,
                                       rotary_flags=(False, False, True))


# Head dims 192 and 256 at block size 128 (sm_90a, session 21; sm_100a session 22, compiled and
# emulated only, never run on a Blackwell GPU; no rotary embeddings): K, V, Q and dO streamed in
# 64-column chunks, S and dP accumulated over them in each of the D / 64 passes, each pass
# summing its chunk of dV and dK over the group (docs/head-dims.md). G = 2, 3, 4, 8 and MQA,
# both dtypes, causal and dlse, deterministic. Kernels (--chips sm_100a on a Blackwell GPU):
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 192,256 --block-sizes 128 --dtypes bf16,f16 --groups 2,3,4,8 [--causal] [--lse]
@pytest.mark.parametrize("hq,hkv", B128_GROUPS + [(6, 2)], ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [192, 256])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_backward_block_size_128_chunked(hq, hkv, head_dim, dtype):
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    run_b128_backward(hq, hkv, head_dim, dtype, seed=hq + head_dim + 5)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_block_size_128_chunked_causal_and_lse(head_dim, causal, lse):
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    run_b128_backward(8, 2, head_dim, causal=causal, lse=lse, seed=head_dim + 7)


def test_backward_block_size_128_chunked_random_batch_and_deterministic():
    """Many items at head dim 256 (every CTA runs several; the rings wrap), two runs giving the
    same bits."""
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    assert_b128_backward_deterministic(24, 8, 2, 256, seed=24)


# With rotary embeddings there (sm_90a, session 22, run on an H100 in session 27; sm_100a,
# session 24, compiled and emulated only): every streamed chunk is rotated in place as it lands (sm_90a: by the
# scores warpgroup; sm_100a: by a rotary warpgroup between the producer and the MMA warp, which
# signals each rotated slot) (interleaved; half-split ones loaded pair-complete as two
# 64-byte-swizzled 32-column pieces a chunk since session 23), the pass's Q and K chunks of "qdo"
# too, and each gradient chunk is turned back on its own. Both layouts, every variant, G = 2, 3,
# 4, 8 and MQA, both dtypes, causal with dlse, deterministic. Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a,sm_100a --kinds backward \
#         --head-dims 192,256 --block-sizes 128 --dtypes bf16,f16 --groups 2,3,4,8 \
#         --rotary interleaved,half_split --rotary-variants plain,pos,rv,pos_rv [--causal --lse]
B128_CHUNKED_ROTARY = [
    # (hq, hkv, head_dim, (interleaved, positions, rotate_v))
    (4, 2, 192, (True, False, False)),
    (8, 2, 192, (True, True, True)),
    (6, 2, 256, (True, False, True)),
    (8, 1, 256, (True, True, False)),
    (16, 2, 256, (True, True, False)),
    (4, 4, 256, (True, True, True)),
    (4, 2, 192, (False, False, False)),
    (6, 2, 192, (False, True, True)),
    (8, 2, 256, (False, False, True)),
    (16, 2, 256, (False, True, False)),
    (4, 4, 256, (False, True, True)),
    # half-split rotate_v without positions at 192 (session 26: split_items; passed on an H100
    # in session 27)
    (4, 2, 192, (False, False, True)),
    # interleaved rotate_v without positions at 256, G = 2 (session 28: the tables indexed in
    # 32 bits, narrow_index, with pinned_table_rows, where it spilled 36 bytes; passed on an
    # H100 in session 30)
    (4, 2, 256, (True, False, True)),
]


@pytest.mark.parametrize("hq,hkv,head_dim,flags", B128_CHUNKED_ROTARY, ids=str)
def test_backward_block_size_128_chunked_rotary(hq, hkv, head_dim, flags):
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    run_b128_backward(hq, hkv, head_dim, seed=hq + head_dim + 61, rotary_flags=flags)


@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_block_size_128_chunked_rotary_fp16_causal_lse(head_dim):
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    run_b128_backward(8, 2, head_dim, torch.float16, causal=True, lse=True, seed=head_dim + 67,
                      rotary_flags=(True, True, True))
    run_b128_backward(6, 2, head_dim, torch.float16, causal=True, lse=True, seed=head_dim + 68,
                      rotary_flags=(False, True, True))


def test_backward_block_size_128_chunked_rotary_random_batch_and_deterministic():
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("sm_90a and sm_100a only")
    assert_b128_backward_deterministic(46, 8, 2, 256, seed=46, rotary_flags=(True, False, True))


# The grouped backward above head dim 128 (issue 21): an item is made in D / 64 passes over
# 64-column chunks of the head dim, each recomputing the group's S, P, dP and dS and summing its
# chunk of dk and dv over the group (docs/pipeline.md, "Grouped-query attention"). Against the
# float64 reference's gradients (dk, dv summed over each group): G = 2, 4, 8 and MQA, both
# dtypes, blocks of 16, 32 and 64, causal and dlse, and two runs giving the same bits. Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 192,256 --block-sizes 16,32,64 --dtypes bf16,f16 --groups 2,4,8 \
#         [--causal] [--lse]
# (a kernel that is not prebuilt compiles on first use).
LARGE_HEAD_DIM_GROUPS = [(4, 2), (8, 2), (8, 1), (4, 1), (16, 2)]


def run_large_backward_case(lengths, hq, hkv, head_dim, dtype=torch.bfloat16, seed=0, block_size=64,
                            causal=False, lse=False):
    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=block_size, causal=causal, return_lse=lse)
    o, l = result if lse else (result, None)
    g = torch.Generator(device="cuda").manual_seed(seed + 5)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((hq, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    torch.cuda.synchronize()
    args = [reference_torch.to_numpy(t) for t in (q, k, v, do)]
    want = reference.backward(*args, cu.cpu().numpy(), block_size=block_size, causal=causal,
                              dlse=None if dlse is None else reference_torch.to_numpy(dlse))
    grads = [t.grad for t in leaves]
    check_grads(grads, [torch.from_numpy(np.ascontiguousarray(w)).cuda() for w in want], dtype)
    return grads


@pytest.mark.parametrize("hq,hkv", LARGE_HEAD_DIM_GROUPS, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims(hq, hkv, head_dim):
    run_large_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, seed=31)


@pytest.mark.parametrize("hq,hkv", [(4, 2), (8, 1)])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_fp16(hq, hkv, head_dim):
    run_large_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, dtype=torch.float16, seed=32)


@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_small_blocks(head_dim, block_size):
    lengths = [0, 1, block_size - 1, block_size, block_size + 1, 200, 3, 5, 130]
    run_large_backward_case(lengths, 8, 2, head_dim, seed=33, block_size=block_size)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_causal_and_lse(head_dim, dtype, causal, lse):
    run_large_backward_case(EDGE_LENGTHS, 8, 2, head_dim, dtype=dtype, seed=34, causal=causal, lse=lse)


def test_backward_large_head_dims_random_batch_and_deterministic():
    """Many items (every CTA runs several, the rings wrap), and two runs give the same bits."""
    rng = np.random.default_rng(35)
    lengths = rng.integers(0, 1500, size=30)
    first = run_large_backward_case(lengths, 8, 2, 256, seed=35)
    second = run_large_backward_case(lengths, 8, 2, 256, seed=35)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


# The grouped rotary backward above head dim 128 (issues 20 and 21): interleaved rotary
# embeddings in the passes over 64-column chunks (K, V rotated once an item, Q every pass, each
# pass's gradient chunk turned back on its own; docs/rotary.md, "Grouped-query backward").
# Against the float64 reference's rotary gradients: both head dims, G = 2, 4 and MQA, a
# positions tensor and rotate_v, fp16, blocks of 16 and 32, causal and dlse, two runs giving
# the same bits; half-split ones since session 21 (below). Kernels:
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
#         --head-dims 192,256 --block-sizes 16,32,64 --dtypes bf16,f16 --rotary interleaved \
#         --rotary-variants plain,pos,rv,pos_rv --groups 2,4 [--causal] [--lse]
# (a kernel that is not prebuilt compiles on first use).
LARGE_ROTARY_BACKWARD = [
    (4, 2, False, False),
    (8, 2, True, False),
    (8, 1, False, True),
    (4, 1, True, True),
]


def run_large_rotary_backward_case(lengths, hq, hkv, head_dim, positions, rotate_v, dtype=torch.bfloat16,
                                   seed=0, block_size=64, causal=False, lse=False, interleaved=True):
    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    rotary = rotary_of(q.shape[0], head_dim, interleaved, positions, rotate_v, seed=seed + 1)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=block_size, rotary=rotary, causal=causal,
                                       return_lse=lse)
    o, l = result if lse else (result, None)
    g = torch.Generator(device="cuda").manual_seed(seed + 5)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((hq, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    torch.cuda.synchronize()
    args = [reference_torch.to_numpy(t) for t in (q, k, v, do)]
    want = reference.backward(*args, cu.cpu().numpy(), block_size=block_size, rotary=rotary, causal=causal,
                              dlse=None if dlse is None else reference_torch.to_numpy(dlse))
    grads = [t.grad for t in leaves]
    check_grads(grads, [torch.from_numpy(np.ascontiguousarray(w)).cuda() for w in want], dtype)
    return grads


@pytest.mark.parametrize("hq,hkv,positions,rotate_v", LARGE_ROTARY_BACKWARD, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_rotary(hq, hkv, positions, rotate_v, head_dim):
    run_large_rotary_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, positions, rotate_v, seed=41)


@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_rotary_fp16_small_blocks(head_dim, block_size):
    lengths = [0, 1, block_size - 1, block_size, block_size + 1, 200, 3, 130]
    run_large_rotary_backward_case(lengths, 8, 2, head_dim, True, True, dtype=torch.float16, seed=42,
                                   block_size=block_size)


@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_rotary_causal_and_lse(head_dim):
    run_large_rotary_backward_case(EDGE_LENGTHS, 8, 2, head_dim, True, False, seed=43, causal=True, lse=True)


def test_backward_large_head_dims_rotary_random_batch_and_deterministic():
    """Many items (every CTA runs several, the rings wrap), and two runs give the same bits."""
    rng = np.random.default_rng(44)
    lengths = rng.integers(0, 1500, size=30)
    first = run_large_rotary_backward_case(lengths, 8, 2, 256, True, False, seed=44)
    second = run_large_rotary_backward_case(lengths, 8, 2, 256, True, False, seed=44)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


# The same from rotary_theta (session 19): the angles computed in the kernel, K, V and each
# pass's Q turned in a loop of passes that is not unrolled. The Python API passes tables, so these
# launch the compiled kernel directly (blockattn._driver, as the API does) and compare with the
# float64 reference's gradients on tables made at the kernel's base; the gradients also miss the
# other base's. Kernels (compiled on first use otherwise):
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds backward \
#         --head-dims 192,256 --block-sizes 32,64 --dtypes bf16,f16 --rotary interleaved \
#         --rotary-variants plain,pos,rv,pos_rv --groups 2,4 --rotary-theta [--causal --lse]
#     (and --rotary-theta 500 for the rotate_v cases)
def run_theta_large_rotary_backward_case(lengths, hq, hkv, head_dim, positions, rotate_v, theta,
                                         dtype=torch.bfloat16, seed=0, block_size=64, causal=False,
                                         lse=False, interleaved=True):
    from blockattn import _driver, _kernels

    q, k, v, cu = make_inputs(lengths, hq, hkv, head_dim, dtype, seed)
    T = q.shape[0]
    g = torch.Generator(device="cuda").manual_seed(seed + 5)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((hq, T), generator=g, device="cuda") if lse else None
    pos = torch.randint(0, 2048, (T,), generator=g, device="cuda", dtype=torch.int32) if positions else None
    key = _kernels.KernelKey(kind="backward", head_dim=head_dim, block_size=block_size,
                             dtype="bf16" if dtype == torch.bfloat16 else "f16", chip=_driver.chip_of(q.device),
                             rotary="interleaved" if interleaved else "half_split", positions=positions,
                             rotate_v=rotate_v, group=hq // hkv, causal=causal, lse=lse, rotary_theta=theta)
    kernel = _driver.load_kernel(_kernels.find_kernel(key), q.device)
    grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
    tensors = {"q": q, "k": k, "v": v, "do": do, "dq": grads[0], "dk": grads[1], "dv": grads[2],
               "cu_seqlens": cu}
    if pos is not None:
        tensors["positions"] = pos
    if dlse is not None:
        tensors["dlse"] = dlse.contiguous()
    kernel.call(tensors, {"softmax_scale": head_dim ** -0.5})
    torch.cuda.synchronize()
    largest = max(max(lengths), 2048) + 1
    args = [reference_torch.to_numpy(t) for t in (q, k, v, do)] + [cu.cpu().numpy()]

    def want(base):
        cos, sin = reference.rope_tables(largest, head_dim, base=base)
        rotary = reference.Rotary(cos, sin, interleaved=interleaved,
                                  positions=None if pos is None else pos.cpu().numpy(), rotate_v=rotate_v)
        return reference.backward(*args, block_size=block_size, rotary=rotary, causal=causal,
                                  dlse=None if dlse is None else reference_torch.to_numpy(dlse))

    check_grads(grads, [torch.from_numpy(np.ascontiguousarray(w)).cuda() for w in want(theta)], dtype)
    # The angles matter: the gradients miss the other base's.
    other = want(10500.0 - theta)
    assert max((g.double().cpu() - torch.from_numpy(np.ascontiguousarray(w))).abs().max().item()
               for g, w in zip(grads, other)) > 0.1
    return grads


@pytest.mark.parametrize("hq,hkv,positions,rotate_v", LARGE_ROTARY_BACKWARD, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_rotary_theta(hq, hkv, positions, rotate_v, head_dim):
    run_theta_large_rotary_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, positions, rotate_v,
                                         theta=500.0 if rotate_v else 10000.0, seed=46)


@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_rotary_theta_fp16_causal_lse_and_small_blocks(head_dim):
    run_theta_large_rotary_backward_case(EDGE_LENGTHS, 8, 2, head_dim, True, True, 10000.0,
                                         dtype=torch.float16, seed=47, causal=True, lse=True)
    lengths = [0, 1, 31, 32, 33, 200, 3, 130]
    run_theta_large_rotary_backward_case(lengths, 4, 2, head_dim, False, False, 10000.0, seed=48,
                                         block_size=32)


def test_backward_large_head_dims_rotary_theta_random_batch_and_deterministic():
    """Many items (every CTA runs several, the rings wrap), and two runs give the same bits."""
    rng = np.random.default_rng(49)
    lengths = rng.integers(0, 1500, size=30)
    first = run_theta_large_rotary_backward_case(lengths, 8, 2, 256, True, False, 10000.0, seed=49)
    second = run_theta_large_rotary_backward_case(lengths, 8, 2, 256, True, False, 10000.0, seed=49)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


# Half-split rotary embeddings (session 23): whole rows loaded in pair-complete 64-column chunks
# (columns [32 j, 32 j + 32) and their partners D / 2 on), each chunk two 32-column pieces under the
# 64-byte swizzle loaded by two TMA boxes that fill their swizzle span (session 21's one box of two
# 64-byte pieces under the 128-byte swizzle missed the float64 reference on an H100), every chunk
# rotated as a half-split part, each pass's gradient chunk turned back on its own and stored as two
# 32-column pieces (docs/head-dims.md, "Pair-complete chunks as 64-byte-swizzled pieces"). The same
# cases as the interleaved ones, with tables and from rotary_theta. Compiled and emulated; these are
# the hardware check. Kernels (compiled on first use otherwise):
#     python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \
#         --head-dims 192,256 --block-sizes 16,32,64 --dtypes bf16,f16 --rotary half_split \
#         --rotary-variants plain,pos,rv,pos_rv --groups 2,4 [--causal --lse] [--rotary-theta]
@pytest.mark.parametrize("hq,hkv,positions,rotate_v", LARGE_ROTARY_BACKWARD, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_half_split_rotary(hq, hkv, positions, rotate_v, head_dim):
    run_large_rotary_backward_case(EDGE_LENGTHS, hq, hkv, head_dim, positions, rotate_v, seed=51,
                                   interleaved=False)


@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_half_split_rotary_fp16_small_blocks_causal_lse(head_dim, block_size):
    lengths = [0, 1, block_size - 1, block_size, block_size + 1, 200, 3, 130]
    run_large_rotary_backward_case(lengths, 8, 2, head_dim, True, True, dtype=torch.float16, seed=52,
                                   block_size=block_size, interleaved=False)
    run_large_rotary_backward_case(lengths, 4, 2, head_dim, False, False, seed=53, block_size=block_size,
                                   causal=True, lse=True, interleaved=False)


def test_backward_large_head_dims_half_split_rotary_random_batch_and_deterministic():
    """Many items (every CTA runs several, the rings wrap), and two runs give the same bits."""
    rng = np.random.default_rng(54)
    lengths = rng.integers(0, 1500, size=30)
    first = run_large_rotary_backward_case(lengths, 8, 2, 192, True, True, seed=54, interleaved=False)
    second = run_large_rotary_backward_case(lengths, 8, 2, 192, True, True, seed=54, interleaved=False)
    for a, b in zip(first, second):
        assert torch.equal(a, b)


@pytest.mark.parametrize("head_dim", [192, 256])
def test_backward_large_head_dims_half_split_rotary_theta(head_dim):
    run_theta_large_rotary_backward_case(EDGE_LENGTHS, 8, 2, head_dim, True, True, 500.0, seed=55,
                                         interleaved=False)
    run_theta_large_rotary_backward_case(EDGE_LENGTHS, 4, 1, head_dim, False, False, 10000.0,
                                         dtype=torch.float16, seed=56, causal=True, lse=True,
                                         interleaved=False)
    lengths = [0, 1, 15, 16, 17, 200, 3, 130]
    run_theta_large_rotary_backward_case(lengths, 4, 2, head_dim, False, True, 10000.0, seed=57,
                                         block_size=16, interleaved=False)
