#!/usr/bin/env python3
# Runs TOOL on every file of DIR (sorted) and prints one line per file,
# "<file>: exit <code>", or "<file>: killed by signal <n>" if the tool crashed,
# so that a lit test can check exact exit codes with FileCheck in both lit's
# internal shell and an external one.
#
# Usage: exit-codes.py TOOL DIR [ARGS...]
import os
import subprocess
import sys

tool, directory, args = sys.argv[1], sys.argv[2], sys.argv[3:]
for name in sorted(os.listdir(directory)):
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        continue
    proc = subprocess.run([tool, path, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    if proc.returncode < 0:
        print(f"{name}: killed by signal {-proc.returncode}")
    else:
        print(f"{name}: exit {proc.returncode}")
