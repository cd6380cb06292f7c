"""A float64 PyTorch reference on the GPU for sizes the NumPy reference is too
slow for. It is itself checked against ``blockattn.reference`` in the tests."""

from __future__ import annotations

import numpy as np
import torch

from blockattn import reference


def block_index(cu_seqlens: torch.Tensor, block_size: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Row indices [nblocks, block_size] of every block, and their validity."""
    tiles = reference.block_tiles(cu_seqlens.cpu().numpy(), block_size)
    if not tiles:
        empty = torch.zeros((0, block_size), dtype=torch.long, device=device)
        return empty, empty.bool()
    starts = torch.tensor([t[0] for t in tiles], device=device)
    counts = torch.tensor([t[1] for t in tiles], device=device)
    cols = torch.arange(block_size, device=device)
    valid = cols[None, :] < counts[:, None]
    index = torch.where(valid, starts[:, None] + cols[None, :], torch.zeros_like(starts)[:, None])
    return index, valid


def forward(q, k, v, cu_seqlens, block_size=64, softmax_scale=None, causal=False) -> torch.Tensor:
    """o in float64, computed block by block (all blocks batched); with `causal`, token i of a
    block attends to tokens 0..i of it."""
    T, H, D = q.shape
    scale = softmax_scale if softmax_scale is not None else D ** -0.5
    index, valid = block_index(cu_seqlens, block_size, q.device)
    out = torch.zeros((T, H, D), dtype=torch.float64, device=q.device)
    chunk = 4096
    for start in range(0, index.shape[0], chunk):
        idx, ok = index[start:start + chunk], valid[start:start + chunk]
        Q, K, V = (t.double()[idx] for t in (q, k, v))  # [n, bs, H, D]
        S = torch.einsum("bihd,bjhd->bhij", Q, K) * scale
        S = S.masked_fill(~ok[:, None, None, :], float("-inf"))
        if causal:
            later = torch.ones(S.shape[-2:], dtype=torch.bool, device=S.device).triu(1)
            S = S.masked_fill(later, float("-inf"))
        P = torch.softmax(S, dim=-1)
        O = torch.einsum("bhij,bjhd->bihd", P, V)
        out[idx[ok]] = O[ok]
    return out


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().cpu().numpy()


def sequence_positions(cu_seqlens: torch.Tensor) -> torch.Tensor:
    """Each token's index inside its sequence (int64, on cu_seqlens' device)."""
    pos = reference.sequence_positions(cu_seqlens.cpu().numpy())
    return torch.from_numpy(pos).to(cu_seqlens.device)


def rotate(x, cos, sin, positions, interleaved=False, dtype=None):
    """Rotary embedding of x [T, H, D] as a separate PyTorch pass.

    The arithmetic is in `dtype` (default x's): with bf16, the tables are cast
    to bf16 and every product and sum is rounded to bf16, as the usual
    unfused implementations do (q * cos + rotate_half(q) * sin). The result
    has `dtype`. Differentiable through autograd."""
    dtype = dtype or x.dtype
    x = x.to(dtype)
    c = cos[positions].to(dtype)[:, None, :]
    s = sin[positions].to(dtype)[:, None, :]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        x1, x2 = x.chunk(2, dim=-1)
    r1, r2 = x1 * c - x2 * s, x2 * c + x1 * s
    if interleaved:
        return torch.stack([r1, r2], dim=-1).flatten(-2)
    return torch.cat([r1, r2], dim=-1)
