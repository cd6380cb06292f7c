"""A straightforward Triton block attention: the peer to beat (shared/BENCHMARK.md).

What a user who knows Triton writes in an afternoon: one program per (block, head), the whole
block x block score tile in registers (any block size of 16 or more; head dims that are not
powers of two are padded to one with masked columns), so the softmax is exact (no online rescaling), `tl.dot`
for every product, fp32 accumulation, exp2 with scale*log2(e) folded into the scores. The
backward recomputes S and P and uses Di = rowsum(P * dP) (O is never read). No warp
specialization, no persistence; the launch configuration (num_warps, num_stages) is picked by
timing every entry of CONFIGS on the actual workload (bench/peers.py does that).

Causal blocks (token i of a block sees tokens 0..i of it) add a triangle to the score mask.
Grouped-query attention (k, v with Hkv = H / G heads): the forward reads k/v head h // G; the
backward runs one program per (block, k/v head) that loops over the group's G query heads and
sums dK and dV in registers (no atomics).

q, do are [T, H, D] tensors, k, v [T, Hkv, D], contiguous; the block table is (starts, counts): the first
row and the number of valid rows of every block, int32 on the GPU (see block_table).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
CONFIGS = tuple((w, s) for w in (4, 8) for s in (1, 2, 3))  # (num_warps, num_stages)


@triton.jit
def _block_rows(starts, counts, HP, BLOCK: tl.constexpr, D: tl.constexpr, DP: tl.constexpr):
    """The block and head of this program (one per (block, head), heads of a block adjacent,
    HP heads), the block's first row, its valid rows, and the mask of the valid elements of a
    [BLOCK, DP] tile. DP is D rounded up to a power of two (tl.arange needs one): at head dim 96
    the tile is 128 wide, its last 32 columns masked (loaded as 0, never stored)."""
    pid = tl.program_id(0)
    blk = pid // HP
    h = pid % HP
    start = tl.load(starts + blk).to(tl.int64)
    valid = tl.arange(0, BLOCK) < tl.load(counts + blk)
    cols = tl.arange(0, DP)
    if DP == D:
        mask = valid[:, None]
    else:
        mask = valid[:, None] & (cols < D)[None, :]
    return h, start, valid, mask


@triton.jit
def _tile_offsets(start, h, heads, BLOCK: tl.constexpr, D: tl.constexpr, DP: tl.constexpr):
    """Offsets of head h's [BLOCK, DP] tile of a [T, heads, D] tensor, from row start."""
    return (start + tl.arange(0, BLOCK))[:, None] * (heads * D) + h * D + tl.arange(0, DP)[None, :]


