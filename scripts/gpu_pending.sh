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
#     JOBS=8                            concurrent pytest processes (more
#                                       can exhaust an H100's memory: the
#                                       failed tests run again alone)
#     DEADLINE=500                      stop the tests then (seconds) and
#                                       report what finished
#     (each shard's log and JUnit XML go to RESULTS: the device tool returns
#     only the output's tail)
#   scripts/gpu_pending.sh suite DIR    the whole GPU suite (python/tests/gpu)
#                                       but the compute-sanitizer runs, sharded
#                                       as "tests" (JOBS, RESULTS); FILES="a.py
#                                       b.py" (names in python/tests/gpu) runs
#                                       those files only, to split the suite
#                                       over device calls
#   scripts/gpu_pending.sh timeline DIR issue 19: the traced backward of the
#                                       interleaved rotary kernels with a
#                                       positions tensor next to the plain one
#                                       (DIR/traced from bench/timeline.py
#                                       --build-only --kernel-dir DIR/traced
#                                       --kinds backward --rotary
#                                       interleaved+pos[+rv])
#     VARIANTS="interleaved+pos interleaved+pos+rv"  the variants traced
#   scripts/gpu_pending.sh slot DIR     issue 19: the backwards with their
#                                       gradients staged in the slot
#                                       (o-store=slot) against the defaults
#                                       and o-store=tma, at D = 128 and 64, on
#                                       an H200 (the H100 of session 35 had
#                                       slot = tma, both behind smem); DIR/slot
#                                       from scripts/launch_sweep.sh build
#                                       DIR/slot "base:" "slot:--o-store=slot"
#                                       "tma:--o-store=tma" -- --head-dims
#                                       64,128 --kinds backward --dtypes bf16
#                                       --no-small-grid
#                                       --rotary none,half_split,interleaved
#                                       --rotary-variants plain,pos,rv,pos_rv
#   scripts/gpu_pending.sh dynamic DIR  issue 19: the dynamic schedule
#                                       (--schedule=dynamic): its GPU tests,
#                                       then every kernel of DIR/dyn timed
#                                       against the defaults at D = 128 and
#                                       64, then each SM's finish time of the
#                                       traced kernels (bench/sm_balance.py)
#                                       in DIR/tr/base and DIR/tr/dyn; DIR/dyn
#                                       from scripts/launch_sweep.sh build
#                                       DIR/dyn "base:" "dyn:--schedule=dynamic"
#                                       -- --head-dims 64,128 --kinds
#                                       forward,backward --dtypes bf16
#                                       --no-small-grid
#                                       --rotary none,half_split,interleaved
#                                       --rotary-variants plain,pos,rv,pos_rv;
#                                       DIR/tr/V from bench/timeline.py
#                                       --build-only --kernel-dir DIR/tr/V
#                                       --kinds forward,backward --rotary
#                                       half_split (V = dyn: --compiler a
#                                       wrapper adding --schedule=dynamic)
#   scripts/gpu_pending.sh variants DIR issue 20: the block-128 softmax's
#                                       candidates against the defaults,
#                                       plain, forward and backward, at block
#                                       sizes 128 (head dims 32, 64, 128) and
#                                       64 (128, 64): every variant of
#                                       DIR/variants, from
#                                       scripts/launch_sweep.sh build
#                                       DIR/variants "base:"
#                                       "full:--softmax-full-tiles=on"
#                                       "stm:--stmatrix-writes=on"
#                                       "both:--softmax-full-tiles=on
#                                       --stmatrix-writes=on" -- --head-dims
#                                       32,64,128 --block-sizes 64,128
#                                       --kinds forward,backward --dtypes bf16
#                                       --no-small-grid --rotary none
#   scripts/gpu_pending.sh timing DIR   issue 19: bench/bench.py with every
#                                       fused rotary variant against the plain
#                                       kernels on rope and seed (an H200)
#     LAYOUTS="half_split interleaved"  the layouts timed (default both)
#     IMPLS=ours,ours-fused             bench.py's --impls (default: all four)
#     RESULTS=DIR2                      where results go (default DIR)
set -euo pipefail
cmd=${1:?usage: $0 pack|tests|suite|timeline|slot|dynamic|variants|timing DIR}
dir=${2:?usage: $0 pack|tests|suite|timeline|slot|dynamic|variants|timing DIR}
build=${BUILD_DIR:-build}

setup() {
  dir=$(cd "$dir" && pwd)  # relative to the repository root, or absolute
  [ -x "$dir/bin-static/block-attn-compile" ] || tar xzf "$dir/compiler.tgz" -C "$dir"
  export PYTHONPATH=python BLOCKATTN_COMPILER="$dir/bin-static/block-attn-compile" \
    BLOCKATTN_LAUNCH_LIBRARY="$dir/lib/libblockattn_launch.so" \
    BLOCKATTN_CACHE_DIR="$dir/cache"
}

