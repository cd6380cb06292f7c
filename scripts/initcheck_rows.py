#!/usr/bin/env python3
"""Maps initcheck's uninitialized-read addresses to output rows.

    compute-sanitizer --tool initcheck --print-limit 0 \\
        python3 -m tests.gpu.sanitize_driver ... | scripts/initcheck_rows.py

The driver prints `tensor NAME ADDRESS T H D` for every output it checked; this
groups the reported addresses by tensor and prints, per tensor, how many reads
were reported and which token rows they fall in (as ranges), against the
sequence layout of the driver's batch.
"""

import re
import sys

tensors, addresses = [], []
for line in sys.stdin:
    if line.startswith("tensor "):
        _, name, base, T, H, D = line.split()
        tensors.append((name, int(base, 16), int(T), int(H), int(D)))
    elif m := re.search(r"Address (0x[0-9a-f]+)", line):
        addresses.append(int(m.group(1), 16))
    elif "ERROR SUMMARY" in line:
        print(line.strip())


def ranges(rows):
    out, start, prev = [], None, None
    for r in sorted(rows):
        if start is None:
            start = prev = r
        elif r == prev + 1:
            prev = r
        else:
            out.append((start, prev))
            start = prev = r
    if start is not None:
        out.append((start, prev))
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out)


unmatched = 0
per_tensor = {name: (0, set()) for name, *_ in tensors}
for addr in addresses:
    for name, base, T, H, D in tensors:
        row_bytes = H * D * 2
        if base <= addr < base + T * row_bytes:
            count, rows = per_tensor[name]
            rows.add((addr - base) // row_bytes)
            per_tensor[name] = (count + 1, rows)
            break
    else:
        unmatched += 1
for name, (count, rows) in per_tensor.items():
    print(f"{name}: {count} reads reported; rows {ranges(rows) or 'none'}")
print(f"addresses outside every output: {unmatched}")
