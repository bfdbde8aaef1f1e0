#!/usr/bin/env bash
# #27's set on this session's host, into this directory: 2026-11-30g's disk cases and tmpfs to
# tmpfs, with GNU sort on the lines run once (GNU_RUNS=1; it takes minutes a run).
# Run as root from anywhere: bench/runs/2026-12-02d/set.sh
here=$(cd "$(dirname "$0")" && pwd)
export RUN_DIR=$here GNU_RUNS=1
"$here/../2026-11-30g/set.sh"
echo "== all done $(date)"