# The outcomes of the test ids in IDS (the JUnit XML of the shards under OUT,
# or, for a shard stopped at DEADLINE before it wrote one, the "id PASSED"
# lines of its verbose log; then the re-run's, which override them): with
# --failed the ids that failed or erred, one a line; else one summary line per
# selection (its collected ids' outcomes, "a/b.py::C::test[x]" matched to
# classname "a.b.C", name "test[x]"), each failing id listed above it with
# the first line of its failure's message.
junit_outcomes() {
  python3 - "$@" <<'PY'
import glob, os, re, sys
import xml.etree.ElementTree as ET
out, ids, selections = sys.argv[1], sys.argv[2], sys.argv[3:]
def key(test_id):
    path, *scopes, name = test_id.split("::")
    return (".".join([path.removesuffix(".py").replace("/", ".")] + scopes), name)
outcomes, messages = {}, {}
verdicts = {"PASSED": "passed", "FAILED": "failure", "ERROR": "error", "SKIPPED": "skipped"}
for log in sorted(glob.glob(out + "/tests-shard-*.log")):
    if os.path.exists(log[:-4] + ".xml"):
        continue
    for line in open(log, errors="replace"):
        m = re.match(r"(\S.*::.*?) (PASSED|FAILED|ERROR|SKIPPED)\b", line)
        if m:
            outcomes[key(m.group(1))] = verdicts[m.group(2)]
for f in sorted(glob.glob(out + "/tests-shard-*.xml")) + glob.glob(out + "/tests-rerun.xml"):
    for c in ET.parse(f).iter("testcase"):
        tag = next((t for t in ("failure", "error", "skipped") if c.find(t) is not None), "passed")
        outcomes[(c.get("classname"), c.get("name"))] = tag
        if tag in ("failure", "error"):
            text = c.find(tag).get("message") or ""
            messages[(c.get("classname"), c.get("name"))] = text.strip().splitlines()[:1]
if selections == ["--failed"]:
    for test_id in open(ids).read().splitlines():
        if outcomes.get(key(test_id)) in ("failure", "error"):
            print(test_id)
    sys.exit(0)
for n, selection in enumerate(selections):
    counts = {}
    for test_id in open(f"{ids}-{n}").read().splitlines():
        tag = outcomes.get(key(test_id), "not run")
        counts[tag] = counts.get(tag, 0) + 1
        if tag in ("failure", "error", "not run"):
            print(f"  {tag.upper()}: {test_id}")
            for text in messages.get(key(test_id), []):
                print(f"    {text[:200]}")
    print(f"{selection}: " + ", ".join(f"{k} {v}" for v, k in sorted(counts.items())))
PY
}

# The pending selections ("FILE -k EXPR" each, EXPR unquoted) collected into
# one list of test ids and run as JOBS concurrent pytest processes (kernels
# compile on first use, one compiler process each, into one cache: os.replace
# keeps it consistent). Each shard's log and JUnit XML go to RESULTS; the
# failed tests run again alone; one summary line per selection to the output.
# With DEADLINE (seconds from here; below the device call's limit) the shards
# are stopped then, and the summary still comes: the tests that finished, and
# the others as "not run".
# Seconds left before DEADLINE counted from START ($SECONDS then); without
# DEADLINE, a day.
left() {
  local n=$((${DEADLINE:-86400} - (SECONDS - $1)))
  echo $((n > 1 ? n : 1))  # timeout 0 would mean no limit
}