@triton.jit
def _probs(q, k, valid, qk_scale, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
    """Unnormalised P (in the exp2 domain) of one block; columns past the block's end (and, if
    CAUSAL, past the row) are 0."""
    s = tl.dot(q, tl.trans(k)) * qk_scale
    keep = valid[None, :]
    if CAUSAL:
        keep = keep & (tl.arange(0, BLOCK)[None, :] <= tl.arange(0, BLOCK)[:, None])
    s = tl.where(keep, s, float("-inf"))
    return tl.exp2(s - tl.max(s, axis=1)[:, None])


@triton.jit
def _fwd_kernel(Q, K, V, O, starts, counts, H, qk_scale, G: tl.constexpr, BLOCK: tl.constexpr, D: tl.constexpr,
                DP: tl.constexpr, CAUSAL: tl.constexpr):
    h, start, valid, mask = _block_rows(starts, counts, H, BLOCK, D, DP)
    offs = _tile_offsets(start, h, H, BLOCK, D, DP)
    kv_offs = _tile_offsets(start, h // G, H // G, BLOCK, D, DP)
    q = tl.load(Q + offs, mask=mask, other=0.0)
    k = tl.load(K + kv_offs, mask=mask, other=0.0)
    v = tl.load(V + kv_offs, mask=mask, other=0.0)
    p = _probs(q, k, valid, qk_scale, BLOCK, CAUSAL)
    o = tl.dot(p.to(v.dtype), v) / tl.sum(p, axis=1)[:, None]
    tl.store(O + offs, o.to(O.dtype.element_ty), mask=mask)


@triton.jit
def _bwd_kernel(Q, K, V, DO, DQ, DK, DV, starts, counts, H, qk_scale, sm_scale, G: tl.constexpr,
                BLOCK: tl.constexpr, D: tl.constexpr, DP: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per (block, k/v head): dK and dV sum over the group's query heads in order.
    HKV = H // G
    hkv, start, valid, mask = _block_rows(starts, counts, HKV, BLOCK, D, DP)
    kv_offs = _tile_offsets(start, hkv, HKV, BLOCK, D, DP)
    k = tl.load(K + kv_offs, mask=mask, other=0.0)
    v = tl.load(V + kv_offs, mask=mask, other=0.0)
    dk = tl.zeros((BLOCK, DP), dtype=tl.float32)
    dv = tl.zeros((BLOCK, DP), dtype=tl.float32)
    for i in range(G):
        offs = _tile_offsets(start, hkv * G + i, H, BLOCK, D, DP)
        q = tl.load(Q + offs, mask=mask, other=0.0)
        do = tl.load(DO + offs, mask=mask, other=0.0)  # rows past the end are 0: no dV/dK
        p = _probs(q, k, valid, qk_scale, BLOCK, CAUSAL)
        p = p / tl.sum(p, axis=1)[:, None]
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - tl.sum(p * dp, axis=1)[:, None]) * sm_scale  # scale folded in for dK and dQ
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
        dq = tl.dot(ds.to(k.dtype), k)
        tl.store(DQ + offs, dq.to(DQ.dtype.element_ty), mask=mask)
    tl.store(DV + kv_offs, dv.to(DV.dtype.element_ty), mask=mask)
    tl.store(DK + kv_offs, dk.to(DK.dtype.element_ty), mask=mask)


def block_table(cu_seqlens: torch.Tensor, total_tokens: int, block_size: int = 64, exact: bool = True):
    """(starts, counts) of every block, int32, built with torch ops on cu_seqlens' device.

    No host synchronization up to the last step: the number of blocks is at most
    ceil(T / bs) + B, both known on the host from shapes, so the table is built at that size
    (searchsorted of each slot in the prefix sum of per-sequence block counts) and slots past
    the real number of blocks get count 0 (their programs store nothing). exact=True then trims
    those slots with one host sync; the benchmark builds the table once, outside the timed
    region, with exact=True.
    """
    dev = cu_seqlens.device
    cu = cu_seqlens.to(torch.int64)
    nseq = cu.numel() - 1
    if nseq <= 0:
        empty = torch.zeros(0, dtype=torch.int32, device=dev)
        return empty, empty
    nblk = (cu[1:] - cu[:-1] + block_size - 1) // block_size
    ends = torch.cumsum(nblk, 0)  # blocks up to and including each sequence
    slot = torch.arange((total_tokens + block_size - 1) // block_size + nseq, device=dev)
    seq = torch.searchsorted(ends, slot, right=True).clamp_(max=nseq - 1)  # skips empty sequences
    start = cu[seq] + (slot - (ends[seq] - nblk[seq])) * block_size
    live = slot < ends[-1]
    count = torch.where(live, (cu[seq + 1] - start).clamp(0, block_size), 0)
    start = torch.where(live, start, 0)
    if exact:
        n = int(ends[-1])  # the one host sync
        start, count = start[:n], count[:n]
    return start.to(torch.int32).contiguous(), count.to(torch.int32).contiguous()


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor | None = None) -> int:
    """The group G = Hq / Hkv of contiguous q (do) [T, Hq, D] and k, v [T, Hkv, D] of one dtype."""
    ts = (q, k, v) + ((do,) if do is not None else ())
    T, H, D = q.shape
    ok = all(t.dtype == q.dtype and t.is_contiguous() and t.dim() == 3 for t in ts)
    ok = ok and k.shape == v.shape and k.shape[0] == T and k.shape[2] == D and H % k.shape[1] == 0
    if not ok or (do is not None and do.shape != q.shape):
        raise ValueError("triton_block_attn: q, do must be contiguous [T, H, D], k and v [T, Hkv, D] with H a "
                         "multiple of Hkv, all of one dtype")
    return H // k.shape[1]


def forward(q, k, v, table, softmax_scale=None, out=None, num_warps=4, num_stages=1, block_size=64,
            causal=False):
    group = _check(q, k, v)
    T, H, D = q.shape
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    o = torch.empty_like(q) if out is None else out
    starts, counts = table
    if starts.numel() * H:
        _fwd_kernel[(starts.numel() * H,)](q, k, v, o, starts, counts, H, scale * LOG2E, G=group, BLOCK=block_size,
                                           D=D, DP=triton.next_power_of_2(D), CAUSAL=causal,
                                           num_warps=num_warps, num_stages=num_stages)
    return o


def backward(do, q, k, v, table, softmax_scale=None, num_warps=4, num_stages=1, block_size=64, causal=False):
    group = _check(q, k, v, do)
    T, H, D = q.shape
    scale = D ** -0.5 if softmax_scale is None else softmax_scale
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    starts, counts = table
    if starts.numel() * H:
        _bwd_kernel[(starts.numel() * (H // group),)](q, k, v, do, dq, dk, dv, starts, counts, H,
                                                      scale * LOG2E, scale, G=group, BLOCK=block_size, D=D,
                                                      DP=triton.next_power_of_2(D), CAUSAL=causal,
                                                      num_warps=num_warps, num_stages=num_stages)
    return dq, dk, dv
