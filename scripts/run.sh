#!/usr/bin/env bash
#===- scripts/run.sh - `make run`: the seed kernels, both chips ------------===#
#
# 1. Prints the verified blockattn IR of examples/seed.mlir.
# 2. Compiles each seed kernel for sm_90a and sm_100a to PTX and a cubin
#    (ptxas -v) under out/<chip>/, with its launch manifest, and prints one
#    table row per kernel: warps and registers per role, registers ptxas
#    used, shared memory, TMEM columns, PTX size, compile time. A kernel the
#    compiler does not implement yet for a chip is reported as such.
#
#===----------------------------------------------------------------------===#

set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${BUILD_DIR:-build}/bin
SEED=examples/seed.mlir
KERNELS=(seed_forward seed_forward_rope seed_backward seed_backward_rope)

echo "== $SEED, parsed and verified by block-attn-opt"
"$BIN/block-attn-opt" "$SEED" || exit 1

status=0
for chip in sm_90a sm_100a; do
  echo
  echo "== $chip: $SEED -> out/$chip/<kernel>.{ptx,cubin,json}"
  printf "%-28s %-8s %-34s %5s %8s %5s %9s %8s\n" kernel chip \
    "warps/registers per role" regs smem tmem ptx compile
  for kernel in "${KERNELS[@]}"; do
    if ! log=$("$BIN/block-attn-compile" "$SEED" --chip="$chip" \
        --kernels="$kernel" -o "out/$chip" --cubin --no-header 2>&1); then
      if grep -q "not implemented yet" <<<"$log"; then
        printf "%-28s %-8s %s\n" "$kernel" "$chip" \
          "not implemented yet: $(grep -o "error: .*not implemented yet[^']*" <<<"$log" | head -1 | sed 's/error: //')"
      else
        echo "$log"
        status=1
      fi
      continue
    fi
    echo "$log"
  done
done
exit $status
