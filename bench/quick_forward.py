"""Quick timing of our forward on the seed workloads, with the copy floor.

    python3 bench/quick_forward.py [--block-size 128]
"""

import argparse
import sys

import torch
import triton

sys.path.insert(0, "bench")
import workloads  # noqa: E402

import blockattn  # noqa: E402


def copy_bandwidth() -> float:
    src = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=25, rep=100, return_mode="median")
    return 2 * src.numel() / (ms * 1e-3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block-size", type=int, default=64)
    args = parser.parse_args()
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e12:.2f} TB/s")
    for name in ["seed", "seed-d64"]:
        w = workloads.get(name)
        q, k, v = w.tensors(3)
        cu = w.cu_seqlens()
        o = torch.empty_like(q)
        fn = lambda: blockattn.block_attention(q, k, v, cu, out=o, block_size=args.block_size,  # noqa: E731
                                               check_inputs=False)
        ms = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
        floor = 4 * w.bytes_per_tensor() / bw * 1e3
        print(f"{name} block {args.block_size}: T={w.tokens} forward {ms:.3f} ms, floor {floor:.3f} ms, {100 * floor / ms:.1f}% of floor")


if __name__ == "__main__":
    main()
