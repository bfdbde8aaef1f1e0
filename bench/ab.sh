#!/usr/bin/env bash
# A/B of two oxsort builds on the same inputs, in one session: the engine's main shapes, each
# build run alternately, the page cache dropped before every run, medians of RUNS.
#
# usage: bench/ab.sh BASE_BIN NEW_BIN [RUNS] [SCRATCH_DIR]
#   BASE_BIN, NEW_BIN  two oxsort binaries (say, target/release/oxsort of two commits)
#   RUNS               runs per build and case (default 5)
#   CASES              (environment) the cases to run, space-separated (default: all four)
#   VARIANT            (environment) `fresh` (default: OXSORT_HUGETLB=off, no pool) or `pool`
#                      (both builds from a hugetlb pool of 5G reserved and touched once, which
#                      takes the host's page faults out of the times; bench/lib.sh)
#
# Cases (CASES="onepass lines" limits them):
#   onepass  4e7 gensort records (4 GB), --memory 5G
#   twopass  4e7 gensort records, --memory 1G
#   lines    4 GB of 10-200 byte lines (gen_lines), --lines, --memory 5G
#   typed    4e7 records, --control 'SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)', --memory 5G
# Every output is compared with the other build's (byte for byte) and the fixed-record ones
# validated against the input's checksum. Raw rows go to bench/runs/<date>/ab.csv; medians and
# the ratio new/base to ab-summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
base=$1
new=$2
runs=${3:-5}
scratch=${4:-$top/bench/scratch}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli -p oxsort-testkit --examples --bins >&2
bin=$top/target/release
mkdir -p "$scratch"
out=$top/bench/runs/$(date +%Y-%m-%d)
mkdir -p "$out"
csv=$out/ab.csv
[ -f "$csv" ] || echo "timestamp,case,build,run,seconds,peak_rss_kb" > "$csv"
. "$top/bench/lib.sh"
variant=${VARIANT:-fresh}
case $variant in
  fresh) ;;
  pool) pool_reserve 5G; trap pool_release EXIT ;;
  *) echo "VARIANT is fresh or pool, not $variant" >&2; exit 1 ;;
esac

ctl=$scratch/typed.ctl
printf ' SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n' > "$ctl"
fixed=$scratch/ab-fixed.in
lines=$scratch/ab-lines.in
[ -f "$fixed" ] || "$bin/oxsort" gen --records 4e7 --quiet "$fixed"
[ -f "$lines" ] || "$bin/examples/gen_lines" 4000000000 7 > "$lines"

args_of() {
  case $1 in
    onepass) echo "$fixed --memory 5G" ;;
    twopass) echo "$fixed --memory 1G" ;;
    lines) echo "$lines --lines --memory 5G" ;;
    typed) echo "$fixed --control $ctl --memory 5G" ;;
  esac
}

{
  echo
  echo "## A/B $(date -Iseconds): base $base, new $new, $runs runs each, $variant memory"
  echo
  echo "| case | base median s | new median s | new / base |"
  echo "|---|---|---|---|"
} >> "$out/ab-summary.md"
for case in ${CASES:-onepass twopass lines typed}; do
  read -r -a args <<< "$(args_of "$case")"
  declare -a tb=() tn=()
  for r in $(seq 1 "$runs"); do
    # Alternate which build goes first: a sort runs slower right after another freed its
    # memory (the VM hands freed memory back to the host), so a fixed order would favour one.
    order="base new"
    [ $((r % 2)) = 0 ] && order="new base"
    for build in $order; do
      b=$([ "$build" = base ] && echo "$base" || echo "$new")
      rm -f "$scratch/ab.$build.out"
      read -r s m c < <(timed_variant "$variant" "$b" sort "${args[@]}" -o "$scratch/ab.$build.out" --no-progress)
      echo "$(date -Iseconds),$case,$build,$r,$s,$m" >> "$csv"
      if [ "$build" = base ]; then tb+=("$s"); else tn+=("$s"); fi
    done
    cmp -s "$scratch/ab.base.out" "$scratch/ab.new.out" || { echo "$case: outputs differ" >&2; exit 1; }
    rm -f "$scratch/ab.base.out" "$scratch/ab.new.out"
    sync
  done
  mb=$(printf '%s\n' "${tb[@]}" | median)
  mn=$(printf '%s\n' "${tn[@]}" | median)
  echo "| $case | $mb [${tb[*]}] | $mn [${tn[*]}] | $(awk -v a="$mn" -v b="$mb" 'BEGIN{printf "%.3f", a/b}') |" >> "$out/ab-summary.md"
  echo "$case base $mb new $mn" >&2
done
