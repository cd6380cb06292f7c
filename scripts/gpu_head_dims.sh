#!/usr/bin/env bash
# Head dims 192 and 256 on a GPU (issue 20, docs/head-dims.md): the GPU tests
# against the float64 reference and the seed-d192 / seed-d256 benchmark.
#
# On the build machine (the repository built):
#   scripts/gpu_head_dims.sh prebuild DIR   compiles the kernels into DIR (the
#                                           forward and backward, bf16 and f16,
#                                           with the sm_90a small-grid variants)
# On the GPU machine (no compiler needed), from the repository root:
#   scripts/gpu_head_dims.sh run DIR        builds libblockattn_launch.so, runs
#                                           the head-dim GPU tests at 192 and 256
#                                           and bench/bench.py on seed-d192,
#                                           seed-d256
set -euo pipefail
cmd=${1:?usage: $0 prebuild|run DIR}
dir=${2:?usage: $0 prebuild|run DIR}
case "$cmd" in
prebuild)
  export BLOCKATTN_COMPILER=${BLOCKATTN_COMPILER:-build/bin/block-attn-compile}
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a,sm_100a \
    --kinds forward,backward --head-dims 192,256 --dtypes bf16,f16 --jobs 2
  ;;
run)
  gcc -shared -fPIC -O2 -std=c11 -I include -I /usr/local/cuda/include \
    lib/Launch/Launch.c -ldl -lpthread -o libblockattn_launch.so
  export PYTHONPATH=python BLOCKATTN_KERNEL_DIR="$dir" \
    BLOCKATTN_LAUNCH_LIBRARY="$PWD/libblockattn_launch.so"
  python3 -m pytest -q python/tests/gpu/test_head_dims_gpu.py -k "192 or 256"
  python3 bench/bench.py --workloads seed-d192,seed-d256
  ;;
*)
  echo "usage: $0 prebuild|run DIR" >&2
  exit 2
  ;;
esac
