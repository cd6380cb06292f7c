"""Times the kernels of a variants directory (scripts/perf_variants.py) on the
seed workloads, next to the copy floor. Variants whose name contains
'nostore' or 'nocompute' skip work and are not checked; the others are
compared with the float64 reference on a slice of the batch.

Usage: bench/variants.py DIR [NAME]: NAME times only the variants whose file
name contains it. A manifest may list "exp_grids", the grids to time the
kernel at (default: the grid its manifest asks for)."""

import json
import pathlib
import sys

import torch
import triton

sys.path.insert(0, "bench")
sys.path.insert(0, "python")
import workloads  # noqa: E402

from blockattn import _driver, _kernels  # noqa: E402


def copy_bandwidth() -> float:
    src = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=25, rep=100, return_mode="median")
    return 2 * src.numel() / (ms * 1e-3)


def main(directory: str) -> None:
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e12:.3f} TB/s")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cases = {}
    for d, name in [(128, "seed"), (64, "seed-d64")]:
        w = workloads.get(name)
        q, k, v = w.tensors(3)
        cases[d] = (w, q, k, v, w.cu_seqlens(), torch.empty_like(q))
    results = {}
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    for path in sorted(pathlib.Path(directory).glob("*.json")):
        if only and only not in path.stem:
            continue
        manifest = json.loads(path.read_text())
        files = _kernels.KernelFiles(manifest, path.parent)
        kernel = _driver.LoadedKernel(files)
        d = manifest["head_dim"]
        w, q, k, v, cu, o = cases[d]
        tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu}
        scalars = {"softmax_scale": d ** -0.5}
        grids = manifest.get("exp_grids", [kernel.grid(sms, {"q": q, "cu_seqlens": cu})])
        for grid in grids:
            fn = lambda: kernel.launch(grid, tensors, scalars)  # noqa: E731
            o.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            status = ""
            if not any(x in path.stem for x in ("nostore", "nocompute", "noload")):
                import blockattn

                ref = blockattn.block_attention(q, k, v, cu)
                err = (o.float() - ref.float()).abs().max().item()
                status = "OK" if err < 2e-2 else f"MISMATCH vs base ({err:.2e})"
            ms = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
            floor = 4 * w.bytes_per_tensor() / bw * 1e3
            results[path.stem] = ms
            print(f"{path.stem:16s} grid={grid:6d} D={d:3d} {ms:7.3f} ms  {100 * floor / ms:5.1f}% of floor  {status}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".variants")
