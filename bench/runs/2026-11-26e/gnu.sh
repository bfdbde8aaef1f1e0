#!/usr/bin/env bash
# gnu.sh CSV RUNS DIR: GNU sort and oxsort (input mapped, fresh memory) of DIR/rec.in (4e7
# gensort records, 4 GB) to DIR/out on the disk, alternated run by run, the page cache dropped
# and 8 s of rest before each run. GNU sort: LC_ALL=C, -S 5G, --parallel=2, temp in DIR (the
# records hold no newlines worth speaking of: GNU sorts them as lines, oxsort as 100-byte
# records; both read and write the same 4 GB). Rows: tool,run,wall,user,sys,maxrss_kb.
set -euo pipefail
csv=$1; runs=$2; dir=$3
bin=${BIN:-target/release/oxsort}
[ -s "$csv" ] || echo "tool,run,wall_s,user_s,sys_s,maxrss_kb" > "$csv"
for ((i = 1; i <= runs; i++)); do
  for tool in oxsort gnu; do
    rm -f "$dir/out"; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 8
    if [ "$tool" = gnu ]; then
      t=$(LC_ALL=C /usr/bin/time -f '%e,%U,%S,%M' sort -S 5G --parallel=2 -T "$dir" \
        -o "$dir/out" "$dir/rec.in" 2>&1 | tail -1)
    else
      t=$(/usr/bin/time -f '%e,%U,%S,%M' env OXSORT_HUGETLB=off "$bin" sort "$dir/rec.in" \
        -o "$dir/out" --memory 5G --threads 2 --no-progress 2>&1 >/dev/null | tail -1)
    fi
    echo "$tool,$i,$t" >> "$csv"
  done
done
rm -f "$dir/out"
