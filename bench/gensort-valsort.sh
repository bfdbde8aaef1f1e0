#!/usr/bin/env bash
# gensort / valsort end-to-end speed against the I/O floor.
#
# usage: bench/gensort-valsort.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      records to generate (default 100000000 = 10 GB)
#   RUNS         measurements per tool (default 3; medians are reported)
#   SCRATCH_DIR  where the data file goes (default bench/scratch; must have room for it)
#
# For each run: drop the page cache, time `gensort -t2 RECORDS FILE` followed by `sync FILE`
# (so buffered fallbacks pay for their writeback), drop the cache, time `valsort -q -t2 FILE`.
# The floor comes from shared/tools/iofloor (dd with O_DIRECT and 16 MiB transfers) on the same
# file, measured in the same session. Writes bench/runs/<date>/gensort-valsort.csv (one row per
# measurement) and appends a section to bench/runs/<date>/summary.md (medians and ratios to the
# floor; appended so other benchmarks' sections of the same day are kept).
# Run as root for cache drops; the file is deleted at the end.
# OXSORT_BIN_DIR=dir uses prebuilt gensort/valsort from dir instead of building them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-100000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
iofloor=$top/../shared/tools/iofloor
[ -x "$iofloor" ] || { echo "missing $iofloor" >&2; exit 1; }

if [ -n "${OXSORT_BIN_DIR:-}" ]; then
  bin=$OXSORT_BIN_DIR
else
  cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli --bin gensort --bin valsort >&2
  bin=$top/target/release
fi
mkdir -p "$scratch"
file=$scratch/gensort-valsort.$$.dat
trap 'rm -f "$file"' EXIT
bytes=$((records * 100))
avail=$(df --output=avail -B1 "$scratch" | tail -1)
if [ "$avail" -lt $((bytes * 2 + (1 << 30))) ]; then
  echo "not enough space in $scratch: need $((bytes * 2)) bytes (file + floor scratch)" >&2
  exit 1
fi

day=$(date +%Y-%m-%d)
out=$top/bench/runs/$day
mkdir -p "$out"
csv=$out/gensort-valsort.csv
[ -f "$csv" ] || echo "timestamp,host,tool,records,bytes,threads,run,seconds,records_per_s,MB_per_s" > "$csv"

. "$top/bench/lib.sh"
secs() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || [ "$1" = "$bin/valsort" ]; t1=$(date +%s%N); awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", (b-a)/1e9}'; }
row() { # tool run seconds
  awk -v ts="$(date -Iseconds)" -v h="$(hostname)" -v t="$1" -v n="$records" -v b="$bytes" -v r="$2" -v s="$3" \
    'BEGIN{printf "%s,%s,%s,%.0f,%.0f,2,%d,%.3f,%.0f,%.1f\n", ts, h, t, n, b, r, s, n/s, b/s/1e6}' >> "$csv"
}

g=(); v=()
for ((i = 1; i <= runs; i++)); do
  rm -f "$file"; drop
  s=$(secs sh -c "'$bin/gensort' -t2 $records '$file' && sync '$file'"); g+=("$s"); row gensort "$i" "$s"
  drop
  s=$(secs "$bin/valsort" -q -t2 "$file"); v+=("$s"); row valsort "$i" "$s"
done
floor=$("$iofloor" "$file" "$scratch" "$runs")
read_s=$(sed -E 's/.*"read_s": ([0-9.]+).*/\1/' <<<"$floor")
write_s=$(sed -E 's/.*"write_s": ([0-9.]+).*/\1/' <<<"$floor")
row dd-direct-read 0 "$read_s"
row dd-direct-write 0 "$write_s"
gm=$(printf '%s\n' "${g[@]}" | median)
vm=$(printf '%s\n' "${v[@]}" | median)
section=$(mktemp)
{
  echo "## gensort / valsort, $records records ($((bytes / 1000000)) MB), 2 threads, $(date -Iseconds)"
  echo
  echo "Host $(hostname), $(nproc) CPUs. Medians of $runs runs; page cache dropped before each run."
  echo "Floor: \`$floor\`"
  echo
  echo "| tool | median s | M records/s | floor s | ratio to floor (target <= 1.10) |"
  echo "|---|---|---|---|---|"
  awk -v s="$gm" -v f="$write_s" -v n="$records" 'BEGIN{printf "| gensort -t2 (+ sync) | %.3f | %.1f | %.3f (dd write) | %.2f |\n", s, n/s/1e6, f, s/f}'
  awk -v s="$vm" -v f="$read_s" -v n="$records" 'BEGIN{printf "| valsort -q -t2 | %.3f | %.1f | %.3f (dd read) | %.2f |\n", s, n/s/1e6, f, s/f}'
  echo
  echo "Raw rows: gensort-valsort.csv (all runs: gensort ${g[*]}; valsort ${v[*]})."
} > "$section"
{ [ -s "$out/summary.md" ] && echo; cat "$section"; } >> "$out/summary.md"
cat "$section"
rm -f "$section"
