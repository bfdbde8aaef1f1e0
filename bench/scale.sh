#!/usr/bin/env bash
# The scale curve: seconds per GB of two-pass sorts of growing inputs, with a fixed memory budget,
# measured in one session. The cost per GB must stay flat (within 10% of the mean) and the plan
# must keep the merge to one level.
#
# usage: bench/scale.sh [RECORDS...]   (default: 1e7 4e7 1e8 2e8 = 1, 4, 10, 20 GB)
#   RUNS=3        runs per size (medians reported)
#   MEMORY=1G     --memory of every sort (two passes from 1 GB up)
#   SCRATCH=bench/scratch   where data goes (input + output + runs: 3x the largest input)
#
# Each size: gensort records, `oxsort explain` (passes and merge levels recorded), RUNS sorts with
# the page cache dropped before each (fresh memory, no hugetlb pool), every output checked by
# valsort against the input's checksum. The disk's floor is ../shared/tools/iofloor's floor2_s
# measured on the 4e7-record input (or the first size at least as big) and scaled by size: the
# disk's rate does not depend on the file's size, and measuring 20 GB three ways would take
# longer than the sorts.
# Raw rows go to bench/runs/<date>/scale.csv; the table to summary.md and the plot to
# scale.svg there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000000 40000000 100000000 200000000)
runs=${RUNS:-3}
memory=${MEMORY:-1G}
scratch=${SCRATCH:-$top/bench/scratch}
. "$top/bench/lib.sh"
bench_prologue scale "timestamp,records,bytes,memory,passes,merge_levels,runs_formed,run,seconds,peak_rss_kb,floor2_s"

floor2_per_byte=""
rows=()
for records in "${sizes[@]}"; do
  records=$(printf '%.0f' "$records")
  bytes=$((records * 100))
  in=$scratch/scale.in
  o=$scratch/scale.out
  rm -f "$in" "$o"
  need=$((bytes * 3 + (1 << 30)))
  [ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space for $records records in $scratch" >&2; exit 1; }
  sum=$("$bin/oxsort" gen --records "$records" --checksum --quiet "$in" | tail -1)
  plan=$("$bin/oxsort" explain "$in" -o "$o" --memory "$memory" --json)
  read -r passes levels formed < <(python3 -c '
import json, sys
p = json.load(sys.stdin)["passes"]
levels = len(p.get("schedule", {}).get("levels", []))
print(1 if p["kind"] == "one" else 1 + levels, levels, p.get("runs", 0))' <<<"$plan")
  if [ -z "$floor2_per_byte" ] && [ "$records" -ge 40000000 ]; then
    f2=$("$iofloor" "$in" "$scratch" 3 | sed 's/.*"floor2_s": *\([0-9.]*\).*/\1/')
    floor2_per_byte=$(awk -v f="$f2" -v b="$bytes" 'BEGIN{printf "%.6e", f/b}')
    echo "floor2 ${f2} s for $bytes bytes" >&2
  fi
  times=()
  for ((i = 1; i <= runs; i++)); do
    rm -f "$o"; sync
    read -r s m c < <(timed env OXSORT_HUGETLB=off "$bin/oxsort" sort "$in" -o "$o" --memory "$memory" --no-progress)
    check_output "$o" "$sum" sorted
    times+=("$s")
    echo "$(date -Iseconds),$records,$bytes,$memory,$passes,$levels,$formed,$i,$s,$m,${floor2_per_byte:+$(awk -v f="$floor2_per_byte" -v b="$bytes" 'BEGIN{printf "%.3f", f*b}')}" >> "$csv"
  done
  rm -f "$in" "$o"; sync
  rows+=("$records $bytes $passes $levels $formed $(printf '%s\n' "${times[@]}" | median) ${times[*]}")
done
[ -n "$floor2_per_byte" ] || { echo "no size of 4e7 records or more: no floor" >&2; exit 1; }

{
  echo
  echo "## bench/scale.sh: two passes, --memory $memory, fresh memory ($(date -Iseconds))"
  echo
  echo "uptime: $(uptime). floor2 (iofloor, median of 3) scaled from the 4 GB input: $(awk -v f="$floor2_per_byte" 'BEGIN{printf "%.3f", f*1e9}') s per GB."
  echo
  echo "| GB | runs formed | merge levels | median s | s per GB | x mean s/GB | x floor2 | runs (s) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}" | awk -v f="$floor2_per_byte" '
    { n++; gb[n]=$2/1e9; formed[n]=$5; lv[n]=$4; med[n]=$6; per[n]=$6/gb[n]; sum+=per[n]
      r=""; for (i=7; i<=NF; i++) r=r (i>7?" ":"") $i; rs[n]=r }
    END { mean=sum/n; worst=0
      for (i=1; i<=n; i++) { d=per[i]/mean; if (d<1) d=2-d; if (d>worst) worst=d
        printf "| %g | %d | %d | %.2f | %.3f | %.3f | %.3f | %s |\n", gb[i], formed[i], lv[i], med[i], per[i], per[i]/mean, med[i]/(f*gb[i]*1e9), rs[i] }
      printf "\nMean %.3f s per GB; the farthest size is %.1f%% from it (target: within 10%%).\n", mean, (worst-1)*100 }'
} | tee -a "$out/summary.md"

# The plot: seconds per GB against size, the mean and the ±10% band, and floor2 per GB.
printf '%s\n' "${rows[@]}" | python3 "$top/bench/plot_scale.py" "$floor2_per_byte" > "$out/scale.svg"
echo "plot: $out/scale.svg" >&2
