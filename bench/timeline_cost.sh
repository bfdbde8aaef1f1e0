#!/usr/bin/env bash
# The cost of `oxsort sort --timeline` in instructions, which a shared VM cannot blur the way it
# blurs wall time (bench/timeline.sh: single runs of one command vary by 4x here).
#
# usage: bench/timeline_cost.sh [RECORDS] [PAIRS] [SCRATCH_DIR]
#   RECORDS      gensort records (default 1000000), sorted in one pass
#   PAIRS        runs with and without the timeline (default 2)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#
# Each sort runs under `valgrind --tool=callgrind`, which counts every instruction of every
# thread (the same count for the same run, whatever else the machine does). Under valgrind a
# sort runs about 100x slower, so its sampler, which wakes every 100 ms of wall time, takes
# about 100x more samples per record than in a real run: the extra instructions measured here
# bound the real overhead from above by that factor. The script reports the extra
# instructions, the samples taken, the cost per sample, and that cost at ten samples a second
# against the instructions a second of the same sort run natively. Needs valgrind.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-1000000}
pairs=${2:-2}
scratch=${3:-$top/bench/scratch}
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli >&2
bin=$top/target/release
mkdir -p "$scratch"
out=$top/bench/runs/$(date +%Y-%m-%d)
mkdir -p "$out"
csv=$out/timeline-cost.csv
[ -f "$csv" ] || echo "timestamp,records,variant,pair,instructions,samples" > "$csv"
in=$scratch/tlcost.in
"$bin/oxsort" gen --records "$records" --quiet "$in"

count() { # extra args: instructions of one sort under callgrind
  local log=$scratch/tlcost.log
  rm -f "$scratch/tlcost.out"
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/oxsort" sort "$in" \
    -o "$scratch/tlcost.out" --memory 1G --no-progress "$@" > "$log" 2>&1
  grep -o 'Collected : [0-9]*' "$log" | awk '{print $3}'
}

plain=() timed=() samples=()
for p in $(seq 1 "$pairs"); do
  i=$(count)
  plain+=("$i")
  echo "$(date -Iseconds),$records,plain,$p,$i," >> "$csv"
  i=$(count --timeline "$scratch/tlcost.csv")
  n=$(($(wc -l < "$scratch/tlcost.csv") - 1))
  timed+=("$i")
  samples+=("$n")
  echo "$(date -Iseconds),$records,timeline,$p,$i,$n" >> "$csv"
done
# The same sort natively: instructions a second (from the plain count and the fastest of three
# wall times, the least favourable to the timeline: the more instructions a second, the larger
# ten samples' share).
best=
for _ in 1 2 3; do
  rm -f "$scratch/tlcost.out"
  t0=$(date +%s%N)
  "$bin/oxsort" sort "$in" -o "$scratch/tlcost.out" --memory 1G --no-progress >/dev/null
  t1=$(date +%s%N)
  ns=$((t1 - t0))
  if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then best=$ns; fi
done
{
  echo
  echo "## timeline cost in instructions, $records records ($(date -Iseconds))"
  echo
  awk -v p="${plain[*]}" -v t="${timed[*]}" -v s="${samples[*]}" -v ns="$best" 'BEGIN{
    n = split(p, P); split(t, T); split(s, S)
    for (i = 1; i <= n; i++) { dp += T[i] - P[i]; ds += S[i]; base += P[i] }
    base /= n; per = dp / ds; rate = base / (ns / 1e9)
    printf "without: %s instructions; with: %s (%s samples)\n\n", p, t, s
    printf "extra under valgrind: %.3f%% of the sort; per sample %.0f instructions\n", 100 * dp / n / base, per
    printf "at 10 samples/s against this sort run natively (%.3f s, %.2e instructions/s): %.4f%%\n", ns / 1e9, rate, 100 * per * 10 / rate
  }'
} | tee -a "$out/summary.md"
rm -f "$in" "$scratch/tlcost.out" "$scratch/tlcost.csv" "$scratch/tlcost.log"
