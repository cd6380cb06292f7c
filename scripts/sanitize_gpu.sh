#!/usr/bin/env bash
#===- scripts/sanitize_gpu.sh - compute-sanitizer over the GPU kernels ----===#
#
# Runs python/tests/gpu/sanitize_driver.py (every forward and backward kernel
# the GPU tests use, on one jagged batch) under compute-sanitizer's four tools
# and writes one log per tool into LOG_DIR (default: sanitize-logs/):
#
#   BLOCKATTN_KERNEL_DIR=$PWD/.prebuilt scripts/sanitize_gpu.sh [LOG_DIR]
#
# memcheck (host API errors left out), synccheck and racecheck look at the
# blockattn kernels only (--kernel-name kns=blockattn); initcheck looks at
# every kernel, since its findings show up in the kernel that reads our
# outputs: once as a user's call runs (initcheck-raw) and once with outputs
# allocated initialized (initcheck-poisoned). docs/sanitizers.md reads the
# results; python/tests/gpu/test_sanitizers_gpu.py checks them.
#
#===----------------------------------------------------------------------===#
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_DIR=${1:-sanitize-logs}
SANITIZER=${SANITIZER:-compute-sanitizer}
command -v "$SANITIZER" >/dev/null || SANITIZER=/usr/local/cuda/bin/compute-sanitizer
mkdir -p "$LOG_DIR"
export PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH}
DRIVER=(python3 -m tests.gpu.sanitize_driver)
status=0
run() {  # run TOOL LOGNAME [sanitizer flags...] -- [driver flags...]
  local tool=$1 log=$2; shift 2
  local flags=() driver=()
  while [[ $# -gt 0 && $1 != -- ]]; do flags+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  driver=("$@")
  echo "== $tool ($log)"
  (cd python && "$SANITIZER" --tool "$tool" --error-exitcode 1 "${flags[@]}" \
      "${DRIVER[@]}" "${driver[@]}") >"$LOG_DIR/$log.log" 2>&1
  local rc=$?
  tail -n 3 "$LOG_DIR/$log.log"
  echo "   exit $rc"
  [[ $rc -eq 0 ]] || status=1
}
run memcheck memcheck --report-api-errors no --kernel-name kns=blockattn --
run synccheck synccheck --kernel-name kns=blockattn --
run racecheck racecheck --kernel-name kns=blockattn --racecheck-report all --
run initcheck initcheck-raw --
run initcheck initcheck-poisoned -- --out-mode poisoned
exit $status
