"""How evenly a traced kernel's SMs share its work: each SM's finish time and tile count.

A persistent grid gives every SM the same number of tiles; if the SMs are not equally fast
the run lasts as long as the slowest one, and a schedule that lets the fast ones take more
(a chunked grid, or `--schedule=dynamic`) ends them together. This runs the traced kernels
that `bench/timeline.py --build-only --kernel-dir DIR [--compiler C]` built in DIR (one
process per directory: the runtime caches kernels by name) and writes, per kernel, every SM's
finish time (its CTAs' last `%globaltimer`, from the grid's first start) and its tiles (the
`tile_begin` events of the load partition's lanes), with the spread and how much shorter a
perfectly balanced run would be (1 - mean / max finish). performance-notes.md, runs 30-32.

    python3 bench/sm_balance.py --kernel-dir DIR --kinds forward,backward \\
        --rotary none,half_split --out balance.json
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import timeline  # noqa: E402


def balance(ctas: list, trace: dict) -> dict:
    """Per SM (sorted by id): finish time in ms from the grid's first start, and tiles."""
    start = min(c.header["start_globaltimer"] for c in ctas)
    tile_begin = trace["events"].index("tile_begin")
    loads = [i for i, lane in enumerate(trace["lanes"]) if lane["role"] == "load"]
    finish, tiles = {}, {}
    for cta in ctas:
        end = (cta.header["end_globaltimer"] - start) / 1e6
        finish[cta.smid] = max(finish.get(cta.smid, 0.0), end)
        count = sum(int((cta.lanes[i]["event"] == tile_begin).sum()) for i in loads)
        tiles[cta.smid] = tiles.get(cta.smid, 0) + count
    sms = sorted(finish)
    f = np.array([finish[s] for s in sms])
    return {
        "sms": sms,
        "finish_ms": [round(x, 4) for x in f],
        "tiles": [tiles[s] for s in sms],
        "finish_min_ms": round(float(f.min()), 4),
        "finish_max_ms": round(float(f.max()), 4),
        "finish_mean_ms": round(float(f.mean()), 4),
        "balanced_gain": round(float(1 - f.mean() / f.max()), 4),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel-dir", type=pathlib.Path, required=True)
    ap.add_argument("--kinds", default="forward")
    ap.add_argument("--rotary", default="none,half_split",
                    help="comma-separated: none, or a layout with +pos / +rv (timeline.py's --rotary)")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--workload", default="seed")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    args = ap.parse_args(argv)
    results = []
    for kind in args.kinds.split(","):
        for text in args.rotary.split(","):
            rotary = timeline.PLAIN if text == "none" else timeline.parse_rotary(text)
            key = timeline.kernel_key(kind, rotary, args.head_dim)
            files = timeline.load_files(args.kernel_dir, key)
            _, tensors, scalars, _ = timeline.problem(kind, rotary, args.workload, 0, args.head_dim)
            buffer, grid, ms = timeline.run_traced(files, tensors, scalars, repeats=5)
            trace = files.manifest["trace"]
            ctas = timeline.decode(buffer, trace, grid)
            row = {"kernel": files.manifest["kernel"], "grid": grid, "launch": files.manifest["grid"],
                   "schedule": "dynamic" if "schedule" in files.manifest else "static",
                   "traced_ms": round(ms, 4), **balance(ctas, trace)}
            results.append(row)
            print(f"{row['kernel']} ({row['launch']}, {row['schedule']}): {ms:.3f} ms traced; SMs finish "
                  f"{row['finish_min_ms']:.3f}-{row['finish_max_ms']:.3f} ms (mean {row['finish_mean_ms']:.3f}, "
                  f"balanced {100 * row['balanced_gain']:.1f}% shorter); tiles "
                  f"{min(row['tiles'])}-{max(row['tiles'])}", flush=True)
    args.out.write_text(json.dumps({"kernel_dir": str(args.kernel_dir), "workload": args.workload,
                                    "head_dim": args.head_dim, "results": results}, indent=1))


if __name__ == "__main__":
    main()
