"""DFSORT jobs through ``oxsort.sort(..., control=..., dd=...)`` against the CLI, byte for byte:
a JOINKEYS JCL step, OUTFIL with two outputs, OPTION MAINSIZE=, and the errors in the words of
the Python API (``dd=``, never a CLI flag)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import run_cli

import oxsort


def records(path: Path, n: int, width: int, key_at: int, seed: int) -> Path:
    """``n`` ``width``-byte records with a 6-digit key at ``key_at`` (0-based), keys repeating."""
    rng = random.Random(seed)
    out = bytearray()
    for i in range(n):
        rec = bytearray(b"%0*d" % (width, i))
        rec[key_at : key_at + 6] = b"%06d" % rng.randrange(n // 2)
        out += rec
    path.write_bytes(bytes(out))
    return path


JOIN_JCL = """\
//JOIN     EXEC PGM=SORT
//SORTJNF1 DD DSN=FIRST.FILE,DISP=SHR,DCB=(RECFM=FB,LRECL=20)
//SORTJNF2 DD DSN=SECOND.FILE,DISP=SHR,DCB=(RECFM=FB,LRECL=16)
//SORTOUT  DD DSN=JOINED.OUT,DISP=(NEW,CATLG)
//SYSIN    DD *
  JOINKEYS FILE=F1,FIELDS=(1,6,A)
  JOINKEYS FILE=F2,FIELDS=(11,6,A)
  JOIN UNPAIRED,F1
  REFORMAT FIELDS=(F1:1,20,F2:1,10,?),FILL=C'*'
  SORT FIELDS=(21,10,CH,D,1,6,CH,A)
/*
"""


def test_a_joinkeys_jcl_step_with_dd_gives_the_cli_bytes(tmp_path: Path, cli: str) -> None:
    f1 = records(tmp_path / "f1.dat", 3000, 20, 0, 1)
    f2 = records(tmp_path / "f2.dat", 2000, 16, 10, 2)
    ctl = tmp_path / "join.jcl"
    ctl.write_text(JOIN_JCL)
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    dd = {"FIRST.FILE": f1, "SECOND.FILE": f2}
    stats = oxsort.sort(control=JOIN_JCL, dd={**dd, "JOINED.OUT": ours}, memory="64M")
    run_cli(
        cli,
        "sort",
        "-q",
        "--memory",
        "64M",
        f"--control={ctl}",
        f"--dd=FIRST.FILE={f1}",
        f"--dd=SECOND.FILE={f2}",
        f"--dd=JOINED.OUT={theirs}",
    )
    assert ours.read_bytes() == theirs.read_bytes()
    assert stats.records_written * 31 == len(ours.read_bytes()) > 0


OUTFIL = """\
  SORT FIELDS=(1,6,CH,A)
  OUTFIL FNAMES=LOW,INCLUDE=(3,1,CH,LE,C'1')
  OUTFIL FNAMES=HIGH,SAVE,BUILD=(1,6,C'|',7,10)
"""


def test_outfil_with_two_outputs_gives_the_cli_bytes(tmp_path: Path, cli: str) -> None:
    data = records(tmp_path / "in.dat", 5000, 40, 0, 3)
    ctl = tmp_path / "outfil.ctl"
    ctl.write_text(OUTFIL)
    low, high = tmp_path / "low.py", tmp_path / "high.py"
    oxsort.sort(data, control=OUTFIL, record_size=40, dd={"LOW": low, "HIGH": high})
    cli_low, cli_high = tmp_path / "low.cli", tmp_path / "high.cli"
    run_cli(
        cli,
        "sort",
        "-q",
        str(data),
        "--record-size",
        "40",
        f"--control={ctl}",
        f"--dd=LOW={cli_low}",
        f"--dd=HIGH={cli_high}",
    )
    assert low.read_bytes() == cli_low.read_bytes() and len(low.read_bytes()) > 0
    assert high.read_bytes() == cli_high.read_bytes() and len(high.read_bytes()) > 0


def test_sortin_and_sortout_may_come_from_dd(tmp_path: Path, cli: str) -> None:
    data = records(tmp_path / "in.dat", 2000, 30, 4, 4)
    out = tmp_path / "out.dat"
    oxsort.sort(
        control="  SORT FIELDS=(5,6,CH,D)\n",
        record_size=30,
        dd={"SORTIN": [data, data], "SORTOUT": out},
    )
    theirs = tmp_path / "cli.dat"
    ctl = tmp_path / "s.ctl"
    ctl.write_text("  SORT FIELDS=(5,6,CH,D)\n")
    run_cli(
        cli,
        "sort",
        "-q",
        "--record-size",
        "30",
        f"--control={ctl}",
        str(data),
        str(data),
        "-o",
        str(theirs),
    )
    assert out.read_bytes() == theirs.read_bytes()


def test_mainsize_is_the_memory_budget(tmp_path: Path) -> None:
    data = records(tmp_path / "in.dat", 1000, 50, 0, 5)
    control = "  SORT FIELDS=(1,6,CH,A)\n  OPTION MAINSIZE=48M\n"
    plan = oxsort.explain(data, tmp_path / "out", control=control, record_size=50)
    assert plan["memory"] == 48 << 20, plan
    plan = oxsort.explain(data, tmp_path / "out", control=control, record_size=50, memory="32M")
    assert plan["memory"] == 32 << 20, plan
    stats = oxsort.sort(data, tmp_path / "out", control=control, record_size=50)
    assert stats.memory_budget == 48 << 20


def test_a_missing_dd_is_named_in_python_words(tmp_path: Path) -> None:
    data = records(tmp_path / "in.dat", 100, 40, 0, 6)
    with pytest.raises(oxsort.SpecError) as e:
        oxsort.sort(data, control=OUTFIL, record_size=40, dd={"LOW": tmp_path / "low"})
    msg = str(e.value)
    assert "HIGH" in msg and "dd={'HIGH': path}" in msg and "--dd" not in msg, msg
    with pytest.raises(oxsort.SpecError) as e:
        oxsort.sort(control=JOIN_JCL, dd={"FIRST.FILE": data, "JOINED.OUT": tmp_path / "j"})
    msg = str(e.value)
    assert "SECOND.FILE" in msg and "dd={'SECOND.FILE': path}" in msg and "--dd" not in msg, msg
    with pytest.raises(oxsort.SpecError) as e:
        oxsort.sort(data, tmp_path / "o", record_size=40, dd={"SORTOT": tmp_path / "x"})
    msg = str(e.value)
    assert "no DD SORTOT" in msg and "dd={'SORTOT'" in msg and "--dd" not in msg, msg


def test_no_input_or_output_at_all_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(oxsort.SpecError, match="no input given"):
        oxsort.sort(output=tmp_path / "o", control="  SORT FIELDS=(1,6,CH,A)\n")
    with pytest.raises(oxsort.SpecError, match="no output given"):
        oxsort.sort(tmp_path / "in", control="  SORT FIELDS=(1,6,CH,A)\n")
