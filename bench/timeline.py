"""Where the time goes: one SM's warp roles as a Gantt chart (docs/timeline.md).

Runs traced kernels (``block-attn-compile --trace``: every warp role records
its pipeline events with the SM's ``%clock64``, anchored to ``%globaltimer``
once per CTA) on the GPU, decodes the trace buffer with the layout the
manifest states, and draws the roles of one SM for the plain and the fused
half-split rotary kernels side by side, with a summary of every role's time
per tile over all SMs (JSON).

    # on a machine with the compiler (no GPU needed): the traced kernels
    python3 bench/timeline.py --build-only [--kernel-dir DIR] [--compiler PATH] [--kinds forward,backward]
    # on the GPU (DIR from the step above; the untraced kernels, for the times
    # to compare with, are found there through BLOCKATTN_KERNEL_DIR)
    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=DIR python3 bench/timeline.py [--kernel-dir DIR] --out docs/timeline-h200

    # a dry run without a GPU: the kernels in block-attn-emulate on a small
    # problem (the clocks then count instructions, not time)
    PYTHONPATH=python python3 bench/timeline.py --emulate --head-dim 64 --out /tmp/timeline

DIR is .traced by default (git ignores it).

The decoding and the drawing (decode, clock_fits, lane_events, summarize,
sm_rows, draw) need numpy and matplotlib only; the GPU part imports torch
and blockattn when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent

# What the chart draws for each span kind (the events' names without
# _begin/_end), in legend order.
COLORS = {
    "wait": "#c8c8c8",
    "mma": "#1f77b4",
    "softmax": "#ff7f0e",
    "rotate": "#d62728",
    "store": "#2ca02c",
    "tmem": "#9467bd",
}
POINT_COLORS = {"arrive": "#000000", "copy": "#8c564b"}

_NUMPY_TYPES = {"u8": "u1", "u16": "<u2", "u32": "<u4", "u64": "<u8", "i32": "<i4", "i64": "<i8"}


#===------------------------------------------------------------------------===#
# Decoding
#===------------------------------------------------------------------------===#


def record_dtype(trace: dict) -> np.dtype:
    """The record layout the manifest states ("name:type" fields, in order)."""
    fields = []
    for field in trace["record"]:
        name, kind = field.split(":")
        fields.append((name, _NUMPY_TYPES[kind]))
    dtype = np.dtype(fields)
    if dtype.itemsize != trace["record_bytes"]:
        raise ValueError(f"trace: records of {dtype.itemsize} bytes, the manifest says {trace['record_bytes']}")
    return dtype


def header_dtype(trace: dict) -> np.dtype:
    """The CTA header: u64 words named by the manifest, then padding."""
    fields = [(name, "<u8") for name in trace["header"]]
    pad = trace["header_bytes"] - 8 * len(fields)
    if pad < 0:
        raise ValueError("trace: the header's words do not fit its bytes")
    if pad:
        fields.append(("_pad", "u1", pad))
    return np.dtype(fields)


@dataclasses.dataclass
class Cta:
    """One CTA's decoded region: its header and its lanes' records (empty
    records, whose clock is 0, dropped)."""

    index: int
    header: dict
    lanes: list  # per lane: a structured array of records

    @property
    def smid(self) -> int:
        return int(self.header["smid"])

    def clock_range(self) -> tuple[int, int]:
        clocks = [int(c) for lane in self.lanes if len(lane) for c in (lane["clock"][0], lane["clock"][-1])]
        clocks += [self.header["start_clock"]] + ([self.header["end_clock"]] if self.header["end_clock"] else [])
        return min(clocks), max(clocks)


def decode(buffer, trace: dict, ctas: int) -> list[Cta]:
    """The CTAs of a trace buffer (bytes or a uint8 array) that ran (their
    start anchor is set); `ctas` is the grid the kernel ran with."""
    raw = np.frombuffer(buffer, dtype=np.uint8) if not isinstance(buffer, np.ndarray) else buffer.view(np.uint8)
    cta_bytes = trace["cta_bytes"]
    if raw.size < ctas * cta_bytes:
        raise ValueError(f"trace: {raw.size} bytes for {ctas} CTAs of {cta_bytes}")
    regions = raw[: ctas * cta_bytes].reshape(ctas, cta_bytes)
    hdt, rdt = header_dtype(trace), record_dtype(trace)
    lanes, per_lane = len(trace["lanes"]), trace["records_per_lane"]
    if trace["header_bytes"] + lanes * per_lane * rdt.itemsize != cta_bytes:
        raise ValueError("trace: header and lanes do not add up to cta_bytes")
    headers = regions[:, : trace["header_bytes"]].copy().view(hdt).reshape(ctas)
    records = regions[:, trace["header_bytes"]:].copy().view(rdt).reshape(ctas, lanes, per_lane)
    result = []
    for c in range(ctas):
        h = headers[c]
        if not h["start_clock"]:
            continue
        header = {name: int(h[name]) for name in trace["header"]}
        result.append(Cta(c, header, [r[r["clock"] != 0] for r in records[c]]))
    return result


@dataclasses.dataclass
class ClockFit:
    """ns = offset_ns + clock / cycles_per_ns, for one SM's %clock64."""

    cycles_per_ns: float
    offset_ns: float
    points: int

    def ns(self, clock) -> np.ndarray:
        return self.offset_ns + np.asarray(clock, dtype=np.float64) / self.cycles_per_ns


