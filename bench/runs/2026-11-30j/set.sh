#!/usr/bin/env bash
# #27's set as in 2026-11-30g (its set.sh: the disk cases, then tmpfs), into this directory.
# Run as root from anywhere: bench/runs/2026-11-30j/set.sh [tmpfs DIR NAME]
here=$(cd "$(dirname "$0")" && pwd)
RUN_DIR=$here exec "$here/../2026-11-30g/set.sh" "$@"
