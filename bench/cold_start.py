"""Cold start: the first call of a kernel in a fresh process, against the calls after it.

    python bench/cold_start.py --kernel-dir .prebuilt [--json cold.json]
    python bench/cold_start.py --compile-only          # no GPU: block-attn-compile's time alone

Each scenario runs in a new Python process (bf16, 1 x 512 tokens, H=4, D=128, as bench/latency.py's
smallest workload) and reports, in ms: importing torch and creating its CUDA context (paid by any
CUDA program, not by us), importing blockattn, torch's own first backward on the GPU (a
multiplication's: the autograd engine's start, also not ours), the first forward call (kernel lookup, manifest,
module load, launch plan, the launch, synchronized), the second one, then the first
forward+backward (which loads the backward kernel) and the second one.

Scenarios:
  prebuilt      the kernels as the wheel ships them (PTX and cubin; $BLOCKATTN_KERNEL_DIR):
                nothing is compiled, the driver loads the cubin;
  ptx, cold     the same kernels without their cubins, as a kernel compiled on first use is kept
                in the cache (block-attn-compile writes PTX): the driver compiles the PTX at
                load, with an empty driver JIT cache ($CUDA_CACHE_PATH a new directory);
  ptx, warm     the same again in a new process with that JIT cache: the driver finds its
                compiled code.
  compile       (--compile, where block-attn-compile runs) a kernel directory with nothing in
                it and an empty $BLOCKATTN_CACHE_DIR: block-attn-compile runs on first use.

--compile-only times block-attn-compile itself for the forward and backward kernels of the
workload (what a cache miss adds before the driver's load; the GPU machine has no compiler).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, time
t0 = time.perf_counter()
import torch
torch.cuda.init()
torch.empty(1, device="cuda")
torch.cuda.synchronize()
t1 = time.perf_counter()
import blockattn
t2 = time.perf_counter()
T, H, D = 512, 4, 128
g = torch.Generator(device="cuda").manual_seed(0)
q, k, v, do = (torch.randn(T, H, D, generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(4))
cu = torch.tensor([0, T], dtype=torch.int32, device="cuda")
leaves = [t.clone().requires_grad_() for t in (q, k, v)]
torch.cuda.synchronize()


def timed(fn):
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def fwd():
    with torch.no_grad():
        blockattn.block_attention(q, k, v, cu)


def step():
    o = blockattn.block_attention(*leaves, cu)
    torch.autograd.grad(o, leaves, do)


def torch_step():
    x = q.float().requires_grad_()
    torch.autograd.grad((x * 2).sum(), x)


out = {"torch import + CUDA context": (t1 - t0) * 1e3, "import blockattn": (t2 - t1) * 1e3}
out["torch's first CUDA backward"] = timed(torch_step)
out["first fwd"] = timed(fwd)
out["second fwd"] = timed(fwd)
out["first fwd+bwd"] = timed(step)
out["second fwd+bwd"] = timed(step)
print("RESULT " + json.dumps(out))
"""

KERNELS = ("blockattn_forward_d128_b64_bf16", "blockattn_backward_d128_b64_bf16")


def run_child(env_extra: dict) -> dict:
    env = dict(os.environ)
    for key, value in env_extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    result = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"child failed:\n{result.stdout}\n{result.stderr}")


def ptx_only_dir(kernel_dir: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """A kernel directory with the workload's kernels as PTX and manifest only."""
    chip = into / "sm_90a"
    chip.mkdir(parents=True)
    for name in KERNELS:
        for suffix in (".json", ".ptx"):
            source = kernel_dir / "sm_90a" / (name + suffix)
            if not source.exists():
                source = kernel_dir / (name + suffix)
            shutil.copy(source, chip / source.name)
    return into


def compile_only(rounds: int) -> dict:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
    from blockattn import _kernels

    out = {}
    for kind in ("forward", "backward"):
        key = _kernels.KernelKey(kind, 128, 64, "bf16", "sm_90a")
        times = []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                _kernels.compile_kernel(key, pathlib.Path(tmp))
                times.append((time.perf_counter() - start) * 1e3)
        out[f"block-attn-compile {kind}"] = sorted(times)[len(times) // 2]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel-dir", default=os.environ.get("BLOCKATTN_KERNEL_DIR"))
    parser.add_argument("--compile", action="store_true", help="also the compile-on-first-use scenario")
    parser.add_argument("--compile-only", action="store_true", help="time block-attn-compile alone (no GPU)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per scenario (medians)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.compile_only:
        report = compile_only(args.rounds)
    else:
        if not args.kernel_dir:
            parser.error("--kernel-dir (or $BLOCKATTN_KERNEL_DIR) is needed")
        kernel_dir = pathlib.Path(args.kernel_dir).resolve()
        report = {}
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            ptx = ptx_only_dir(kernel_dir, tmp / "ptx")
            scenarios = []
            for i in range(args.rounds):
                jit = str(tmp / f"jit-{i}")
                scenarios += [
                    ("prebuilt", {"BLOCKATTN_KERNEL_DIR": str(kernel_dir), "CUDA_CACHE_PATH": jit + "-p"}),
                    ("ptx, cold", {"BLOCKATTN_KERNEL_DIR": str(ptx), "CUDA_CACHE_PATH": jit}),
                    ("ptx, warm", {"BLOCKATTN_KERNEL_DIR": str(ptx), "CUDA_CACHE_PATH": jit}),
                ]
                if args.compile:
                    scenarios.append(("compile", {"BLOCKATTN_KERNEL_DIR": str(tmp / f"empty-{i}"),
                                                  "BLOCKATTN_CACHE_DIR": str(tmp / f"cache-{i}"),
                                                  "CUDA_CACHE_PATH": jit + "-c"}))
            samples: dict = {}
            for name, env in scenarios:
                for key, value in run_child(env).items():
                    samples.setdefault(name, {}).setdefault(key, []).append(value)
            for name, values in samples.items():
                report[name] = {k: round(sorted(v)[len(v) // 2], 2) for k, v in values.items()}
    print(json.dumps(report, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
