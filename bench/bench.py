#!/usr/bin/env python3
"""The block-attn benchmark: our kernels against the peers, on one GPU, in one process.

    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt \\
        python3 bench/bench.py --workloads seed,seed-d64 [--kernels forward,backward] [--out DIR]
    # rotary embeddings: fused kernels against a compiled rotary pass + attention
    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt \\
        python3 bench/bench.py --rotary half_split [--rotary-positions] [--rotate-v] [--workloads rope,seed]

In order: measure the copy bandwidth (a large device-to-device copy, bytes read + written);
check every (implementation, kernel kind) on a small jagged problem against float64 (a wrong or
failing implementation is reported, never timed); then, per workload and kind, time ours and
every applicable peer with triton.testing.do_bench (median), and report ms, achieved TB/s and
percent of the HBM floor (shared/BENCHMARK.md, "The limit"): floor bytes / copy bandwidth.
Writes a table to stdout and results.json + results.png to --out (default bench/out).
See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import pathlib
import platform
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if (ROOT / "python" / "blockattn").is_dir() and str(ROOT / "python") not in sys.path:
    sys.path.append(str(ROOT / "python"))  # PYTHONPATH=python, if the caller forgot it

import torch  # noqa: E402

import peers  # noqa: E402
import workloads  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=None,
                    help="comma-separated: seed, seed-d64, seed-aligned, rope, and issue 20's seed-d32, seed-d96, seed-d192, seed-d256, "
                         "seed-b16, seed-b32, seed-b128, seed-b128-d192, seed-b128-d256, seed-b128-d32, seed-b128-d64, seed-b128-d96, and issue 21's seed-causal, seed-d64-causal, seed-gqa (Hq = 8, "
                         "Hkv = 2), seed-d64-gqa, seed-gqa-g2 (Hq = 4, Hkv = 2), seed-b128-d64-gqa, seed-b128-d96-gqa, seed-b128-gqa (the grouped workload at block size 128, head dims 64, 96, 128), seed-b128-d192-gqa, seed-b128-d256-gqa (the same at 192 and 256, sm_90a), seed-d192-gqa, seed-d256-gqa (the grouped workload at head dims 192 and 256), and tiny-b16, tiny-b32, tiny-b64 (~66k sequences of 1 to 48 "
                         "tokens, packed tiles at 16 and 32) (default: seed,seed-d64; "
                         "with --rotary: rope,seed)")
    ap.add_argument("--kernels", default="forward,backward",
                    help=f"comma-separated kinds among {', '.join(peers.KINDS)} (default: forward,backward)")
    ap.add_argument("--impls", default=None,
                    help="comma-separated implementations (default: all of the mode): "
                         + ", ".join(i.name for i in peers.IMPLS) + "; with --rotary: "
                         + ", ".join(i.name for i in peers.ROTARY_IMPLS))
    ap.add_argument("--rotary", choices=("half_split", "interleaved"), default=None,
                    help="benchmark attention with rotary embeddings (RoPE) of this layout: our fused "
                         "kernels against a torch.compile'd rotary pass followed by our plain kernels and by "
                         "FA2 varlen (default workloads then: rope,seed)")
    ap.add_argument("--rotary-positions", action="store_true",
                    help="with --rotary: pass the positions as a tensor (the fused _pos kernels)")
    ap.add_argument("--rotate-v", action="store_true", help="with --rotary: rotate v as well")
    ap.add_argument("--out", default=str(HERE / "out"), help="directory for results.json and results.png")
    ap.add_argument("--check-only", action="store_true", help="run the correctness checks only, time nothing")
    ap.add_argument("--warmup", type=float, default=25, help="do_bench warmup, ms (default 25)")
    ap.add_argument("--rep", type=float, default=100, help="do_bench repetition time, ms (default 100)")
    ap.add_argument("--copy-gib", type=float, default=4, help="size of the bandwidth copy, GiB (default 4)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every implementation of a workload this many times, in turn, and report the "
                         "median (default 1); the GPU's clock drifts as it warms, and rounds spread that "
                         "drift over all implementations alike")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.rotary is None and (args.rotary_positions or args.rotate_v):
        ap.error("--rotary-positions and --rotate-v need --rotary")
    args.rotary_config = None
    if args.rotary is not None:
        args.rotary_config = peers.RotaryConfig(interleaved=args.rotary == "interleaved",
                                                positions=args.rotary_positions, rotate_v=args.rotate_v)
    if args.workloads is None:
        args.workloads = "rope,seed" if args.rotary else "seed,seed-d64"
    if args.impls is None:
        # A rotary run times our plain kernels too: the fused kernels' cost is their ratio to it.
        args.impls = ",".join(i.name for i in (peers.ROTARY_IMPLS_WITH_PLAIN if args.rotary else peers.IMPLS))
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.kernels = [k for k in args.kernels.split(",") if k]
    args.impls = [peers.get(n) for n in args.impls.split(",") if n]
    for k in args.kernels:
        if k not in peers.KINDS:
            ap.error(f"unknown kernel kind {k!r}; known: {', '.join(peers.KINDS)}")
    for w in args.workloads:
        workloads.get(w)  # raises on an unknown name before anything runs
    return args


def dram_bandwidth(props) -> float | None:
    """The device's peak DRAM bandwidth in bytes/s (double data rate: two
    transfers of the bus a memory clock), or None where torch does not say."""
    clock_khz = getattr(props, "memory_clock_rate", 0)
    bus_bits = getattr(props, "memory_bus_width", 0)
    if not clock_khz or not bus_bits:
        return None
    return 2 * clock_khz * 1e3 * bus_bits / 8


def environment() -> dict:
    import triton

    props = torch.cuda.get_device_properties(0)
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0),
        "sm_count": props.multi_processor_count,
        "gpu_memory_bytes": props.total_memory,
        "compute_capability": f"{props.major}.{props.minor}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "dram_peak_bytes_per_s": dram_bandwidth(props),
    }
    try:
        env["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                           text=True, timeout=10).stdout.strip() or None
        # A copy of a working tree (the device tool's) can carry an older commit's metadata
        # under newer files (session 34: 829f5c9 recorded for 3a1563e's tree): say so.
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True, timeout=10)
        env["git_dirty"] = bool(status.stdout.strip()) if status.returncode == 0 else None
    except Exception:  # noqa: BLE001
        env["git_commit"] = env["git_dirty"] = None
    return env


def cleanup() -> None:
    gc.collect()
    torch.cuda.empty_cache()


def cuda_alive() -> bool:
    """False once the CUDA context is poisoned (e.g. an illegal address): nothing more can run."""
    try:
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001
        return False


def time_one(impl: peers.Impl, kind: str, prob: peers.Problem, configs, args) -> dict:
    import triton.testing

    runner = None
    try:
        runner = impl.factories[kind](prob, configs)
        runner.fn()  # first call outside the timing (compilation, allocator warm-up)
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(runner.fn, warmup=args.warmup, rep=args.rep, return_mode="median")
        return {"status": "ok", "ms": ms, "config": runner.config}
    except Exception as e:  # noqa: BLE001 - missing backend, OOM, ...: reported, never fatal
        return {"status": "skipped", "reason": f"{type(e).__name__}: {peers._first_line(e)}"}
    finally:
        del runner


def bench_workload(name: str, args, bandwidth: float, checks: dict, state: dict) -> dict:
    w = workloads.get(name)
    lengths = w.lengths
    bs = w.block_size
    aligned = bool((lengths % bs == 0).all())
    nblocks = int(((lengths + bs - 1) // bs).sum())
    bpt = w.bytes_per_tensor()
    bpkv = w.bytes_per_kv_tensor()
    rep = {
        "name": name, "tokens": w.tokens, "batch": int(len(lengths)), "heads": w.heads, "head_dim": w.head_dim,
        "kv_heads": w.kv_head_count, "causal": w.causal,
        "dtype": str(w.dtype).replace("torch.", ""), "block_size": bs, "nblocks": nblocks,
        "aligned": aligned,
        "max_length": int(lengths.max()), "mean_length": float(lengths.mean()), "bytes_per_tensor": bpt,
        "floors": {}, "results": [],
    }
    mode = (f" Hkv={w.kv_head_count}" if w.kv_head_count != w.heads else "") + (" causal" if w.causal else "")
    print(f"\n== {name}: T={w.tokens:,} B={len(lengths)} H={w.heads}{mode} D={w.head_dim} block={bs} "
          f"blocks={nblocks:,} ({bpt / 1e9:.2f} GB per tensor)", flush=True)
    rotary_extra = 0  # with rotary: tables (+ positions) read once per kernel launch
    if args.rotary_config is not None:
        rotary_extra = rotary_floor_bytes(w, args.rotary_config)
        rep["rotary"] = dict(rotary_report(args), table_and_positions_bytes=rotary_extra)
    for kind in args.kernels:
        launches = 2 if kind == "fwd+bwd" else 1
        # Grouped k/v: k, v and their gradients cross HBM once per group (Hkv heads); causal
        # blocks move the same bytes as full ones.
        fb = peers.KINDS[kind].floor_bytes(bpt, bpkv) + launches * rotary_extra
        rep["floors"][kind] = {"tensors": peers.KINDS[kind].floor_tensors, "q_tensors": peers.KINDS[kind].q_tensors,
                               "kv_tensors": peers.KINDS[kind].kv_tensors, "bytes": fb,
                               "ms": fb / bandwidth * 1e3, "what": peers.KINDS[kind].floor_doc}
        extra = f" + {launches * rotary_extra / 1e6:.2f} MB rotary tables" if rotary_extra else ""
        if rotary_extra:
            rep["floors"][kind]["what"] += "; plus the cos/sin tables (and positions) of each launch"
        tensors = (f"{peers.KINDS[kind].q_tensors} at H + {peers.KINDS[kind].kv_tensors} at Hkv"
                   if bpkv != bpt else str(peers.KINDS[kind].floor_tensors))
        print(f"   {kind} floor: {tensors} tensors{extra}, {fb / 1e9:.2f} GB, "
              f"{fb / bandwidth * 1e3:.3f} ms", flush=True)

    # The correctness checks (small problem of this workload's H, D, dtype), cached across workloads.
    print("   checks (float64 reference, small jagged problem):", flush=True)
    for kind in args.kernels:
        for impl in args.impls:
            key = (impl.name, kind, w.heads, w.head_dim, str(w.dtype), w.block_size, w.kv_head_count, w.causal)
            if impl.aligned_only and not aligned:
                continue  # not applicable here; reported as skipped below
            if key not in checks and state["alive"]:
                # A plain implementation in a rotary run ignores the tables: it is checked, and timed,
                # as the attention without rotary on the same tensors.
                rotary = args.rotary_config if impl in peers.ROTARY_IMPLS else None
                checks[key] = peers.check(impl, kind, w.heads, w.head_dim, w.dtype, rotary=rotary,
                                          block_size=w.block_size, kv_heads=w.kv_head_count, causal=w.causal)
                state["alive"] = cuda_alive()
                c = checks[key]
                print(f"     {kind:8s} {impl.name:12s} {c['status']:7s} {_check_summary(c)}", flush=True)
            cleanup()
    if args.check_only or not state["alive"]:
        for kind in args.kernels:
            for impl in args.impls:
                c = checks.get((impl.name, kind, w.heads, w.head_dim, str(w.dtype), w.block_size, w.kv_head_count,
                                w.causal), {})
                reason = c.get("reason") if state["alive"] else "CUDA context lost"
                if impl.aligned_only and not aligned:
                    reason = "needs every sequence length to be a multiple of 64"
                rep["results"].append({"kind": kind, "impl": impl.name, "status": "not timed",
                                       "check": c.get("status"), "check_errors": c.get("errors"),
                                       "reason": reason})
        return rep

    prob = peers.Problem.from_workload(w, with_grad=any(k != "forward" for k in args.kernels),
                                       rotary=args.rotary_config)
    try:
        timed = []  # (kind, impl, row, configs) of the rows that passed their check
        for kind in args.kernels:
            for impl in args.impls:
                c = checks.get((impl.name, kind, w.heads, w.head_dim, str(w.dtype), w.block_size, w.kv_head_count,
                                w.causal), {"status": "not run"})
                row = {"kind": kind, "impl": impl.name, "ours": impl.ours, "check": c["status"],
                       "check_errors": c.get("errors")}
                why_not = impl.unavailable(prob)
                if why_not:
                    row.update(status="skipped", reason=why_not)
                elif c["status"] != "ok":
                    row.update(status="skipped", reason=f"correctness check {c['status']}: {c.get('reason')}")
                else:
                    row.update(status="pending", ms_rounds=[])
                    timed.append((kind, impl, row, c["configs"]))
                rep["results"].append(row)
        for round_index in range(args.rounds):
            for kind, impl, row, configs in timed:
                if row["status"] == "skipped":
                    continue
                if not state["alive"]:
                    row.update(status="skipped", reason="CUDA context lost earlier in the run")
                    continue
                result = time_one(impl, kind, prob, configs, args)
                state["alive"] = cuda_alive()
                cleanup()
                if result["status"] != "ok":
                    row.update(result)
                    continue
                row["ms_rounds"].append(result["ms"])
                row["config"] = result["config"]
                if args.rounds > 1:
                    print(f"   round {round_index + 1}: {kind:8s} {impl.name:12s} {result['ms']:8.3f} ms", flush=True)
        for kind, _, row, _ in timed:
            if row["status"] == "skipped":
                continue
            ms = statistics.median(row["ms_rounds"])
            row.update(status="ok", ms=ms, tb_per_s=rep["floors"][kind]["bytes"] / (ms * 1e-3) / 1e12,
                       pct_floor=100.0 * rep["floors"][kind]["ms"] / ms)
            if args.rounds == 1:
                del row["ms_rounds"]
        for row in rep["results"]:
            if row["status"] == "ok":
                print(f"   {row['kind']:8s} {row['impl']:12s} {row['ms']:8.3f} ms  {row['tb_per_s']:5.2f} TB/s  "
                      f"{row['pct_floor']:5.1f}% of floor", flush=True)
            else:
                print(f"   {row['kind']:8s} {row['impl']:12s} skipped: {row['reason']}", flush=True)
    finally:
        del prob
        cleanup()

    for kind in args.kernels:  # speedup of ours over every implementation, same workload and kind
        ok = [r for r in rep["results"] if r["kind"] == kind and r["status"] == "ok"]
        fused = {i.name for i in peers.ROTARY_IMPLS}
        ours = [r for r in ok if r.get("ours") and (args.rotary_config is None or r["impl"] in fused)]
        plain = [r for r in ok if r["impl"] == "ours"] if args.rotary_config is not None else []
        for r in ok:
            r["ours_speedup"] = r["ms"] / ours[0]["ms"] if ours else None
            if plain and r["impl"] in fused and r.get("ours"):
                r["over_plain"] = r["ms"] / plain[0]["ms"]  # what the fused rotation costs
    return rep


TIMING_NOTE = ("forward: the forward alone (no autograd graph); backward: the autograd backward alone, "
               "its forward run once outside the timed region (unfused peers: attention backward + compiled "
               "rotary backward); fwd+bwd: both")


def rotary_floor_bytes(w, config) -> int:
    """Bytes a fused rotary kernel reads besides the activations: the fp32 cos/sin tables of
    max_position = the longest sequence rows, and the int32 positions if passed as a tensor."""
    max_position = int(w.lengths.max()) if len(w.lengths) else 1
    return 2 * max_position * (w.head_dim // 2) * 4 + (4 * w.tokens if config.positions else 0)


def rotary_report(args) -> dict:
    c = args.rotary_config
    return {"mode": c.mode, "positions_tensor": c.positions, "rotate_v": c.rotate_v,
            "tables": f"reference.rope_tables(max_position = longest sequence, D, base={c.base:g}), fp32",
            "timing": TIMING_NOTE}


def _check_summary(c: dict) -> str:
    errs = c.get("errors") or {}
    worst = None
    for per_cfg in errs.values():
        for e in per_cfg.values():
            if isinstance(e, dict):
                worst = e["max_rel"] if worst is None or not (e["max_rel"] <= worst) else worst
    text = f"max rel err {worst:.2e}" if worst is not None else ""
    if c["status"] != "ok" or c.get("reason"):
        text += f"  {c.get('reason')}"
    return text.strip()


def print_table(report: dict) -> None:
    bw = report["copy"]["bytes_per_s"]
    print(f"\n{report['env']['gpu']}, torch {report['env']['torch']}, triton {report['env']['triton']}, "
          f"{report['env']['date']}; copy bandwidth {bw / 1e12:.2f} TB/s")
    if report.get("rotary"):
        r = report["rotary"]
        print(f"rotary embeddings: {r['mode']}" + (", positions tensor" if r["positions_tensor"] else "")
              + (", v rotated" if r["rotate_v"] else "") + f"; {r['tables']}")
        print(f"timing: {r['timing']}")
        print("floor: the activations plus the rotary tables (and positions), for every row; "
              "'ours x' is relative to ours-fused")
    head = f"{'workload':13s} {'kernel':8s} {'implementation':14s} {'ms':>8s} {'TB/s':>6s} {'% floor':>8s} " \
           f"{'ours x':>7s}  note"
    for wl in report["workloads"]:
        print("\n" + head + "\n" + "-" * len(head))
        for kind, f in wl["floors"].items():
            print(f"{wl['name']:13s} {kind:8s} {'(HBM floor)':14s} {f['ms']:8.3f} {bw / 1e12:6.2f} {100.0:7.1f}%")
            for r in wl["results"]:
                if r["kind"] != kind:
                    continue
                if r["status"] == "ok":
                    sp = f"{r['ours_speedup']:6.2f}x" if r.get("ours_speedup") else f"{'-':>7s}"
                    cfg = {k: v for k, v in (r.get("config") or {}).items() if k != "tuning_ms"}
                    note = " ".join(f"{k}={v}" for k, v in cfg.items())
                    if r.get("over_plain"):
                        note = (f"{r['over_plain']:.3f}x plain " + note).strip()
                    elif r["impl"] == "ours" and report.get("rotary"):
                        note = "plain kernel (no rotary), same tensors"
                    print(f"{wl['name']:13s} {kind:8s} {r['impl']:14s} {r['ms']:8.3f} {r['tb_per_s']:6.2f} "
                          f"{r['pct_floor']:7.1f}% {sp}  {note}")
                else:
                    reason = (r.get("reason") or "")[:110]
                    print(f"{wl['name']:13s} {kind:8s} {r['impl']:14s} {'-':>8s} {'-':>6s} {'-':>8s} {'-':>7s}  "
                          f"{r['status']}: {reason}")


def plot(report: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wls = [wl for wl in report["workloads"] if any(r["status"] == "ok" for r in wl["results"])]
    if not wls:
        return
    names = [i["name"] for i in report["impls"]]
    colors = {n: plt.cm.tab10(i % 10) for i, n in enumerate(names)}
    fig, axes = plt.subplots(len(wls), 2, figsize=(15, 4.5 * len(wls)), squeeze=False)
    for row, wl in enumerate(wls):
        kinds = list(wl["floors"])
        present = [n for n in names if any(r["impl"] == n and r["status"] == "ok" for r in wl["results"])]
        width = 0.8 / max(1, len(present))
        for col, (metric, label, fmt) in enumerate((("ms", "ms (lower is better)", "%.2f"),
                                                    ("pct_floor", "% of HBM floor (higher is better)", "%.0f"))):
            ax = axes[row][col]
            for j, n in enumerate(present):
                xs, ys = [], []
                for i, kind in enumerate(kinds):
                    r = next((r for r in wl["results"] if r["impl"] == n and r["kind"] == kind
                              and r["status"] == "ok"), None)
                    if r is not None:
                        xs.append(i - 0.4 + width * (j + 0.5))
                        ys.append(r[metric])
                bars = ax.bar(xs, ys, width, label=n, color=colors[n],
                              edgecolor="black" if n in ("ours", "ours-fused") else None,
                              linewidth=1.2 if n in ("ours", "ours-fused") else 0)
                ax.bar_label(bars, fmt=fmt, fontsize=7, padding=1)
            if metric == "ms":
                for i, kind in enumerate(kinds):
                    ax.hlines(wl["floors"][kind]["ms"], i - 0.42, i + 0.42, colors="black", linestyles="--",
                              linewidth=1, label="HBM floor" if i == 0 else None)
            else:
                ax.axhline(100, color="black", linestyle="--", linewidth=1)
                ax.set_ylim(0, 110)
            ax.set_xticks(range(len(kinds)))
            ax.set_xticklabels(kinds)
            ax.set_ylabel(label)
            ax.set_title(f"{wl['name']} (T={wl['tokens']:,}, H={wl['heads']}, D={wl['head_dim']})")
            ax.legend(fontsize=7, ncol=2)
    env = report["env"]
    fig.suptitle(f"block-attn vs peers on {env['gpu']} (copy {report['copy']['bytes_per_s'] / 1e12:.2f} TB/s; "
                 f"torch {env['torch']}, {env['date'][:10]})")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.py needs a CUDA GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    env = environment()
    print(f"{env['gpu']} ({env['sm_count']} SMs), torch {env['torch']} (CUDA {env['cuda']}, cuDNN {env['cudnn']}), "
          f"triton {env['triton']}", flush=True)
    copy = peers.copy_bandwidth(int(args.copy_gib * (1 << 30)), warmup=args.warmup, rep=args.rep)
    print(f"copy bandwidth: {copy['bytes_per_s'] / 1e12:.3f} TB/s ({copy['bytes_copied'] / 2**30:.1f} GiB copied "
          f"in {copy['ms']:.3f} ms, bytes read + written)", flush=True)
    report = {
        "env": env,
        "rotary": rotary_report(args) if args.rotary_config is not None else None,
        "args": {"workloads": args.workloads, "kernels": args.kernels, "impls": [i.name for i in args.impls],
                 "warmup_ms": args.warmup, "rep_ms": args.rep, "rounds": args.rounds,
                 "timing": "triton.testing.do_bench, median; with rounds > 1, the median of the rounds"},
        "copy": copy,
        "impls": [{"name": i.name, "description": i.description, "aligned_only": i.aligned_only, "ours": i.ours}
                  for i in args.impls],
        "kinds": {k: {"floor_tensors": peers.KINDS[k].floor_tensors, "floor": peers.KINDS[k].floor_doc}
                  for k in args.kernels},
        "tolerances": {"max_rel": peers.MAX_REL_TOL, "rms_rel": peers.RMS_REL_TOL},
        "workloads": [],
    }
    checks: dict = {}
    state = {"alive": True}
    try:
        for name in args.workloads:
            report["workloads"].append(bench_workload(name, args, copy["bytes_per_s"], checks, state))
    finally:  # whatever happened, keep what was measured
        (out / "results.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"\nwrote {out / 'results.json'}")
    print_table(report)
    if not args.check_only:
        try:
            plot(report, out / "results.png")
            print(f"wrote {out / 'results.png'}")
        except Exception as e:  # noqa: BLE001 - the numbers are in the JSON already
            print(f"plot failed: {type(e).__name__}: {e}", file=sys.stderr)
    return 0 if state["alive"] else 1


if __name__ == "__main__":
    sys.exit(main())