def clock_fits(ctas: list[Cta], min_span_ns: float = 2000.0) -> dict[int, ClockFit]:
    """Per SM: the line through its CTAs' anchors (%clock64 against
    %globaltimer, start and end). An SM whose anchors span less than
    `min_span_ns` takes the median rate of the others, through its anchors'
    mean (the timer is too coarse to give it a rate of its own)."""
    by_sm: dict[int, list] = {}
    for cta in ctas:
        points = by_sm.setdefault(cta.smid, [])
        h = cta.header
        points.append((h["start_clock"], h["start_globaltimer"]))
        if h["end_clock"]:
            points.append((h["end_clock"], h["end_globaltimer"]))
    fits, rates = {}, []
    for sm, points in by_sm.items():
        clock, ns = (np.array(p, dtype=np.float64) for p in zip(*points))
        if len(points) >= 2 and ns.max() - ns.min() >= min_span_ns and clock.max() > clock.min():
            slope, intercept = np.polyfit(clock, ns, 1)
            fits[sm] = ClockFit(1.0 / slope, intercept, len(points))
            rates.append(1.0 / slope)
    rate = float(np.median(rates)) if rates else 1.0  # 1 cycle/ns when nothing else is known
    for sm, points in by_sm.items():
        if sm not in fits:
            clock, ns = (np.array(p, dtype=np.float64) for p in zip(*points))
            fits[sm] = ClockFit(rate, float(np.mean(ns - clock / rate)), len(points))
    return fits


@dataclasses.dataclass
class LaneEvents:
    """One lane's spans (kind, begin, end, detail) and points (kind, at,
    detail), in clocks."""

    spans: list
    points: list
    tiles: list  # (begin, end, row)


def lane_events(records: np.ndarray, names: list[str]) -> LaneEvents:
    """Pairs each *_begin with the next *_end of its kind (they nest, never
    interleave, within one role)."""
    spans, points, tiles, open_ = [], [], [], {}
    for r in records:
        name = names[int(r["event"])] if int(r["event"]) < len(names) else "unknown"
        clock, detail = int(r["clock"]), int(r["detail"])
        if name.endswith("_begin"):
            open_.setdefault(name[: -len("_begin")], []).append((clock, int(r["value"])))
        elif name.endswith("_end"):
            kind = name[: -len("_end")]
            if open_.get(kind):
                begin, value = open_[kind].pop()
                if kind == "tile":
                    tiles.append((begin, clock, value))
                else:
                    spans.append((kind, begin, clock, detail))
        else:
            points.append((name, clock, detail))
    return LaneEvents(spans, points, tiles)


