#!/usr/bin/env bash
#===- scripts/fuzz.sh - a libFuzzer campaign over the fuzz targets --------===#
#
#   scripts/fuzz.sh BUILD_DIR SECONDS_PER_TARGET "LIBFUZZER_FLAGS" TARGET...
#
# (`make fuzz` calls it.) Each target runs for SECONDS_PER_TARGET in one
# process, one after the other, from the committed seed corpus
# (fuzz/corpus/<target>, read only) plus what earlier campaigns found
# (BUILD_DIR/corpus/<target>, where new inputs go). Crashes, timeouts and
# out-of-memory inputs land in BUILD_DIR/findings/<target>/; the log of each
# run in BUILD_DIR/logs/<target>.log. Exits 1 if any target found something.
#
#===----------------------------------------------------------------------===#

set -uo pipefail
build=$1 seconds=$2 flags=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for target in "$@"; do
  exe=$build/bin/blockattn-fuzz-$target
  corpus=$build/corpus/$target findings=$build/findings/$target
  mkdir -p "$corpus" "$findings" "$build/logs"
  log=$build/logs/$target.log
  echo "fuzz: $target for ${seconds}s (log: $log)"
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "$exe" $flags -max_total_time="$seconds" \
    -artifact_prefix="$findings/" -print_final_stats=1 \
    "$corpus" "$root/fuzz/corpus/$target" >"$log" 2>&1
  rc=$?
  grep -E "^stat::number_of_executed_units|^#[0-9]+ *DONE" "$log" | tail -2
  if [[ $rc -ne 0 ]] || ls "$findings"/* >/dev/null 2>&1; then
    echo "fuzz: $target FOUND something (exit $rc): $(ls "$findings")"
    status=1
  fi
done
exit $status
