# Shared by the end-to-end benchmark scripts (sourced, not run).
# check_output FILE CHECKSUM [sorted]: FILE has the checksum of the input (and is sorted by the
#   10-byte key when asked), by oxsort valsort; stops the script otherwise (needs $bin).
# drop: write back dirty pages and drop the page cache (as root), so no run reads from memory.
#   NO_DROP=1 in the environment (smoke runs on a shared machine): write back only; the times
#   then mean nothing, and floor_json does not measure the disk (iofloor drops the cache).
# floor_json FILE SCRATCH RUNS: ../shared/tools/iofloor's JSON line for FILE ($iofloor); with
#   NO_DROP=1 a stand-in line of 1-second figures, marked "not measured".
# median: the median of the numbers on stdin, one per line.
# ratio A B: A / B, to three places.
# per_gb BYTES N...: the median of the N (CPU seconds) per GB of BYTES, to two places.
# timed CMD...: runs CMD with the cache dropped, its output discarded; prints
#   "seconds peak_rss_kb cpu_seconds" (user + system; needs /usr/bin/time and $scratch for its
#   logs).
# bench_prologue NAME CSV_HEADER [CARGO_ARGS...]: checks the tools, builds oxsort (and what
#   CARGO_ARGS add, say `-p oxsort-testkit --examples --bins`) and sets iofloor, bin, out
#   (today's runs directory, or RUN_DIR from the environment: a day's second session keeps its
#   rows apart), csv (NAME.csv there, created with CSV_HEADER), summary and threads (needs $top
#   and $scratch).
bench_prologue() {
  iofloor=$top/../shared/tools/iofloor
  [ -x "$iofloor" ] || { echo "missing $iofloor" >&2; exit 1; }
  [ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
  # Without fio, iofloor prints only its dd figures and every ratio to the floor is lost.
  [ -n "${NO_DROP:-}" ] || command -v fio >/dev/null ||
    { echo "needs fio for the disk's floor (apt-get install fio)" >&2; exit 1; }
  cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli "${@:3}" >&2
  bin=$top/target/release
  mkdir -p "$scratch"
  out=${RUN_DIR:-$top/bench/runs/$(date +%Y-%m-%d)}
  mkdir -p "$out"
  csv=$out/$1.csv
  [ -f "$csv" ] || echo "$2" > "$csv"
  [ "$(head -1 "$csv")" = "$2" ] ||
    { echo "$csv has other columns (an older script's): set RUN_DIR to another directory" >&2; exit 1; }
  summary=$out/summary.md
  threads=$(nproc)
}
drop() { sync; if [ "$(id -u)" = 0 ] && [ -z "${NO_DROP:-}" ]; then echo 3 > /proc/sys/vm/drop_caches; fi; }
floor_json() {
  if [ -n "${NO_DROP:-}" ]; then
    echo '{"read_s": 1, "write_s": 1, "floor1_s": 2, "note": "not measured (NO_DROP=1)"}'
  else
    "$iofloor" "$1" "$2" "$3"
  fi
}
# json_num KEY JSON: the number after "KEY": in a JSON line.
json_num() { echo "$2" | sed "s/.*\"$1\": \([0-9.]*\).*/\1/"; }
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }
per_gb() {
  local bytes=$1
  shift
  printf '%s\n' "$@" | median | awk -v b="$bytes" '{printf "%.2f", $1 / (b / 1e9)}'
}
timed() {
  drop
  local log=$scratch/time.$$ t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M %U %S" -o "$log" "$@" >/dev/null 2>"$scratch/stderr.$$" || { cat "$scratch/stderr.$$" >&2; return 1; }
  t1=$(date +%s%N)
  tail -1 "$log" | awk -v a="$t0" -v b="$t1" '{printf "%.3f %d %.2f\n", (b-a)/1e9, $1, $2 + $3}'
  rm -f "$log" "$scratch/stderr.$$"
}

# The hugetlb pool (see crates/oxsort-io/src/bigmem.rs). On VMs with free-page reporting, memory
# a process frees goes back to the host, and a sort that holds its input in memory pays a host
# fault per page on every run; the pages of a hugetlb pool stay backed between runs.
# pool_reserve SIZE: `oxsort pool SIZE`: reserve a pool of SIZE (say 5G, rounded up to 2 MiB
#   pages) and touch every page once on all cores, untimed, so the host backs it (needs $bin).
#   pool_release: `oxsort pool off` (GNU sort and the "fresh memory" runs go without a pool).
pool_reserve() {
  "$bin/oxsort" pool "$1" >&2 || { echo "could not reserve a pool of $1" >&2; exit 1; }
}
pool_release() { "$bin/oxsort" pool off >/dev/null; }

# timed_pool CMD...: like timed, and adds to the peak RSS the most hugetlb memory the sort maps
# at once (pool pages are not part of a process's resident set): the HugetlbPages of the newest
# process named oxsort, which counts the pool's pages it maps and the kept pool's (`oxsort pool`
# keeps the pool in a file, so the machine's count of free pages does not move when a sort maps
# them). Samples every 20 ms.
timed_pool() {
  local flag=$scratch/pool.$$ hp=$scratch/poolmax.$$
  : > "$flag"
  (
    exec {fd}<> <(:)
    max=0 pid=
    while [ -f "$flag" ]; do
      [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || pid=$(pgrep -n -x oxsort || true)
      if [ -n "$pid" ]; then
        while read -r k v _; do
          [ "$k" = HugetlbPages: ] && { [ "$v" -gt "$max" ] && max=$v; break; }
        done < "/proc/$pid/status" 2>/dev/null || true
      fi
      read -r -t 0.02 -u "$fd" || true
    done
    echo "$max" > "$hp"
  ) &
  local watcher=$! s m c
  read -r s m c < <(timed "$@")
  rm -f "$flag"; wait "$watcher"
  echo "$s $((m + $(cat "$hp"))) $c"
  rm -f "$hp"
}

# timed_variant fresh|pool CMD...: timed with fresh memory (OXSORT_HUGETLB=off), or timed_pool.
timed_variant() {
  local v=$1
  shift
  if [ "$v" = pool ]; then timed_pool "$@"; else timed env OXSORT_HUGETLB=off "$@"; fi
}

check_output() {
  local s
  s=$("$bin/oxsort" valsort --json "$1" || true)
  echo "$s" | grep -q "\"checksum\":\"$2\"" || { echo "WRONG CHECKSUM $1: $s" >&2; exit 1; }
  if [ "${3:-}" = sorted ]; then
    echo "$s" | grep -q '"ok":true' || { echo "NOT SORTED $1: $s" >&2; exit 1; }
  fi
}
