"""One cluster map (oxsort._native.map) of bytes 0..SIZE of a gensort file, run alone outside
Ray with THREADS threads and 3 splitters, page cache dropped first (as root): its wall, user and
system time, to set against a map timed inside a Ray task.

usage: python bench/runs/2026-12-03b/map_alone.py FILE SIZE THREADS
(buckets go to bench/scratch/mt/buckets)."""

import os
import resource
import shutil
import sys
import time

from oxsort import _native
from oxsort._files import _spec

BUCKETS = "bench/scratch/mt/buckets"


def main() -> None:
    path, size, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    spec = _spec(
        record_size=None,
        lines=False,
        nul=False,
        fields=None,
        control=None,
        keys=None,
        unique=False,
        memory="5G",
        threads=threads,
        temp_dirs=None,
    )
    shutil.rmtree(BUCKETS, ignore_errors=True)
    os.makedirs(BUCKETS)
    # Splitters at the quartiles of uniformly random keys.
    splitters = [(bytes([64 * j]) + b"\0" * 9, 0, 0) for j in (1, 2, 3)]
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    t0, r0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    res = _native.map(path, 0, (0, size), splitters, spec, BUCKETS)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"map {size / 1e6:.0f} MB threads {threads}: wall {time.time() - t0:.2f} "
        f"user {r1.ru_utime - r0.ru_utime:.2f} sys {r1.ru_stime - r0.ru_stime:.2f} "
        f"records {res[0]}"
    )


if __name__ == "__main__":
    main()
