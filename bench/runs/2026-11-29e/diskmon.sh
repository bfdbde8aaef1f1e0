#!/usr/bin/env bash
# prints every 0.1 s: t, read MB, write MB, discard MB, io_ticks ms in the interval for vda
dev=${DEV:-vda}
prev=($(awk -v d=$dev '$3==d {print $6, $10, $13, $17}' /proc/diskstats))
t0=$(date +%s.%N)
while true; do
  sleep 0.1
  cur=($(awk -v d=$dev '$3==d {print $6, $10, $13, $17}' /proc/diskstats))
  t=$(date +%s.%N)
  awk -v t=$t -v t0=$t0 -v r=$((cur[0]-prev[0])) -v w=$((cur[1]-prev[1])) -v b=$((cur[2]-prev[2])) -v di=$((cur[3]-prev[3])) 'BEGIN {printf "%.1f %d %d %d %d\n", t-t0, r*512/1e6, w*512/1e6, di*512/1e6, b}'
  prev=("${cur[@]}")
done
