"""Power, SM clock and sustained time of forward kernels run back to back.

Each kernel (the straightforward Triton kernel, then every forward manifest of
DIR with head dim 128) runs back to back on seed for a few seconds, with no L2
flush in between, while nvidia-smi samples power, SM and memory clocks and
temperature every 100 ms; the first quarter of the samples is dropped (warm
up). Two rounds. The time is CUDA events around all launches, divided by
their number: the sustained rate, which do_bench (which flushes L2 between
runs) does not show.

Usage: bench/power_probe.py DIR [--seconds S]
"""

import argparse
import subprocess
import sys
import time

import torch

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import triton_block_attn as tba  # noqa: E402
import workloads  # noqa: E402
from variants import kernels_in  # noqa: E402

QUERY = "power.draw,clocks.sm,clocks.mem,temperature.gpu"


def run_for(fn, seconds: float):
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0, launches = time.time(), 0
    start.record()
    while time.time() - t0 < seconds:
        for _ in range(50):
            fn()
        launches += 50
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [[float(x) for x in line.split(",")] for line in smi.communicate()[0].splitlines() if line.strip()]
    samples = samples[len(samples) // 4:]
    means = [sum(col) / len(col) for col in zip(*samples)] if samples else []
    return start.elapsed_time(end) / launches, means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    w = workloads.get("seed")
    q, k, v = w.tensors(3)
    cu = w.cu_seqlens()
    o = torch.empty_like(q)
    table = tba.block_table(cu, q.shape[0], 64)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tba.forward(q, k, v, table, out=o)  # compile before timing
    fns = {"triton": lambda: tba.forward(q, k, v, table, out=o)}
    for stem, manifest, kernel in kernels_in(args.dir):
        if manifest.get("kind", "forward") != "forward" or manifest["head_dim"] != 128:
            continue
        grid = kernel.grid(sms, {"q": q, "cu_seqlens": cu})
        tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu}
        fns[stem] = lambda kernel=kernel, grid=grid, t=tensors: kernel.launch(grid, t, {"softmax_scale": 128 ** -0.5})
    print(f"{'kernel':28s} {'ms':>7s} {'W':>6s} {'SM MHz':>7s} {'mem MHz':>8s} {'C':>5s}")
    for _ in range(2):
        for name, fn in fns.items():
            ms, means = run_for(fn, args.seconds)
            print(f"{name:28s} {ms:7.4f} " + " ".join(f"{x:7.1f}" for x in means), flush=True)


if __name__ == "__main__":
    main()
