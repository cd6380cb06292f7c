"""Times the kernels of a variants directory (scripts/perf_variants.py, or any
block-attn-compile output) on seed and seed-d64, next to the copy floor and the
straightforward Triton kernel, in one process.

Forward and backward manifests are both timed. Every kernel (and the Triton
kernel, forward and backward, at both head dims) is timed in `--rounds` rounds
that go through all of them in turn, and the median round is reported: the
H200 drifts by 1-2% over a run as it heats up (it runs at its 700 W cap on
these kernels), which interleaving spreads over every kernel alike. Variants
whose name contains 'nostore', 'nocompute' or 'noload' skip work and are not
checked; the others are compared with blockattn's default kernels (forward
output, or the three gradients).

Usage: bench/variants.py DIR [--only NAME] [--rounds N]. A manifest may list
"exp_grids", the grids to time the kernel at (default: its manifest's grid).
"""

import argparse
import json
import pathlib
import statistics
import sys

import torch
import triton

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import peers  # noqa: E402
import triton_block_attn as tba  # noqa: E402
import workloads  # noqa: E402

import blockattn  # noqa: E402
from blockattn import _driver, _kernels  # noqa: E402

UNCHECKED = ("nostore", "nocompute", "noload")


def make_case(name: str) -> dict:
    w = workloads.get(name)
    q, k, v = w.tensors(3)
    cu = w.cu_seqlens()
    case = dict(w=w, q=q, k=k, v=v, cu=cu, do=torch.randn_like(q), o=torch.empty_like(q),
                dq=torch.empty_like(q), dk=torch.empty_like(q), dv=torch.empty_like(q),
                table=tba.block_table(cu, q.shape[0], 64))
    return case


def kernels_in(directory: str, only: str = ""):
    """(name, manifest, loaded kernel) of every manifest in `directory`."""
    for path in sorted(pathlib.Path(directory).glob("*.json")):
        if only and only not in path.stem:
            continue
        manifest = json.loads(path.read_text())
        yield path.stem, manifest, _driver.LoadedKernel(_kernels.KernelFiles(manifest, path.parent))


def max_error(kind: str, c: dict) -> float:
    """Largest absolute difference from blockattn's default kernels."""
    if kind == "forward":
        ref = blockattn.block_attention(c["q"], c["k"], c["v"], c["cu"])
        return (c["o"].float() - ref.float()).abs().max().item()
    q, k, v = (x.detach().requires_grad_() for x in (c["q"], c["k"], c["v"]))
    grads = torch.autograd.grad(blockattn.block_attention(q, k, v, c["cu"]), (q, k, v), c["do"])
    return max((c[n].float() - g.float()).abs().max().item() for n, g in zip(("dq", "dk", "dv"), grads))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--only", default="", help="time only the variants whose name contains this")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    bw = peers.copy_bandwidth()["bytes_per_s"]
    print(f"copy bandwidth {bw / 1e12:.3f} TB/s")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cases = {128: make_case("seed"), 64: make_case("seed-d64")}
    runs = {}  # name -> (head_dim, kind, fn)
    for d, c in cases.items():
        runs[f"triton_forward_d{d}"] = (d, "forward", lambda c=c: tba.forward(c["q"], c["k"], c["v"], c["table"], out=c["o"]))
        runs[f"triton_backward_d{d}"] = (d, "backward", lambda c=c: tba.backward(c["do"], c["q"], c["k"], c["v"], c["table"]))
    for stem, manifest, kernel in kernels_in(args.dir, args.only):
        d, kind = manifest["head_dim"], manifest.get("kind", "forward")
        c = cases[d]
        tensors = {n: c[n] for n in ("q", "k", "v", "o", "do", "dq", "dk", "dv")}
        tensors["cu_seqlens"] = c["cu"]
        grids = manifest.get("exp_grids") or [kernel.grid(sms, {"q": c["q"], "cu_seqlens": c["cu"]})]
        for grid in grids:
            fn = lambda kernel=kernel, grid=grid, t=tensors, d=d: kernel.launch(grid, t, {"softmax_scale": d ** -0.5})  # noqa: E731
            for out in ("o",) if kind == "forward" else ("dq", "dk", "dv"):
                c[out].fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            status = "unchecked"
            if not any(x in stem for x in UNCHECKED):
                err = max_error(kind, c)
                status = "OK" if err < 2e-2 else f"MISMATCH ({err:.2e})"
            name = f"{stem}@{grid}"
            print(f"{name}: {status}", flush=True)
            runs[name] = (d, kind, fn)

    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (_, _, fn) in runs.items():
            times[name].append(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    for name, (d, kind, _) in runs.items():
        w = cases[d]["w"]
        floor = (4 if kind == "forward" else 7) * w.bytes_per_tensor() / bw * 1e3
        ms = statistics.median(times[name])
        rounds = " ".join(f"{t:.4f}" for t in times[name])
        print(f"{name:36s} D={d:3d} {kind:8s} {ms:7.4f} ms {100 * floor / ms:6.1f}% of floor  rounds {rounds}",
              flush=True)


if __name__ == "__main__":
    main()
