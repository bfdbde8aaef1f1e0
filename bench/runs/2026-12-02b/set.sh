#!/usr/bin/env bash
# #27's set on this session's host, into this directory: the disk cases and tmpfs to tmpfs as in
# 2026-11-30g/set.sh, then bench/ray_cluster.py with the Python given as PY (a virtual
# environment holding the package and Ray, as .ci/run builds it: target/py-venv).
# Run as root from anywhere: PY=target/py-venv/bin/python bench/runs/2026-12-02b/set.sh
here=$(cd "$(dirname "$0")" && pwd)
export RUN_DIR=$here
"$here/../2026-11-30g/set.sh"
if [ -n "${PY:-}" ]; then
  echo "== ray $(date)"
  "$PY" "$here/../../ray_cluster.py" --records 4e7 --runs 5 --out "$here"
fi
echo "== all done $(date)"
