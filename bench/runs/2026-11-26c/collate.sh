#!/usr/bin/env bash
# The sort link against GNU sort in en_US.UTF-8 on 1 GB of 10-200 byte lines with 3% two-byte
# letters (gen_lines BYTES 11 3), plain and keyed (-t, -k2,2n -k1,1 on TEXT,NUMBER,TEXT as
# bench/gnu.sh makes them), -S 2G --parallel=2, fresh memory (OXSORT_HUGETLB=off), page cache
# dropped before each run, tools interleaved run by run. CPU seconds from /usr/bin/time.
# usage: collate.sh OXSORT_LINK BASE_LINK SCRATCH [BYTES] [RUNS] > collate.csv
set -euo pipefail
ox=$1 base=$2 scratch=$3 bytes=${4:-1000000000} runs=${5:-3}
top=$(cd "$(dirname "$0")/../../.." && pwd)
in=$scratch/c.in keyed=$scratch/c.keyed
"$top/target/release/examples/gen_lines" "$bytes" 11 3 > "$in"
LC_ALL=C awk '{ n = 12; if (substr($0, n, 1) ~ /^[\300-\367]$/) n = 11
  print substr($0, 1, n) "," (NR * 7919) % 1000003 "," substr($0, n + 1) }' "$in" > "$keyed"
echo "timestamp,case,locale,tool,bytes,run,wall_s,user_s,sys_s,peak_rss_kb,load1"
for case in plain keyed; do
  if [ "$case" = plain ]; then data=$in; args=(); else data=$keyed; args=(-t, -k2,2n -k1,1); fi
  for ((i = 1; i <= runs; i++)); do
    for tool in oxsort oxsort-base gnu-sort; do
      case $tool in oxsort) bin=$ox ;; oxsort-base) bin=$base ;; gnu-sort) bin=/usr/bin/sort ;; esac
      sync; echo 3 > /proc/sys/vm/drop_caches
      load=$(cut -d' ' -f1 /proc/loadavg)
      t=$( { /usr/bin/time -f "%e,%U,%S,%M" env OXSORT_HUGETLB=off LC_ALL=en_US.UTF-8 "$bin" "${args[@]}" \
            -S 2G --parallel=2 -T "$scratch" -o "$scratch/$tool.out" "$data" 2>&1 >/dev/null; } | tail -1)
      echo "$(date -Iseconds),$case,en_US.UTF-8,$tool,$bytes,$i,$t,$load"
    done
  done
  for tool in oxsort oxsort-base; do
    cmp -s "$scratch/$tool.out" "$scratch/gnu-sort.out" && echo "# $case: $tool output identical to GNU sort's" >&2 \
      || echo "# $case: $tool output DIFFERS from GNU sort's" >&2
  done
done
rm -f "$in" "$keyed" "$scratch"/*.out
