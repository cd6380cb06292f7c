"""The workloads of shared/BENCHMARK.md."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import torch


@dataclasses.dataclass
class Workload:
    name: str
    lengths: np.ndarray
    heads: int
    head_dim: int
    dtype: torch.dtype = torch.bfloat16
    block_size: int = 64
    kv_heads: Optional[int] = None  # grouped-query attention: k and v have fewer heads (None: heads)
    causal: bool = False  # token i of a block attends to tokens 0..i of its block

    @property
    def kv_head_count(self) -> int:
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def tokens(self) -> int:
        return int(self.lengths.sum())

    def cu_seqlens(self, device="cuda") -> torch.Tensor:
        cu = np.concatenate([[0], np.cumsum(self.lengths)])
        return torch.tensor(cu, dtype=torch.int32, device=device)

    def tensors(self, count: int, seed: int = 0, device="cuda") -> list[torch.Tensor]:
        g = torch.Generator(device=device).manual_seed(seed)
        shape = (self.tokens, self.heads, self.head_dim)
        return [torch.randn(shape, generator=g, device=device, dtype=self.dtype) for _ in range(count)]

    def attention_tensors(self, with_grad: bool, seed: int = 0, device="cuda") -> list[torch.Tensor]:
        """q, k, v (and dO with with_grad): q and dO with ``heads``, k and v with ``kv_head_count``."""
        g = torch.Generator(device=device).manual_seed(seed)
        heads = (self.heads, self.kv_head_count, self.kv_head_count) + ((self.heads,) if with_grad else ())
        return [torch.randn((self.tokens, h, self.head_dim), generator=g, device=device, dtype=self.dtype)
                for h in heads]

    def bytes_per_tensor(self) -> int:
        """Bytes of one [T, heads, D] tensor (q, o, dO, dq)."""
        return self.tokens * self.heads * self.head_dim * torch.finfo(self.dtype).bits // 8

    def bytes_per_kv_tensor(self) -> int:
        """Bytes of one [T, kv_heads, D] tensor (k, v, dk, dv): the q-side size unless grouped."""
        return self.tokens * self.kv_head_count * self.head_dim * torch.finfo(self.dtype).bits // 8


def seed_lengths(seed: int = 0, batch: int = 1152, low: int = 800, high: int = 2000) -> np.ndarray:
    """Uniform integer lengths in [low, high] (the TLX article's Table 5)."""
    return np.random.default_rng(seed).integers(low, high + 1, size=batch)


def tiny_lengths(seed: int = 0, low: int = 1, high: int = 48) -> np.ndarray:
    """Many tiny sequences: uniform integer lengths in [low, high] whose total is about the
    seed lengths' (1152 sequences of 800 to 2000 tokens: ~1.61M tokens, ~66k sequences)."""
    total = int(seed_lengths().sum())
    rng = np.random.default_rng(seed)
    lengths = rng.integers(low, high + 1, size=2 * total // (low + high))
    return lengths[: int(np.searchsorted(np.cumsum(lengths), total)) + 1]


NAMES = ("seed", "seed-d64", "seed-aligned", "rope", "seed-d32", "seed-d96", "seed-b16", "seed-b32", "seed-b128",
         "seed-causal", "seed-d64-causal", "seed-gqa", "seed-d64-gqa", "seed-gqa-g2", "seed-b128-d64-gqa",
         "seed-b128-gqa", "seed-b128-d96-gqa", "seed-d192-gqa", "seed-d256-gqa",
         "seed-d192", "seed-d256", "tiny-b16", "tiny-b32", "tiny-b64", "seed-b128-d192", "seed-b128-d256",
         "seed-b128-d32", "seed-b128-d64", "seed-b128-d96", "seed-b128-d192-gqa", "seed-b128-d256-gqa")


def get(name: str) -> Workload:
    if name == "seed":
        return Workload("seed", seed_lengths(), 4, 128)
    if name == "seed-d64":
        return Workload("seed-d64", seed_lengths(), 4, 64)
    # Issue 20's shapes: each head dim at block 64, each block size at head dim 128.
    if name in ("seed-d32", "seed-d96", "seed-d192", "seed-d256"):
        return Workload(name, seed_lengths(), 4, int(name[len("seed-d"):]))
    if name in ("seed-b16", "seed-b32", "seed-b128"):
        return Workload(name, seed_lengths(), 4, 128, block_size=int(name[len("seed-b"):]))
    # Head dims 192 and 256 at block size 128 (the sm_90a backward in three column passes;
    # the sm_100a backward is refused there).
    if name in ("seed-b128-d192", "seed-b128-d256"):
        return Workload(name, seed_lengths(), 4, int(name[len("seed-b128-d"):]), block_size=128)
    # The smaller head dims at block size 128 (the sm_90a backward's ring depths differ: one
    # slot at 96, two at 64, four at 32; docs/block-sizes.md).
    if name in ("seed-b128-d32", "seed-b128-d64", "seed-b128-d96"):
        return Workload(name, seed_lengths(), 4, int(name[len("seed-b128-d"):]), block_size=128)
    # Issue 21's shapes: the seed lengths with causal blocks, and with Hq = 8 query heads over
    # Hkv = 2 k/v heads (G = 4).
    if name in ("seed-causal", "seed-d64-causal"):
        return Workload(name, seed_lengths(), 4, 64 if "d64" in name else 128, causal=True)
    if name in ("seed-gqa", "seed-d64-gqa"):
        return Workload(name, seed_lengths(), 8, 64 if "d64" in name else 128, kv_heads=2)
    # A group of 2 (Hq = 4, Hkv = 2), whose sm_90a backward at head dim 128 picks its own roles
    # (docs/performance-notes.md, "The grouped backward's pipelined roles").
    if name == "seed-gqa-g2":
        return Workload(name, seed_lengths(), 4, 128, kv_heads=2)
    # The grouped backward above head dim 128 (D / 64 passes over column chunks; docs/pipeline.md).
    if name in ("seed-d192-gqa", "seed-d256-gqa"):
        return Workload(name, seed_lengths(), 8, int(name[len("seed-d"):-len("-gqa")]), kv_heads=2)
    # Issues 20 and 21 together: the grouped workload at block size 128, at head dims 64, 96
    # and 128 (above 64 the grouped backward there runs in column passes; docs/causal-lse.md).
    # Above head dim 128 (sm_90a, session 21): K, V, Q and dO streamed in 64-column chunks,
    # S and dP remade every pass (docs/head-dims.md: about 10x an item's minimal reads).
    if name in ("seed-b128-d192-gqa", "seed-b128-d256-gqa"):
        head_dim = int(name[len("seed-b128-d"):-len("-gqa")])
        return Workload(name, seed_lengths(), 8, head_dim, kv_heads=2, block_size=128)
    if name in ("seed-b128-d64-gqa", "seed-b128-d96-gqa", "seed-b128-gqa"):
        head_dim = 128 if name == "seed-b128-gqa" else int(name[len("seed-b128-d"):-len("-gqa")])
        return Workload(name, seed_lengths(), 8, head_dim, kv_heads=2, block_size=128)
    # Tiny sequences (1 to 48 tokens, ~66k of them): at blocks of 16 and 32 the blocks of
    # several sequences share a 64-row tile (docs/block-sizes.md); at 64 each sequence takes
    # a tile of its own, which is what 16 and 32 cost before packing.
    if name in ("tiny-b16", "tiny-b32", "tiny-b64"):
        return Workload(name, tiny_lengths(), 4, 128, block_size=int(name[len("tiny-b"):]))
    if name == "seed-aligned":
        lengths = seed_lengths()
        return Workload("seed-aligned", lengths - lengths % 64, 4, 128)
    if name == "rope":
        # Table 7: T = 1,735,537 tokens over 1152 sequences, 3 heads.
        rng = np.random.default_rng(1)
        lengths = rng.integers(800, 2000 + 1, size=1152)
        lengths = np.round(lengths * (1_735_537 / lengths.sum())).astype(np.int64)
        lengths[-1] += 1_735_537 - lengths.sum()
        return Workload("rope", lengths, 3, 128)
    raise ValueError(f"unknown workload {name!r}")
