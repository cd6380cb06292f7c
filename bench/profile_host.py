"""Where the host time of one forward+backward goes (1 x 512, H=4, D=128, bf16): a diagnostic.

    PYTHONPATH=python BLOCKATTN_KERNEL_DIR=.prebuilt python3 bench/profile_host.py

Prints host us per call (no synchronization) of the backward's pieces called from the main
thread, the time spent inside our autograd.Function's backward on the autograd engine's thread,
the tensor maps encoded per call (tensor-map cache misses), and cProfile's top functions of the
forward and of the backward body.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blockattn  # noqa: E402
from blockattn import api  # noqa: E402
from latency import Problem, _EmptyFunction, _PlainFunction, host_us  # noqa: E402


def main():
    p = Problem("1x512-h4")
    leaves = p.leaves
    fwd_kernel, _ = api._kernel("forward", p.q, 64, "none", False, False)
    bwd_kernel, _ = api._kernel("backward", p.q, 64, "none", False, False)
    rows = {}
    rows["api.backward (main thread)"] = host_us(lambda: api.backward(p.do, p.q, p.k, p.v, p.cu, 64, p.scale), 500)
    rows["api.forward (main thread)"] = host_us(lambda: api.forward(p.q, p.k, p.v, p.cu, 64, p.scale), 500)
    for name, fn in {
        "empty Function fwd+bwd": lambda: _EmptyFunction.apply(*leaves, p.cu, p.scale),
        "plain Function fwd+bwd": lambda: _PlainFunction.apply(*leaves, p.cu, p.scale),
        "block_attention fwd+bwd": lambda: blockattn.block_attention(*leaves, p.cu, check_inputs=False),
    }.items():
        rows[name] = host_us(lambda: torch.autograd.grad(fn(), leaves, p.do), 300)
    rows["block_attention (grad), fwd only"] = host_us(
        lambda: blockattn.block_attention(*leaves, p.cu, check_inputs=False), 500)

    # Time inside the Function's backward, on the engine's thread.
    inner = []
    original = api.backward

    def timed_backward(*a, **kw):
        start = time.perf_counter()
        result = original(*a, **kw)
        inner.append(time.perf_counter() - start)
        return result

    api.backward = timed_backward
    encodes = (fwd_kernel.plan.encode_count(), bwd_kernel.plan.encode_count())
    n = 300
    total = host_us(lambda: torch.autograd.grad(blockattn.block_attention(*leaves, p.cu, check_inputs=False),
                                                leaves, p.do), n)
    api.backward = original
    rows["block_attention fwd+bwd (timed)"] = total
    rows["  of which api.backward on the engine thread"] = sum(inner[-n:]) / n * 1e6
    rows["tensor maps encoded per call, fwd / bwd"] = (
        (fwd_kernel.plan.encode_count() - encodes[0]) / (n + 1), (bwd_kernel.plan.encode_count() - encodes[1]) / (n + 1))
    for k, v in rows.items():
        print(f"{k:<48}{v}")

    for title, fn in (("forward with grad", lambda: blockattn.block_attention(*leaves, p.cu, check_inputs=False)),
                      ("api.backward", lambda: api.backward(p.do, p.q, p.k, p.v, p.cu, 64, p.scale)),
                      ("fwd+bwd", lambda: torch.autograd.grad(
                          blockattn.block_attention(*leaves, p.cu, check_inputs=False), leaves, p.do))):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            fn()
        prof.disable()
        torch.cuda.synchronize()
        print(f"\n=== cProfile: {title}, 300 calls (main thread only) ===")
        pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