#===------------------------------------------------------------------------===#
# What the trace says
#===------------------------------------------------------------------------===#


def summarize(ctas: list[Cta], trace: dict, fits: dict[int, ClockFit]) -> dict:
    """Per role (all its lanes over all CTAs): tiles, the time per tile in
    each span kind and between its tiles, in ns, and the share of the role's
    time each kind takes."""
    names = trace["events"]
    roles: dict[str, dict] = {}
    for cta in ctas:
        fit = fits[cta.smid]
        for lane, records in zip(trace["lanes"], cta.lanes):
            if not len(records):
                continue
            ev = lane_events(records, names)
            role = roles.setdefault(lane["partition"], {"tiles": 0, "ns": 0.0, "kinds": {}, "lanes": 0,
                                                        "full_lanes": 0})
            role["lanes"] += 1
            role["full_lanes"] += int(len(records) == trace["records_per_lane"])
            role["tiles"] += len(ev.tiles)
            role["ns"] += (int(records["clock"][-1]) - int(records["clock"][0])) / fit.cycles_per_ns
            for kind, begin, end, _ in ev.spans:
                role["kinds"][kind] = role["kinds"].get(kind, 0.0) + (end - begin) / fit.cycles_per_ns
            in_tiles = sum(end - begin for begin, end, _ in ev.tiles) / fit.cycles_per_ns
            role["kinds"]["in_tile"] = role["kinds"].get("in_tile", 0.0) + in_tiles
    out = {}
    for name, role in roles.items():
        tiles = max(role["tiles"], 1)
        out[name] = {
            "lanes": role["lanes"],
            "lanes_full": role["full_lanes"],
            "tiles": role["tiles"],
            "ns_per_tile": round(role["ns"] / tiles, 1),
            "per_tile_ns": {k: round(v / tiles, 1) for k, v in sorted(role["kinds"].items())},
            "share": {k: round(v / role["ns"], 4) for k, v in sorted(role["kinds"].items()) if role["ns"] > 0},
        }
    return out


def compare(plain: dict, rotary: dict) -> dict:
    """Per role both kernels have: the rotary kernel's ns per tile, and in
    each kind of span, minus the plain kernel's (from summarize)."""
    out = {}
    for role in plain.keys() & rotary.keys():
        a, b = plain[role], rotary[role]
        kinds = sorted(a["per_tile_ns"].keys() | b["per_tile_ns"].keys())
        out[role] = {
            "ns_per_tile": round(b["ns_per_tile"] - a["ns_per_tile"], 1),
            "per_tile_ns": {k: round(b["per_tile_ns"].get(k, 0.0) - a["per_tile_ns"].get(k, 0.0), 1)
                            for k in kinds},
        }
    return out


def sm_rows(ctas: list[Cta], trace: dict, fits: dict[int, ClockFit], sm: int) -> tuple[list[dict], float]:
    """The Gantt rows of SM `sm`: CTAs that ran there are dealt to slots
    (CTAs at once on the SM), each slot a row per lane. Times in µs from the
    first anchor on the SM. Returns (rows, origin in ns)."""
    names = trace["events"]
    mine = sorted((c for c in ctas if c.smid == sm), key=lambda c: c.header["start_clock"])
    if not mine:
        raise ValueError(f"no CTA ran on SM {sm}")
    fit = fits[sm]
    origin = float(fit.ns(mine[0].header["start_clock"]))
    slot_end: list[int] = []
    rows: dict[tuple[int, int], dict] = {}
    us = lambda clock: (float(fit.ns(clock)) - origin) / 1000.0  # noqa: E731
    for cta in mine:
        first, last = cta.clock_range()
        slot = next((s for s, end in enumerate(slot_end) if end <= first), len(slot_end))
        if slot == len(slot_end):
            slot_end.append(last)
        slot_end[slot] = last
        for index, (lane, records) in enumerate(zip(trace["lanes"], cta.lanes)):
            label = f"{lane['partition']}" + (f".{lane['replica']}" if lane["replica"] or any(
                other["partition"] == lane["partition"] and other["replica"] for other in trace["lanes"]) else "")
            row = rows.setdefault((slot, index), {"label": f"CTA slot {slot}: {label}", "spans": [], "points": [],
                                                  "tiles": [], "ctas": []})
            row["ctas"].append(cta.index)
            ev = lane_events(records, names)
            row["spans"] += [(k, us(b), us(e), d) for k, b, e, d in ev.spans]
            row["points"] += [(k, us(t), d) for k, t, d in ev.points]
            row["tiles"] += [(us(b), us(e), v) for b, e, v in ev.tiles]
    return [rows[key] for key in sorted(rows)], origin


