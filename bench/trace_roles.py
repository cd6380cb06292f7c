"""Per-role time of any traced kernel on a bench workload (docs/timeline.md).

bench/timeline.py draws the plain and the rotary kernels side by side; this
script takes any kernels, grouped-query ones included, that
``block-attn-compile --trace`` built next to their untraced builds in one
directory, runs each on a workload of bench/workloads.py, and prints, per
kernel, the untraced and the traced time and timeline.summarize's per-role
spans (JSON); with --png-dir it also draws SM 0's roles.

    # where the compiler is (no GPU): a kernel and its traced build
    block-attn-compile --kind backward --head-dim 64 --group 4 --cubin --quiet -o DIR
    block-attn-compile --kind backward --head-dim 64 --group 4 --cubin --quiet --trace --trace-records=1024 -o DIR
    # on the GPU
    PYTHONPATH=python python3 bench/trace_roles.py DIR seed-d64-gqa backward:blockattn_backward_d64_b64_bf16_g4
"""
import argparse
import json
import math
import pathlib
import sys
import types

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))


def tensors_for(kind: str, workload):
    import torch

    q, k, v, do = workload.attention_tensors(True)
    cu = workload.cu_seqlens()
    if kind == "forward":
        return {"q": q, "k": k, "v": v, "o": torch.empty_like(q), "cu_seqlens": cu}
    if kind == "backward":
        return {"q": q, "k": k, "v": v, "do": do, "dq": torch.empty_like(q), "dk": torch.empty_like(k),
                "dv": torch.empty_like(v), "cu_seqlens": cu}
    raise ValueError(f"kind must be forward or backward, got {kind!r}")


def time_kernel(files, tensors: dict, scalars: dict, repeats: int) -> float:
    import torch
    from blockattn import _driver

    kernel = _driver.load_kernel(files, tensors["q"].device)
    grid = kernel.grid(kernel.num_sms, tensors)
    for _ in range(3):
        kernel.launch(grid, tensors, scalars)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        kernel.launch(grid, tensors, scalars)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=pathlib.Path, help="the kernels and their _trace builds")
    ap.add_argument("workload", help="a bench/workloads.py name (its heads and k/v heads set the group)")
    ap.add_argument("kernels", nargs="+", help="KIND:NAME, NAME without the _trace suffix")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--png-dir", type=pathlib.Path, help="also draw SM 0's roles into PNG_DIR/NAME.png")
    args = ap.parse_args(argv)

    import timeline
    import workloads
    from blockattn._kernels import KernelFiles

    workload = workloads.get(args.workload)
    scalars = {"softmax_scale": 1.0 / math.sqrt(workload.head_dim)}
    for spec in args.kernels:
        kind, sep, name = spec.partition(":")
        if not sep:
            ap.error(f"kernels are KIND:NAME, got {spec!r}")
        tensors = tensors_for(kind, workload)
        untraced = KernelFiles(json.loads((args.directory / f"{name}.json").read_text()), args.directory)
        traced = timeline.load_files(args.directory, types.SimpleNamespace(name=name))
        buffer, grid, traced_ms = timeline.run_traced(traced, tensors, scalars, args.repeats)
        trace = traced.manifest["trace"]
        ctas = timeline.decode(buffer, trace, grid)
        fits = timeline.clock_fits(ctas)
        report = {"kernel": name, "workload": workload.name, "grid": grid,
                  "untraced_ms": round(time_kernel(untraced, tensors, scalars, args.repeats), 4),
                  "traced_ms": round(traced_ms, 4), "roles": timeline.summarize(ctas, trace, fits)}
        print(json.dumps(report, indent=1), flush=True)
        if args.png_dir:
            rows, _ = timeline.sm_rows(ctas, trace, fits, 0)
            args.png_dir.mkdir(parents=True, exist_ok=True)
            timeline.draw([(f"{name} on SM 0 ({workload.name})", rows, timeline.busy_window(rows, 30.0))],
                          args.png_dir / f"{name}.png")


if __name__ == "__main__":
    main()
