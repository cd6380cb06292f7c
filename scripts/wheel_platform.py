#!/usr/bin/env python3
"""Prints the manylinux platform tag that the wheel's native files need.

    scripts/wheel_platform.py FILE...     ->  manylinux_2_36_x86_64

For each ELF file: the shared libraries it needs (readelf -d) must all be
glibc's own (libc, libm, libdl, librt, libpthread, the dynamic loader), so
that the wheel runs on any glibc system, with no LLVM/MLIR or C++ runtime
installed; and the newest GLIBC_x.y symbol version it imports (objdump -T)
gives the tag's glibc. Exits 1, saying why, if a file needs anything else.
"""

import re
import subprocess
import sys

GLIBC_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
    "ld-linux-x86-64.so.2",
}


def needed(path: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def runpath(path: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[([^\]]+)\]", out)


def glibc_versions(path: str) -> set[tuple[int, ...]]:
    out = subprocess.run(["objdump", "-T", path], check=True, capture_output=True, text=True).stdout
    return {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", out)}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    newest = (2, 17)
    for path in argv:
        foreign = [lib for lib in needed(path) if lib not in GLIBC_LIBRARIES]
        if foreign:
            print(f"wheel_platform: {path} needs {', '.join(foreign)}, which is not part of glibc",
                  file=sys.stderr)
            return 1
        if runpath(path):
            print(f"wheel_platform: {path} has a run path {runpath(path)}", file=sys.stderr)
            return 1
        newest = max([newest, *glibc_versions(path)])
    print(f"manylinux_{newest[0]}_{newest[1]}_x86_64")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