def busy_window(rows: list[dict], width_us: float) -> tuple[float, float]:
    """A window of `width_us` in the middle of the time every row recorded
    (rows hold the first events of their lanes only when a lane filled)."""
    covered = []
    for row in rows:
        times = [t for _, b, e, _ in row["spans"] for t in (b, e)] + [t for _, t, _ in row["points"]]
        if times:
            covered.append((min(times), max(times)))
    if not covered:
        return 0.0, width_us
    start, end = max(c[0] for c in covered), min(c[1] for c in covered)
    if end <= start:
        start, end = min(c[0] for c in covered), max(c[1] for c in covered)
    middle = (start + end) / 2
    return max(0.0, middle - width_us / 2), max(0.0, middle - width_us / 2) + width_us


def draw(panels: list[tuple[str, list[dict], tuple[float, float]]], path) -> None:
    """One Gantt panel per (title, rows, window), stacked, each lane a row:
    bars for the spans, ticks for arrivals and copies, tiles shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    heights = [max(len(rows), 1) * 0.45 + 0.9 for _, rows, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (title, rows, (t0, t1)) in zip(axes[:, 0], panels):
        for y, row in enumerate(rows):
            for i, (b, e, _) in enumerate(sorted(row["tiles"])):
                if e >= t0 and b <= t1:
                    ax.broken_barh([(b - t0, e - b)], (y - 0.42, 0.84), color="#eef3fb" if i % 2 else "#dde7f7",
                                   zorder=0)
            for kind, b, e, _ in row["spans"]:
                if e >= t0 and b <= t1:
                    ax.broken_barh([(b - t0, max(e - b, 1e-3))], (y - 0.3, 0.6), color=COLORS.get(kind, "#7f7f7f"),
                                   zorder=2)
            for kind, t, _ in row["points"]:
                if t0 <= t <= t1:
                    ax.plot([t - t0, t - t0], [y - 0.38, y + 0.38], color=POINT_COLORS.get(kind, "#000000"),
                            linewidth=0.8, zorder=3)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([row["label"] for row in rows], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, t1 - t0)
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_xlabel(f"µs from {t0:.1f} µs after the SM's first CTA started")
        ax.grid(axis="x", color="#e0e0e0", linewidth=0.5)
    handles = [Patch(color=c, label=k) for k, c in COLORS.items()]
    handles += [Patch(color="#dde7f7", label="tile")]
    handles += [Patch(color=c, label=f"{k} (tick)") for k, c in POINT_COLORS.items()]
    fig.legend(handles=handles, loc="upper right", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=130)
    plt.close(fig)


#===------------------------------------------------------------------------===#
# The GPU run
#===------------------------------------------------------------------------===#

def parse_rotary(text: str) -> dict | None:
    """--rotary's 'half_split', 'interleaved+pos+rv', ... -> the rotary panel's
    kernel options (the layout, a positions tensor, v rotated too); 'none':
    no rotary panel (the plain kernel alone)."""
    if text == "none":
        return None
    mode, *flags = text.split("+")
    if mode not in ("half_split", "interleaved"):
        raise ValueError(f"--rotary: the layout must be half_split or interleaved, got {mode!r} in {text!r}")
    unknown = set(flags) - {"pos", "rv"}
    if unknown:
        raise ValueError(f"--rotary: unknown flag(s) {sorted(unknown)} in {text!r}; known: pos, rv")
    return {"rotary": mode, "positions": "pos" in flags, "rotate_v": "rv" in flags}


PLAIN = {"rotary": "none", "positions": False, "rotate_v": False}


def kernel_key(kind: str, rotary: dict, head_dim: int, block_size: int = 64):
    from blockattn._kernels import KernelKey

    return KernelKey(kind, head_dim, block_size, "bf16", "sm_90a", **rotary)


def traced_name(key) -> str:
    return key.name + "_trace"


def build(keys, directory: pathlib.Path, compiler: str, records: int, persistent_records: int) -> None:
    """Compiles the traced kernels `keys` into `directory` (cubin and PTX),
    and the untraced ones beside them, which the package finds there when
    BLOCKATTN_KERNEL_DIR names the directory (the times to compare with). A
    persistent kernel (one CTA per SM, hundreds of tiles each) gets
    `persistent_records` per lane, so that its lanes cover the whole run; a
    chunked one (a few tiles per CTA, tens of thousands of CTAs) `records`."""
    directory.mkdir(parents=True, exist_ok=True)
    for key in keys:
        base = [compiler, *key.compiler_flags(), "--cubin", "--quiet", "-o", str(directory)]
        subprocess.run(base, check=True)
        manifest = json.loads((directory / f"{key.name}.json").read_text())
        per_lane = persistent_records if manifest["grid"] == "persistent" else records
        subprocess.run(base + ["--trace", f"--trace-records={per_lane}"], check=True)
        print(f"built {directory / traced_name(key)}.json ({per_lane} records per lane) and "
              f"{directory / key.name}.json")


def load_files(directory: pathlib.Path, key):
    from blockattn._kernels import KernelFiles

    path = directory / f"{traced_name(key)}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: build the traced kernels first (--build-only)")
    manifest = json.loads(path.read_text())
    if "trace" not in manifest:
        raise ValueError(f"{path} is not a traced kernel (no 'trace' in its manifest)")
    return KernelFiles(manifest, directory)


def run_traced(files, tensors: dict, scalars: dict, repeats: int):
    """Launches the traced kernel (warm-up, then one traced run into a zeroed
    buffer); returns (buffer bytes, grid, ms per launch of the traced kernel)."""
    import torch
    from blockattn import _driver

    device = tensors["q"].device
    kernel = _driver.load_kernel(files, device)
    grid = kernel.grid(kernel.num_sms, tensors)
    trace = files.manifest["trace"]
    buffer = torch.zeros(grid * trace["cta_bytes"] // 8, dtype=torch.int64, device=device)
    args = dict(tensors, **{trace["param"]: buffer})
    for _ in range(2):
        kernel.launch(grid, args, scalars)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        kernel.launch(grid, args, scalars)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / repeats
    buffer.zero_()
    kernel.launch(grid, args, scalars)
    torch.cuda.synchronize()
    return buffer.cpu().numpy().tobytes(), grid, ms


def time_untraced(fn, repeats: int) -> float | None:
    import torch

    try:
        fn()
    except Exception as error:  # the untraced kernels may not be at hand
        print(f"untraced kernel not timed: {error}", file=sys.stderr)
        return None
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats


def problem(kind: str, rotary: dict, workload: str, batch: int, head_dim: int, block_size: int = 64):
    import torch
    import workloads
    from blockattn import api

    w = workloads.get(workload)
    lengths = w.lengths[:batch] if batch else w.lengths
    w = workloads.Workload(w.name, lengths, w.heads, head_dim, w.dtype)
    q, k, v, do = w.tensors(4)
    cu = w.cu_seqlens()
    scale = 1.0 / math.sqrt(w.head_dim)
    if kind == "forward":
        tensors = {"q": q, "k": k, "v": v, "o": torch.empty_like(q), "cu_seqlens": cu}
    else:
        tensors = {"q": q, "k": k, "v": v, "do": do, "dq": torch.empty_like(q), "dk": torch.empty_like(k),
                   "dv": torch.empty_like(v), "cu_seqlens": cu}
    cos = sin = positions = None
    interleaved, rotate_v = rotary["rotary"] == "interleaved", rotary["rotate_v"]
    if rotary["rotary"] != "none":
        # The tables bench/peers.py's RotaryTensors makes (base 10000), without
        # importing the peers (and Triton).
        import blockattn.reference as ref

        max_position = max(1, int(lengths.max()) if len(lengths) else 1)
        cos, sin = (torch.tensor(t, dtype=torch.float32, device=q.device)
                    for t in ref.rope_tables(max_position, w.head_dim, 10000.0))
        if rotary["positions"]:  # the same values as the default, read from a tensor
            positions = torch.tensor(ref.sequence_positions(cu.cpu().numpy()), dtype=torch.int32, device=q.device)
        api._rotary_launch_args(tensors, cos, sin, positions, interleaved, rotate_v)
    rope = (cos, sin, positions, interleaved, rotate_v)
    if kind == "forward":
        untraced = lambda: api.forward(q, k, v, cu, block_size, scale, tensors["o"], *rope)  # noqa: E731
    else:
        untraced = lambda: api.backward(do, q, k, v, cu, block_size, scale, *rope)  # noqa: E731
    return w, tensors, {"softmax_scale": scale}, untraced


def run_emulated(files, kind: str, rotary: dict, head_dim: int, block_size: int = 64):
    """The traced kernel in block-attn-emulate on the emulator's small
    problem (blockattn.emulation): (buffer bytes, grid). Its clocks count
    instructions, not time: a dry run of the whole tool without a GPU."""
    from blockattn import emulation as em
    from blockattn._kernels import launch_grid

    case = em.Case(kind, head_dim, "bf16", **rotary, block_size=block_size)
    tensors = em.make_problem(case)
    manifest = files.manifest
    grid = launch_grid(manifest, 2, tensors["q"].shape, tensors["cu_seqlens"].size)
    tensors["trace"] = np.zeros(grid * manifest["trace"]["cta_bytes"] // 8, dtype=np.int64)
    out = em.emulate(files.directory / manifest["ptx"], files.directory / f"{files.name}.json", tensors,
                     {"softmax_scale": head_dim ** -0.5})
    return out["trace"].tobytes(), grid


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel-dir", type=pathlib.Path, default=REPO / ".traced",
                    help="where the traced kernels are (or go, with --build-only)")
    ap.add_argument("--build-only", action="store_true", help="compile the traced kernels and stop (no GPU)")
    ap.add_argument("--compiler", default=str(REPO / "build" / "bin" / "block-attn-compile"))
    ap.add_argument("--records", type=int, default=512,
                    help="trace records per lane and CTA of a chunked kernel (a power of two; default 512)")
    ap.add_argument("--persistent-records", type=int, default=8192,
                    help="the same for a persistent kernel, one CTA per SM (default 8192: its whole run)")
    ap.add_argument("--kinds", default="forward", help="forward, backward or forward,backward")
    ap.add_argument("--rotary", default="half_split",
                    help="the rotary panel's kernel: half_split or interleaved, with +pos (a positions tensor) "
                         "and +rv (v rotated too), e.g. interleaved+pos+rv (default: half_split); none: the "
                         "plain kernel alone")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--block-size", type=int, default=64, help="the kernels' block size (default 64)")
    ap.add_argument("--workload", default="seed", help="a bench/workloads.py name (default: seed)")
    ap.add_argument("--batch", type=int, default=0, help="sequences of the workload to keep (0: all)")
    ap.add_argument("--sm", type=int, default=0, help="the SM to draw (default 0)")
    ap.add_argument("--window-us", type=float, default=40.0, help="width of the drawn window (µs)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--emulate", action="store_true",
                    help="run the kernels in block-attn-emulate on a small problem instead of a GPU (a dry run: "
                         "the clocks count instructions)")
    ap.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "timeline-h200",
                    help="writes OUT-<kind>.png and OUT.json")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "python"))
    sys.path.insert(0, str(HERE))
    kinds = args.kinds.split(",")
    try:
        rotary_panel = parse_rotary(args.rotary)
    except ValueError as error:
        ap.error(str(error))
    variants = {"plain": PLAIN} if rotary_panel is None else {"plain": PLAIN, "rotary": rotary_panel}
    keys = {(kind, variant): kernel_key(kind, rotary, args.head_dim, args.block_size)
            for kind in kinds for variant, rotary in variants.items()}
    if args.build_only:
        build(keys.values(), args.kernel_dir, args.compiler, args.records, args.persistent_records)
        return

    if args.emulate:
        device = "block-attn-emulate (clocks count instructions, not time)"
    else:
        import torch

        device = torch.cuda.get_device_name()
    report = {"gpu": device, "workload": "emulation" if args.emulate else args.workload, "batch": args.batch,
              "head_dim": args.head_dim, "block_size": args.block_size, "sm": args.sm,
              "records_per_lane": None, "kernels": {}}
    for kind in kinds:
        panels = []
        for variant, rotary in variants.items():
            key = keys[kind, variant]
            files = load_files(args.kernel_dir, key)
            trace = files.manifest["trace"]
            report["records_per_lane"] = trace["records_per_lane"]
            if args.emulate:
                workload = "emulated"
                buffer, grid = run_emulated(files, kind, rotary, args.head_dim, args.block_size)
                traced_ms = plain_ms = None
            else:
                w, tensors, scalars, untraced = problem(kind, rotary, args.workload, args.batch, args.head_dim,
                                                     args.block_size)
                buffer, grid, traced_ms = run_traced(files, tensors, scalars, args.repeats)
                plain_ms = time_untraced(untraced, args.repeats)
                workload = w.name
            ctas = decode(buffer, trace, grid)
            fits = clock_fits(ctas)
            rows, origin = sm_rows(ctas, trace, fits, args.sm)
            window = busy_window(rows, args.window_us)
            name = f"{kind}/{variant}"
            times = [f"traced {traced_ms:.3f} ms"] if traced_ms else []
            times += [f"untraced {plain_ms:.3f} ms"] if plain_ms else []
            shape = [f"D={args.head_dim}"] + ([f"block {args.block_size}"] if args.block_size != 64 else [])
            title = f"{name}: {files.name} on SM {args.sm} ({', '.join([workload, *shape, *times])})"
            panels.append((title, rows, window))
            report["kernels"][name] = {
                "kernel": files.name,
                "grid": grid,
                "ctas_recorded": len(ctas),
                "ptxas": files.manifest.get("ptxas"),  # the traced kernel's registers and spills
                "traced_ms": round(traced_ms, 4) if traced_ms else None,
                "untraced_ms": round(plain_ms, 4) if plain_ms else None,
                "sm_clock_ghz": round(fits[args.sm].cycles_per_ns, 4),
                "window_us": [round(t, 2) for t in window],
                "roles": summarize(ctas, trace, fits),
            }
            print(json.dumps({name: report["kernels"][name]}, indent=1))
        if rotary_panel is not None:
            report.setdefault("rotary_minus_plain", {})[kind] = compare(
                report["kernels"][f"{kind}/plain"]["roles"], report["kernels"][f"{kind}/rotary"]["roles"])
        png = args.out.parent / f"{args.out.name}-{kind}.png"
        png.parent.mkdir(parents=True, exist_ok=True)
        draw(panels, png)
        print(f"wrote {png}")
    path = args.out.with_suffix(".json")
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