pending_tests() {
  local out="${RESULTS:-$dir}" jobs=${JOBS:-1} ids="${RESULTS:-$dir}/tests-ids" status=0
  local selection n=0 start=$SECONDS
  for selection in "$@"; do
    python3 -m pytest -q -p no:cacheprovider --collect-only "${selection%% -k *}" \
      -k "${selection#* -k }" | grep '::' >"$ids-$n"
    n=$((n + 1))
  done
  awk '!seen[$0]++' "$ids"-[0-9]* >"$ids"  # a test in two selections runs once
  split -n "r/$jobs" -d "$ids" "$out/tests-shard-"
  local shard pids=()
  for shard in "$out"/tests-shard-[0-9]*; do
    [ -s "$shard" ] || continue
    local tests=()
    mapfile -t tests <"$shard"  # ids may hold spaces: "[4-2-192-(True, False, False)]"
    timeout "$(left "$start")" python3 -m pytest -v -p no:cacheprovider "${tests[@]}" \
      --junitxml "$shard.xml" >"$shard.log" 2>&1 &
    pids+=($!)
  done
  local pid
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  # A test that failed next to JOBS - 1 others runs again alone, and the
  # re-run's outcome is its outcome: the float64 references of the large
  # jagged cases take up to ~20 GiB each, so concurrent shards can exhaust
  # the GPU's memory (torch.OutOfMemoryError; session 32, JOBS=8 on an H100).
  junit_outcomes "$out" "$ids" --failed >"$out/tests-rerun-ids"
  if [ -s "$out/tests-rerun-ids" ] && [ "$(left "$start")" -gt 30 ]; then
    local rerun=()
    mapfile -t rerun <"$out/tests-rerun-ids"
    echo "re-running ${#rerun[@]} failed test(s) alone (log: $out/tests-rerun.log)"
    status=0
    timeout "$(left "$start")" python3 -m pytest -v -p no:cacheprovider "${rerun[@]}" \
      --junitxml "$out/tests-rerun.xml" >"$out/tests-rerun.log" 2>&1 || status=1
  fi
  junit_outcomes "$out" "$ids" "$@"
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
  # dim 96 (32-byte-swizzled 16-column pieces) and at 128. Session 28: the
  # interleaved rotate_v ones at 256 with narrow_index and pinned_table_rows
  # (block_size_128_chunked_rotary; the theta ones at 192 with wide_offsets
  # take no tables, which the Python API always passes: emulated only).
  # Every sm_90a case here passed on an H100 in session 30 (43 and 14): kept
  # as the hardware check to rerun after a change to these kernels, and for
  # the sm_100a ones on compute capability 10.0. Session 31: the layer under
  # torch.compile with a causal grouped and an MQA layer (its run was cut),
  # and the allocation checks as one helper (not re-run after the refactor;
  # both passed in session 32's suite run on an H100). Session 33: the
  # large-grid variants of the sm_90a rotary kernels at head dim 128 (16
  # tiles a CTA, one CTA an SM), which the launch takes from 36 waves on:
  # passed on an H100 in session 33. Session 37: those variants retired, the
  # kernels at head dim 128 claim their tiles by default (dynamic).
  pending_tests "python/tests/gpu/test_rotary_gpu.py -k claims_its_tiles" \
    "python/tests/gpu/test_gqa_gpu.py -k block_size_128_chunked" \
    "python/tests/gpu/test_gqa_gpu.py -k wide_half_split" \
    "python/tests/gpu/test_packed_gpu.py -k compiles_fullgraph or allocates"
  ;;
suite)
  setup
  selections=()
  for file in ${FILES:-$(cd python/tests/gpu && ls test_*_gpu.py)}; do
    [ "$file" = test_sanitizers_gpu.py ] || selections+=("python/tests/gpu/$file -k test_")
  done
  pending_tests "${selections[@]}"
  ;;
timeline)
  setup
  for variant in ${VARIANTS:-interleaved+pos interleaved+pos+rv}; do
    BLOCKATTN_KERNEL_DIR="$dir/traced" python3 bench/timeline.py \
      --kernel-dir "$dir/traced" --kinds backward --rotary "$variant" \
      --out "${RESULTS:-$dir}/timeline-${variant//+/_}"
  done
  ;;
slot)
  setup
  variants=plain,half_split,half_split+pos,half_split+rv,half_split+pos+rv
  variants=$variants,interleaved,interleaved+pos,interleaved+rv,interleaved+pos+rv
  scripts/launch_sweep.sh time "$dir/slot" "${RESULTS:-$dir}/slot" seed backward "$variants" "${ROUNDS:-3}"
  scripts/launch_sweep.sh time "$dir/slot" "${RESULTS:-$dir}/slot" seed-d64 backward "$variants" "${ROUNDS:-2}"
  ;;
dynamic)
  setup
  out=${RESULTS:-$dir}/dynamic
  mkdir -p "$out"
  python3 -m pytest -q -p no:cacheprovider python/tests/gpu/test_dynamic_schedule_gpu.py
  variants=plain,half_split,half_split+pos,half_split+rv,half_split+pos+rv
  variants=$variants,interleaved,interleaved+pos,interleaved+rv,interleaved+pos+rv
  scripts/launch_sweep.sh time "$dir/dyn" "$out" seed forward,backward "$variants" "${ROUNDS:-3}"
  scripts/launch_sweep.sh time "$dir/dyn" "$out" seed-d64 forward,backward "$variants" "${ROUNDS:-2}"
  for v in base dyn; do
    BLOCKATTN_KERNEL_DIR="$dir/tr/$v" python3 bench/sm_balance.py --kernel-dir "$dir/tr/$v" \
      --kinds forward,backward --rotary none,half_split --out "$out/balance-$v.json"
  done
  ;;
variants)
  setup
  for workload in seed-b128-d32 seed-b128-d64 seed-b128 seed seed-d64; do
    scripts/launch_sweep.sh time "$dir/variants" "${RESULTS:-$dir}/variants" "$workload" \
      forward,backward plain "${ROUNDS:-2}"
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
  echo "usage: $0 pack|tests|suite|timeline|slot|dynamic|variants|timing DIR" >&2
  exit 2
  ;;
esac
