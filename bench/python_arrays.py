"""In-memory sorts from Python: oxsort.sort_array / argsort against NumPy's stable sorts.

usage: python bench/python_arrays.py RECORDS RUNS  -> CSV rows on stdout:
case,tool,records,run,seconds
Cases: sort_array of records (u8 key + 24-byte payload) by "k" vs np.sort(order="k",
kind="stable") (target >= 3x), argsort of float64 vs np.argsort(kind="stable") (target >= 2x).
Every result is checked against NumPy's before it counts.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import oxsort


def timed(f):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def main() -> None:
    n, runs = int(float(sys.argv[1])), int(sys.argv[2])
    rng = np.random.default_rng(1)
    rec = np.empty(n, dtype=[("k", "<u8"), ("p", "S24")])
    rec["k"] = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    rec["p"] = rng.integers(0, 256, (n, 24), dtype=np.uint8).view("S24").ravel()
    x = rng.standard_normal(n)
    for run in range(1, runs + 1):
        s_np, want = timed(lambda: np.sort(rec, order="k", kind="stable"))
        s_ox, got = timed(lambda: oxsort.sort_array(rec, order="k"))
        assert got.tobytes() == want.tobytes()
        del want, got
        a_np, want = timed(lambda: np.argsort(x, kind="stable"))
        a_ox, got = timed(lambda: oxsort.argsort(x))
        assert np.array_equal(got, want)
        del want, got
        for case, tool, s in [("sort_array", "numpy", s_np), ("sort_array", "oxsort", s_ox),
                              ("argsort", "numpy", a_np), ("argsort", "oxsort", a_ox)]:
            print(f"{case},{tool},{n},{run},{s:.4f}", flush=True)


if __name__ == "__main__":
    main()
