"""``SUM ...,XSUM`` through ``oxsort.sort(..., control=..., dd={"SORTXSUM": ...})``: the records
SUM deletes go to SORTXSUM, compared with a naive reference here (a stable sort and a walk over
each group of equal keys)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import oxsort

CONTROL = """\
  RECORD TYPE=F,LENGTH=12
  SORT FIELDS=(1,4,CH,A)
  SUM FIELDS=(5,4,ZD),XSUM
"""


def reference(recs: list[bytes]) -> tuple[bytes, bytes]:
    """SORTOUT and SORTXSUM: a group's 4-digit sums while they fit 9999, the rest deleted."""
    out, xsum = bytearray(), bytearray()
    group: list | None = None
    for r in sorted(recs, key=lambda r: r[:4]):
        if group is not None and group[0][:4] == r[:4] and group[1] + int(r[4:8]) <= 9999:
            group[1] += int(r[4:8])
            xsum += r
            continue
        if group is not None:
            out += group[0][:4] + b"%04d" % group[1] + group[0][8:]
        group = [r, int(r[4:8])]
    if group is not None:
        out += group[0][:4] + b"%04d" % group[1] + group[0][8:]
    return bytes(out), bytes(xsum)


def test_xsum_writes_the_deleted_records_to_sortxsum(tmp_path: Path) -> None:
    rng = random.Random(25)
    recs = [
        rng.choice([b"AAAA", b"BBBB", b"CCCC"])
        + b"%04d" % (rng.randrange(5000, 9999) if rng.random() < 0.2 else rng.randrange(100))
        + b"%04d" % i
        for i in range(2000)
    ]
    data = tmp_path / "in.dat"
    data.write_bytes(b"".join(recs))
    out, dups = tmp_path / "out.dat", tmp_path / "dups.dat"
    oxsort.sort(control=CONTROL, dd={"SORTIN": data, "SORTOUT": out, "SORTXSUM": dups})
    want_out, want_xsum = reference(recs)
    assert len(want_xsum) > 0 and len(want_out) > 3 * 12
    assert out.read_bytes() == want_out
    assert dups.read_bytes() == want_xsum
    # XSUM without SORTXSUM: named in the words of dd=, nothing written.
    out.unlink()
    dups.unlink()
    with pytest.raises(Exception, match="SORTXSUM"):
        oxsort.sort(control=CONTROL, dd={"SORTIN": data, "SORTOUT": out})
    assert not out.exists()
