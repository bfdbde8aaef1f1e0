#!/usr/bin/env bash
# Peak memory and wall time of sorts whose key prefixes all tie: gensort -a lines sorted by -k2
# (the key runs from the blanks before the hex record number to the end of the line, so its
# first 20-odd bytes are the same in every line), at several budgets.
#
# usage: bench/tied_keys.sh [RECORDS] [SCRATCH_DIR] [OXSORT...]
#   RECORDS      gensort -a records (default 1e7: 1 GB)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   OXSORT...    binaries to compare (default target/release/oxsort)
#   BUDGETS="64M 256M default"  environment: --memory values ("default": none given)
#
# Each line: budget, binary, peak memory (--stats=json peak_rss: resident set plus hugetlb pool
# pages), passes, wall seconds, and the output's md5 (the same for every binary).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-1e7}
scratch=${2:-$top/bench/scratch}
shift $(($# < 2 ? $# : 2))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$top/target/release/oxsort")
budgets=${BUDGETS:-64M 256M default}
mkdir -p "$scratch"
in=$scratch/tied.in
out=$scratch/tied.out
"${bins[0]}" gen --ascii -n "$records" -q "$in"
for m in $budgets; do
  mem=(--memory "$m")
  [ "$m" = default ] && mem=()
  for b in "${bins[@]}"; do
    rm -f "$out"
    start=$(date +%s.%N)
    stats=$("$b" sort --lines -k2 "${mem[@]}" "$in" -o "$out" --no-progress --stats=json 2>&1 | grep '^{')
    end=$(date +%s.%N)
    peak=$(echo "$stats" | sed 's/.*"peak_rss": *\([0-9]*\).*/\1/')
    passes=$(echo "$stats" | sed 's/.*"passes": *\([0-9]*\).*/\1/')
    printf '%s %s peak %d MiB, %s pass(es), %.1f s, md5 %s\n' "$m" "$b" $((peak >> 20)) \
      "$passes" "$(echo "$end - $start" | bc)" "$(md5sum < "$out" | cut -c1-12)"
  done
done
rm -f "$in" "$out"
