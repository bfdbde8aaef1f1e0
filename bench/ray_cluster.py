"""oxsort.ray on a local Ray cluster against single-node oxsort, on the same machine.

usage: python bench/ray_cluster.py [--records 4e7] [--partitions 4] [--runs 3] [--dir bench/scratch]
                           [--memory 5G] [--workers 2] [--fetch] [--no-drop] [--out DIR]
                           [--label NAME]

Run it with a Python that has the package and Ray (`pip install '.[ray]'`). It starts a local
cluster (`ray.cluster_utils.Cluster`: a head and --workers worker nodes, one CPU each),
generates --records gensort records as four inputs, then, --runs times and interleaved, sorts
them with `oxsort.sort` (one node) and with `oxsort.ray.sort` (--partitions partitions), and
checks each output (valsort: ordered, the input's checksum; the partitions concatenated equal
the single-node output's size and checksum). It reports the medians, the overhead of the
stages in seconds and as a ratio, and the median time of each stage (sample, map, reduce).
Every timed sort starts with the page cache dropped (as root; --no-drop keeps it, and the times
then say little: an input read by the sort before is read from memory). On one machine every
node sees every bucket, so the reduces read them in place; --fetch makes
each reduce fetch the buckets of other nodes through Ray's object transfer instead, as on nodes
without a shared file system (the rows' case is then `ray-fetch`).
Raw rows go to bench/runs/<date>/ray.csv (--out DIR: DIR/ray.csv); the summary is appended to
summary.md there. --label names the build measured (a column of the rows, and the summary's
title), for before/after comparisons.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import shutil
import statistics
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

import oxsort
import oxsort.ray

TOP = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=float, default=4e7)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--dir", default=str(TOP / "bench" / "scratch"))
    p.add_argument("--memory", default="5G")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--fetch", action="store_true", help="fetch other nodes' buckets via Ray")
    p.add_argument("--no-drop", action="store_true", help="keep the page cache between sorts")
    p.add_argument("--out", default=None, help="directory of the rows and summary")
    p.add_argument("--label", default="", help="the build measured, in the rows and summary")
    a = p.parse_args()
    records = int(a.records)
    scratch = Path(a.dir) / "ray-bench"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(a.workers):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        gen = oxsort.ray.gensort(scratch / "in", records, 4)
        inputs = [q.path for q in gen.partitions]
        day = datetime.date.today().isoformat()
        out = Path(a.out) if a.out else TOP / "bench" / "runs" / day
        out.mkdir(parents=True, exist_ok=True)
        rows = out / "ray.csv"
        new = not rows.exists()
        single_t: list[float] = []
        cluster_t: list[float] = []
        buckets = (0, 0)
        stages: dict[str, list[float]] = {"sample": [], "map": [], "reduce": []}
        with open(rows, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(
                    [
                        "timestamp",
                        "case",
                        "records",
                        "partitions",
                        "run",
                        "seconds",
                        "sample_s",
                        "map_s",
                        "reduce_s",
                        "load1",
                        "label",
                    ]
                )
            for run in range(1, a.runs + 1):
                single = scratch / "single.out"
                _drop(a.no_drop)
                t0 = time.monotonic()
                st = oxsort.sort(inputs, single, memory=a.memory)
                s = time.monotonic() - t0
                assert st.checksum == gen.checksum and oxsort.valsort(single).sorted
                single_t.append(s)
                w.writerow(
                    [_now(), "single", records, 1, run, f"{s:.3f}", "", "", "", _load(), a.label]
                )
                size = single.stat().st_size
                single.unlink()

                _drop(a.no_drop)
                t0 = time.monotonic()
                res = oxsort.ray.sort(
                    inputs,
                    scratch / "out",
                    partitions=a.partitions,
                    overwrite=True,
                    memory=a.memory,
                    local_dir=scratch / "local",
                    shared_local_dir=False if a.fetch else None,
                )
                c = time.monotonic() - t0
                parts = [q.path for q in res.partitions]
                summ = oxsort.valsort(parts)
                assert summ.sorted and summ.checksum == gen.checksum
                assert sum(os.path.getsize(q) for q in parts) == size
                cluster_t.append(c)
                buckets = (res.buckets_fetched, res.buckets_read_in_place)
                for k in stages:
                    stages[k].append(res.stage_seconds[k])
                w.writerow(
                    [
                        _now(),
                        "ray-fetch" if a.fetch else "ray",
                        records,
                        a.partitions,
                        run,
                        f"{c:.3f}",
                        *(f"{res.stage_seconds[k]:.3f}" for k in stages),
                        _load(),
                        a.label,
                    ]
                )
                f.flush()
        ms, mc = statistics.median(single_t), statistics.median(cluster_t)
        label = f" ({a.label})" if a.label else ""
        cache = "page cache kept" if a.no_drop or os.geteuid() != 0 else "page cache dropped"
        text = (
            f"\n## bench/ray_cluster.py{label}, {records} records, {a.partitions} partitions, "
            "local cluster "
            f"(head + {a.workers} workers, 1 CPU each), {cache} ({_now()}); load {_load()}\n\n"
            "| case | median s | runs |\n|---|---:|---|\n"
            f"| oxsort.sort (one node) | {ms:.3f} | {' '.join(f'{x:.3f}' for x in single_t)} |\n"
            f"| oxsort.ray.sort | {mc:.3f} | {' '.join(f'{x:.3f}' for x in cluster_t)} |\n"
            + "".join(
                f"| stage {k} | {statistics.median(v):.3f} | {' '.join(f'{x:.3f}' for x in v)} |\n"
                for k, v in stages.items()
            )
            + f"\noverhead of the stages: {mc - ms:.3f} s, ratio {mc / ms:.3f}; "
            f"buckets fetched {buckets[0]}, read in place {buckets[1]} (last run)\n"
        )
        print(text)
        with open(out / "summary.md", "a") as f:
            f.write(text)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


def _drop(keep: bool) -> None:
    """Writes dirty pages back and, unless asked to keep it, drops the page cache (as root), so
    that no sort reads an input from memory that the one before it read."""
    os.sync()
    if not keep and os.geteuid() == 0:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


if __name__ == "__main__":
    main()
