#!/usr/bin/env python3
"""Compiles the standard kernel set into a directory for BLOCKATTN_KERNEL_DIR.

On a machine with the compiler (this repository built):
    python3 scripts/prebuild_kernels.py .prebuilt
then on a GPU machine without it:
    BLOCKATTN_KERNEL_DIR=.prebuilt python3 -m pytest python/tests/gpu
"""

import argparse
import itertools
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from blockattn._kernels import KernelKey, prebuild  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("--chips", default="sm_90a")
    parser.add_argument("--kinds", default="forward")
    args = parser.parse_args()
    keys = [
        KernelKey(kind=kind, head_dim=d, block_size=64, dtype=dtype, chip=chip)
        for chip, kind, d, dtype in itertools.product(
            args.chips.split(","), args.kinds.split(","), (64, 128), ("bf16", "f16")
        )
    ]
    prebuild(args.directory, keys, cubin=True)
    for key in keys:
        print(f"{key.chip}/{key.name}")


if __name__ == "__main__":
    main()
