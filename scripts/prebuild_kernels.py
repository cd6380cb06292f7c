#!/usr/bin/env python3
"""Compiles the standard kernel set into a directory for BLOCKATTN_KERNEL_DIR.

On a machine with the compiler (this repository built):
    python3 scripts/prebuild_kernels.py .prebuilt
then on a GPU machine without it:
    BLOCKATTN_KERNEL_DIR=.prebuilt python3 -m pytest python/tests/gpu

Every combination of --chips, --kinds, --head-dims, --block-sizes, --dtypes,
--rotary and --groups (grouped-query attention's query heads per k/v head;
the grouped backward at blocks of up to 64, and at block size 128 at every
head dim, with rotary embeddings of both layouts, on both chips) is
built (block size 64 unless --block-sizes says otherwise: the others compile
on first use).
The default head dims are the wheel's prebuilt ones (64, 128); the API compiles
the others (32, 96, 192, 256) on first use, or pass them here, e.g.
    python3 scripts/prebuild_kernels.py .prebuilt --chips sm_90a,sm_100a \\
        --kinds forward,backward --head-dims 32,96

A rotary mode other than none is built once per --rotary-variants entry:
plain (position = index in the sequence), pos (an explicit positions tensor),
rv (v rotated too), pos_rv (both). Each kernel that has a small-grid variant
(the sm_90a kernels without rotary: the same kernel with one tile per CTA, which
the API launches for grids that would leave SMs idle) is followed by it, unless
--no-small-grid. For example, everything the GPU tests and
the rotary benchmark need:
    python3 scripts/prebuild_kernels.py .prebuilt --kinds forward,backward \\
        --rotary none,half_split,interleaved --rotary-variants plain,pos,rv,pos_rv
"""

import argparse
import importlib.util
import itertools
import pathlib
import sys


def _load_kernels_module():
    """python/blockattn/_kernels.py alone: it needs only the standard library, so the
    build machine needs neither numpy nor torch (the blockattn package imports numpy)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "python" / "blockattn" / "_kernels.py"
    spec = importlib.util.spec_from_file_location("_blockattn_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_kernels = _load_kernels_module()
ROTARY_MODES, KernelKey, prebuild = _kernels.ROTARY_MODES, _kernels.KernelKey, _kernels.prebuild
small_grid_key = _kernels.small_grid_key
HEAD_DIMS = ",".join(map(str, _kernels.PREBUILT_HEAD_DIMS))

VARIANTS = {"plain": (False, False), "pos": (True, False), "rv": (False, True), "pos_rv": (True, True)}


def split(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def keys_for(args) -> list[KernelKey]:
    keys = []
    for chip, kind, d, bs, dtype, rotary, group in itertools.product(
        args.chips, args.kinds, args.head_dims, args.block_sizes, args.dtypes, args.rotary, args.groups
    ):
        if kind == "backward" and bs not in _kernels.BACKWARD_BLOCK_SIZES:
            continue  # no backward kernel at this block size yet (docs/block-sizes.md)
        # the grouped rotary backward at block size 128: every head dim, both layouts, both chips
        # (half-split in pair-complete chunks: two 64-byte-swizzled pieces at 128 and above, session
        # 23, two 32-byte-swizzled ones at 96, session 24; above 128 streamed in 64-column chunks and
        # rotated as they land, on sm_100a by a rotary warpgroup since session 24)
        for variant in (["plain"] if rotary == "none" else args.rotary_variants):
            positions, rotate_v = VARIANTS[variant]
            key = KernelKey(kind=kind, head_dim=d, block_size=bs, dtype=dtype, chip=chip,
                            rotary=rotary, positions=positions, rotate_v=rotate_v, group=group,
                            causal=args.causal, lse=args.lse,
                            rotary_theta=args.rotary_theta if rotary != "none" else None)
            keys.append(key)
            small = small_grid_key(key) if args.small_grid else None
            if small is not None:
                keys.append(small)
    return keys


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("--chips", default="sm_90a", help="comma-separated (default: sm_90a)")
    parser.add_argument("--kinds", default="forward", help="comma-separated: forward, backward (default: forward)")
    parser.add_argument("--head-dims", default=HEAD_DIMS, help=f"comma-separated (default: {HEAD_DIMS})")
    parser.add_argument("--block-sizes", default="64",
                        help=f"comma-separated, among {', '.join(map(str, _kernels.BLOCK_SIZES))} (default: 64)")
    parser.add_argument("--dtypes", default="bf16,f16", help="comma-separated (default: bf16,f16)")
    parser.add_argument("--rotary", default="none",
                        help=f"comma-separated rotary modes among {', '.join(ROTARY_MODES)} (default: none)")
    parser.add_argument("--rotary-variants", default="plain",
                        help=f"comma-separated, for rotary modes other than none: {', '.join(VARIANTS)} "
                             "(default: plain)")
    parser.add_argument("--groups", default="1",
                        help="comma-separated query heads per k/v head (grouped-query attention; "
                             "default: 1, none)")
    parser.add_argument("--causal", action="store_true",
                        help="build the causal kernels (causal attention inside each block) instead")
    parser.add_argument("--lse", action="store_true",
                        help="build the log-sum-exp kernels (the forward writes it, the backward takes "
                             "its gradient) instead")
    parser.add_argument("--rotary-theta", type=float, nargs="?", const=10000.0, default=None, metavar="THETA",
                        help="build the rotary kernels with angles computed in the kernel from this base "
                             "(10000 if no value is given) instead of cos/sin tables; the Python API "
                             "passes tables, so these are for the compiler's checks (_theta kernels)")
    parser.add_argument("--no-small-grid", dest="small_grid", action="store_false",
                        help="leave out the small-grid variants (tiles per CTA 1) of the sm_90a kernels "
                             "without rotary")
    parser.add_argument("--compiler", default=None,
                        help="the block-attn-compile to use (default: $BLOCKATTN_COMPILER, the PATH, build/bin)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="compiles to run at once (default: 1)")
    parser.add_argument("--dry-run", action="store_true", help="print the kernels, compile nothing")
    args = parser.parse_args(argv)
    args.chips, args.kinds, args.dtypes = split(args.chips), split(args.kinds), split(args.dtypes)
    args.head_dims = [int(d) for d in split(args.head_dims)]
    block_sizes = split(args.block_sizes)
    for bs in block_sizes:
        if not bs.isdigit() or int(bs) not in _kernels.BLOCK_SIZES:
            parser.error(f"--block-sizes: unsupported block size {bs!r}; supported: "
                         f"{', '.join(map(str, _kernels.BLOCK_SIZES))}")
    args.block_sizes = [int(bs) for bs in block_sizes]
    args.rotary, args.rotary_variants = split(args.rotary), split(args.rotary_variants)
    try:
        args.groups = [int(g) for g in split(args.groups)]
    except ValueError:
        parser.error(f"--groups: expected comma-separated integers, got {args.groups!r}")
    if not args.groups or any(g < 1 for g in args.groups):
        parser.error(f"--groups: every group must be at least 1, got {args.groups}")
    for mode in args.rotary:
        if mode not in ROTARY_MODES:
            parser.error(f"--rotary: unknown mode {mode!r}; known: {', '.join(ROTARY_MODES)}")
    for variant in args.rotary_variants:
        if variant not in VARIANTS:
            parser.error(f"--rotary-variants: unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    keys = keys_for(args)
    if not args.dry_run:
        prebuild(args.directory, keys, cubin=True, jobs=args.jobs, compiler=args.compiler)
    for key in keys:
        print(f"{key.chip}/{key.name}")


if __name__ == "__main__":
    main()
