"""Probe: does the memory layout ([T, H, D] with H heads interleaved per row)
explain the gap to the straightforward Triton kernel? Times both on the seed
lengths with H=4 and on 4x the tokens with H=1 (same bytes, same tile count,
but each head's rows contiguous), plus plain read-only and write-only
bandwidth."""

import sys

import numpy as np
import torch
import triton

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import triton_block_attn  # noqa: E402
import workloads  # noqa: E402

import blockattn  # noqa: E402


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main():
    x = torch.randn(1 << 30, device="cuda")  # 4 GiB
    ms_read = bench(lambda: x.sum())
    ms_write = bench(lambda: x.fill_(1.0))
    y = torch.empty_like(x)
    ms_copy = bench(lambda: y.copy_(x))
    gb = x.numel() * 4 / 1e9
    print(f"read-only {gb / ms_read:.2f} TB/s, write-only {gb / ms_write:.2f} TB/s, copy {2 * gb / ms_copy:.2f} TB/s")
    del x, y
    torch.cuda.empty_cache()
    base = workloads.seed_lengths()
    for heads, d, scale in [(4, 128, 1), (1, 128, 4), (4, 64, 1), (1, 64, 4)]:
        w = workloads.Workload(f"H{heads}D{d}", base * scale, heads, d)
        q, k, v = w.tensors(3)
        cu = w.cu_seqlens()
        o = torch.empty_like(q)
        table = triton_block_attn.block_table(cu, w.tokens)
        ms_ours = bench(lambda: blockattn.block_attention(q, k, v, cu, out=o, check_inputs=False))
        ms_tri = bench(lambda: triton_block_attn.forward(q, k, v, table, out=o))
        tb = 4 * w.bytes_per_tensor() / 1e9
        print(f"H={heads} D={d} T={w.tokens}: ours {ms_ours:.3f} ms ({tb / ms_ours:.2f} TB/s), "
              f"triton {ms_tri:.3f} ms ({tb / ms_tri:.2f} TB/s)")
        del q, k, v, o
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
