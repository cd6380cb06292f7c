"""Splits each forward's time into a per-byte rate and a fixed cost.

The seed workload's first n sequences (n = 144, 288, 576, 1152), and its
lengths repeated twice (2304), are timed with our forward and the
straightforward Triton kernel in interleaved rounds (do_bench medians, the
median round kept). A least-squares line t = a + bytes / r per implementation
then gives r, the steady-state rate, and a, what a launch costs beyond it (the
grid's start, its ramp-up and its tail). If the D=128 gap to the Triton kernel
is in a, it is the start or the tail of the grid; if it is in r, it is how
evenly the steady state keeps DRAM busy.

Usage: bench/scaling_probe.py [--head-dim 128] [--rounds 3] [--kernel-dir DIR]
(DIR: forward manifests to time beside the default kernel, e.g. variants).
"""

import argparse
import statistics
import sys

import numpy as np
import torch
import triton

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import peers  # noqa: E402
import triton_block_attn as tba  # noqa: E402
import workloads  # noqa: E402

import blockattn  # noqa: E402

SIZES = (144, 288, 576, 1152, 2304)


def lengths_for(n: int) -> np.ndarray:
    lengths = workloads.seed_lengths()
    return np.tile(lengths, -(-n // len(lengths)))[:n]


def fit(points):
    """(fixed cost in us, rate in TB/s) of the least-squares line through (bytes, ms)."""
    x = np.array([p[0] for p in points], dtype=np.float64)
    y = np.array([p[1] for p in points], dtype=np.float64)
    slope, intercept = np.polyfit(x, y, 1)
    return intercept * 1e3, 1e-9 / slope


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kernel-dir", default="")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    extra = []
    if args.kernel_dir:
        from variants import kernels_in
        extra = [(stem, m, k) for stem, m, k in kernels_in(args.kernel_dir)
                 if m["head_dim"] == args.head_dim and m.get("kind", "forward") == "forward"]

    runs = {}  # (impl, n) -> (bytes, fn)
    for n in SIZES:
        w = workloads.Workload(f"seed[{n}]", lengths_for(n), 4, args.head_dim)
        q, k, v = w.tensors(3)
        cu = w.cu_seqlens()
        o = torch.empty_like(q)
        table = tba.block_table(cu, q.shape[0], 64)
        nbytes = 4 * w.bytes_per_tensor()
        runs[("ours", n)] = (nbytes, lambda q=q, k=k, v=v, cu=cu, o=o: blockattn.block_attention(
            q, k, v, cu, out=o, check_inputs=False))
        for warps in (4, 8):
            runs[(f"triton_{warps}w", n)] = (nbytes, lambda q=q, k=k, v=v, t=table, o=o, w_=warps: tba.forward(
                q, k, v, t, out=o, num_warps=w_))
        for stem, _, kernel in extra:
            tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu}
            grid = kernel.grid(sms, tensors)
            runs[(stem, n)] = (nbytes, lambda kernel=kernel, grid=grid, t=tensors: kernel.launch(
                grid, t, {"softmax_scale": args.head_dim ** -0.5}))

    times = {key: [] for key in runs}
    for _ in range(args.rounds):
        for key, (_, fn) in runs.items():
            times[key].append(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    impls = sorted({impl for impl, _ in runs}, key=lambda s: (s != "ours", s))
    print(f"D={args.head_dim}; ms per size (median of {args.rounds} rounds)")
    print(f"{'impl':24s}" + "".join(f"{n:>10d}" for n in SIZES) + "   fixed us   rate TB/s")
    for impl in impls:
        points = [(runs[(impl, n)][0], statistics.median(times[(impl, n)])) for n in SIZES]
        fixed, rate = fit(points)
        print(f"{impl:24s}" + "".join(f"{ms:10.4f}" for _, ms in points) + f"   {fixed:8.1f}   {rate:8.3f}")
    print(f"copy bandwidth {peers.copy_bandwidth()['bytes_per_s'] / 1e12:.3f} TB/s")


if __name__ == "__main__":
    main()
