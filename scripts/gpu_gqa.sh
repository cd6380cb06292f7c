#!/usr/bin/env bash
# Grouped-query attention on a GPU (issue 21): the GPU tests (forward and
# backward) against the float64 reference and the forward and backward timing
# against their floors.
#
# On the build machine (the repository built):
#   scripts/gpu_gqa.sh prebuild DIR     compiles the kernels into DIR
# On the GPU machine (no compiler needed), from the repository root:
#   scripts/gpu_gqa.sh run DIR          builds libblockattn_launch.so (launch
#                                       ABI 3), runs python/tests/gpu/test_gqa_gpu.py
#                                       and bench/gqa_forward.py --backward
set -euo pipefail
cmd=${1:?usage: $0 prebuild|run DIR}
dir=${2:?usage: $0 prebuild|run DIR}
case "$cmd" in
prebuild)
  export BLOCKATTN_COMPILER=${BLOCKATTN_COMPILER:-build/bin/block-attn-compile}
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
    --head-dims 64,128 --dtypes bf16,f16 --groups 1,2,3,4,8 --jobs 2
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward \
    --head-dims 64,128 --dtypes bf16 --rotary half_split --groups 2,4 --jobs 2
  # The grouped rotary backward (and the forwards its autograd calls run).
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
    --head-dims 64,128 --dtypes bf16,f16 --rotary half_split,interleaved \
    --rotary-variants plain,pos,rv,pos_rv --groups 2,4 --jobs 2
  for modes in --causal --lse "--causal --lse"; do
    # shellcheck disable=SC2086
    python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
      --head-dims 64,128 --dtypes bf16,f16 --groups 4 $modes --jobs 2
  done
  # The grouped backward at block size 128 (head dims 32 and 64; 96 and 128
  # in column passes).
  for modes in "" --causal --lse "--causal --lse"; do
    # shellcheck disable=SC2086
    python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
      --head-dims 32,64 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8 $modes --jobs 2
  done
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
    --head-dims 96,128 --block-sizes 128 --dtypes bf16,f16 --groups 2,4,8,16 --jobs 2
  for modes in --causal --lse "--causal --lse"; do
    # shellcheck disable=SC2086
    python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
      --head-dims 96,128 --block-sizes 128 --dtypes bf16,f16 --groups 4 $modes --jobs 2
  done
  # The grouped backward at head dims 192 and 256 (passes over 64-column
  # chunks; test_gqa_gpu.py -k large_head_dims) and the forwards it runs.
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
    --head-dims 192,256 --dtypes bf16,f16 --groups 2,4,8 --jobs 2
  python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
    --head-dims 192,256 --block-sizes 16,32 --dtypes bf16 --groups 4 --jobs 2
  for modes in --causal --lse "--causal --lse"; do
    # shellcheck disable=SC2086
    python3 scripts/prebuild_kernels.py "$dir" --chips sm_90a --kinds forward,backward \
      --head-dims 192,256 --dtypes bf16,f16 --groups 4 $modes --jobs 2
  done
  ;;
run)
  gcc -shared -fPIC -O2 -std=c11 -I include -I /usr/local/cuda/include \
    lib/Launch/Launch.c -ldl -lpthread -o libblockattn_launch.so
  export PYTHONPATH=python BLOCKATTN_KERNEL_DIR="$dir" \
    BLOCKATTN_LAUNCH_LIBRARY="$PWD/libblockattn_launch.so"
  python3 -m pytest -q python/tests/gpu/test_gqa_gpu.py
  python3 bench/gqa_forward.py --backward
  ;;
*)
  echo "usage: $0 prebuild|run DIR" >&2
  exit 2
  ;;
esac
