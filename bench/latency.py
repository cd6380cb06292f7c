"""Latency of small batches: host time per call and end-to-end time, ours against FA2 varlen and Triton.

    python bench/latency.py [--rounds 5] [--workloads NAME,...] [--impls ours,fa2,triton]
                            [--json latency.json]

For each workload (issue 22's table and two more; bf16):

  host us     the host time of one call with no GPU synchronization: N calls back to back,
              timed with perf_counter, / N (the queue never fills: N is far below its depth);
  e2e us      triton.testing.do_bench's median (CUDA events around each call; what the issue's
              table reports), and
  loop us     N calls back to back then one synchronize, / N: a training loop's cost per call,
              max(host, GPU) in steady state;

forward ("fwd": no autograd, under torch.no_grad) and forward+backward ("fwd+bwd": autograd,
torch.autograd.grad(o, (q, k, v), do): no gradient accumulation is timed), as medians of
--rounds interleaved rounds (every implementation once per round).

Implementations: "ours" (blockattn.block_attention, check_inputs=False), "ours-checked" (the
default check_inputs=True: cu_seqlens copied to the host once, the later calls look it up), "fa2" (FA2 varlen
with every 64-token block its own sequence: flash_attn when installed, else torch's bundled FA2
through aten, bench/peers.py), "triton" (bench/triton_block_attn.py with the launch configuration
tuned per workload and direction, as bench/peers.py tunes it).

It also prints the layers of our call's host time (1x512): the kernel's launch alone
(LoadedKernel.launch with prepared arguments and the grid; LoadedKernel.call, the record launch
from a dict of tensors that every path but block_attention's fast path takes), blockattn.api.forward (the launch plus allocating
o), the custom op (torch.library dispatch; what torch.compile runs), the same forward in a plain
torch.autograd.Function, block_attention itself (the eager path: the launch without a gradient,
an autograd.Function with one), with check_inputs=True (on a cu_seqlens already checked, and on
a new one each call), with and without inputs that require grad and with the backward
(torch.autograd.grad); and torch's floors: torch.empty_like, and an autograd.Function that only
allocates its output and gradients.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blockattn  # noqa: E402
from blockattn import api  # noqa: E402

WORKLOADS = {
    # name: (lengths, heads, head_dim)
    "1x512-h4": (lambda rng: np.array([512]), 4, 128),
    "8x1k-h4": (lambda rng: rng.integers(900, 1100 + 1, size=8), 4, 128),
    "64x1k-h8": (lambda rng: rng.integers(900, 1100 + 1, size=64), 8, 128),
    "1152x200-h4": (lambda rng: rng.integers(150, 250 + 1, size=1152), 4, 128),
    "1x64-h4": (lambda rng: np.array([64]), 4, 128),
    "16x8k-h16-d64": (lambda rng: np.full(16, 8192), 16, 64),
}


def host_us(fn, n=200):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / n * 1e6


def loop_us(fn, n=200):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


def e2e_us(fn):
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")) * 1e3


class Problem:
    def __init__(self, name, seed=0):
        make, self.H, self.D = WORKLOADS[name]
        self.name = name
        self.lengths = make(np.random.default_rng(seed)).astype(np.int64)
        self.T = int(self.lengths.sum())
        self.cu = torch.tensor(np.concatenate([[0], np.cumsum(self.lengths)]), dtype=torch.int32, device="cuda")
        g = torch.Generator(device="cuda").manual_seed(seed)
        shape = (self.T, self.H, self.D)
        self.q, self.k, self.v, self.do = (
            torch.randn(shape, generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        self.leaves = [t.clone().requires_grad_() for t in (self.q, self.k, self.v)]
        starts = []
        offset = 0
        for n in self.lengths:
            starts.append(offset + np.arange(0, int(n), 64))
            offset += int(n)
        self.block_cu = torch.tensor(np.concatenate(starts + [[offset]]).astype(np.int32), device="cuda")
        self.scale = self.D ** -0.5


def implementations(p: Problem, names):
    """{name: (fwd, fwd+bwd)} callables for problem p."""
    out = {}
    if "ours" in names or "ours-checked" in names:
        for label, check in (("ours", False), ("ours-checked", True)):
            if label not in names:
                continue

            def fwd(check=check):
                with torch.no_grad():
                    return blockattn.block_attention(p.q, p.k, p.v, p.cu, check_inputs=check)

            def step(check=check):
                o = blockattn.block_attention(*p.leaves, p.cu, check_inputs=check)
                torch.autograd.grad(o, p.leaves, p.do)

            out[label] = (fwd, step)
    if "fa2" in names:
        import peers

        def fa2(q, k, v):
            return peers._Fa2VarlenAten.apply(q, k, v, p.block_cu, 64, p.scale, False)

        def fwd():
            with torch.no_grad():
                return fa2(p.q, p.k, p.v)

        def step():
            torch.autograd.grad(fa2(*p.leaves), p.leaves, p.do)

        out["fa2"] = (fwd, step)
    if "triton" in names:
        import peers
        import triton_block_attn as tba

        table = tba.block_table(p.cu, p.T)
        fbest, _ = peers.tune(lambda c: (lambda: tba.forward(p.q, p.k, p.v, table, num_warps=c[0],
                                                             num_stages=c[1])), tba.CONFIGS, rep=10)
        bbest, _ = peers.tune(lambda c: (lambda: tba.backward(p.do, p.q, p.k, p.v, table, num_warps=c[0],
                                                              num_stages=c[1])), tba.CONFIGS, rep=10)

        def fwd():
            return tba.forward(p.q, p.k, p.v, table, num_warps=fbest[0], num_stages=fbest[1])

        def step():
            tba.forward(p.q, p.k, p.v, table, num_warps=fbest[0], num_stages=fbest[1])
            tba.backward(p.do, p.q, p.k, p.v, table, num_warps=bbest[0], num_stages=bbest[1])

        out["triton"] = (fwd, step)
    return out


class _PlainFunction(torch.autograd.Function):
    """Our forward/backward in a plain autograd.Function with ctx (as before issue 22's
    eager path): the baseline of the custom op's dispatch cost."""

    @staticmethod
    def forward(ctx, q, k, v, cu, scale):
        ctx.save_for_backward(q, k, v, cu)
        ctx.scale = scale
        return api.forward(q, k, v, cu, 64, scale)

    @staticmethod
    def backward(ctx, do):
        q, k, v, cu = ctx.saved_tensors
        return (*api.backward(do, q, k, v, cu, 64, ctx.scale), None, None)


