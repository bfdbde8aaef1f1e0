#!/usr/bin/env bash
# usage: ab_keyed.sh RUNS LOCALE CSV: base and new `sort` links alternated on the keyed file,
# fresh memory, cache dropped and 8 s rest before each run; counts run files under -T.
runs=$1; loc=$2; csv=$3
in=/work/main/bench/scratch/gnu.keyed; o=/work/main/bench/scratch/k.out
export LOCPATH=/work/main/target/locales
for ((i=1;i<=runs;i++)); do
  for b in base new; do
    rm -f $o; rm -rf /tmp/tk; mkdir -p /tmp/tk; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 8
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o /tmp/ab.time env LC_ALL=$loc OXSORT_HUGETLB=off /work/bin/$b/sort -t, -k2,2n -k1,1 -S 5G --parallel=2 -T /tmp/tk -o $o $in &
    pid=$!; n=0
    while kill -0 $pid 2>/dev/null; do c=$(find /tmp/tk -name 'run-*' 2>/dev/null | wc -l); [ "$c" -gt "$n" ] && n=$c; sleep 0.3; done
    wait $pid
    t1=$(date +%s%N)
    read -r u s m < /tmp/ab.time
    echo "$(date -Iseconds),$loc,keyed,$b,$i,$(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f",(b-a)/1e9}'),$u,$s,$m,$n,$(md5sum < $o | cut -c1-8)" | tee -a $csv
  done
done
rm -f $o; rm -rf /tmp/tk
