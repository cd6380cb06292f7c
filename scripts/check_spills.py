#!/usr/bin/env python3
"""Fails if a compiled kernel spills registers, according to its manifest.

    python3 scripts/check_spills.py DIR [--chip sm_100a] [--known RE]

reads every DIR/<chip>/*.json manifest (block-attn-compile records ptxas -v's
spill stores and loads in its "ptxas" field) and exits 1 if a kernel spills
that KNOWN_SPILLS does not list, or if a kernel KNOWN_SPILLS lists no longer
spills (take it off the list, so that it cannot start again unnoticed).
--known adds a pattern to the list for this run.
"""

import argparse
import json
import pathlib
import re
import sys

# Kernels known to spill (regular expressions over "<chip>/<kernel>"). A
# kernel added here needs an issue that says why.
KNOWN_SPILLS = [
    # Issue 20: the sm_90a interleaved rotary backward at block size 128
    # above head dim 128 (tables and rotary_theta; sessions 18-21 left 50 of
    # its 128 kernels spilling, 4-100 bytes) spills nothing since session 23:
    # the producer rotates with pinned addresses where that removed the
    # spills (KernelPlan::pinnedAddresses; docs/head-dims.md, "Pinned
    # addresses in the interleaved backward at block size 128 (session 23)").
    # Issue 20 (session 23): the half-split ones, rebuilt on pair-complete
    # chunks of two 64-byte-swizzled pieces (40 of the 64 table kernels and
    # 16 of the 32 theta kernels measured spilled 4-64 bytes), spill nothing
    # since the consumers pin their addresses as the interleaved ones do
    # (pinsHalfSplitColumnPassAddresses; at 256 without rotate_v at 96 / 208
    # / 200; docs/head-dims.md, "Pinned addresses in the half-split backward
    # at block size 128 (session 23)").
    # Issue 21 (sessions 23-24): the sm_90a grouped block-128 half-split
    # backward at head dim 128 (pair-complete chunks as two 64-byte-swizzled
    # pieces) spilled 8-92 bytes: the producer at G = 4 and 8 and with a
    # positions tensor (LLVM held its 24 loop-invariant copy destinations and
    # the group's head rows), the scores warpgroup with causal + dlse and
    # rotate_v. None since session 25: every partition pins its addresses
    # (KernelPlan::pinnedAddresses; docs/head-dims.md, "Session 25: pinned
    # addresses in the grouped half-split backward at head dim 128").
    # Issues 20/21 (session 22): the sm_90a grouped block-128 rotary backward
    # above head dim 128 with rotate_v. The scores warpgroup rotates every
    # streamed chunk as it lands, V's inside the dP loop next to P and dP
    # (64 + 64 registers): at its 176 it spills with rotate_v in every kernel
    # sampled, both layouts (interleaved 4-96 bytes, half-split 120-328: a
    # half-split item turns 8 pairs a thread, an interleaved one 4), and
    # accumulate warpgroup 0 needs 136 to turn dV's chunk back too; the pool
    # of 512 holds no split (ptxas wants about 104 / 200 / 136 / 120; every
    # split tried by editing setmaxnreg spilled, and the producer rotating V's
    # chunks instead spilled 56 bytes). Without rotate_v nothing spills
    # (docs/head-dims.md, "With rotary embeddings (session 22)").
    # Session 24: with rotate_v (and half-split at 256) they pin their
    # addresses (pinsGroupedChunkAddresses): interleaved rv at 256 spilled
    # nothing where measured, at 192 causal + dlse 4 bytes; with a positions
    # tensor 20-24 (the accumulate warpgroups; docs/head-dims.md, "Session
    # 24"). Session 25: the interleaved ones spill nothing where measured
    # (the accumulate warpgroups' stores and the scores warpgroup's dlse read
    # pin their rows too: warpspec.store / load_rows pinned_steps /
    # pinned_rows; docs/head-dims.md, "Session 25"), but at 256 with
    # positions and a group of 4 or more (the group a loop in the accumulate
    # warpgroups): 16 bytes, one word in each accumulate warpgroup (the item
    # loop's counter, stored at its start and reloaded at its end). None
    # since session 26: the accumulate warpgroups' pinned stores held one
    # register per column offset of a row (the pinned column plus 8 k, added
    # in 32 bits, which LLVM could not widen past the pin) through the
    # unrotation of dV and dK; added in 64 bits they are the stores'
    # immediate offsets (docs/head-dims.md, "Session 26").
    # Session 26: at 256 with rv, tables and no positions, G = 2 (the group
    # unrolled), the accumulate warpgroups spill the rotation's table
    # parameters (the cos and sin pointers and the row stride, 6 words),
    # which ptxas loads into uniform registers at the partition's entry and
    # spills through general ones, reloaded once an item (as the half-split
    # rv ones below): on main (c82a70c) 48 bytes, unlisted, in
    # bf16 and f16 plain and dlse; with the 64-bit column offsets 36 bytes
    # in those and in bf16 causal and causal + dlse (f16 causal and causal +
    # dlse, and G = 3, 4, 8, spill nothing). No split of the pool cures it as
    # the compiler emits it (88 / 168 / 128 / 128, .inc 128: 8 bytes;
    # 80 / 176 / 128 / 128: 24, 16 of them the producer's). None since
    # session 28: their tables are indexed in 32 bits (narrow_index) with
    # the row count computed at the use (pinned_table_rows), as the
    # half-split ones' at 256; 0 of the 32 (G = 2, 3, 4, 8, rv and pos_rv,
    # bf16 and f16, plain and causal + dlse) spill (docs/head-dims.md,
    # "Session 28").
    # The half-split ones (session 23, pair-complete chunks as 64-byte-swizzled
    # pieces) at the same budgets: with rotate_v 72-164 bytes (as session 22's
    # one-box ones, 120-328), pinned since session 24 8-72, with session 25's
    # row pins 8-100 (the scores warpgroup, and with rv without positions 24
    # bytes in each accumulate warpgroup). None since session 26: the scores
    # warpgroup turns each chunk's half-split items in two runs of 4 pairs
    # (warpspec.rotate's split_items: whole items of 8 pairs next to P and dP
    # were its 4-44 bytes), and at head dim 256 the accumulate warpgroups
    # index the tables in 32 bits (rotate_tile's narrow_index: in 64 bits
    # ptxas held each table's base plus the thread's column in registers of
    # their own and spilled them). docs/head-dims.md, "Session 26".
    # From rotary_theta (the angles computed, not read) at head dim 192 the
    # G = 2 rv kernels spilled 44 bytes (5-6 words in each accumulate
    # warpgroup; bf16 and f16, plain and causal + dlse), as before session
    # 26. None since session 28: their stores add the column offsets in 64
    # bits (wide_offsets), as at 256 (the table ones keep 32: with 64 they
    # spill 48 bytes). The 32 of G = 2, 3, 4, 8, rv and pos_rv, bf16 and f16,
    # plain and causal + dlse spill nothing (docs/head-dims.md, "Session 28").
    # (Issues 20/21: the sm_100a grouped block-128 half-split backward spills
    # nothing since session 25. At head dim 96 with causal + dlse at G = 8
    # (40-80 bytes, listed in session 24) and G = 4 (44-88, not listed), and
    # at 128 with causal + dlse at G = 4 and 8 (28, not listed), the softmax
    # warpgroup spilled the barrier addresses of its rings: its loop over the
    # heads now runs to a pinned count, as in chunks above 128; at 96, G = 4,
    # the producer then spilled 8 bytes, its head loop now opaque. Above 128
    # with dlse (4-8 bytes at 224: the item loop's "kv" position) the softmax
    # warpgroup's addresses come from pinned bases. docs/head-dims.md,
    # "Session 25: the sm_100a grouped half-split spills removed".)
    # (The sm_100a grouped block-128 backward above head dim 128 spilled in
    # 18 of its 64 kernels in session 22, the softmax warpgroup at G = 3 and
    # with dlse at 256; none since session 23, its loop over the heads run to
    # a pinned count: docs/head-dims.md, "The sm_100a grouped backward at
    # block size 128 above head dim 128".)
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=pathlib.Path)
    parser.add_argument("--chip", action="append",
                        help="only this chip's kernels (repeatable; default: all)")
    parser.add_argument("--known", action="append", default=[],
                        help="a regular expression over <chip>/<kernel> that "
                        "is expected to spill (repeatable)")
    args = parser.parse_args()

    manifests = sorted(args.directory.glob("*/*.json"))
    if args.chip:
        manifests = [m for m in manifests if m.parent.name in args.chip]
    if not manifests:
        sys.exit(f"check_spills: no manifests under {args.directory}")
    patterns = KNOWN_SPILLS + args.known
    known = re.compile("|".join(f"(?:{k})" for k in patterns) or "(?!)")
    problems, checked, spilling = [], 0, 0
    for path in manifests:
        manifest = json.loads(path.read_text())
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
            problems.append(f"{name} is listed as spilling but does not: "
                            "take it off the list")
    for problem in problems:
        print(f"check_spills: {problem}")
    print(f"check_spills: {checked} kernels, {spilling} spill "
          f"(known: {spilling - sum(' spills (' in p for p in problems)})")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
