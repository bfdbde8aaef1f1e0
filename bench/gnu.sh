#!/usr/bin/env bash
# oxsort's `sort` link against GNU sort with the same command line, C and en_US.UTF-8, and
# `sort -c` on sorted lines against the read floor, measured in one session.
#
# usage: bench/gnu.sh [BYTES] [RUNS] [SCRATCH_DIR]
#   BYTES        bytes of random text lines of 10-200 printable bytes (default 4000000000)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: -S of both sorts (both also get --parallel=2 and -T SCRATCH_DIR)
#   LOCALES="C en_US.UTF-8"  environment: the locales to run
#   NONASCII=3   environment: percent of the characters that are two-byte UTF-8 letters of
#                Latin-1 (é, ß, Ü, å...), as in European text (default 3; 0: printable ASCII)
#
# oxsort runs with fresh memory (OXSORT_HUGETLB=off) and from a warm hugetlb pool of -S
# (bench/lib.sh pool_reserve); GNU sort without a pool.
# Cases: plain `sort`, and `sort -t, -k2,2n -k1,1` on lines "TEXT,NUMBER,TEXT". Targets (issue
# 11): >= 8x faster than GNU sort in C, >= 4x in en_US.UTF-8; `sort -c` <= 1.10x the read
# floor. Outputs are compared byte for byte (en_US.UTF-8 may differ where glibc's strxfrm and
# strcoll disagree, see docs/gnu-sort.md; the summary says so). The locale comes from
# target/locales when .ci/gnu-conformance built it there, else from the system.
# Raw rows go to bench/runs/<date>/gnu.csv; medians and ratios are appended to gnu-summary.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bytes=${1:-4000000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue gnu "timestamp,case,locale,tool,bytes,memory,threads,run,seconds,peak_rss_kb,floor_s,cpu_s" \
  -p oxsort-testkit --examples --bins
mkdir -p "$top/target/gnu"
ln -sf ../release/oxsort "$top/target/gnu/sort"
oxsort_sort=$top/target/gnu/sort
if [ -d "$top/target/locales/en_US.UTF-8" ]; then export LOCPATH=$top/target/locales; fi
# A locale the C library cannot load silently falls back to C for both sorts: refuse it.
for loc in ${LOCALES:-C en_US.UTF-8}; do
  if LC_ALL=$loc locale 2>&1 >/dev/null | grep -q .; then
    echo "locale $loc is not available (build it: .ci/gnu-conformance, or localedef -i ${loc%%.*} -f UTF-8 $top/target/locales/$loc)" >&2
    exit 1
  fi
done
in=$scratch/gnu.in
keyed=$scratch/gnu.keyed
o=$scratch/gnu.out
g=$scratch/gnu.gnu
rm -f "$in" "$keyed" "$o" "$g"
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt $((bytes * 4)) ] || { echo "not enough space in $scratch" >&2; exit 1; }
"$bin/examples/gen_lines" "$bytes" 11 "${NONASCII:-3}" > "$in"
floor=$("$iofloor" "$in" "$scratch" "$runs")
floor1=$(echo "$floor" | sed 's/.*"floor1_s": \([0-9.]*\).*/\1/')
read_s=$(echo "$floor" | sed 's/.*"read_s": \([0-9.]*\).*/\1/')
echo "uptime: $(uptime)" | tee -a "$out/gnu-summary.md"

