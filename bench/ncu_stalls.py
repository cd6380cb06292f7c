#!/usr/bin/env python3
"""Where a warp-specialized kernel's warps stall, from Nsight Compute's per-instruction samples.

Reads the SASS source page of an ncu report (``ncu -i R.ncu-rep --page source --csv
--print-source sass > R.csv``; gzip allowed) and prints, per kernel, how the warp-state samples
split between:

- **wait**: the branches and sleeps of the mbarrier wait loops (a warp waiting for a ring slot,
  for its data, or for the other roles): in a memory-bound kernel most samples land here;
- **long_sb at math**: other instructions stalled on the long scoreboard, i.e. waiting for a
  global (L2/DRAM) load they consume: in the rotary kernels, the cos/sin table reads;
- **short_sb**: other instructions waiting for shared memory (the in-place rotation's reads);
- **mma**: wgmma issue and its waits (HGMMA, WARPGROUP.*).

and the global loads executed (LDG) and instructions executed. bench/profile_rotary.py makes the
report; docs/rotary.md ("Where the time goes") reads it.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys


def read_kernels(path: str) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    kernels, current = [], None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == "Kernel Name":
            current = {"name": row[1], "rows": []}
            kernels.append(current)
        elif current is None:
            raise ValueError(f"{path}: not an ncu source page (no 'Kernel Name' row first)")
        elif row[0] == "Address":
            current["header"] = {c: i for i, c in enumerate(row)}
        else:
            current["rows"].append(row)
    return kernels


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def _opcode(source: str) -> str:
    tokens = source.split()
    if tokens and tokens[0].startswith("@"):  # a predicate
        tokens = tokens[1:]
    return tokens[0] if tokens else ""


def summarize(kernel: dict) -> dict:
    h = kernel["header"]
    for column in ("Source", "# Samples", "Instructions Executed", "stall_long_sb", "stall_short_sb"):
        if column not in h:
            raise ValueError(f"kernel {kernel['name']}: no column {column!r} (ncu --set full needed)")
    total = wait = long_sb = short_sb = mma = loads = executed = 0.0
    for row in kernel["rows"]:
        op, samples = _opcode(row[h["Source"]]), _number(row[h["# Samples"]])
        total += samples
        executed += _number(row[h["Instructions Executed"]])
        if op.startswith(("BRA", "NANOSLEEP", "SYNCS.PHASECHK")):
            wait += samples
        elif op.startswith(("HGMMA", "WARPGROUP", "UTCHMMA", "UTCQMMA")):
            mma += samples
        else:
            long_sb += _number(row[h["stall_long_sb"]])
            short_sb += _number(row[h["stall_short_sb"]])
        if op.startswith("LDG"):
            loads += _number(row[h["Instructions Executed"]])
    pct = (lambda x: 100.0 * x / total) if total else (lambda x: 0.0)
    return {"kernel": kernel["name"], "samples": total, "wait": pct(wait), "long_sb_at_math": pct(long_sb),
            "short_sb": pct(short_sb), "mma": pct(mma), "ldg_executed": loads, "executed": executed}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source_csv", help="ncu --page source --csv --print-source sass output (.csv or .csv.gz)")
    args = ap.parse_args(argv)
    try:
        kernels = read_kernels(args.source_csv)
    except (OSError, ValueError) as e:
        sys.exit(f"ncu_stalls: {e}")
    print(f"{'kernel':50s} {'samples':>8s} {'wait':>6s} {'lsb@math':>8s} {'short_sb':>8s} {'mma':>6s} "
          f"{'LDG exec':>10s} {'inst exec':>11s}")
    for kernel in kernels:
        s = summarize(kernel)
        print(f"{s['kernel'][:50]:50s} {s['samples']:8.0f} {s['wait']:5.1f}% {s['long_sb_at_math']:7.1f}% "
              f"{s['short_sb']:7.1f}% {s['mma']:5.1f}% {s['ldg_executed']:10.0f} {s['executed']:11.0f}")


if __name__ == "__main__":
    main()
