"""Where the host time of one block_attention call goes, stage by stage (issue 22).

    python bench/host_profile.py [--fake] [--calls 2000] [--rounds 5] [--cprofile] [--cold] [--json FILE]

Each stage is timed with time.perf_counter_ns over --calls calls back to back, with no GPU
synchronization (the host's cost alone), and reported as the median over --rounds rounds, in us
per call. The stages nest: each adds one layer to the one before it, so their differences are what
each layer costs:

  torch.empty_like            allocating o (torch's floor for an op that returns a new tensor)
  stream                      torch's current CUstream (what every launch asks torch for)
  record pack                 struct-packing the record of a forward launch (no call)
  record launch               pack + the one foreign call (libblockattn_launch: checks, tensor
                              maps from the cache, grid, cuLaunchKernel)
  _fast_forward               + o
  block_attention             the whole eager call, no autograd (check_inputs False / True)
  block_attention_qkvpacked   the same of q, k, v packed in one [T, 3, H, D] tensor (and with grad,
                              and fwd+bwd)
  block_attention (grad)      inputs that require grad: + the autograd.Function
  fwd+bwd                     block_attention + torch.autograd.grad
  empty Function (grad), fwd+bwd: torch's floors (an autograd.Function that only allocates)
  the checks' path            block_attention as it was before the fast path (the Python
                              checks, then the dict-based launch), for comparison

--fake runs without a GPU: CPU tensors, the driver replaced by build/lib/libblockattn-fake-cuda.so
(no kernel runs; cuLaunchKernel returns at once) and the kernels' manifests from
python/tests/data/manifests: it measures the Python and ctypes layers, not the driver's. On a GPU
(BLOCKATTN_KERNEL_DIR with prebuilt kernels) every layer is real. --cprofile prints the functions
of 2000 calls by their own time; --cold times the first calls of a fresh process (a subprocess),
stage by stage.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pathlib
import pstats
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def per_call_us(fn, calls):
    fn()
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls / 1e3


def setup_fake():
    """A fake device: the fake libcuda, plans made from the test manifests, a fast path for
    CPU tensors (device index -1). Returns (api, q, k, v, cu, do)."""
    lib = REPO / "build" / "lib" / "libblockattn-fake-cuda.so"
    if not lib.exists():
        sys.exit(f"{lib} is not built: ninja -C build blockattn-fake-cuda blockattn_launch")
    os.environ["BLOCKATTN_LIBCUDA"] = str(lib)
    import torch

    from blockattn import _driver, _kernels, _launch, api

    manifests = REPO / "python" / "tests" / "data" / "manifests"
    launchers = {}
    for kind, names in (("forward", api._FORWARD_TENSORS), ("backward", api._BACKWARD_TENSORS)):
        manifest = json.loads((manifests / f"blockattn_{kind}_d128_b64_bf16.json").read_text())
        plan = _launch.Plan(manifest, function=0x1234, context=0x5678)
        plan.set_record(manifest, _driver.RECORD_RULES, _kernels.grid_inputs(manifest), 132)

        class Kernel:  # what _record_launcher reads of a LoadedKernel
            record = plan

        launchers[kind] = api._record_launcher(Kernel, names)
    fast = api._FastPath(launchers["forward"], -1, 128, 64, stream=lambda device: 0)
    fast.backward = launchers["backward"]
    api._FAST[torch.bfloat16, 128, -1, 64] = fast
    T, H, D = 512, 4, 128
    q, k, v, do = (torch.randn(T, H, D).to(torch.bfloat16) for _ in range(4))
    cu = torch.tensor([0, T], dtype=torch.int32)
    api._cu_values(cu, T)  # check_inputs=True's value check, done once (as a first call does)
    return api, q, k, v, cu, do


def setup_gpu():
    import torch

    from blockattn import api

    T, H, D = 512, 4, 128
    q, k, v, do = (torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    cu = torch.tensor([0, T], dtype=torch.int32, device="cuda")
    import blockattn

    with torch.no_grad():
        blockattn.block_attention(q, k, v, cu)  # checks once: registers the fast path
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.autograd.grad(blockattn.block_attention(*leaves, cu), leaves, do)  # loads the backward
    torch.cuda.synchronize()
    return api, q, k, v, cu, do


def stages(api, q, k, v, cu, do, fake):
    import torch

    import blockattn

    fast = api._FAST[q.dtype, q.shape[2], q.get_device(), 64]
    pack, call, handle, _ = fast.forward
    o = torch.empty_like(q)
    qs = q.shape
    stream = fast.stream
    scale = fast.scale

    def values():
        return (stream(fast.device),
                q.data_ptr(), 3, *qs, *q.stride(), k.data_ptr(), 3, *qs, *k.stride(),
                v.data_ptr(), 3, *qs, *v.stride(), o.data_ptr(), 3, *qs, *o.stride(),
                cu.data_ptr(), 1, *cu.shape, *cu.stride(), scale)

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    qkv = torch.stack([q, k, v], 1)  # [T, 3, H, D]
    qkv_leaf = qkv.clone().requires_grad_()
    if not fake:
        blockattn.block_attention_qkvpacked(qkv, cu)  # its first call: the checks' path

    class Empty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, cu):
            ctx.save_for_backward(q, k, v, cu)
            return torch.empty_like(q)

        @staticmethod
        def backward(ctx, grad):
            q, k, v, cu = ctx.saved_tensors
            return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), None

    def checks_path():
        # block_attention's checks, then the dict-based launch of api.forward (the slow path).
        scale_, rope = api._check_common(q, 64, None, None, cu, False, None, False, True)
        api._check_activation("q", q, None, True)
        api._check_activation("k", k, q, True)
        api._check_activation("v", v, q, True)
        return scale_

    result = {
        "torch.empty_like": lambda: torch.empty_like(q, memory_format=torch.contiguous_format),
        "stream": lambda: stream(fast.device),
        "record pack": lambda: pack(*values()),
        "record launch": lambda: call(handle, pack(*values())),
        "_fast_forward": lambda: api._fast_forward(fast, q, k, v, cu, qs, scale),
        "block_attention": lambda: blockattn.block_attention(q, k, v, cu, check_inputs=False),
        "block_attention checked": lambda: blockattn.block_attention(q, k, v, cu),
        "block_attention_qkvpacked": lambda: blockattn.block_attention_qkvpacked(qkv, cu, check_inputs=False),
    }
    if not fake:  # the checks want CUDA tensors
        result["the checks alone (the slow path's Python checks)"] = checks_path
        result["api.forward (the slow path's dict-based launch)"] = lambda: api.forward(q, k, v, cu, 64, scale)
    grad = {
        "empty Function (grad)": lambda: Empty.apply(*leaves, cu),
        "block_attention (grad)": lambda: blockattn.block_attention(*leaves, cu, check_inputs=False),
        "empty Function fwd+bwd": lambda: torch.autograd.grad(Empty.apply(*leaves, cu), leaves, do),
        "block_attention fwd+bwd": lambda: torch.autograd.grad(
            blockattn.block_attention(*leaves, cu, check_inputs=False), leaves, do),
        "block_attention_qkvpacked (grad)": lambda: blockattn.block_attention_qkvpacked(
            qkv_leaf, cu, check_inputs=False),
        "block_attention_qkvpacked fwd+bwd": lambda: torch.autograd.grad(
            blockattn.block_attention_qkvpacked(qkv_leaf, cu, check_inputs=False), qkv_leaf, do),
    }
    return result, grad


def profile_calls(fn, calls=2000, top=18):
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    stats = pstats.Stats(profiler)
    rows = []
    for (file, line, name), (cc, nc, tt, ct, _) in stats.stats.items():
        rows.append((tt, ct, nc, f"{pathlib.Path(file).name}:{line}({name})"))
    rows.sort(reverse=True)
    return [{"function": r[3], "calls per call": round(r[2] / calls, 2), "own us per call": round(r[0] / calls * 1e6, 2),
             "cumulative us per call": round(r[1] / calls * 1e6, 2)} for r in rows[:top]]


COLD = r"""
import time, json, sys
t0 = time.perf_counter()
import torch
torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t1 = time.perf_counter()
import blockattn
from blockattn import api
t2 = time.perf_counter()
T, H, D = 512, 4, 128
q, k, v, do = (torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
cu = torch.tensor([0, T], dtype=torch.int32, device="cuda")
torch.cuda.synchronize()
out = {"import torch + CUDA context": t1 - t0, "import blockattn": t2 - t1}
def mark(name, fn):
    torch.cuda.synchronize(); s = time.perf_counter(); r = fn(); torch.cuda.synchronize()
    out[name] = time.perf_counter() - s
    return r
with torch.no_grad():
    mark("first forward (no grad): lookup, load, launch", lambda: blockattn.block_attention(q, k, v, cu))
    mark("second forward (no grad)", lambda: blockattn.block_attention(q, k, v, cu))
class Empty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.randn(4, device="cuda", requires_grad=True)
mark("first torch.autograd.grad through a Python autograd.Function (CUDA)",
     lambda: torch.autograd.grad(Empty.apply(x), x, torch.ones_like(x)))
mark("second torch.autograd.grad (empty Function)", lambda: torch.autograd.grad(Empty.apply(x), x, torch.ones_like(x)))
mark("backward kernel: lookup and load (main thread)", lambda: api._kernel("backward", q, 64, "none", False, False))
leaves = [t.clone().requires_grad_() for t in (q, k, v)]
# The first fwd+bwd, split: the forward's host time, the engine's start of our backward (from
# torch.autograd.grad's call to our backward's first line, on the engine's thread), our
# backward, the engine's return, and the GPU's drain.
stamps = {}
body = api._fast_backward_body
def timed(ctx, grad):
    stamps.setdefault("enter", time.perf_counter())
    result = body(ctx, grad)
    stamps.setdefault("exit", time.perf_counter())
    return result
api._fast_backward_body = timed
torch.cuda.synchronize()
s0 = time.perf_counter()
o = blockattn.block_attention(*leaves, cu)
s1 = time.perf_counter()
grads = torch.autograd.grad(o, leaves, do)
s2 = time.perf_counter()
torch.cuda.synchronize()
s3 = time.perf_counter()
out["first fwd+bwd: forward with grad (host)"] = s1 - s0
if "enter" in stamps:
    out["first fwd+bwd: autograd.grad called -> our backward entered"] = stamps["enter"] - s1
    out["first fwd+bwd: our backward (host)"] = stamps["exit"] - stamps["enter"]
    out["first fwd+bwd: our backward left -> autograd.grad returned"] = s2 - stamps["exit"]
else:
    out["first fwd+bwd: autograd.grad (our fast backward not entered)"] = s2 - s1
out["first fwd+bwd: GPU drain"] = s3 - s2
api._fast_backward_body = body
mark("second block_attention fwd+bwd", lambda: torch.autograd.grad(blockattn.block_attention(*leaves, cu), leaves, do))
print("COLD " + json.dumps({k: round(v * 1e3, 3) for k, v in out.items()}))
"""


def cold_start():
    """Stage times (ms) of a fresh process's first calls (a subprocess)."""
    result = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    for line in result.stdout.splitlines():
        if line.startswith("COLD "):
            return json.loads(line[5:])
    return {"error": (result.stderr or result.stdout)[-2000:]}


def e2e_diagnosis(workloads=("1x64-h4", "1x512-h4")):
    """Why an e2e (do_bench) time can exceed the kernel's: per workload and implementation
    (ours, FA2; forward, no grad), do_bench's median; the GPU time per call with the host kept
    ahead (100 calls queued behind a ~5 ms torch.cuda._sleep, then CUDA events); the host time
    per call; and the time of do_bench's L2 flush (zeroing its 256 MB buffer), which is what
    hides the host's time of each repetition: a call whose host time exceeds it shows up in
    do_bench's number."""
    import torch
    import triton.testing

    sys.path.insert(0, str(REPO / "bench"))
    import latency

    out = {}
    cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    flush = []
    for _ in range(20):
        start.record()
        cache.zero_()
        end.record()
        torch.cuda.synchronize()
        flush.append(start.elapsed_time(end) * 1e3)
    out["do_bench L2 flush, GPU us"] = round(statistics.median(flush), 1)
    for name in workloads:
        p = latency.Problem(name)
        for impl, (fwd, _) in latency.implementations(p, ["ours", "fa2"]).items():
            fwd()
            torch.cuda.synchronize()
            bench = float(triton.testing.do_bench(fwd, warmup=10, rep=40, return_mode="median")) * 1e3
            torch.cuda._sleep(10_000_000)
            start.record()
            for _ in range(100):
                fwd()
            end.record()
            torch.cuda.synchronize()
            gpu = start.elapsed_time(end) * 1e3 / 100
            host = per_call_us(fwd, 200)
            torch.cuda.synchronize()
            out[f"{name} {impl} fwd"] = {"do_bench us": round(bench, 1), "GPU us per call (host ahead)": round(gpu, 1),
                                         "host us": round(host, 1)}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fake", action="store_true", help="no GPU: CPU tensors, the fake libcuda")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "python"))
    import torch

    api, q, k, v, cu, do = setup_fake() if args.fake else setup_gpu()
    plain, grad = stages(api, q, k, v, cu, do, args.fake)
    samples = {name: [] for name in (*plain, *grad)}
    for _ in range(args.rounds):
        with torch.no_grad():
            for name, fn in plain.items():
                samples[name].append(per_call_us(fn, args.calls))
        for name, fn in grad.items():
            samples[name].append(per_call_us(fn, args.calls if "bwd" not in name else max(args.calls // 4, 1)))
    report = {"device": "fake (CPU, fake libcuda)" if args.fake else torch.cuda.get_device_name(),
              "torch": torch.__version__, "python": sys.version.split()[0],
              "us_per_call": {name: round(statistics.median(v), 2) for name, v in samples.items()}}
    width = max(map(len, samples))
    print(f"host us per call ({report['device']}, medians of {args.rounds} rounds of {args.calls} calls):")
    for name, value in report["us_per_call"].items():
        print(f"  {name:<{width}} {value:8.2f}")
    if args.cprofile:
        with torch.no_grad():
            report["cprofile block_attention"] = profile_calls(
                lambda: api.block_attention(q, k, v, cu, check_inputs=False))
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        report["cprofile fwd+bwd"] = profile_calls(
            lambda: torch.autograd.grad(api.block_attention(*leaves, cu, check_inputs=False), leaves, do), 500)
        for key in ("cprofile block_attention", "cprofile fwd+bwd"):
            print(f"\n{key} (own us per call, the top of {len(report[key])}):")
            for row in report[key]:
                print(f"  {row['own us per call']:7.2f} {row['cumulative us per call']:8.2f} "
                      f"{row['calls per call']:5.2f}  {row['function']}")
    if not args.fake:
        report["e2e_diagnosis"] = e2e_diagnosis()
        print("\ne2e diagnosis (forward, no grad):")
        for name, value in report["e2e_diagnosis"].items():
            print(f"  {name:<32} {value}")
    if args.cold and not args.fake:
        report["cold_start_ms"] = cold_start()
        print("\ncold start, ms:")
        for name, value in report["cold_start_ms"].items():
            print(f"  {name:<70} {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
