"""sort_array / argsort against NumPy's stable sort; sort_table against pyarrow's."""

from __future__ import annotations

import os

import numpy as np
import pytest

import oxsort

SEED = int(os.environ.get("OXSORT_SEED", "20261123"))
SIZES = [0, 1, 2, 63, 1000, 70_000]


def pattern(name: str, n: int, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Raw values of a test pattern, cast to ``dtype``."""
    if dtype.kind == "f":
        base = rng.standard_normal(n) * 1e3
    elif dtype.kind == "b":
        base = rng.integers(0, 2, n)
    else:
        info = np.iinfo(dtype)
        base = rng.integers(
            info.min,
            info.max,
            n,
            endpoint=True,
            dtype=np.int64 if info.min < 0 or info.bits < 64 else np.uint64,
        )
    if name == "few":
        base = base[rng.integers(0, min(3, n), n)] if n else base
    a = base.astype(dtype)
    if name == "ascending":
        a = np.sort(a, kind="stable")
    elif name == "descending":
        a = np.sort(a, kind="stable")[::-1].copy()
    elif name == "equal" and n:
        a[:] = a[0]
    if dtype.kind == "f" and n:
        specials = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf], dtype=dtype)
        a[rng.integers(0, n, max(1, n // 10))] = specials[rng.integers(0, 6, max(1, n // 10))]
    return a


DTYPES = [
    "u1",
    "u2",
    "u4",
    "u8",
    "i1",
    "i2",
    "i4",
    "i8",
    "f2",
    "f4",
    "f8",
    "?",
    ">i4",
    ">f8",
    ">u2",
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["random", "few", "ascending", "descending", "equal"])
def test_plain_arrays_match_numpy_stable_sort(dtype: str, name: str) -> None:
    rng = np.random.default_rng(SEED)
    for n in SIZES:
        a = pattern(name, n, np.dtype(dtype), rng)
        want = np.argsort(a, kind="stable")
        got = oxsort.argsort(a)
        assert got.dtype == np.int64
        assert np.array_equal(got, want), (dtype, name, n, SEED)
        s = oxsort.sort_array(a)
        assert s.dtype == a.dtype
        assert np.array_equal(s.view(np.uint8), np.sort(a, kind="stable").view(np.uint8))


def test_bytes_and_unicode_match_numpy() -> None:
    rng = np.random.default_rng(SEED)
    words = np.array([b"", b"a", b"ab", b"abc", b"b", b"\xff", b"a\x00b"], dtype="S4")
    a = words[rng.integers(0, len(words), 5000)]
    assert np.array_equal(oxsort.argsort(a), np.argsort(a, kind="stable"))
    u = np.array(["", "é", "z", "ab", "a", "\U0001f600", "Z"], dtype="<U3")[
        rng.integers(0, 7, 5000)
    ]
    assert np.array_equal(oxsort.argsort(u), np.argsort(u, kind="stable"))
    assert np.array_equal(oxsort.argsort(u.astype(">U3")), np.argsort(u, kind="stable"))


def records(n: int, rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype([("k", "<u8"), ("f", "<f4"), ("s", "S3"), ("i", ">i2")])
    a = np.empty(n, dtype=dt)
    a["k"] = rng.integers(0, 50, n)
    a["f"] = rng.choice(np.array([np.nan, -0.0, 0.0, 1.5, -2.0], dtype="f4"), n)
    a["s"] = rng.choice(np.array([b"x", b"ab", b"", b"abc"], dtype="S3"), n)
    a["i"] = rng.integers(-3, 3, n)
    return a


@pytest.mark.parametrize("order", [None, "k", ["f"], ["s", "k"], ["i", "f", "s"]])
def test_structured_arrays_match_numpy_with_ties_on_every_field(order: object) -> None:
    rng = np.random.default_rng(SEED)
    for n in SIZES:
        a = records(n, rng)
        want = np.argsort(a, order=order, kind="stable")
        assert np.array_equal(oxsort.argsort(a, order=order), want), (order, n, SEED)
        assert oxsort.sort_array(a, order=order).tobytes() == a[want].tobytes()


def python_oracle(a: np.ndarray, names: list[str], reverse: list[bool]) -> list[int]:
    """Stable sort by Python's own, one pass per field from the last (each stable)."""
    idx = list(range(len(a)))
    for name, rev in reversed(list(zip(names, reverse))):
        col = a[name].tolist()
        key = [(1, 0.0) if v != v else (0, v) for v in col]  # NaN last either way
        nan = [k[0] for k in key]
        idx.sort(key=lambda i, key=key: key[i][1], reverse=rev)
        idx.sort(key=lambda i, nan=nan: nan[i])
    return idx


def test_reverse_is_stable_descending_with_nan_last() -> None:
    rng = np.random.default_rng(SEED)
    a = records(5000, rng)
    names = ["k", "f", "s", "i"]
    got = oxsort.argsort(a, order=names, reverse=True)
    assert got.tolist() == python_oracle(a, names, [True] * 4)
    got = oxsort.argsort(a, order=["f", "k"], reverse=[True, False])
    assert got.tolist() == python_oracle(a, ["f", "k", "s", "i"], [True, False, False, False])
    x = rng.standard_normal(3000)
    x[::5] = np.nan
    got = oxsort.argsort(x, reverse=True)
    want = sorted(range(len(x)), key=lambda i: -x[i] if x[i] == x[i] else np.inf)
    assert got.tolist() == want


def test_non_contiguous_input_and_threads() -> None:
    rng = np.random.default_rng(SEED)
    a = rng.integers(0, 100, 200_001)[::2]
    want = np.argsort(a, kind="stable")
    for threads in (1, 2, 3):
        assert np.array_equal(oxsort.argsort(a, threads=threads), want)


def test_unsortable_dtypes_are_named() -> None:
    with pytest.raises(oxsort.SpecError, match="dtype object"):
        oxsort.argsort(np.array([1, "a"], dtype=object))
    nested = np.zeros(3, dtype=[("a", "u1"), ("b", [("c", "u1")])])
    with pytest.raises(oxsort.SpecError, match="field 'b' is a nested structure"):
        oxsort.sort_array(nested, order="a")
    sub = np.zeros(3, dtype=[("a", "u1"), ("v", "u1", (2,))])
    with pytest.raises(oxsort.SpecError, match="field 'v' is a sub-array"):
        oxsort.sort_array(sub)
    with pytest.raises(oxsort.SpecError, match="no field 'z'"):
        oxsort.sort_array(records(3, np.random.default_rng(0)), order="z")
    with pytest.raises(oxsort.SpecError, match="one-dimensional"):
        oxsort.sort_array(np.zeros((2, 2)))
    with pytest.raises(oxsort.SpecError, match="complex"):
        oxsort.argsort(np.zeros(3, dtype=complex))


def test_sort_table_matches_pyarrow() -> None:
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(SEED)
    n = 20_000
    t = pa.table(
        {
            "k": rng.integers(0, 10, n),
            "x": rng.standard_normal(n).round(1),
            "b": pa.array([bytes([v]) * 2 for v in rng.integers(0, 4, n)], pa.binary(2)),
            "payload": np.arange(n),
        }
    )
    by = [("k", "descending"), ("b", "ascending"), ("x", "descending")]
    got = oxsort.sort_table(t, by=by)
    assert got.equals(t.sort_by(by))
    assert oxsort.sort_table(t, by="x").equals(t.sort_by("x"))
    with pytest.raises(oxsort.SpecError, match="no column 'q'"):
        oxsort.sort_table(t, by="q")
