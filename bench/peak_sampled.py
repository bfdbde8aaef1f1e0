#!/usr/bin/env python3
"""Peak memory of a command as it runs: resident set plus hugetlb pool pages, sampled together.

`--stats=json`'s `peak_rss` adds the resident set's high-water mark to the most pool memory held
at once; the two may peak in different phases (a load fills ordinary pages, the output holds pool
pages), so that sum is an upper bound. This samples `VmRSS + HugetlbPages` of the running process
every 5 ms and prints the largest sum: what the process held at one moment (a spike shorter
than the interval can be missed).

usage: bench/peak_sampled.py CMD [ARG...]
"""

import subprocess
import sys
import time

INTERVAL_S = 0.005


def held_kib(pid: int) -> int:
    """Resident set plus hugetlb pages of `pid` now, in KiB (0 once it is gone)."""
    rss = huge = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("HugetlbPages:"):
                    huge = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return rss + huge


def main(cmd: list[str]) -> int:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, held_kib(proc.pid))
        time.sleep(INTERVAL_S)
    print(f"peak {peak / 1024:.1f} MiB (resident + hugetlb, sampled), exit {proc.returncode}")
    return proc.returncode


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
