#!/usr/bin/env bash
# oxsort sort --lines against the I/O floor and GNU sort, measured in one session.
#
# usage: bench/lines.sh [BYTES] [RUNS] [SCRATCH_DIR]
#   BYTES        bytes of random text lines of 10-200 printable bytes (default 4000000000)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: --memory of oxsort and -S of GNU sort
#   GNU_RUNS     environment: runs of GNU sort (default RUNS; each takes minutes, 30x oxsort)
#
# Targets: oxsort --lines <= 1.35 x floor1 (iofloor's fio read + write) with a hugetlb pool, and at
# least 8 x faster than LC_ALL=C sort -S MEMORY --parallel=2. Every oxsort output is compared
# with GNU sort's (LC_ALL=C sort -s gives the same bytes) by checksum of the file.
# Raw rows go to bench/runs/<date>/lines.csv; medians and ratios are appended to summary.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bytes=${1:-4000000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue lines "timestamp,case,tool,bytes,memory,threads,run,seconds,peak_rss_kb,floor_s,cpu_s" \
  -p oxsort-testkit --examples --bins

in=$scratch/lines.in
o=$scratch/lines.out
g=$scratch/lines.gnu
rm -f "$in" "$o" "$g"
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt $((bytes * 4)) ] || { echo "not enough space in $scratch" >&2; exit 1; }
"$bin/examples/gen_lines" "$bytes" 7 > "$in"
floor=$("$iofloor" "$in" "$scratch" "$runs")
floor1=$(echo "$floor" | sed 's/.*"floor1_s": \([0-9.]*\).*/\1/')

# oxsort with fresh memory (OXSORT_HUGETLB=off), then from a warm hugetlb pool (bench/lib.sh).
ox=(); oxp=(); gnu=(); rss=(); rssp=(); cpu=(); cpup=()
for variant in fresh pool; do
  [ "$variant" = pool ] && pool_reserve "$memory"
  tool=$([ "$variant" = pool ] && echo oxsort-pool || echo oxsort)
  for ((i = 1; i <= runs; i++)); do
    rm -f "$o"
    read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort --lines "$in" -o "$o" --memory "$memory" --no-progress)
    echo "$(date -Iseconds),lines,$tool,$bytes,$memory,2,$i,$s,$m,$floor1,$c" >> "$csv"
    if [ "$variant" = pool ]; then oxp+=("$s"); rssp+=("$m"); cpup+=("$c"); else ox+=("$s"); rss+=("$m"); cpu+=("$c"); fi
  done
done
pool_release
for ((i = 1; i <= ${GNU_RUNS:-$runs}; i++)); do
  rm -f "$g"
  read -r s m c < <(timed env LC_ALL=C sort -S "$memory" --parallel=2 -T "$scratch" -o "$g" "$in")
  gnu+=("$s")
  echo "$(date -Iseconds),lines,gnu-sort,$bytes,$memory,2,$i,$s,$m,$floor1,$c" >> "$csv"
done
same=$(cmp -s "$o" "$g" && echo "identical" || echo "DIFFERENT")
rm -f "$in" "$o" "$g"; sync
oxm=$(printf '%s\n' "${ox[@]}" | median)
oxpm=$(printf '%s\n' "${oxp[@]}" | median)
gm=$(printf '%s\n' "${gnu[@]}" | median)
# CPU seconds (user + system) per GB of input, of the median CPU time.
cgb=$(per_gb "$bytes" "${cpu[@]}")
cpgb=$(per_gb "$bytes" "${cpup[@]}")
{
  echo "### lines: $bytes bytes of 10-200 byte lines, --memory $memory ($(date -Iseconds))"
  echo
  echo "- I/O floor (iofloor, median of $runs): $floor"
  echo "- oxsort sort --lines, fresh memory: median $oxm s over runs [${ox[*]}]; **$(awk -v a="$oxm" -v b="$floor1" 'BEGIN{printf "%.3f", a/b}') x floor1**; $cgb CPU-s per GB; peak memory max $(( $(printf '%s\n' "${rss[@]}" | sort -g | tail -1) / 1024 )) MiB"
  echo "- oxsort sort --lines, hugetlb pool: median $oxpm s over runs [${oxp[*]}]; **$(awk -v a="$oxpm" -v b="$floor1" 'BEGIN{printf "%.3f", a/b}') x floor1** (target <= 1.35 with a pool); $cpgb CPU-s per GB; peak memory max $(( $(printf '%s\n' "${rssp[@]}" | sort -g | tail -1) / 1024 )) MiB (RSS + pool pages in use)"
  echo "- GNU sort (LC_ALL=C, -S $memory, --parallel=2): median $gm s over runs [${gnu[*]}]; **oxsort is $(awk -v a="$gm" -v b="$oxm" 'BEGIN{printf "%.1f", a/b}') x faster** with fresh memory, **$(awk -v a="$gm" -v b="$oxpm" 'BEGIN{printf "%.1f", a/b}') x** from the pool (target >= 8); outputs $same"
  echo
} | tee -a "$out/summary.md"
