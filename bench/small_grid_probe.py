#!/usr/bin/env python3
"""GPU time per launch of the default chunked kernels against their variants with fewer tiles
per CTA, on bench/latency.py's workloads (issue 22, the small-grid variant).

    BLOCKATTN_KERNEL_DIR=.prebuilt python3 bench/small_grid_probe.py [--tiles 1,2] [--json out.json]

For each workload and direction (forward; backward), each kernel (the default, then one per
--tiles value, looked up like any kernel: prebuilt or compiled) is launched 20 times inside one
CUDA graph; the graph is replayed --reps times and the median time per launch reported (warm
L2, no host time). It also reports which kernel block_attention's rule picks for the workload
(api._small_grid) and the largest difference of each variant's outputs from the default's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from latency import WORKLOADS, Problem  # noqa: E402

from blockattn import _driver, _kernels, api  # noqa: E402


def graph_us(fn, reps: int, launches: int = 20) -> float:
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(launches):
                fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / launches)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", default="1,2", help="tiles per CTA of the variants (comma-separated)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    tiles = [int(t) for t in args.tiles.split(",") if t]
    results = {}
    print(f"{'workload':16} {'kind':8} {'items':>6} {'rule':>7} " +
          " ".join(f"{'t' + str(t) if t else 'default':>9}" for t in [0] + tiles) + "  max |diff|")
    for name in args.workloads.split(","):
        p = Problem(name)
        for kind in ("forward", "backward"):
            if kind == "forward":
                outs = [torch.empty_like(p.q)]
                tensors = {"q": p.q, "k": p.k, "v": p.v, "o": outs[0], "cu_seqlens": p.cu}
            else:
                outs = [torch.empty_like(p.q) for _ in range(3)]
                tensors = {"q": p.q, "k": p.k, "v": p.v, "do": p.do, "dq": outs[0], "dk": outs[1],
                           "dv": outs[2], "cu_seqlens": p.cu}
            scalars = {"softmax_scale": p.scale}
            default, _ = api._kernel(kind, p.q, 64, "none", False, False)
            base = default.files.manifest
            kernels = {0: default}
            for t in tiles:
                key = api._kernel_key(kind, p.q, 64, "none", False, False, tiles_per_cta=t)
                kernels[t] = _driver.load_kernel(_kernels.find_kernel(key), p.q.device)
            limit = api._small_entry(kind, p.q, 64)[0]
            rule = api._small_grid(limit, 64, p.q.shape, p.cu.shape[0])
            row, reference, diffs = {}, None, []
            for t, kernel in kernels.items():
                row[f"t{t}" if t else f"default (t{base['tiles_per_cta']})"] = graph_us(
                    lambda kernel=kernel: kernel.call(tensors, scalars), args.reps)
                kernel.call(tensors, scalars)
                torch.cuda.synchronize()
                got = [o.float().clone() for o in outs]
                if reference is None:
                    reference = got
                else:
                    diffs.append(max(float((a - b).abs().max()) for a, b in zip(got, reference)))
            items = _kernels.work_items(64, p.q.shape, p.cu.shape[0])
            results[f"{name} {kind}"] = {"items": items, "small_grid_limit": limit,
                                         "rule picks small grid": rule, "us": row, "max_diff": diffs}
            print(f"{name:16} {kind:8} {items:6d} {'t1' if rule else 'default':>7} " +
                  " ".join(f"{v:9.2f}" for v in row.values()) + "  " + " ".join(f"{d:.2e}" for d in diffs),
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
