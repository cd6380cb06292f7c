#!/usr/bin/env bash
# A sweep of block-attn-compile options over a set of kernels, timed against
# the defaults: how the launch and layout choices of Plan.cpp were measured
# (docs/performance-notes.md, e.g. run 23 of the rotary log).
#
# On the build machine (the repository built), one kernel directory per
# variant ("NAME:OPTIONS"; "base:" is the defaults), each holding the kernels
# that prebuild_kernels.py's arguments after "--" select (add --no-small-grid,
# so that the launch cannot swap in a variant built with other options; every kernel the timed variants launch must be there: none
# compiles later):
#   scripts/launch_sweep.sh build DIR "base:" \
#       "c16:--schedule=chunked --ctas-per-sm=1 --tiles-per-cta=16" -- \
#       --head-dims 128 --kinds forward,backward --dtypes bf16 --no-small-grid \
#       --rotary none,half_split,interleaved --rotary-variants plain,pos,rv,pos_rv
# On the GPU machine (DIR carried there), ROUNDS rounds through the variants,
# each one bench/profile_rotary.py --time --batch $BATCH process (default 0:
# the whole workload; N: its first N sequences), alternated so
# that a drift of the GPU's clock or temperature hits every variant alike;
# the medians go to OUT/WORKLOAD-KINDS-NAME-rROUND.json and a table of the
# means (ratio to the plain kernel of the variant "base", else of the first
# by name) to the output:
#   scripts/launch_sweep.sh time DIR OUT seed forward,backward \
#       plain,half_split,interleaved+pos+rv [ROUNDS]
set -euo pipefail
cmd=${1:?usage: $0 build DIR NAME:OPTIONS... -- PREBUILD_ARGS | time DIR OUT WORKLOAD KINDS VARIANTS [ROUNDS]}
dir=${2:?missing DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
shift 2

case "$cmd" in
build)
  compiler=${BLOCKATTN_COMPILER:-$root/build/bin/block-attn-compile}
  variants=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  mkdir -p "$dir/wrappers"
  for variant in "${variants[@]}"; do
    name=${variant%%:*} options=${variant#*:}
    wrapper="$dir/wrappers/$name.sh"
    printf '#!/bin/sh\nexec %q "$@" %s\n' "$compiler" "$options" >"$wrapper"
    chmod +x "$wrapper"
    python3 "$root/scripts/prebuild_kernels.py" "$dir/kernels/$name" \
      --compiler "$(cd "$dir/wrappers" && pwd)/$name.sh" "$@" >"$dir/$name.log" 2>&1 ||
      { echo "launch_sweep: $name failed to build (log: $dir/$name.log)" >&2; exit 1; }
    python3 "$root/scripts/check_spills.py" "$dir/kernels/$name"
  done
  ;;
time)
  out=${1:?missing OUT} workload=${2:?missing WORKLOAD} kinds=${3:?missing KINDS}
  kernel_variants=${4:?missing VARIANTS} rounds=${5:-2}
  mkdir -p "$out"
  names=()
  for d in "$dir"/kernels/*/; do names+=("$(basename "$d")"); done
  for round in $(seq 1 "$rounds"); do
    for name in "${names[@]}"; do
      echo "== round $round: $name"
      # Only the variant's kernels: one it lacks must fail, not compile on
      # first use with the default options (an empty cache, no compiler).
      BLOCKATTN_KERNEL_DIR="$dir/kernels/$name" PYTHONPATH="$root/python" \
        BLOCKATTN_CACHE_DIR="$(mktemp -d)" BLOCKATTN_COMPILER=/nonexistent/block-attn-compile \
        python3 "$root/bench/profile_rotary.py" --time --batch "${BATCH:-0}" --workload "$workload" \
        --kinds "$kinds" --variants "$kernel_variants" \
        --json "$out/$workload-${kinds//,/+}-$name-r$round.json" ||
        echo "launch_sweep: $name, round $round failed" >&2
    done
  done
  python3 - "$out" "$workload-${kinds//,/+}" "${names[@]}" <<'PY'
import json, sys
out, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
import glob
means = {}
for name in names:
    runs = [json.load(open(f))["ms"] for f in sorted(glob.glob(f"{out}/{prefix}-{name}-r*.json"))]
    if runs:  # a variant whose every run failed has none
        means[name] = {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}
names = [n for n in names if n in means]
if not names:
    sys.exit("launch_sweep: no timings")
reference = "base" if "base" in means else names[0]
first = means[reference]
print(f"ms (ratio to {reference}'s plain kernel of the same kind)")
print(f"{'kernel':28}" + "".join(f"{n:>18}" for n in names))
for label in first:
    kind = label.split("/")[1]
    plain = first.get(f"plain/{kind}")
    cells = []
    for n in names:
        ms = means[n][label]
        cells.append(f"{ms:.3f}" + (f" ({ms / plain:.3f})" if plain else ""))
    print(f"{label:28}" + "".join(f"{c:>18}" for c in cells))
PY
  ;;
*)
  echo "usage: $0 build|time ..." >&2
  exit 2
  ;;
esac
