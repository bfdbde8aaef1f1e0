#!/usr/bin/env bash
# oxsort sort end-to-end against the I/O floor and GNU sort, measured in the same session.
#
# usage: bench/sort.sh [CASES] [RUNS] [SCRATCH_DIR]
#   CASES        comma-separated, default onepass,twopass4,twopass,gnu:
#                  onepass   4e7 gensort records (4 GB), --memory 5G    floor1   targets: pool <= 1.25,
#                                                                                fresh <= 1.9
#                  twopass4  4e7 records, --memory 1G                   floor2   target <= 1.15
#                  twopass   1e8 gensort records (10 GB), --memory 1G   floor2   target <= 1.15
#                  gnu       4e7 gensort -a records; oxsort vs LC_ALL=C sort -S 5G --parallel=2
#   RUNS         runs per measurement (default 3; medians reported)
#   SORT_FLAGS   environment: more flags for every oxsort sort (e.g. "--passes one"); they are
#                added to the tool's name in the CSV and the summary
#   SCRATCH_DIR  where data goes (default bench/scratch)
#
# oxsort runs twice per case: with fresh memory (OXSORT_HUGETLB=off, no pool), and from a hugetlb
# pool of --memory reserved and touched once before the timed runs (bench/lib.sh pool_reserve;
# why: crates/oxsort-io/src/bigmem.rs). GNU sort runs without a pool.
# Every run starts with the page cache dropped (run as root). The floor is
# ../shared/tools/iofloor on the same input (fio: O_DIRECT, 4 MiB transfers, 16 in flight):
# floor1_s for a one-pass case, floor2_s for a two-pass one. Peak RSS comes
# from /usr/bin/time. Every oxsort output is checked with valsort against the input's checksum.
# Raw rows go to bench/runs/<date>/sort.csv; medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cases=${1:-onepass,twopass4,twopass,gnu}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
. "$top/bench/lib.sh"
bench_prologue sort "timestamp,case,tool,records,bytes,memory,threads,run,seconds,peak_rss_kb,floor_s,cpu_s"
row() { # case tool records memory run seconds rss floor cpu
  echo "$(date -Iseconds),$1,$2,$3,$(($3 * 100)),$4,2,$5,$6,$7,$8,$9" >> "$csv"
}

run_case() { # name records kind memory passes
  local name=$1 records=$2 kind=$3 memory=$4 passes=$5
  local in=$scratch/$name.in out=$scratch/$name.out
  rm -f "$in" "$out"
  local need=$((records * 100 * 3 + (1 << 30)))
  [ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space for $name" >&2; exit 1; }
  local sum
  sum=$("$bin/oxsort" gen --records "$records" $kind --checksum --quiet "$in" | tail -1)
  local floor fl
  floor=$("$iofloor" "$in" "$scratch" "$runs")
  fl=$(echo "$floor" | sed "s/.*\"floor${passes}_s\": \([0-9.]*\).*/\1/")
  # oxsort twice: with fresh memory (no pool; OXSORT_HUGETLB=off), then from a warm hugetlb pool.
  local ox=() rss=() oxp=() rssp=() cpu=() cpup=() variant tool
  for variant in fresh pool; do
    [ "$variant" = pool ] && pool_reserve "$memory"
    tool=$([ "$variant" = pool ] && echo oxsort-pool || echo oxsort)${SORT_FLAGS:+ $SORT_FLAGS}
    for ((i = 1; i <= runs; i++)); do
      rm -f "$out"
      read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort "$in" -o "$out" --memory "$memory" --no-progress ${SORT_FLAGS:-})
      check_output "$out" "$sum" sorted
      row "$name" "$tool" "$records" "$memory" "$i" "$s" "$m" "$fl" "$c"
      if [ "$variant" = pool ]; then oxp+=("$s"); rssp+=("$m"); cpup+=("$c"); else ox+=("$s"); rss+=("$m"); cpu+=("$c"); fi
    done
  done
  pool_release
  local gnu=()
  if [ "$name" = gnu ]; then
    for ((i = 1; i <= runs; i++)); do
      rm -f "$out"
      read -r s m c < <(timed env LC_ALL=C sort -S "$memory" --parallel=2 -T "$scratch" -o "$out" "$in")
      gnu+=("$s"); row "$name" gnu-sort "$records" "$memory" "$i" "$s" "$m" "$fl" "$c"
    done
  fi
  rm -f "$in" "$out"; sync
  local oxm rssm gm oxpm rsspm
  oxm=$(printf '%s\n' "${ox[@]}" | median)
  rssm=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
  oxpm=$(printf '%s\n' "${oxp[@]}" | median)
  rsspm=$(printf '%s\n' "${rssp[@]}" | sort -g | tail -1)
  # CPU seconds (user + system) per GB of input, of the median CPU time.
  local cgb cpgb
  cgb=$(per_gb $((records * 100)) "${cpu[@]}")
  cpgb=$(per_gb $((records * 100)) "${cpup[@]}")
  {
    echo "### $name: $records records, --memory $memory ${SORT_FLAGS:-} ($(date -Iseconds))"
    echo
    echo "- I/O floor (iofloor, median of $runs): $floor; floor$passes = $fl s"
    echo "- oxsort sort, fresh memory: median $oxm s over runs [${ox[*]}]; **$(awk -v a="$oxm" -v b="$fl" 'BEGIN{printf "%.3f", a/b}') x floor$passes**; $cgb CPU-s per GB; peak memory max $((rssm / 1024)) MiB"
    echo "- oxsort sort, hugetlb pool: median $oxpm s over runs [${oxp[*]}]; **$(awk -v a="$oxpm" -v b="$fl" 'BEGIN{printf "%.3f", a/b}') x floor$passes**; $cpgb CPU-s per GB; peak memory max $((rsspm / 1024)) MiB (RSS + pool pages in use)"
    if [ ${#gnu[@]} -gt 0 ]; then
      gm=$(printf '%s\n' "${gnu[@]}" | median)
      echo "- GNU sort (LC_ALL=C, -S $memory, --parallel=2): median $gm s over runs [${gnu[*]}]; **oxsort is $(awk -v a="$gm" -v b="$oxm" 'BEGIN{printf "%.1f", a/b}') x faster** with fresh memory, **$(awk -v a="$gm" -v b="$oxpm" 'BEGIN{printf "%.1f", a/b}') x** from the pool"
    fi
    echo
  } | tee -a "$summary"
}

IFS=, read -ra list <<< "$cases"
for c in "${list[@]}"; do
  case $c in
    onepass) run_case onepass 40000000 "" 5G 1 ;;
    twopass4) run_case twopass4 40000000 "" 1G 2 ;;
    twopass) run_case twopass 100000000 "" 1G 2 ;;
    gnu) run_case gnu 40000000 --ascii 5G 1 ;;
    *) echo "unknown case $c" >&2; exit 1 ;;
  esac
done