summary=()
# One input on disk at a time (with the two outputs: 3 x BYTES of scratch).
for case in plain keyed; do
  if [ "$case" = keyed ]; then
    # TEXT,NUMBER,TEXT: the first 12 bytes (11 when the 12th starts a two-byte letter, so
    # no letter is cut in two), a number from the line number, the rest.
    LC_ALL=C awk '{ n = 12; if (substr($0, n, 1) ~ /^[\300-\367]$/) n = 11
      print substr($0, 1, n) "," (NR * 7919) % 1000003 "," substr($0, n + 1) }' "$in" > "$keyed"
    rm -f "$in"
  fi
  for loc in ${LOCALES:-C en_US.UTF-8}; do
    if [ "$case" = plain ]; then data=$in; args=(); else data=$keyed; args=(-t, -k2,2n -k1,1); fi
    ox=(); oxp=(); gnu=(); oxc=(); gc=()
    # oxsort with fresh memory, then from a warm hugetlb pool of -S (bench/lib.sh).
    for variant in fresh pool; do
      [ "$variant" = pool ] && pool_reserve "$memory"
      tool=$([ "$variant" = pool ] && echo oxsort-pool || echo oxsort)
      for ((i = 1; i <= runs; i++)); do
        rm -f "$o"
        read -r s m c < <(timed_variant "$variant" env LC_ALL="$loc" "$oxsort_sort" "${args[@]}" -S "$memory" --parallel=2 -T "$scratch" -o "$o" "$data")
        if [ "$variant" = pool ]; then oxp+=("$s"); else ox+=("$s"); oxc+=("$c"); fi
        echo "$(date -Iseconds),$case,$loc,$tool,$bytes,$memory,2,$i,$s,$m,$floor1,$c" >> "$csv"
      done
    done
    pool_release
    for ((i = 1; i <= runs; i++)); do
      rm -f "$g"
      read -r s m c < <(timed env LC_ALL="$loc" /usr/bin/sort "${args[@]}" -S "$memory" --parallel=2 -T "$scratch" -o "$g" "$data")
      gnu+=("$s"); gc+=("$c"); echo "$(date -Iseconds),$case,$loc,gnu-sort,$bytes,$memory,2,$i,$s,$m,$floor1,$c" >> "$csv"
    done
    same=$(cmp -s "$o" "$g" && echo identical || echo DIFFERENT)
    oxm=$(printf '%s\n' "${ox[@]}" | median)
    oxpm=$(printf '%s\n' "${oxp[@]}" | median)
    gm=$(printf '%s\n' "${gnu[@]}" | median)
    # CPU seconds (user + system) per GB of input, medians: oxsort fresh and GNU sort.
    cpu="CPU-s per GB: oxsort fresh $(per_gb "$bytes" "${oxc[@]}"), GNU sort $(per_gb "$bytes" "${gc[@]}")"
    summary+=("- $case (sort ${args[*]}), LC_ALL=$loc: GNU sort median $gm s [${gnu[*]}]; oxsort fresh memory median $oxm s [${ox[*]}]: **$(awk -v a="$gm" -v b="$oxm" 'BEGIN{printf "%.1f", a/b}') x faster**; from a hugetlb pool median $oxpm s [${oxp[*]}]: **$(awk -v a="$gm" -v b="$oxpm" 'BEGIN{printf "%.1f", a/b}') x faster**; outputs $same; $cpu")
    if [ "$loc" = C ] && [ "$case" = plain ]; then
      # -c on the sorted output: a read of the file and a comparison per line.
      chk=()
      for ((i = 1; i <= runs; i++)); do
        read -r s m c < <(timed env LC_ALL=C "$oxsort_sort" -c "$o")
        chk+=("$s"); echo "$(date -Iseconds),check,C,oxsort,$bytes,$memory,2,$i,$s,$m,$read_s,$c" >> "$csv"
      done
      cm=$(printf '%s\n' "${chk[@]}" | median)
      summary+=("- sort -c on the sorted lines, LC_ALL=C: median $cm s [${chk[*]}] = **$(awk -v a="$cm" -v b="$read_s" 'BEGIN{printf "%.2f", a/b}') x the read floor** ($read_s s; target <= 1.10)")
    fi
    rm -f "$o" "$g"
  done
done
rm -f "$in" "$keyed" "$o" "$g"; sync
{
  echo "### gnu: $bytes bytes of 10-200 byte lines (${NONASCII:-3}% two-byte letters), -S $memory --parallel=2 ($(date -Iseconds))"
  echo
  echo "- I/O floor (iofloor, median of $runs): $floor"
  printf '%s\n' "${summary[@]}"
  echo
} | tee -a "$out/gnu-summary.md"
