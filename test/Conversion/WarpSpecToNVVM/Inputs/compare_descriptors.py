"""Compares descriptor listings (`label = value` lines) of our encoders with
those of the CUTLASS oracle (Inputs/cutlass_oracle.cpp), line by line.

usage: compare_descriptors.py [--all] OURS CUTLASS

Lines are matched by label. With --all, both files must have the same labels;
without it only the labels both have are compared (OURS is then
blockattn-descriptor-test's output, which has lines the oracle does not
cover, and the oracle has lines that tool does not print).

A mismatch is reported with the descriptor fields that differ and fails the
comparison, except in one field that the hardware does not read (below):
there the difference is printed as a note and the rest of the descriptor must
still match.

  LBO of an MN-major operand whose MN extent is 64 16-bit elements. With the
  128-byte swizzle, LBO is the byte offset between consecutive 64-element
  (128-byte) groups along M/N (PTX ISA, wgmma "Matrix Descriptor Format" and
  tcgen05 "Shared memory descriptor"; "Major-ness supported by strides").
  A 64-wide operand is a single group, so the offset is never applied
  (shared/reference/hopper-wgmma-tma-encodings.md §1.5: "For D = 64 ... LBO is
  not exercised"). CuTe's make_gmma_desc / make_umma_desc take LBO from the
  stride of the MN-group mode of the canonical layout, which is a size-1 mode
  with stride 0 here, so CUTLASS writes 0; our encoders write the chunk size
  (8192 bytes, field 0x200) for every width. The same holds for a 32-wide
  operand with the 64-byte swizzle (32-element groups; ours 4096 bytes).
"""

import re
import sys

# (name, first bit, width)
WGMMA_FIELDS = [("start address", 0, 14), ("LBO", 16, 14), ("SBO", 32, 14),
                ("base offset", 49, 3), ("layout type", 62, 2)]
TCGEN05_FIELDS = [("start address", 0, 14), ("LBO", 16, 14), ("SBO", 32, 14),
                  ("version", 46, 3), ("base offset", 49, 3),
                  ("LBO mode", 52, 1), ("layout type", 61, 3)]
IDESC_FIELDS = [("sparsity selector", 0, 2), ("sparsity", 2, 1),
                ("saturate", 3, 1), ("D format", 4, 2), ("A format", 7, 3),
                ("B format", 10, 3), ("negate A", 13, 1), ("negate B", 14, 1),
                ("A major", 15, 1), ("B major", 16, 1), ("N>>3", 17, 6),
                ("M>>4", 24, 5), ("max shift", 30, 2)]

LBO_MASK = ((1 << 14) - 1) << 16
# Labels whose LBO field is not read by the hardware (see the docstring).
LBO_UNUSED = re.compile(r"^(tcgen05 )?mnmajor (A )?64x(64|32) step \d+$")


def fields_of(label):
    if label.startswith("idesc "):
        return IDESC_FIELDS, 32
    if label.startswith("tcgen05 "):
        return TCGEN05_FIELDS, 64
    if label.startswith("swizzle"):
        return [], 0
    return WGMMA_FIELDS, 64


def field(value, first, width):
    return (value >> first) & ((1 << width) - 1)


def describe(label, ours, theirs):
    fields, bits = fields_of(label)
    diffs = []
    covered = 0
    for name, first, width in fields:
        covered |= ((1 << width) - 1) << first
        a, b = field(ours, first, width), field(theirs, first, width)
        if a != b:
            diffs.append(f"{name} ours {a:#x} CUTLASS {b:#x}")
    rest = (ours ^ theirs) & ~covered & ((1 << bits) - 1 if bits else -1)
    if rest and bits:
        diffs.append(f"other bits {rest:#x}")
    return "; ".join(diffs)


def read(path):
    lines = {}
    order = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if " = " not in line:
                continue
            label, value = line.rsplit(" = ", 1)
            if label in lines:
                sys.exit(f"error: {path}: label '{label}' appears twice")
            lines[label] = value
            order.append(label)
    return lines, order


def main(argv):
    require_all = "--all" in argv
    args = [a for a in argv if a != "--all"]
    if len(args) != 2:
        sys.exit(__doc__)
    ours, _ = read(args[0])
    theirs, order = read(args[1])

    errors = 0
    if require_all:
        for label in order:
            if label not in ours:
                print(f"error: '{label}': only in the CUTLASS listing")
                errors += 1
        for label in ours:
            if label not in theirs:
                print(f"error: '{label}': only in our listing")
                errors += 1

    compared = masked = mismatches = 0
    for label in order:
        if label not in ours:
            continue
        compared += 1
        a, b = ours[label], theirs[label]
        if a == b:
            continue
        x, y = int(a, 0), int(b, 0)
        if LBO_UNUSED.match(label) and (x ^ y) & ~LBO_MASK == 0:
            masked += 1
            print(f"note: {label}: {describe(label, x, y)} (LBO not used: "
                  "one swizzle group along MN)")
            continue
        mismatches += 1
        print(f"error: {label}: ours {a}, CUTLASS {b}: "
              f"{describe(label, x, y) or 'values differ'}")

    print(f"compared {compared} lines: {compared - masked - mismatches} equal, "
          f"{masked} differ only in an unused LBO, {mismatches} differ")
    return 1 if errors or mismatches or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
