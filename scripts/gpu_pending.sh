#!/usr/bin/env bash
# What was built and emulated but has not run on a GPU yet, and issue 19's
# timing: the commands of the next GPU session, in the order of their value.
# docs/head-dims.md and the closing notes say what each selection covers.
#
# On the build machine (the repository built):
#   scripts/gpu_pending.sh pack DIR     the statically linked compiler and the
#                                       launch library into DIR/compiler.tgz
#                                       (well under the device tool's 64 MiB)
# On the GPU machine (no MLIR there), from the repository root:
#   scripts/gpu_pending.sh tests DIR    the pending GPU tests against the
#                                       float64 reference (kernels compiled on
#                                       first use by DIR's compiler)
#   scripts/gpu_pending.sh timing DIR   issue 19: bench/bench.py with every
#                                       fused rotary variant against the plain
#                                       kernels on rope and seed (an H200)
#     LAYOUTS="half_split interleaved"  the layouts timed (default both)
#     IMPLS=ours,ours-fused             bench.py's --impls (default: all four)
#     RESULTS=DIR2                      where results go (default DIR)
set -euo pipefail
cmd=${1:?usage: $0 pack|tests|timing DIR}
dir=${2:?usage: $0 pack|tests|timing DIR}
build=${BUILD_DIR:-build}

setup() {
  dir=$(cd "$dir" && pwd)  # relative to the repository root, or absolute
  [ -x "$dir/bin-static/block-attn-compile" ] || tar xzf "$dir/compiler.tgz" -C "$dir"
  export PYTHONPATH=python BLOCKATTN_COMPILER="$dir/bin-static/block-attn-compile" \
    BLOCKATTN_LAUNCH_LIBRARY="$dir/lib/libblockattn_launch.so" \
    BLOCKATTN_CACHE_DIR="$dir/cache"
}

case "$cmd" in
pack)
  ninja -C "$build" block-attn-compile-static blockattn_launch
  mkdir -p "$dir"
  tar czf "$dir/compiler.tgz" -C "$build" bin-static/block-attn-compile lib/libblockattn_launch.so
  ls -l "$dir/compiler.tgz"
  ;;
tests)
  setup
  # Session 23: the sm_90a grouped block-128 half-split backward at 192 and
  # 256 (pair-complete chunks as 64-byte-swizzled pieces); session 24: its
  # pinned addresses with rotate_v, and on a Blackwell GPU the sm_100a ones
  # (a rotary warpgroup).
  python3 -m pytest -q python/tests/gpu/test_gqa_gpu.py -k block_size_128_chunked_rotary
  # Session 24: the grouped block-128 half-split backward at head dim 96
  # (32-byte-swizzled 16-column pieces) and at 128.
  python3 -m pytest -q python/tests/gpu/test_gqa_gpu.py -k wide_half_split
  ;;
timing)
  setup
  for layout in ${LAYOUTS:-half_split interleaved}; do
    for variant in "" --rotary-positions --rotate-v "--rotary-positions --rotate-v"; do
      # shellcheck disable=SC2086
      python3 bench/bench.py --rotary "$layout" $variant --workloads rope,seed \
        ${IMPLS:+--impls "$IMPLS"} --rounds 3 \
        --out "${RESULTS:-$dir}/timing-$layout${variant// /}"
    done
  done
  ;;
*)
  echo "usage: $0 pack|tests|timing DIR" >&2
  exit 2
  ;;
esac
