#!/usr/bin/env bash
# usage: ab_lines.sh RUNS LOCALE CSV [sort args...]: base and new `sort` links alternated,
# fresh memory, cache dropped and 8 s rest before each run.
runs=$1; loc=$2; csv=$3; shift 3
in=/work/main/bench/scratch/gnu.in; o=/work/main/bench/scratch/ab.out
export LOCPATH=/work/main/target/locales
for ((i=1;i<=runs;i++)); do
  for b in base new; do
    rm -f $o; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 8
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o /tmp/ab.time env LC_ALL=$loc OXSORT_HUGETLB=off /work/bin/$b/sort "$@" -S 5G --parallel=2 -T /work/main/bench/scratch -o $o $in
    t1=$(date +%s%N)
    read -r u s m < /tmp/ab.time
    sum=$(md5sum < $o | cut -c1-8)
    echo "$(date -Iseconds),$loc,$*,$b,$i,$(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f",(b-a)/1e9}'),$u,$s,$m,$sum" | tee -a $csv
  done
done
rm -f $o