class _EmptyFunction(torch.autograd.Function):
    """An autograd.Function that only allocates its output (and its backward only the three
    gradients): torch's own floor for a differentiable op called from Python."""

    @staticmethod
    def forward(ctx, q, k, v, cu, scale):
        ctx.save_for_backward(q, k, v, cu)
        return torch.empty_like(q)

    @staticmethod
    def backward(ctx, do):
        q, k, v, cu = ctx.saved_tensors
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), None, None


def dispatch_layers(p: Problem, rounds):
    """Host us per call of each layer of our forward path, and torch's floors (1x512)."""
    o = torch.empty_like(p.q)
    tensors = {"q": p.q, "k": p.k, "v": p.v, "o": o, "cu_seqlens": p.cu}
    kernel, num_sms = api._kernel("forward", p.q, 64, "none", False, False)
    grid = kernel.grid(num_sms, tensors)
    scalars = {"softmax_scale": p.scale}
    # cu_seqlens tensors the checks have not seen, one per call (host_us makes 501 per round).
    fresh = iter([p.cu.clone() for _ in range(501 * rounds)])

    def unseen_cu():
        return blockattn.block_attention(p.q, p.k, p.v, next(fresh), check_inputs=True)

    layers = {
        "torch.empty_like": lambda: torch.empty_like(p.q),
        "kernel.launch": lambda: kernel.launch(grid, tensors, scalars),
        "kernel.call (record launch from a dict)": lambda: kernel.call(tensors, scalars),
        "api.forward": lambda: api.forward(p.q, p.k, p.v, p.cu, 64, p.scale),
        "custom op": lambda: api._block_attention_op(p.q, p.k, p.v, p.cu, 64, p.scale),
        "autograd.Function": lambda: _PlainFunction.apply(p.q, p.k, p.v, p.cu, p.scale),
        "block_attention": lambda: blockattn.block_attention(p.q, p.k, p.v, p.cu, check_inputs=False),
        "block_attention checked": lambda: blockattn.block_attention(p.q, p.k, p.v, p.cu),
        "block_attention checked, new cu_seqlens": unseen_cu,
        "api.backward (main thread, no autograd)": lambda: api.backward(p.do, p.q, p.k, p.v, p.cu, 64, p.scale),
    }
    results = {k: [] for k in layers}
    for _ in range(rounds):
        with torch.no_grad():
            for k, fn in layers.items():
                results[k].append(host_us(fn, 500))
    leaves = p.leaves

    def step_of(fn):
        return lambda: torch.autograd.grad(fn(), leaves, p.do)

    grad_layers = {
        "empty autograd.Function (grad)": lambda: _EmptyFunction.apply(*leaves, p.cu, p.scale),
        "custom op (grad)": lambda: api._block_attention_op(*leaves, p.cu, 64, p.scale),
        "autograd.Function (grad)": lambda: _PlainFunction.apply(*leaves, p.cu, p.scale),
        "block_attention (grad)": lambda: blockattn.block_attention(*leaves, p.cu, check_inputs=False),
        "block_attention checked (grad)": lambda: blockattn.block_attention(*leaves, p.cu),
    }
    step_layers = {
        "empty autograd.Function fwd+bwd": step_of(lambda: _EmptyFunction.apply(*leaves, p.cu, p.scale)),
        "custom op fwd+bwd": step_of(lambda: api._block_attention_op(*leaves, p.cu, 64, p.scale)),
        "autograd.Function fwd+bwd": step_of(lambda: _PlainFunction.apply(*leaves, p.cu, p.scale)),
        "block_attention fwd+bwd": step_of(
            lambda: blockattn.block_attention(*leaves, p.cu, check_inputs=False)),
        "block_attention checked fwd+bwd": step_of(lambda: blockattn.block_attention(*leaves, p.cu)),
    }
    for k in (*grad_layers, *step_layers):
        results[k] = []
    for _ in range(rounds):
        for k, fn in grad_layers.items():
            results[k].append(host_us(fn, 500))
        for k, fn in step_layers.items():
            results[k].append(host_us(fn, 200))
    out = {k: statistics.median(v) for k, v in results.items()}
    # Tensor-map cache misses: maps encoded per block_attention fwd+bwd step, per plan.
    backward_kernel, _ = api._kernel("backward", p.q, 64, "none", False, False)
    plans = [k.plan for k in (kernel, backward_kernel) if k.plan is not None]
    if plans:
        encoded = [plan.encode_count() for plan in plans]
        host_us(step_layers["block_attention fwd+bwd"], 200)
        out["tensor maps encoded per step (fwd, bwd)"] = [
            round((plan.encode_count() - before) / 201, 3) for plan, before in zip(plans, encoded)]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--impls", default="ours,ours-checked,fa2,triton")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    names = args.impls.split(",")
    from blockattn import _driver

    launch = getattr(_driver, "_launch", None)  # absent before issue 22 (bench the old package too)
    native = launch is not None and launch.library() is not None and os.environ.get("BLOCKATTN_LAUNCH",
                                                                                   "native") != "python"
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, launch path: "
          f"{'libblockattn_launch' if native else 'cuda.bindings (Python)'}", flush=True)
    report = {"launch_path": "native" if native else "python", "workloads": {}}
    if "ours" in names and hasattr(api, "_kernel"):
        layers = dispatch_layers(Problem("1x512-h4"), args.rounds)
        report["forward_host_layers_us"] = {k: round(v, 2) if isinstance(v, float) else v
                                            for k, v in layers.items()}
        print("host us per call, by layer (1x512-h4):")
        for k, v in layers.items():
            print(f"  {k:<42}{v:8.2f}" if isinstance(v, float) else f"  {k:<42}{v}")
        print(flush=True)
    for wname in args.workloads.split(","):
        p = Problem(wname)
        impls = implementations(p, names)
        if "ours" in impls and "fa2" in impls:
            with torch.no_grad():
                diff = (impls["ours"][0]().float() - impls["fa2"][0]().float()).abs().max().item()
            assert diff < 2e-2, f"{wname}: ours and FA2 differ by {diff}"
        samples = {(i, d, m): [] for i in impls for d in ("fwd", "fwd+bwd") for m in ("host", "e2e", "loop")}
        for _ in range(args.rounds):
            for iname, (fwd, step) in impls.items():
                for direction, fn in (("fwd", fwd), ("fwd+bwd", step)):
                    samples[iname, direction, "host"].append(host_us(fn))
                    samples[iname, direction, "e2e"].append(e2e_us(fn))
                    samples[iname, direction, "loop"].append(loop_us(fn))
        med = {f"{i} {d} {m}": round(statistics.median(v), 1) for (i, d, m), v in samples.items()}
        report["workloads"][wname] = {"T": p.T, "B": len(p.lengths), "H": p.H, "D": p.D, **med}
        print(f"\n{wname}: T={p.T} B={len(p.lengths)} H={p.H} D={p.D}")
        print(f"  {'impl':<14}{'fwd host':>10}{'fwd e2e':>10}{'fwd loop':>10}"
              f"{'f+b host':>10}{'f+b e2e':>10}{'f+b loop':>10}  (us)")
        for i in impls:
            row = [med[f"{i} {d} {m}"] for d in ("fwd", "fwd+bwd") for m in ("host", "e2e", "loop")]
            print(f"  {i:<14}" + "".join(f"{x:10.1f}" for x in row), flush=True)
        del p, impls
        torch.cuda.empty_cache()
        if args.json:  # after every workload: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
