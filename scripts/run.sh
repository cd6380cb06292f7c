#!/usr/bin/env bash
#===- scripts/run.sh - `make run`: the seed kernels, both chips ------------===#
#
# 1. Prints the verified blockattn IR of examples/seed.mlir.
# 2. Compiles each seed kernel for sm_90a and sm_100a to PTX and a cubin
#    (ptxas -v) under out/<chip>/, with its launch manifest, and prints one
#    table row per kernel: warps and registers per role, registers ptxas
#    used, shared memory, TMEM columns, PTX size, compile time. A kernel the
#    compiler does not implement yet for a chip is reported as such.
# 3. The same table for a few other configurations, described by
#    block-attn-compile's flags (block sizes, head dims, causal blocks, the
#    log-sum-exp, grouped-query attention), under out/<chip>/shapes/.
#
#===----------------------------------------------------------------------===#

set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${BUILD_DIR:-build}/bin
SEED=examples/seed.mlir
KERNELS=(seed_forward seed_forward_rope seed_backward seed_backward_rope)
# Other configurations (issues 20 and 21), as block-attn-compile flags; the
# names say what each one is.
SHAPES=(
  "--kind=forward --block-size=16"
  "--kind=backward --block-size=32"
  "--kind=forward --block-size=128"
  "--kind=forward --head-dim=32"
  "--kind=backward --head-dim=32"
  "--kind=forward --head-dim=96"
  "--kind=backward --head-dim=96"
  "--kind=forward --causal --lse"
  "--kind=backward --causal"
  "--kind=forward --group=4 --heads=8"
)

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

for chip in sm_90a sm_100a; do
  echo
  echo "== $chip: other configurations -> out/$chip/shapes/<kernel>.{ptx,cubin,json}"
  printf "%-44s %-8s %-34s %5s %8s %5s %9s %8s\n" kernel chip \
    "warps/registers per role" regs smem tmem ptx compile
  for flags in "${SHAPES[@]}"; do
    # shellcheck disable=SC2086 # the flags are words
    if ! log=$("$BIN/block-attn-compile" $flags --chip="$chip" \
        -o "out/$chip/shapes" --cubin --no-header 2>&1); then
      echo "block-attn-compile $flags --chip=$chip failed:"
      echo "$log"
      status=1
      continue
    fi
    # The compiler's row sizes the name for the seed kernels' names: widen it.
    awk '!/^blockattn_/ { print; next }
         { roles = $3; for (i = 4; i <= NF - 5; i++) roles = roles " " $i
           printf "%-44s %-8s %-34s %5s %8s %5s %9s %8s\n", $1, $2, roles, $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF }' <<<"$log"
  done
done
exit $status
