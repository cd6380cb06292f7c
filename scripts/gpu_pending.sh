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
#     JOBS=16                           concurrent pytest processes
#     (each shard's log and JUnit XML go to RESULTS: the device tool returns
#     only the output's tail)
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

# The pending selections ("FILE -k EXPR" each) collected into one list of
# test ids and run as JOBS concurrent pytest processes (kernels compile on
# first use, one compiler process each, into one cache: os.replace keeps it
# consistent). Each shard's log and JUnit XML go to RESULTS; one summary line
# per selection goes to the output.
pending_tests() {
  local out="${RESULTS:-$dir}" jobs=${JOBS:-1} ids="${RESULTS:-$dir}/tests-ids" status=0
  : >"$ids"
  local selection
  for selection in "$@"; do
    # shellcheck disable=SC2086
    python3 -m pytest -q -p no:cacheprovider --collect-only ${selection} | grep '::' >>"$ids"
  done
  split -n "r/$jobs" -d "$ids" "$out/tests-shard-"
  local shard pids=()
  for shard in "$out"/tests-shard-[0-9]*; do
    [ -s "$shard" ] || continue
    local tests=()
    mapfile -t tests <"$shard"  # ids may hold spaces: "[4-2-192-(True, False, False)]"
    python3 -m pytest -q -p no:cacheprovider "${tests[@]}" --junitxml "$shard.xml" \
      >"$shard.log" 2>&1 &
    pids+=($!)
  done
  local pid
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  python3 - "$out" "$@" <<'PY'
import glob, re, sys
import xml.etree.ElementTree as ET
out, selections = sys.argv[1], sys.argv[2:]
cases = [c for f in sorted(glob.glob(out + "/tests-shard-*.xml")) for c in ET.parse(f).iter("testcase")]
def outcome(c):
    for tag in ("failure", "error", "skipped"):
        if c.find(tag) is not None:
            return tag
    return "passed"
for selection in selections:
    expr = selection.split("-k", 1)[1].strip() if "-k" in selection else ""
    words = re.findall(r"\w+", expr)
    mine = [c for c in cases if all(w in c.get("name") for w in words if w not in ("and", "or", "not"))] if words else cases
    counts = {}
    for c in mine:
        counts[outcome(c)] = counts.get(outcome(c), 0) + 1
        if outcome(c) in ("failure", "error"):
            print("  FAILED", c.get("classname"), c.get("name"))
    print(f"{selection}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
PY
  return $status
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
  # pinned addresses with rotate_v; session 26: split_items, narrow_index,
  # pinned_table_rows and wide_offsets (the plain chunked ones store through
  # pinned addresses too); on a Blackwell GPU the sm_100a ones (a rotary
  # warpgroup). Session 24: the grouped block-128 half-split backward at head
  # dim 96 (32-byte-swizzled 16-column pieces) and at 128.
  pending_tests "python/tests/gpu/test_gqa_gpu.py -k block_size_128_chunked" \
    "python/tests/gpu/test_gqa_gpu.py -k wide_half_split"
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
