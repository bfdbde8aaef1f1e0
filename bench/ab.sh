#!/usr/bin/env bash
# A/B of two oxsort builds on the same inputs, in one session: the engine's main shapes, each
# build run alternately, the page cache dropped before every run, medians of RUNS.
#
# usage: bench/ab.sh BASE_BIN NEW_BIN [RUNS] [SCRATCH_DIR]
#   BASE_BIN, NEW_BIN  two oxsort binaries (say, target/release/oxsort of two commits)
#   RUNS               runs per build and case (default 5)
#   CASES              (environment) the cases to run, space-separated (default: all five)
#   REST               (environment) seconds to rest before each run, after the cache is dropped
#                      (default 0; 5-8 lets the host take back memory the last run freed)
#   RUN_DIR            (environment) where the rows go (default bench/runs/<date>)
#   RECORDS            (environment) gensort records of the sorts (default 40000000: 4 GB; the
#                      lines are as many bytes, each join input half as many records; a small
#                      count tries the script out)
#   VARIANT            (environment) `fresh` (default: OXSORT_HUGETLB=off, no pool) or `pool`
#                      (both builds from a hugetlb pool of 5G reserved and touched once, which
#                      takes the host's page faults out of the times; bench/lib.sh)
#
# Cases (CASES="onepass lines" limits them):
#   onepass  RECORDS gensort records (4 GB), --memory 5G
#   twopass  RECORDS gensort records, --memory 1G
#   lines    4 GB of 10-200 byte lines (gen_lines), --lines, --memory 5G
#   typed    RECORDS records, --control 'SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)', --memory 5G
#   join     bench/gcsort_join.sh's full outer JOINKEYS of two files of RECORDS/2 records (half
#            of each paired) through the --control door, --memory 5G
# Every output is compared with the other build's (byte for byte); the sorts of gensort records
# are validated against the input's checksum (and, but for typed, their order). Raw rows (wall
# and CPU seconds, peak RSS) go to RUN_DIR/ab.csv; the medians of both and the ratios new/base
# to ab-summary.md there.
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
out=${RUN_DIR:-$top/bench/runs/$(date +%Y-%m-%d)}
mkdir -p "$out"
csv=$out/ab.csv
header="timestamp,case,build,run,seconds,cpu_s,peak_rss_kb"
[ -f "$csv" ] || echo "$header" > "$csv"
[ "$(head -1 "$csv")" = "$header" ] ||
  { echo "$csv has other columns (an older ab.sh): set RUN_DIR to another directory" >&2; exit 1; }
. "$top/bench/lib.sh"
variant=${VARIANT:-fresh}
case $variant in
  fresh) ;;
  pool) pool_reserve 5G; trap pool_release EXIT ;;
  *) echo "VARIANT is fresh or pool, not $variant" >&2; exit 1 ;;
esac

ctl=$scratch/typed.ctl
printf ' SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n' > "$ctl"
records=${RECORDS:-40000000}
# Inputs are kept between runs of the script, named by their size.
fixed=$scratch/ab-fixed.$records.in
lines=$scratch/ab-lines.$records.in
[ -f "$fixed" ] || "$bin/oxsort" gen --records "$records" --quiet "$fixed"
[ -f "$lines" ] || "$bin/examples/gen_lines" $((records * 100)) 7 > "$lines"
# The input's checksum (valsort exits 1 on it: it is not sorted).
sum=$("$bin/oxsort" valsort --json "$fixed" || true)
sum=$(echo "$sum" | grep -o '"checksum":"[0-9a-f]*"' | cut -d'"' -f4)
f1=$scratch/ab-join.$records.f1
f2=$scratch/ab-join.$records.f2
jctl=$scratch/ab-join.ctl
case " ${CASES:-join} " in
  *" join "*)
    [ -f "$f1" ] || "$bin/oxsort" gen --records $((records / 2)) --quiet "$f1"
    [ -f "$f2" ] || "$bin/oxsort" gen --records $((records / 2)) --start $((records / 4)) --quiet "$f2"
    printf '%s\n' ' JOINKEYS FILE=F1,FIELDS=(1,10,A)' ' JOINKEYS FILE=F2,FIELDS=(1,10,A)' \
      ' JOIN UNPAIRED,F1,F2' " REFORMAT FIELDS=(F1:1,50,F2:51,49,?),FILL=C'*'" ' OPTION COPY' > "$jctl"
    ;;
esac

args_of() {
  case $1 in
    onepass) echo "$fixed --memory 5G" ;;
    twopass) echo "$fixed --memory 1G" ;;
    lines) echo "$lines --lines --memory 5G" ;;
    typed) echo "$fixed --control $ctl --memory 5G" ;;
    join) echo "--control $jctl --dd SORTJNF1=$f1 --dd SORTJNF2=$f2 --lrecl SORTJNF1=100 --lrecl SORTJNF2=100 --memory 5G" ;;
  esac
}

# check CASE FILE: a sort of gensort records holds the input's records (and, but for typed,
# in order); a join or the lines are compared between the builds only.
check() {
  case $1 in
    onepass | twopass) check_output "$2" "$sum" sorted ;;
    typed) check_output "$2" "$sum" ;;
  esac
}

{
  echo
  echo "## A/B $(date -Iseconds): base $base, new $new, $runs runs each, $variant memory"
  echo
  echo "| case | base median s | new median s | new / base | base CPU-s | new CPU-s | new / base CPU |"
  echo "|---|---|---|---|---|---|---|"
} >> "$out/ab-summary.md"
for case in ${CASES:-onepass twopass lines typed join}; do
  read -r -a args <<< "$(args_of "$case")"
  declare -a tb=() tn=() cb=() cn=()
  for r in $(seq 1 "$runs"); do
    # Alternate which build goes first: a sort runs slower right after another freed its
    # memory (the VM hands freed memory back to the host), so a fixed order would favour one.
    order="base new"
    [ $((r % 2)) = 0 ] && order="new base"
    for build in $order; do
      b=$([ "$build" = base ] && echo "$base" || echo "$new")
      rm -f "$scratch/ab.$build.out"
      [ "${REST:-0}" = 0 ] || { drop; sleep "$REST"; }
      read -r s m c < <(timed_variant "$variant" "$b" sort -q "${args[@]}" -o "$scratch/ab.$build.out" --no-progress)
      echo "$(date -Iseconds),$case,$build,$r,$s,$c,$m" >> "$csv"
      check "$case" "$scratch/ab.$build.out"
      if [ "$build" = base ]; then tb+=("$s"); cb+=("$c"); else tn+=("$s"); cn+=("$c"); fi
    done
    cmp -s "$scratch/ab.base.out" "$scratch/ab.new.out" || { echo "$case: outputs differ" >&2; exit 1; }
    rm -f "$scratch/ab.base.out" "$scratch/ab.new.out"
    sync
  done
  mb=$(printf '%s\n' "${tb[@]}" | median)
  mn=$(printf '%s\n' "${tn[@]}" | median)
  cmb=$(printf '%s\n' "${cb[@]}" | median)
  cmn=$(printf '%s\n' "${cn[@]}" | median)
  echo "| $case | $mb [${tb[*]}] | $mn [${tn[*]}] | $(ratio "$mn" "$mb") | $cmb | $cmn | $(ratio "$cmn" "$cmb") |" >> "$out/ab-summary.md"
  echo "$case base $mb s $cmb CPU-s, new $mn s $cmn CPU-s" >&2
done
