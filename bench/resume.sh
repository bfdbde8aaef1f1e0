#!/usr/bin/env bash
# Resume after a kill in the merge of a two-pass sort, against a fresh sort of the same input.
#
# usage: bench/resume.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      gensort records (default 1e8: 10 GB), sorted with --memory MEMORY (two passes)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY       (environment) the sort's --memory, default 1G
#
# Three timings, each from a dropped page cache:
#   fresh      `oxsort sort IN -o OUT --memory MEMORY`                 (no journal)
#   journaled  the same with --resume: the cost of keeping the journal (fsync per run)
#   resume     the journaled sort SIGKILLed in its merge, then `--resume` run again: the time
#              to finish, the input it read again and the runs it reused (from --stats=json)
# The kill comes once every run is in the journal (the merge has begun), half way through the
# merge's expected time (the journaled median less the time the runs took to form).
# The floor is ../shared/tools/iofloor's floor2_s (fio: read + write, twice). Each output is
# checked with valsort against the input's checksum. Raw rows go to
# bench/runs/<date>/resume.csv, medians and ratios to summary.md there, and the last resumed
# sort's --stats=json (its phases) to resume-stats.json.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-100000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-1G}
iofloor=$top/../shared/tools/iofloor
[ -x "$iofloor" ] || { echo "missing $iofloor" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
command -v fio >/dev/null || { echo "needs fio (apt-get install fio)" >&2; exit 1; }

cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli >&2
bin=$top/target/release
mkdir -p "$scratch"
. "$top/bench/lib.sh"
day=$(date +%Y-%m-%d)
out=$top/bench/runs/$day
mkdir -p "$out"
csv=$out/resume.csv
[ -f "$csv" ] || echo "timestamp,what,records,memory,run,seconds,peak_rss_kb,input_bytes_read,runs_reused,runs,killed_at_s,floor2_s" > "$csv"
summary=$out/summary.md

in=$scratch/resume.in
dst=$scratch/resume.out
temp=$scratch/resume.tmp
need=$((records * 100 * 3 + (1 << 30)))
rm -rf "$in" "$dst" "$temp"
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space in $scratch" >&2; exit 1; }
mkdir -p "$temp"
sum=$("$bin/oxsort" gen --records "$records" --checksum --quiet "$in" | tail -1)
floor2=$("$iofloor" "$in" "$scratch" "$runs" | sed 's/.*"floor2_s": *\([0-9.]*\).*/\1/')

sort_cmd=("$bin/oxsort" sort "$in" -o "$dst" --memory "$memory" --temp-dir "$temp" --no-progress)
stat_of() { # KEY: its value in the last --stats=json line of $scratch/stats
  grep '^{' "$scratch/stats" | tail -1 | sed "s/.*\"$1\":\([0-9]*\).*/\1/"
}
clean_out() { rm -f "$dst"; sync; }

# timed_stats CMD...: like timed, with the command's stderr (its statistics) kept in $scratch/stats.
timed_stats() {
  drop
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f %M -o "$scratch/rss" "$@" >/dev/null 2>"$scratch/stats" || { cat "$scratch/stats" >&2; return 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v m="$(tail -1 "$scratch/rss")" 'BEGIN{printf "%.3f %d\n", (b-a)/1e9, m}'
}

row() { # what run seconds rss read reused runs killed_at
  echo "$(date -Iseconds),$1,$records,$memory,$2,$3,$4,$5,$6,$7,$8,$floor2" >> "$csv"
}

declare -A times
nruns=0
for what in fresh journaled; do
  extra=()
  [ "$what" = journaled ] && extra=(--resume)
  for r in $(seq 1 "$runs"); do
    clean_out
    read -r s m c < <(timed_stats "${sort_cmd[@]}" "${extra[@]}" --stats=json)
    check_output "$dst" "$sum" sorted
    nruns=$(stat_of runs)
    row "$what" "$r" "$s" "$m" "$(stat_of input_bytes_read)" 0 "$nruns" ""
    times[$what]+="$s"$'\n'
  done
done
journaled=$(printf '%s' "${times[journaled]}" | median)

# journal_runs: run entries complete in the journal of the resumable sort (0 without one).
journal_runs() {
  local j
  j=$(ls -d "$temp"/.oxsort-resume-*/journal 2>/dev/null | head -1) || true
  [ -n "$j" ] && [ -f "$j" ] || { echo 0; return; }
  grep -c ' {"run":' "$j" || true
}

for r in $(seq 1 "$runs"); do
  clean_out
  drop
  t0=$(date +%s%N)
  "${sort_cmd[@]}" --resume >/dev/null 2>&1 &
  pid=$!
  while [ "$(journal_runs)" -lt "$nruns" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "the sort ended before its runs were all journaled" >&2; exit 1; }
    sleep 0.05
  done
  formed=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{printf "%.3f", (b-a)/1e9}')
  half=$(awk -v j="$journaled" -v f="$formed" 'BEGIN{d=(j-f)/2; printf "%.3f", (d > 0 ? d : 0)}')
  sleep "$half"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  killed=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{printf "%.3f", (b-a)/1e9}')
  read -r s m c < <(timed_stats "${sort_cmd[@]}" --resume --stats=json)
  check_output "$dst" "$sum" sorted
  row resume "$r" "$s" "$m" "$(stat_of input_bytes_read)" "$(stat_of runs_reused)" "$nruns" "$killed"
  times[resume]+="$s"$'\n'
  grep '^{' "$scratch/stats" | tail -1 > "$out/resume-stats.json"
  [ -z "$(ls -A "$temp")" ] || { echo "left in $temp: $(ls -A "$temp")" >&2; exit 1; }
done

fresh=$(printf '%s' "${times[fresh]}" | median)
resume=$(printf '%s' "${times[resume]}" | median)
{
  echo
  echo "## resume after a kill in the merge, $records records, --memory $memory ($(date -Iseconds))"
  echo
  echo "Medians of $runs; floor2 (fio) $floor2 s; $nruns runs. Raw rows: resume.csv."
  echo
  echo "| sort | median s | x floor2 | x fresh |"
  echo "|---|---|---|---|"
  for w in fresh journaled resume; do
    m=$(printf '%s' "${times[$w]}" | median)
    awk -v w="$w" -v m="$m" -v f="$floor2" -v x="$fresh" 'BEGIN{printf "| %s | %.2f | %.2f | %.2f |\n", w, m, m/f, m/x}'
  done
} | tee -a "$summary"
rm -rf "$in" "$dst" "$temp" "$scratch/stats" "$scratch/rss"
sync
