"""A 4 GB tmpfs file written with pwrite from a warm 16 MiB buffer, against the same bytes
copied into a shared mapping of it (after posix_fallocate; "mmappop" prefaults the mapping with
MADV_POPULATE_WRITE first): the CPU each costs.

usage: python3 bench/runs/2026-12-03b/tmpfs_mmap_vs_write.py write|writenofalloc|mmap|mmappop
(writes and removes /dev/shm/mbout)."""

import mmap
import os
import resource
import sys
import time

TOTAL = 4 << 30
BLOCK = 16 << 20
MADV_POPULATE_WRITE = 23
PATH = "/dev/shm/mbout"


def cpu() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def main() -> None:
    mode = sys.argv[1]
    buf = os.urandom(BLOCK)
    if os.path.exists(PATH):
        os.unlink(PATH)
    t0, (u0, s0) = time.time(), cpu()
    fd = os.open(PATH, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o600)
    if mode != "writenofalloc":
        os.posix_fallocate(fd, 0, TOTAL)
    if mode.startswith("write"):
        for off in range(0, TOTAL, BLOCK):
            os.pwrite(fd, buf, off)
    else:
        m = mmap.mmap(fd, TOTAL)
        if mode == "mmappop":
            m.madvise(MADV_POPULATE_WRITE, 0, TOTAL)
        view = memoryview(m)
        for off in range(0, TOTAL, BLOCK):
            view[off : off + BLOCK] = buf
        view.release()
        m.close()
    os.close(fd)
    u1, s1 = cpu()
    print(f"{mode} wall {time.time() - t0:.2f} user {u1 - u0:.2f} sys {s1 - s0:.2f}")
    os.unlink(PATH)


if __name__ == "__main__":
    main()
