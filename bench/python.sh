#!/usr/bin/env bash
# The Python package against the CLI and NumPy, measured in one session.
#
# usage: bench/python.sh [RECORDS] [ARRAY_RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS        gensort records of the file case (default 40000000 = 4 GB)
#   ARRAY_RECORDS  items of the array cases (default 10000000)
#   RUNS           runs per measurement (default 3; medians reported)
#   SCRATCH_DIR    where data goes (default bench/scratch)
#   MEMORY=5G      environment: --memory / memory= of the file sorts (one pass for 4e7 records)
#   VARIANT=pool   environment: the file sorts take their memory from a hugetlb pool reserved and
#                  touched once before the timed runs (bench/lib.sh), or `fresh` memory; with fresh
#                  memory single runs of one binary vary 1.5-2x on a VM with free-page reporting,
#                  which hides a 3% difference
#
# Cases:
#   file        oxsort.sort(in, out, memory=...) vs oxsort sort in -o out --memory ...
#               (same input, runs interleaved, page cache dropped before each)  target <= 1.03
#   sort_array  records of a u8 key + 24-byte payload, by "k", vs np.sort(order="k",
#               kind="stable")                                                  target >= 3x
#   argsort     float64 vs np.argsort(kind="stable")                            target >= 2x
# The package is built (release) into target/bench-venv with numpy. Raw rows go to
# bench/runs/<date>/python.csv; medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-40000000}
arrays=${2:-10000000}
runs=${3:-3}
scratch=${4:-$top/bench/scratch}
memory=${MEMORY:-5G}
variant=${VARIANT:-pool}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli >&2
bin=$top/target/release
venv=$top/target/bench-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet numpy "$top" >&2
py=$venv/bin/python
mkdir -p "$scratch"
day=$(date +%Y-%m-%d)
out=$top/bench/runs/$day
mkdir -p "$out"
csv=$out/python.csv
[ -f "$csv" ] || echo "timestamp,case,tool,records,memory,threads,run,seconds,peak_rss_kb,uptime_load1" > "$csv"
summary=$out/summary.md
threads=$(nproc)
. "$top/bench/lib.sh"
load() { awk '{print $1}' /proc/loadavg; }
row() { # case tool records run seconds rss
  echo "$(date -Iseconds),$1,$2,$3,$memory,$threads,$4,$5,$6,$(load)" >> "$csv"
}

in=$scratch/py-in.dat
o=$scratch/py-out.dat
"$bin/oxsort" gen --records "$records" "$in" >&2
# (valsort's exit status says the input is unsorted; only its checksum is wanted here)
sum=$({ "$bin/oxsort" valsort --json "$in" || true; } | sed 's/.*"checksum":"\([0-9a-f]*\)".*/\1/')
echo "uptime before: $(uptime)" >&2
cli_t=() py_t=()
[ "$variant" = pool ] && pool_reserve "$memory"
for ((i = 1; i <= runs; i++)); do
  rm -f "$o"
  read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort "$in" -o "$o" --memory "$memory" --no-progress)
  check_output "$o" "$sum" sorted; cli_t+=("$s"); row file cli "$records" "$i" "$s" "$m"
  rm -f "$o"
  read -r s m c < <(timed_variant "$variant" "$py" -c "import oxsort; oxsort.sort('$in', '$o', memory='$memory')")
  check_output "$o" "$sum" sorted; py_t+=("$s"); row file python "$records" "$i" "$s" "$m"
done
[ "$variant" = pool ] && pool_release
rm -f "$o" "$in"
cli_m=$(printf '%s\n' "${cli_t[@]}" | median)
py_m=$(printf '%s\n' "${py_t[@]}" | median)

"$py" "$top/bench/python_arrays.py" "$arrays" "$runs" | while IFS=, read -r c t n r s; do
  row "$c" "$t" "$n" "$r" "$s" 0
done
med() { awk -F, -v c="$1" -v t="$2" -v n="$3" '$2==c && $3==t && $4==n {print $8}' "$csv" | tail -n "$runs" | median; }
sa_np=$(med sort_array numpy "$arrays"); sa_ox=$(med sort_array oxsort "$arrays")
as_np=$(med argsort numpy "$arrays"); as_ox=$(med argsort oxsort "$arrays")
up=$(uptime)
{
  echo
  echo "## bench/python.sh ($(date -Iseconds)), $threads threads, $variant memory for the file sorts; uptime: $up"
  echo
  echo "| case | oxsort from Python | reference | ratio | target |"
  echo "|---|---|---|---|---|"
  awk -v a="$py_m" -v b="$cli_m" -v r="$records" 'BEGIN{printf "| file sort, %d records, one pass | %.2f s | CLI %.2f s | %.3f x the CLI | <= 1.03 |\n", r, a, b, a/b}'
  awk -v a="$sa_ox" -v b="$sa_np" -v n="$arrays" 'BEGIN{printf "| sort_array, %d x (u8 + S24) by k | %.3f s | np.sort stable %.3f s | %.1f x faster | >= 3 |\n", n, a, b, b/a}'
  awk -v a="$as_ox" -v b="$as_np" -v n="$arrays" 'BEGIN{printf "| argsort, %d float64 | %.3f s | np.argsort stable %.3f s | %.1f x faster | >= 2 |\n", n, a, b, b/a}'
} | tee -a "$summary"
