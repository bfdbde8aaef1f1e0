#!/usr/bin/env bash
# oxsort with typed keys, against plain oxsort sort and the I/O floor, measured in one session.
#
# usage: bench/typed.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      gensort records per case, an integer (default 40000000 = 4 GB; a small count to try the
#                script out)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: --memory of every sort (5G keeps 4e7 records in one pass)
#   NO_DROP=1    environment: smoke run, the page cache is not dropped and the floor not
#                measured (bench/lib.sh); the times mean nothing
#
# Cases, both one pass on the same gensort input:
#   fields  oxsort sort --fields 1,10,CH,A  vs  plain oxsort sort       target ratio <= 1.05
#           (the benchmark key spelled as a DFSORT key must take the same fast path)
#   typed   --control 'SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)'  vs  floor1_s
#           target <= 1.35 with a hugetlb pool (normalized multi-field keys against the one-pass
#           floor)
#
# Every run starts with the page cache dropped (run as root). The floor is
# ../shared/tools/iofloor on the same input. Peak RSS comes from /usr/bin/time. Outputs are
# checked with valsort: the --fields and plain outputs must be sorted with the input's
# checksum; the typed output must have the input's checksum (valsort knows only the 10-byte
# key; the order by the typed key is verified by oxsort itself as it writes).
# Raw rows go to bench/runs/<date>/typed.csv; medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-40000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue typed "timestamp,case,tool,records,bytes,memory,threads,run,seconds,peak_rss_kb,floor_s,cpu_s"
row() { # case tool run seconds rss floor cpu
  echo "$(date -Iseconds),$1,$2,$records,$((records * 100)),$memory,$threads,$3,$4,$5,$6,$7" >> "$csv"
}
# measure CASE TOOL CHECK FLOOR ARGS...: RUNS timed sorts of $in into $o; prints the median
measure() {
  local case=$1 tool=$2 how=$3 fl=$4
  shift 4
  local times=() rss=() cpu=() s m c i
  for ((i = 1; i <= runs; i++)); do
    rm -f "$o"
    read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort "$in" -o "$o" --memory "$memory" --no-progress "$@")
    check_output "$o" "$sum" "$how"
    times+=("$s"); rss+=("$m"); cpu+=("$c"); row "$case" "$tool" "$i" "$s" "$m" "$fl" "$c"
  done
  # One word per field: median, [runs joined by commas], peak RSS, CPU-s per GB (of the median
  # CPU time).
  local joined
  joined=$(IFS=,; echo "${times[*]}")
  echo "$(printf '%s\n' "${times[@]}" | median) [$joined] $(printf '%s\n' "${rss[@]}" | sort -g | tail -1)" \
    "$(per_gb $((records * 100)) "${cpu[@]}")"
}

in=$scratch/typed.in
o=$scratch/typed.out
ctl=$scratch/typed.ctl
rm -f "$in" "$o"
need=$((records * 100 * 3 + (1 << 30)))
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space in $scratch" >&2; exit 1; }
sum=$("$bin/oxsort" gen --records "$records" --checksum --quiet "$in" | tail -1)
floor=$(floor_json "$in" "$scratch" "$runs")
floor1=$(json_num floor1_s "$floor")
printf '* typed keys: region descending, amount, then the benchmark key\n SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n' > "$ctl"

for variant in fresh pool; do
  [ "$variant" = pool ] && pool_reserve "$memory"
  sfx=$([ "$variant" = pool ] && echo -pool || true)
  read -r plain_m plain_runs plain_rss plain_c < <(measure fields "plain$sfx" sorted "$floor1")
  read -r fields_m fields_runs fields_rss fields_c < <(measure fields "fields-1-10-CH-A$sfx" sorted "$floor1" --fields 1,10,CH,A)
  read -r typed_m typed_runs typed_rss typed_c < <(measure typed "control-BI-FI-CH$sfx" checksum "$floor1" --control "$ctl")
  [ "$variant" = pool ] && pool_release
  {
    echo "### typed keys: $records records, --memory $memory, $variant memory ($(date -Iseconds))"
    echo
    echo "- I/O floor (iofloor, median of $runs): $floor"
    echo "- plain oxsort sort: median $plain_m s over runs $plain_runs; $plain_c CPU-s per GB; peak memory max $((plain_rss / 1024)) MiB"
    echo "- --fields 1,10,CH,A: median $fields_m s over runs $fields_runs; $fields_c CPU-s per GB; peak memory max $((fields_rss / 1024)) MiB; **$(ratio "$fields_m" "$plain_m") x plain** (target <= 1.05)"
    echo "- SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A): median $typed_m s over runs $typed_runs; $typed_c CPU-s per GB; peak memory max $((typed_rss / 1024)) MiB; **$(ratio "$typed_m" "$floor1") x floor1** (target <= 1.35 with a pool)"
    echo
  } | tee -a "$summary"
done
rm -f "$in" "$o" "$ctl"; sync
