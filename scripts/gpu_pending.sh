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
#     (each selection's log and JUnit XML go to RESULTS: the device tool
#     returns only the output's tail)
#   scripts/gpu_pending.sh timeline DIR issue 19: the traced backward of the
#                                       interleaved rotary kernels with a
#                                       positions tensor next to the plain one
#                                       (DIR/traced from bench/timeline.py
#                                       --build-only --kernel-dir DIR/traced
#                                       --kinds backward --rotary
#                                       interleaved+pos[+rv])
#     VARIANTS="interleaved+pos interleaved+pos+rv"  the variants traced
#   scripts/gpu_pending.sh timing DIR   issue 19: bench/bench.py with every
#                                       fused rotary variant against the plain
#                                       kernels on rope and seed (an H200)
#     LAYOUTS="half_split interleaved"  the layouts timed (default both)
#     IMPLS=ours,ours-fused             bench.py's --impls (default: all four)
#     RESULTS=DIR2                      where results go (default DIR)
set -euo pipefail
cmd=${1:?usage: $0 pack|tests|timeline|timing DIR}
dir=${2:?usage: $0 pack|tests|timeline|timing DIR}
build=${BUILD_DIR:-build}

setup() {
  dir=$(cd "$dir" && pwd)  # relative to the repository root, or absolute
  [ -x "$dir/bin-static/block-attn-compile" ] || tar xzf "$dir/compiler.tgz" -C "$dir"
  export PYTHONPATH=python BLOCKATTN_COMPILER="$dir/bin-static/block-attn-compile" \
    BLOCKATTN_LAUNCH_LIBRARY="$dir/lib/libblockattn_launch.so" \
    BLOCKATTN_CACHE_DIR="$dir/cache"
}

# One pytest selection of test_gqa_gpu.py; its log and JUnit XML in RESULTS,
# its summary line on the output.
pending_tests() {
  local out="${RESULTS:-$dir}/tests-$1"
  python3 -m pytest -q -p no:cacheprovider python/tests/gpu/test_gqa_gpu.py -k "$1" \
    --junitxml "$out.xml" >"$out.log" 2>&1
  local rc=$?
  echo "$1: $(tail -n 1 "$out.log")"
  return $rc
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
  status=0
  pending_tests block_size_128_chunked_rotary || status=1
  # Session 24: the grouped block-128 half-split backward at head dim 96
  # (32-byte-swizzled 16-column pieces) and at 128.
  pending_tests wide_half_split || status=1
  exit $status
  ;;
timeline)
  setup
  for variant in ${VARIANTS:-interleaved+pos interleaved+pos+rv}; do
    BLOCKATTN_KERNEL_DIR="$dir/traced" python3 bench/timeline.py \
      --kernel-dir "$dir/traced" --kinds backward --rotary "$variant" \
      --out "${RESULTS:-$dir}/timeline-${variant//+/_}"
  done
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
  echo "usage: $0 pack|tests|timeline|timing DIR" >&2
  exit 2
  ;;
esac
