#!/usr/bin/env python3
"""Builds variants of the forward kernel for performance experiments.

Each variant is the warp-specialized IR of the seed forward (run-time heads and
scale, as the Python API compiles it) with one change, compiled to a cubin and
a manifest in `<out>/<variant>.{ptx,cubin,json}`. `bench/variants.py` times
them on the GPU. Variants that remove work (nostore, noload) measure where the
time goes; they compute garbage.
"""

import argparse
import json
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPT = ROOT / "build/bin/block-attn-opt"
COMPILE = ROOT / "build/bin/block-attn-compile"


def blockattn_ir(name: str, head_dim: int) -> str:
    act = f"memref<?x?x{head_dim}xbf16>"
    return f"""
func.func @{name}(%q: {act}, %k: {act}, %v: {act}, %o: {act}, %cu: memref<?xi32>, %scale: f32) {{
  blockattn.forward q(%q : {act}) k(%k : {act}) v(%v : {act}) o(%o : {act})
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)
      {{block_size = 64 : i64, head_dim = {head_dim} : i64, element_type = bf16}}
  return
}}
"""


def warpspec_ir(name: str, head_dim: int, options: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(blockattn_ir(name, head_dim))
        f.flush()
        pipeline = f"builtin.module(func.func(blockattn-warp-specialize{{chip=sm_90a {options}}}))"
        return subprocess.run([OPT, f.name, f"--pass-pipeline={pipeline}"], check=True,
                              capture_output=True, text=True).stdout


def drop_lines(ir: str, pattern: str) -> str:
    return "\n".join(line for line in ir.splitlines() if not re.search(pattern, line))


def no_compute(ir: str) -> str:
    """Consumers only release: the load pipeline alone."""
    return drop_lines(ir, r"warpspec\.(mma|softmax|store|write|scratch)")


VARIANTS = {
    # name: (head_dim, warp-specialize options, edit)
    "d128_tma": (128, "o-store=tma", None),
    "d128_smem": (128, "o-store=smem", None),
    "d128_tma_s2": (128, "o-store=tma num-stages=2", None),
    "d128_tma_c1_s2": (128, "o-store=tma num-consumers=1 num-stages=2", None),
    "d128_tma_contig": (128, "o-store=tma schedule=contiguous", None),
    "d64_tma": (64, "o-store=tma", None),
    "d64_smem": (64, "o-store=smem", None),
    "d64_tma_s4": (64, "o-store=tma num-stages=4", None),
    "d128_persistent": (128, "schedule=strided", None),
    "d128_chunked": (128, "", None),
    "d64_persistent": (64, "schedule=strided", None),
    "d64_chunked": (64, "", None),
    "d64_chunked_x3": (64, "ctas-per-sm=3", None),
    "d64_chunked_x4": (64, "ctas-per-sm=4", None),
    "d128_chunked_osmem": (128, "o-store=smem", None),
    "d128_chunked_s1": (128, "num-stages=1", None),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (head_dim, options, edit) in VARIANTS.items():
        if args.only and not re.search(args.only, name):
            continue
        ir = warpspec_ir(name, head_dim, options)
        if edit:
            ir = edit(ir)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(ir)
            f.flush()
            subprocess.run([COMPILE, f.name, "--chip=sm_90a", "-o", str(out), "--cubin", "--quiet"],
                           check=True)
        manifest = json.loads((out / f"{name}.json").read_text())
        print(name, manifest["ptxas"]["registers"], "regs", manifest["smem_bytes"], "smem")


if __name__ == "__main__":
    main()
