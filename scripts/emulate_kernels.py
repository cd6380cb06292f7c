#!/usr/bin/env python3
"""Emulates compiled kernels in block-attn-emulate on the small jagged problem.

Every combination of --chips, --kinds, --head-dims, --block-sizes, --dtypes and
--rotary is compiled with build/bin/block-attn-compile and emulated on the emulator
tests' problem (lengths 0, 1, 63, 64, 65, 200, and at block sizes below 64 also bs-1, bs,
bs+1 and tiny sequences: emulation.edge_lengths; two heads), then compared with the
float64 reference within the GPU tests' tolerances. The defaults are the whole
standard set on both chips (forward and backward, head dims 64 and 128, bf16
and f16, rotary none, half_split and interleaved, each rotary mode with its
--rotary-variants: the 144 kernels of scripts/prebuild_kernels.py's standard set):

    python3 scripts/emulate_kernels.py
    python3 scripts/emulate_kernels.py --chips sm_100a --kinds backward --seeds 1,2,3

--modes adds causal blocks and the log-sum-exp (lse in the forward, dlse in the
backward); e.g. the sm_100a backward at block size 128 above head dim 128, every mode:

    python3 scripts/emulate_kernels.py --chips sm_100a --kinds backward --head-dims 192,256 \
        --block-sizes 128 --rotary none --modes plain,causal,lse,causal_lse

--groups, --kv-heads and --modes add grouped-query kernels and causal / lse ones, e.g. the
grouped backward above head dim 128 (G = 2 and 4, multi-query):

    python3 scripts/emulate_kernels.py --kinds backward --head-dims 192,256 \
        --block-sizes 16,32,64 --rotary none --groups 2,4 --modes plain,causal_lse

--rotary-theta computes the angles in the kernel from a base (10000 if no value is given)
instead of reading tables; the reference takes float64 tables at that base. E.g. the
interleaved backward at block size 128 above head dim 128 from theta:

    python3 scripts/emulate_kernels.py --kinds backward --head-dims 192,256 --block-sizes 128 \
        --rotary interleaved --rotary-theta --modes plain,causal_lse

Exit status 1 if any kernel fails; each failure is printed with the
emulator's report.
"""

import argparse
import itertools
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from blockattn import emulation as em  # noqa: E402
from blockattn._kernels import PREBUILT_HEAD_DIMS as HEAD_DIMS, find_compiler  # noqa: E402


def split(text):
    return [item for item in text.split(",") if item]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chips", default="sm_90a,sm_100a")
    parser.add_argument("--kinds", default="forward,backward")
    parser.add_argument("--head-dims", default=",".join(map(str, HEAD_DIMS)))
    parser.add_argument("--block-sizes", default="64")
    parser.add_argument("--dtypes", default="bf16,f16")
    parser.add_argument("--rotary", default="none,half_split,interleaved")
    parser.add_argument("--rotary-variants", default="plain,pos,rv,pos_rv",
                        help="with a rotary mode: plain, pos (a positions tensor), rv (rotate v), pos_rv")
    parser.add_argument("--groups", default="1",
                        help="comma-separated query heads per k/v head (grouped-query attention; "
                             "the problem then has --kv-heads k/v heads)")
    parser.add_argument("--kv-heads", type=int, default=1,
                        help="k/v heads of a grouped problem (1: multi-query attention)")
    parser.add_argument("--modes", default="plain",
                        help="comma-separated of plain, causal, lse, causal_lse")
    parser.add_argument("--seeds", default="1", help="comma-separated emulator seeds")
    parser.add_argument("--sms", type=int, default=2, help="SMs of the emulated GPU (sets the grid)")
    parser.add_argument("--rotary-theta", type=float, nargs="?", const=10000.0, default=None, metavar="THETA",
                        help="the rotary kernels with angles computed in the kernel from this base "
                             "(10000 if no value is given) instead of cos/sin tables")
    parser.add_argument("--compiler-flags", default="",
                        help="extra block-attn-compile flags for every kernel, space-separated "
                             "(e.g. '--slot-parts=2 --tiles-per-cta=4')")
    parser.add_argument("--emulator-flags", default="",
                        help="extra block-attn-emulate flags, space-separated (e.g. "
                             "'--hold-bulk-stores': bulk stores read shared memory until waited for)")
    args = parser.parse_args(argv)
    compiler = find_compiler()
    if compiler is None or em.find_emulator() is None:
        parser.error("build the project first (block-attn-compile and block-attn-emulate)")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"plain": (False, False), "pos": (True, False), "rv": (False, True),
                    "pos_rv": (True, True)}
        modes = {"plain": (False, False), "causal": (True, False), "lse": (False, True),
                 "causal_lse": (True, True)}
        for chip, kind, d, bs, dtype, rotary, variant, group, mode in itertools.product(
                split(args.chips), split(args.kinds), [int(x) for x in split(args.head_dims)],
                [int(x) for x in split(args.block_sizes)],
                split(args.dtypes), split(args.rotary), split(args.rotary_variants),
                [int(x) for x in split(args.groups)], split(args.modes)):
            if rotary == "none" and variant != "plain":
                continue
            positions, rotate_v = variants[variant]
            causal, lse = modes[mode]
            case = em.Case(kind, d, dtype, rotary, positions=positions, rotate_v=rotate_v, block_size=bs,
                           group=group, causal=causal, lse=lse,
                           rotary_theta=args.rotary_theta if rotary != "none" else None)
            heads = group * args.kv_heads if group > 1 else em.HEADS
            out = pathlib.Path(tmp) / chip
            subprocess.run([compiler, *case.compiler_flags(chip), *args.compiler_flags.split(), "-o", str(out),
                            "--quiet"], check=True)
            base = out / f"k_{case.name}"
            for seed in [int(s) for s in split(args.seeds)]:
                tensors = em.make_problem(case, heads=heads)
                start = time.time()
                try:
                    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                                     {"softmax_scale": d ** -0.5}, seed=seed, num_sms=args.sms,
                                     extra_args=args.emulator_flags.split())
                    failures = em.check_close(case, got, em.reference_outputs(case, tensors))
                except em.EmulationError as e:
                    failures = [str(e)]
                status = "ok" if not failures else "FAILED"
                print(f"{chip} {case.name} seed {seed}: {status} ({time.time() - start:.1f} s)", flush=True)
                for f in failures:
                    print("    " + f.replace("\n", "\n    "))
                failed += bool(failures)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
