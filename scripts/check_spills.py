#!/usr/bin/env python3
"""Fails if a compiled kernel spills registers, according to its manifest.

    python3 scripts/check_spills.py DIR [--chip sm_100a] [--rotary-only]

reads every DIR/<chip>/*.json manifest (block-attn-compile records ptxas -v's
spill stores and loads in its "ptxas" field) and exits 1 if a kernel spills
that KNOWN_SPILLS does not list, or if a kernel KNOWN_SPILLS lists no longer
spills (take it off the list, so that it cannot start again unnoticed).
"""

import argparse
import json
import pathlib
import re
import sys

# sm_100a, head_dim 128, rotary backward: 640 threads leave 96 registers a
# thread, and no split of them between the load, rotary, MMA and softmax
# warpgroups gets every warpgroup what it needs (docs/performance-notes.md,
# "sm_100a rotary registers"; issue 19). Every other kernel of the standard
# set assembles without spills.
KNOWN_SPILLS = [
    r"sm_100a/blockattn_backward_d128_b64_(bf16|f16)_(half_split|interleaved)(_pos)?(_rv)?",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=pathlib.Path)
    parser.add_argument("--chip", action="append",
                        help="only this chip's kernels (repeatable; default: all)")
    parser.add_argument("--rotary-only", action="store_true",
                        help="only the kernels with rotary embeddings")
    args = parser.parse_args()

    manifests = sorted(args.directory.glob("*/*.json"))
    if args.chip:
        manifests = [m for m in manifests if m.parent.name in args.chip]
    if not manifests:
        sys.exit(f"check_spills: no manifests under {args.directory}")
    known = re.compile("|".join(f"(?:{k})" for k in KNOWN_SPILLS))
    problems, checked, spilling = [], 0, 0
    for path in manifests:
        manifest = json.loads(path.read_text())
        if args.rotary_only and manifest.get("rotary", "none") == "none":
            continue
        checked += 1
        name = f"{path.parent.name}/{manifest['kernel']}"
        report = manifest.get("ptxas")
        if report is None:
            problems.append(f"{name} has no ptxas report (compiled without "
                            "--cubin, or without ptxas?)")
            continue
        spills = report["spill_stores"] or report["spill_loads"]
        spilling += bool(spills)
        expected = bool(known.fullmatch(name))
        if spills and not expected:
            problems.append(f"{name} spills ({report['spill_stores']} bytes "
                            f"stored, {report['spill_loads']} loaded)")
        elif expected and not spills:
            problems.append(f"{name} no longer spills: take it off "
                            "KNOWN_SPILLS in scripts/check_spills.py")
    for problem in problems:
        print(f"check_spills: {problem}")
    print(f"check_spills: {checked} kernels, {spilling} spill "
          f"(known: {spilling - sum(' spills (' in p for p in problems)})")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
