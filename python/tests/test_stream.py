"""Sorter: pushed chunks come back sorted, of the kind pushed; temp files never stay."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import leftovers

import oxsort


@pytest.mark.parametrize("kind", ["bytes", "memoryview", "numpy"])
@pytest.mark.parametrize("memory", ["64M", "1M"])
def test_pushed_records_come_back_sorted(tmp_path: Path, kind: str, memory: str) -> None:
    src = tmp_path / "in.dat"
    oxsort.gensort(src, 25_000)
    raw = src.read_bytes()
    oxsort.sort(src, tmp_path / "want.dat")
    want = (tmp_path / "want.dat").read_bytes()
    dt = np.dtype([("key", "S10"), ("rest", "S90")])
    temp = tmp_path / "t"
    temp.mkdir()
    with oxsort.Sorter(record_size=100, memory=memory, temp_dirs=[temp]) as s:
        for i in range(0, len(raw), 777 * 100):
            piece = raw[i : i + 777 * 100]
            if kind == "bytes":
                s.push(piece)
            elif kind == "memoryview":
                s.push(memoryview(piece))
            else:
                s.push(np.frombuffer(piece, dtype=dt))
        blocks = list(s.sorted(block_size=100_000))
    assert all(
        type(b).__name__ == {"bytes": "bytes", "memoryview": "memoryview", "numpy": "ndarray"}[kind]
        for b in blocks
    )
    got = b"".join(bytes(b) if kind != "numpy" else b.tobytes() for b in blocks)
    assert got == want
    assert all(len(bytes(b) if kind != "numpy" else b.tobytes()) % 100 == 0 for b in blocks)
    assert leftovers(temp) == []


def test_lines_stream_in_whole_lines(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = [b"%d,%s\n" % (rng.randrange(100), b"x" * rng.randrange(50)) for _ in range(20_000)]
    with oxsort.Sorter(lines=True, keys="-t, -k1,1n -s", memory="1M", temp_dirs=[tmp_path]) as s:
        for i in range(0, len(lines), 999):
            s.push(b"".join(lines[i : i + 999]))
        blocks = list(s.sorted(block_size=4096))
    assert all(b.endswith(b"\n") for b in blocks)
    want = sorted(lines, key=lambda x: int(x.split(b",")[0]))
    assert b"".join(blocks) == b"".join(want)
    assert leftovers(tmp_path) == []


def test_errors_and_early_exit_leave_no_temp_file(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), oxsort.Sorter(record_size=10, temp_dirs=[tmp_path]) as s:
        s.push(b"x" * 100)
        raise RuntimeError("caller failed")
    assert leftovers(tmp_path) == []
    with oxsort.Sorter(record_size=10, temp_dirs=[tmp_path]) as s:
        s.push(b"x" * 90)
        # Refused at the push, naming the chunk, not the sorter's temp file.
        with pytest.raises(oxsort.BadInputError, match="not a whole number") as e:
            s.push(b"x" * 95)
        assert str(e.value).startswith("push(): 95 bytes") and "5 bytes left over" in str(e.value)
        assert ".oxsort-stream" not in str(e.value)
        assert b"".join(s.sorted()) == b"x" * 90
    assert leftovers(tmp_path) == []
    with oxsort.Sorter(record_size=10, temp_dirs=[tmp_path]) as s:
        with pytest.raises(oxsort.BadInputError, match="push"):
            s.push("text")  # type: ignore[arg-type]
        s.push(b"y" * 1000)
        it = s.sorted(block_size=10)
        next(it)
    assert leftovers(tmp_path) == []
    with pytest.raises(oxsort.SpecError):
        oxsort.Sorter(lines=True, keys="-k1,1Q", temp_dirs=[tmp_path])
    assert leftovers(tmp_path) == []
