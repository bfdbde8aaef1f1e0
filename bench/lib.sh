# Shared by the end-to-end benchmark scripts (sourced, not run).
# drop: write back dirty pages and drop the page cache (as root), so no run reads from memory.
# median: the median of the numbers on stdin, one per line.
# timed CMD...: runs CMD with the cache dropped, its output discarded; prints
#   "seconds peak_rss_kb" (needs /usr/bin/time and $scratch for its logs).
drop() { sync; if [ "$(id -u)" = 0 ]; then echo 3 > /proc/sys/vm/drop_caches; fi; }
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
timed() {
  drop
  local log=$scratch/time.$$ t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f %M -o "$log" "$@" >/dev/null 2>"$scratch/stderr.$$" || { cat "$scratch/stderr.$$" >&2; return 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v m="$(tail -1 "$log")" 'BEGIN{printf "%.3f %d\n", (b-a)/1e9, m}'
  rm -f "$log" "$scratch/stderr.$$"
}
