"""Grouped-query attention's forward on the seed lengths (issue 21): ours against its floor.

    PYTHONPATH=python python3 bench/gqa_forward.py [--heads 8 --kv-heads 2,1] [--head-dims 128,64]
        [--backward]

For each (Hq, Hkv, D): our grouped kernel (k and v read at head h / G; the
schedule keeps a group's items together so that k/v tiles hit L2,
docs/pipeline.md "Grouped-query attention"), our plain kernel on k and v
repeated G times (what a caller without GQA support pays, not counting the
repeat), and FlashAttention-2 varlen (which has GQA; every block its own
sequence, as bench/peers.py runs it) when flash_attn is installed.
The floor reads q, k, v and writes o once: q and o at Hq heads, k and v at
Hkv, over the copy bandwidth measured in the same run. Prints ms, % of floor,
and the L2 question the docs leave open: how close the schedule-only
forward comes to that floor.

With --backward, also the grouped backward (blockattn.api.backward, the
kernel alone: dk and dv summed over each group inside one CTA) against its
floor: read q, dO and write dq at Hq heads, read k, v and write dk, dv once
at Hkv (7 tensors' worth, as bench.py's backward: O is not needed), and our
plain backward on k and v repeated G times (not counting the repeat, nor the
sum over the group of its dk and dv that a caller would add).
"""

import argparse
import sys

import numpy as np
import torch
import triton

sys.path.insert(0, "bench")
import peers  # noqa: E402
import workloads  # noqa: E402

import blockattn  # noqa: E402


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def block_cu_seqlens(lengths, block_size=64) -> torch.Tensor:
    """cu_seqlens in which every block is its own sequence (FA2 varlen then computes our
    block-diagonal attention)."""
    cu = np.concatenate([[0], np.cumsum(lengths)])
    starts = [s for b in range(len(lengths)) for s in range(int(cu[b]), int(cu[b + 1]), block_size)]
    return torch.tensor(starts + [int(cu[-1])], dtype=torch.int32, device="cuda")


def flash_varlen():
    try:
        from flash_attn import flash_attn_varlen_func
    except ImportError:
        return None
    return flash_attn_varlen_func


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--heads", type=int, default=8, help="query heads Hq (default 8)")
    ap.add_argument("--kv-heads", default="2,1", help="comma-separated k/v heads Hkv (default 2,1)")
    ap.add_argument("--head-dims", default="128,64")
    ap.add_argument("--backward", action="store_true", help="also time the grouped backward")
    args = ap.parse_args(argv)
    bw = peers.copy_bandwidth()["bytes_per_s"]
    print(f"copy bandwidth {bw / 1e12:.2f} TB/s")
    fa = flash_varlen()
    lengths = workloads.seed_lengths()
    for d in (int(x) for x in args.head_dims.split(",")):
        for hkv in (int(x) for x in args.kv_heads.split(",")):
            hq, group = args.heads, args.heads // hkv
            wq = workloads.Workload("gqa", lengths, hq, d)
            wkv = workloads.Workload("gqa", lengths, hkv, d)
            (q,) = wq.tensors(1, seed=1)
            k, v = wkv.tensors(2, seed=2)
            cu = wq.cu_seqlens()
            o = torch.empty_like(q)
            floor = (2 * wq.bytes_per_tensor() + 2 * wkv.bytes_per_tensor()) / bw * 1e3
            rows = []
            ms = bench(lambda: blockattn.block_attention(q, k, v, cu, out=o, check_inputs=False))
            rows.append(("ours grouped", ms))
            kr, vr = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
            ms = bench(lambda: blockattn.block_attention(q, kr, vr, cu, out=o, check_inputs=False))
            rows.append(("ours repeated", ms))
            if fa is not None:
                bcu = block_cu_seqlens(lengths)
                ms = bench(lambda: fa(q, k, v, bcu, bcu, 64, 64))
                rows.append(("FA2 varlen", ms))
            print(f"\nT={wq.tokens:,} Hq={hq} Hkv={hkv} (G={group}) D={d}: floor {floor:.3f} ms")
            for name, ms in rows:
                print(f"  {name:14s} {ms:8.3f} ms  {100 * floor / ms:5.1f}% of floor")
            if args.backward:
                backward_rows(q, k, v, cu, group, wq, wkv, bw)


def backward_rows(q, k, v, cu, group, wq, wkv, bw):
    """The grouped backward against its floor (q, dO, dq at Hq; k, v, dk, dv at Hkv)."""
    from blockattn import api

    scale = q.shape[2] ** -0.5
    (do,) = wq.tensors(1, seed=3)
    grads = (torch.empty_like(q), torch.empty_like(k), torch.empty_like(v))
    floor = (3 * wq.bytes_per_tensor() + 4 * wkv.bytes_per_tensor()) / bw * 1e3
    rows = [("ours grouped", bench(lambda: api.backward(do, q, k, v, cu, 64, scale, grads=grads)))]
    kr, vr = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    repeated = (torch.empty_like(q), torch.empty_like(kr), torch.empty_like(vr))
    rows.append(("ours repeated", bench(lambda: api.backward(do, q, kr, vr, cu, 64, scale, grads=repeated))))
    print(f"  backward: floor {floor:.3f} ms")
    for name, ms in rows:
        print(f"  {name:14s} {ms:8.3f} ms  {100 * floor / ms:5.1f}% of floor")


if __name__ == "__main__":
    main()
