#!/usr/bin/env bash
# Tables past memory: oxsort sort --by on Parquet, paired in one session with DuckDB and Polars,
# with the I/O floor of the same file beside them (issue 26).
#
# usage: bench/columnar.sh [ROWS] [RUNS] [SCRATCH_DIR]
#   ROWS         rows of the table (default 20000000, about 1 GB of Parquet; 2000000 to try the
#                script out)
#   RUNS         runs per tool (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=512M  environment: the budget of every tool (oxsort --memory, DuckDB memory_limit;
#                Polars has no budget to honour and runs without one)
#   SMALL=64M    environment: the budget of the "8x" case (oxsort alone, the DataFusion #19216
#                shape: a table many times the budget sorted within it)
#   BENCH_VENV   environment: a virtual environment with pyarrow, duckdb and polars (default
#                target/bench-venv, made with pip when missing)
#   NO_DROP=1    environment: smoke run, the page cache is not dropped, the floor not measured
#
# The table: id (int64, the row number), key (text, Zipf-skewed over 100k values, 5% null),
# x (float64), d (date32), n (int64), payload (40 bytes of text). Sorted by key, then x, both
# ascending, nulls last (DuckDB's default; Polars asked for nulls_last), 2 threads each, written
# as Parquet (snappy). Every run starts with the page cache dropped (run as root); peak RSS from
# /usr/bin/time. The outputs' row counts are checked against the input's, and oxsort's output
# is checked equal to DuckDB's on (key, x, id).
# Raw rows go to bench/runs/<date>/columnar.csv; medians to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rows=${1:-20000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-512M}
small=${SMALL:-64M}
venv=${BENCH_VENV:-$top/target/bench-venv}
. "$top/bench/lib.sh"
bench_prologue columnar "timestamp,case,tool,rows,bytes,memory,threads,run,seconds,peak_rss_kb,floor1_s,floor2_s"
threads=2
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pyarrow duckdb polars
fi
py=$venv/bin/python
in=$scratch/columnar-$rows.parquet
o=$scratch/columnar-out.parquet
if [ ! -f "$in" ]; then
  "$py" - "$in" "$rows" <<'PY'
import sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
path, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(26)
words = np.array([f"k{i:06d}-{(i * 7919) % 100003:05d}" for i in range(100_000)], dtype=object)
w = pq.ParquetWriter(path, pa.schema([("id", pa.int64()), ("key", pa.string()), ("x", pa.float64()),
    ("d", pa.date32()), ("n", pa.int64()), ("payload", pa.string())]), compression="snappy")
step = 1_000_000
for s in range(0, n, step):
    m = min(step, n - s)
    z = np.minimum(rng.zipf(1.3, m) - 1, len(words) - 1)
    key = pa.array(words[z], pa.string(), mask=rng.random(m) < 0.05)
    pay = np.char.add("payload-", np.char.zfill(rng.integers(0, 10**12, m).astype(str), 32))
    w.write_table(pa.table({"id": np.arange(s, s + m), "key": key, "x": rng.standard_normal(m),
        "d": pa.array(rng.integers(0, 20000, m).astype("int32"), pa.int32()).cast(pa.date32()),
        "n": rng.integers(-10**9, 10**9, m), "payload": pay.astype(object)}))
w.close()
PY
fi
bytes=$(stat -c %s "$in")
floor=$(floor_json "$in" "$scratch" "$runs")
f1=$(json_num floor1_s "$floor")
f2=$(json_num floor2_s "$floor")
row() { echo "$(date -Iseconds),$1,$2,$rows,$bytes,$3,$threads,$4,$5,$6,$f1,$f2" >> "$csv"; }
mkdir -p "$scratch/tmp"
cat > "$scratch/run_duckdb.py" <<PY
import duckdb, sys
c = duckdb.connect()
c.execute("SET memory_limit='${memory/M/MB}'; SET threads=$threads; SET temp_directory='$scratch/tmp'")
c.execute("COPY (SELECT * FROM read_parquet('$in') ORDER BY key, x) TO '$o' (FORMAT parquet, COMPRESSION snappy)")
PY
cat > "$scratch/run_polars.py" <<PY
import os; os.environ["POLARS_MAX_THREADS"] = "$threads"
import polars as pl
pl.scan_parquet("$in").sort(["key", "x"], nulls_last=True).sink_parquet("$o", compression="snappy")
PY
# measure CASE TOOL MEMORY CMD...: RUNS timed runs; prints "median_s median_rss_kb"
measure() {
  local case=$1 tool=$2 mem=$3 s=() m=() r t k
  shift 3
  for ((r = 1; r <= runs; r++)); do
    rm -f "$o"
    read -r t k < <(timed "$@")
    row "$case" "$tool" "$mem" "$r" "$t" "$k"
    s+=("$t"); m+=("$k")
    count=$("$py" -c "import pyarrow.parquet as pq; print(pq.ParquetFile('$o').metadata.num_rows)")
    [ "$count" = "$rows" ] || { echo "$tool wrote $count rows of $rows" >&2; exit 1; }
  done
  echo "$(printf '%s\n' "${s[@]}" | median) $(printf '%s\n' "${m[@]}" | median)"
}
read -r duck_s duck_k < <(measure main duckdb "$memory" "$py" "$scratch/run_duckdb.py")
mv "$o" "$scratch/duck-out.parquet"
read -r polars_s polars_k < <(measure main polars none "$py" "$scratch/run_polars.py")
read -r ox_s ox_k < <(measure main oxsort "$memory" "$bin/oxsort" sort "$in" -o "$o" --by key,x \
  --memory "$memory" --threads "$threads" --temp-dir "$scratch/tmp" --quiet)
"$py" - "$o" "$scratch/duck-out.parquet" <<'PY'
import sys, pyarrow.parquet as pq
a = pq.read_table(sys.argv[1], columns=["key", "x", "id"])
b = pq.read_table(sys.argv[2], columns=["key", "x", "id"])
# DuckDB's sort is not stable: equal (key, x) may come in any order; compare the keys, and
# the ids as sets.
assert a.column("key").equals(b.column("key")) and a.column("x").equals(b.column("x")), "orders differ"
assert sorted(a.column("id").to_pylist()) == list(range(len(a))), "rows lost"
PY
read -r small_s small_k < <(measure 8x oxsort "$small" "$bin/oxsort" sort "$in" -o "$o" --by key,x \
  --memory "$small" --threads "$threads" --temp-dir "$scratch/tmp" --quiet)
rm -f "$o" "$scratch/duck-out.parquet"
{
  echo
  echo "## columnar: $rows rows, $bytes bytes of Parquet, sorted by key,x ($(date -Iseconds))"
  echo
  echo "| tool | budget | median s | peak RSS MiB | / floor1 | / floor2 |"
  echo "|---|---|---|---|---|---|"
  for t in "oxsort $memory $ox_s $ox_k" "duckdb $memory $duck_s $duck_k" "polars none $polars_s $polars_k" \
           "oxsort $small $small_s $small_k"; do
    set -- $t
    awk -v t="$1" -v b="$2" -v s="$3" -v k="$4" -v f1="$f1" -v f2="$f2" \
      'BEGIN{printf "| %s | %s | %.2f | %.0f | %.2f | %.2f |\n", t, b, s, k/1024, s/f1, s/f2}'
  done
  echo
  echo "floor: $floor"
} | tee -a "$summary"
