"""Runs the GPU test kernels once each, for compute-sanitizer.

    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt \\
        compute-sanitizer --tool racecheck --kernel-name kns=blockattn \\
        python3 -m tests.gpu.sanitize_driver            (from python/; or see docs/sanitizers.md)

Every forward and backward kernel of the GPU tests (head dims 64 and 128, plain,
half-split and interleaved rotary) runs on one jagged batch with empty, partial
and full blocks. `--out-mode poisoned` writes the outputs into NaN-filled
buffers (initialized memory, so initcheck judges only the kernels' own reads);
`--out-mode empty` lets the API allocate them, as a user's call does. Each
result is checked to be fully written (no NaN left): a kernel that skipped an
element would fail here, under any tool. Exit status 0 when every case ran.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import torch

import blockattn
from blockattn import api

from .test_forward_gpu import cu_seqlens_of
from .test_rotary_gpu import standard_tables

LENGTHS = [0, 1, 63, 64, 65, 200, 7]
HEADS = 2


def _rotary(mode: str, head_dim: int):
    if mode == "none":
        return None
    cos, sin = standard_tables(256, head_dim)
    return blockattn.Rotary(cos, sin, interleaved=(mode == "interleaved"))


def _poison_outputs() -> None:
    """Makes the API allocate its outputs NaN-filled instead of uninitialized."""
    api._empty = lambda q: torch.full_like(q, float("nan"), memory_format=torch.contiguous_format)


def _assert_written(name: str, t: torch.Tensor) -> None:
    missing = int(torch.isnan(t).sum())
    if missing:
        raise SystemExit(f"{name}: {missing} elements never written")


def run_case(kind: str, head_dim: int, rotary: str, poisoned: bool) -> None:
    g = torch.Generator(device="cuda").manual_seed(0)
    cu = cu_seqlens_of(LENGTHS)
    T = sum(LENGTHS)
    q, k, v, do = (
        torch.randn((T, HEADS, head_dim), generator=g, device="cuda").to(torch.bfloat16) for _ in range(4)
    )
    rope = _rotary(rotary, head_dim)
    tables = {} if rope is None else dict(cos=rope.cos, sin=rope.sin, interleaved=rope.interleaved)
    scale = head_dim ** -0.5
    name = f"{kind} d{head_dim} {rotary}"
    if kind == "forward":
        outputs = (("o", api.forward(q, k, v, cu, 64, scale, **tables)),)
    else:
        grads = api.backward(do, q, k, v, cu, 64, scale, **tables)
        outputs = tuple(zip(("dq", "dk", "dv"), grads))
    torch.cuda.synchronize()
    for label, t in outputs:
        # Lets a reader of the sanitizer's log map an address to a row.
        print(f"tensor {name.replace(' ', '_')}_{label} {t.data_ptr():#x} {T} {HEADS} {head_dim}", flush=True)
        if poisoned:
            _assert_written(f"{name} {label}", t)
        # A torch kernel reads the output, as the next layer would: initcheck
        # reports reads of memory that no instruction it tracks has written.
        float(t.float().sum())
    print(f"ran {name}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", default="forward,backward")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--rotary", default="none,half_split,interleaved")
    parser.add_argument("--out-mode", choices=("poisoned", "empty"), default="empty")
    args = parser.parse_args(argv)
    if args.out_mode == "poisoned":
        _poison_outputs()
    for kind, d, rotary in itertools.product(
        args.kinds.split(","), [int(x) for x in args.head_dims.split(",")], args.rotary.split(",")
    ):
        run_case(kind, d, rotary, args.out_mode == "poisoned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
