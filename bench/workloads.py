"""The workloads of shared/BENCHMARK.md."""

from __future__ import annotations

import dataclasses

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

    def bytes_per_tensor(self) -> int:
        return self.tokens * self.heads * self.head_dim * torch.finfo(self.dtype).bits // 8


def seed_lengths(seed: int = 0, batch: int = 1152, low: int = 800, high: int = 2000) -> np.ndarray:
    """Uniform integer lengths in [low, high] (the TLX article's Table 5)."""
    return np.random.default_rng(seed).integers(low, high + 1, size=batch)


NAMES = ("seed", "seed-d64", "seed-aligned", "rope", "seed-d32", "seed-d96", "seed-b16", "seed-b32", "seed-b128",
         "seed-d192", "seed-d256")


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
