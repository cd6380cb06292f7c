#!/usr/bin/env python3
"""Where the fused rotary kernels spend their time: one launch of each kernel for ncu.

Issue 19 asks for a profile of the fused rotary kernels against the plain ones before any
change. This script launches, once each and in a fixed order, the plain and the fused forward
and backward kernels of one workload, so that Nsight Compute can profile exactly those
launches (every kernel whose name starts with ``blockattn_``); ``--time`` times the same
launches with triton.testing.do_bench instead (no profiler attached). ::

    # on the GPU machine (kernels built here: scripts/prebuild_kernels.py, sm_90a)
    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt ncu --clock-control none \\
        -k regex:blockattn_ --set full -o rotary -f \\
        python3 bench/profile_rotary.py --batch 288
    ncu -i rotary.ncu-rep --page raw --csv > rotary-raw.csv
    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt python3 bench/profile_rotary.py --time

The backward launches the kernel through ``blockattn.api.backward`` on the calling thread (not
through torch.autograd, whose engine launches from its own thread), so that one process holds
exactly one launch per (variant, kind). The variants: ``plain`` (no rotary), ``half_split``,
``interleaved``, and either with ``+pos`` (positions tensor) and ``+rv`` (v rotated too).
Results of the profile are read in docs/rotary.md ("Where the time goes").
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if str(HERE.parent / "python") not in sys.path:
    sys.path.append(str(HERE.parent / "python"))

import torch  # noqa: E402

import peers  # noqa: E402
import workloads  # noqa: E402

DEFAULT_VARIANTS = "plain,half_split,interleaved+rv"


def parse_variant(text: str) -> dict:
    """'half_split+pos+rv' -> the rotary options of that variant; 'plain' -> None."""
    mode, *flags = text.split("+")
    if mode == "plain":
        if flags:
            raise ValueError(f"--variants: 'plain' takes no flags, got {text!r}")
        return None
    if mode not in ("half_split", "interleaved"):
        raise ValueError(f"--variants: unknown rotary mode {mode!r} in {text!r}")
    unknown = set(flags) - {"pos", "rv"}
    if unknown:
        raise ValueError(f"--variants: unknown flag(s) {sorted(unknown)} in {text!r}; known: pos, rv")
    return {"interleaved": mode == "interleaved", "positions": "pos" in flags, "rotate_v": "rv" in flags}


def make_problem(args):
    w = workloads.get(args.workload)
    lengths = w.lengths[: args.batch] if args.batch else w.lengths
    w = workloads.Workload(w.name, lengths, w.heads, args.head_dim or w.head_dim, w.dtype,
                           block_size=w.block_size)
    q, k, v, do = w.tensors(4)
    return w, q, k, v, do, w.cu_seqlens()


def rotary_args(options, w):
    """api.forward/backward's rotary arguments for a variant (bench/peers.py's tables)."""
    if options is None:
        return (None, None, None, False, False)
    config = peers.RotaryConfig(**options)
    r = peers.RotaryTensors.make(config, w.lengths, w.head_dim)
    return (r.cos, r.sin, r.positions, config.interleaved, config.rotate_v)


def launches(args):
    """[(label, fn)]: one launch of each requested kernel."""
    from blockattn import api

    w, q, k, v, do, cu = make_problem(args)
    scale = 1.0 / math.sqrt(w.head_dim)
    out = torch.empty_like(q)
    result = []
    for text in args.variants.split(","):
        rope = rotary_args(parse_variant(text), w)
        if "forward" in args.kinds:
            result.append((f"{text}/forward",
                           lambda rope=rope: api.forward(q, k, v, cu, w.block_size, scale, out, *rope)))
        if "backward" in args.kinds:
            result.append((f"{text}/backward",
                           lambda rope=rope: api.backward(do, q, k, v, cu, w.block_size, scale, *rope)))
    return w, result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="seed", help="a bench/workloads.py name (default: seed)")
    ap.add_argument("--batch", type=int, default=288,
                    help="sequences of the workload to keep (default: 288 of seed's 1152, so that ncu's "
                         "replays stay short; 0 = all)")
    ap.add_argument("--head-dim", type=int, default=None, help="override the workload's head dim")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS,
                    help=f"comma-separated: plain, half_split, interleaved, each with optional +pos, +rv "
                         f"(default: {DEFAULT_VARIANTS})")
    ap.add_argument("--kinds", default="forward,backward", help="comma-separated (default: forward,backward)")
    ap.add_argument("--time", action="store_true", help="time each launch with do_bench instead")
    ap.add_argument("--json", default=None, help="with --time: write the medians here")
    args = ap.parse_args(argv)
    for text in args.variants.split(","):
        try:
            parse_variant(text)
        except ValueError as e:
            ap.error(str(e))
    w, todo = launches(args)
    print(f"{w.name}[:{len(w.lengths)}]: T={w.tokens} H={w.heads} D={w.head_dim}", flush=True)
    if not args.time:
        for label, fn in todo:
            fn()
            torch.cuda.synchronize()
            print(f"launched {label}", flush=True)
        return
    import triton

    times = {}
    for label, fn in todo:
        times[label] = triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
        print(f"{label}: {times[label]:.3f} ms", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"workload": w.name, "batch": len(w.lengths),
                                                       "tokens": w.tokens, "ms": times}, indent=1))


if __name__ == "__main__":
    main()
