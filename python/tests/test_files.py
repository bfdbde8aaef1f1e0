"""File sorts against the CLI, byte for byte, and the behaviour around them."""

from __future__ import annotations

import ctypes
import gzip
import io
import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import leftovers, run_cli

import oxsort


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "in.dat"
    oxsort.gensort(p, 30_000)
    return p


def lines_file(path: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    with open(path, "wb") as f:
        for _ in range(n):
            f.write(
                b"%s,%d,%s\n"
                % (
                    rng.choice([b"a", b"b", b"cc", b""]),
                    rng.randrange(-50, 50),
                    os.urandom(rng.randrange(0, 6)).hex().encode(),
                )
            )
    return path


@pytest.mark.parametrize(
    "ascii,skew,start", [(False, False, 0), (True, False, 7), (False, True, 0), (True, True, 1000)]
)
def test_gensort_matches_the_cli(
    tmp_path: Path, cli: str, ascii: bool, skew: bool, start: int
) -> None:
    ours, theirs = tmp_path / "py.dat", tmp_path / "cli.dat"
    st = oxsort.gensort(ours, 5000, start=start, ascii=ascii, skew=skew)
    flags = (["--ascii"] if ascii else []) + (["--skew"] if skew else [])
    run_cli(cli, "gen", "--records", "5000", "--start", str(start), *flags, str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()
    assert st.records == 5000 and st.to_dict()["checksum"] == oxsort.valsort(ours).checksum


@pytest.mark.parametrize("memory,passes", [("64M", 1), ("1M", 2)])
def test_sort_matches_the_cli_in_one_and_two_passes(
    tmp_path: Path, data: Path, cli: str, memory: str, passes: int
) -> None:
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    st = oxsort.sort(data, ours, memory=memory)
    run_cli(cli, "sort", str(data), "-o", str(theirs), "--memory", memory)
    assert ours.read_bytes() == theirs.read_bytes()
    assert st.passes == passes and st.records == 30_000
    assert st.to_dict()["records"] == 30_000
    assert (st.bytes_spilled > 0) == (passes == 2)
    assert leftovers(tmp_path) == ["cli.out", "in.dat", "py.out"]


@pytest.mark.parametrize(
    "args,cli_args",
    [
        (dict(lines=True), ["--lines"]),
        (dict(lines=True, keys="-t, -k2,2n"), ["--lines", "-t,", "-k2,2n"]),
        (
            dict(lines=True, keys="-t, -k1,1 -k2,2nr", unique=True),
            ["--lines", "-t,", "-k1,1", "-k2,2nr", "-u"],
        ),
        (
            dict(nul=False, record_size=100, fields="3,4,CH,D,1,2,BI,A"),
            ["--record-size", "100", "--fields", "3,4,CH,D,1,2,BI,A"],
        ),
    ],
)
def test_keys_and_layouts_match_the_cli(
    tmp_path: Path, cli: str, args: dict, cli_args: list[str]
) -> None:
    if args.get("lines"):
        src = lines_file(tmp_path / "in.txt", 20_000, 1)
    else:
        src = tmp_path / "in.dat"
        oxsort.gensort(src, 20_000)
    for memory in ("64M", "1M"):
        ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
        oxsort.sort([src], ours, memory=memory, **args)
        run_cli(cli, "sort", str(src), "-o", str(theirs), "--memory", memory, *cli_args)
        assert ours.read_bytes() == theirs.read_bytes(), (args, memory)


def test_control_statements(tmp_path: Path, data: Path, cli: str) -> None:
    stmts = " SORT FIELDS=(5,3,CH,D)\n SUM FIELDS=NONE\n"
    ctl = tmp_path / "ctl.txt"
    ctl.write_text(stmts)
    oxsort.sort(data, tmp_path / "py.out", control=stmts)
    run_cli(cli, "sort", str(data), "-o", str(tmp_path / "cli.out"), "--control", str(ctl))
    assert (tmp_path / "py.out").read_bytes() == (tmp_path / "cli.out").read_bytes()


def test_several_inputs_and_file_objects(tmp_path: Path, cli: str) -> None:
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    oxsort.gensort(a, 3000)
    oxsort.gensort(b, 2000, start=3000)
    run_cli(cli, "sort", str(a), str(b), "-o", str(tmp_path / "cli.out"))
    want = (tmp_path / "cli.out").read_bytes()
    oxsort.sort([a, b], tmp_path / "py.out")
    assert (tmp_path / "py.out").read_bytes() == want
    out = io.BytesIO()
    with open(a, "rb") as fa:
        oxsort.sort([fa, io.BytesIO(b.read_bytes())], out)
    assert out.getvalue() == want
    # A compressed stream (its mode is a number, not a string) is a binary file object too.
    gz = tmp_path / "a.dat.gz"
    with gzip.open(gz, "wb") as g:
        g.write(a.read_bytes() + b.read_bytes())
    with gzip.open(gz, "rb") as g:
        oxsort.sort(g, tmp_path / "gz.out")
    assert (tmp_path / "gz.out").read_bytes() == want


def test_merge_and_disorder(tmp_path: Path, cli: str) -> None:
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    oxsort.gensort(a, 3000)
    oxsort.gensort(b, 3000, start=3000)
    sa, sb = tmp_path / "sa.dat", tmp_path / "sb.dat"
    oxsort.sort(a, sa)
    oxsort.sort(b, sb)
    oxsort.merge([sa, sb], tmp_path / "py.out")
    oxsort.sort([a, b], tmp_path / "sorted.out")
    assert (tmp_path / "py.out").read_bytes() == (tmp_path / "sorted.out").read_bytes()
    with pytest.raises(oxsort.DisorderError) as e:
        oxsort.merge([sa, a], tmp_path / "bad.out")
    r = run_cli(
        cli,
        "sort",
        str(sa),
        str(a),
        "-o",
        str(tmp_path / "bad2.out"),
        "--control",
        str(_write(tmp_path / "m.ctl", " MERGE FIELDS=(1,10,CH,A)\n")),
        check=False,
    )
    assert r.returncode != 0 and str(e.value) in r.stderr
    assert not (tmp_path / "bad.out").exists()


def _write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p


def test_check_finds_the_first_disorder(tmp_path: Path, data: Path) -> None:
    raw = data.read_bytes()
    recs = [raw[i : i + 100] for i in range(0, len(raw), 100)]
    first = next(i for i in range(1, len(recs)) if recs[i][:10] < recs[i - 1][:10])
    d = oxsort.check(data)
    assert d is not None and d.record == first + 1 and d.to_dict()["path"] == str(data)
    oxsort.sort(data, tmp_path / "s.out")
    assert oxsort.check(tmp_path / "s.out") is None
    assert leftovers(tmp_path) == ["in.dat", "s.out"]


def test_valsort_matches_the_cli(tmp_path: Path, data: Path, cli: str) -> None:
    s = oxsort.valsort(data)
    r = run_cli(cli, "valsort", str(data), check=False)
    assert s.report.strip() in (r.stdout + r.stderr) and not s.sorted
    assert s.first_unordered is not None and s.records == 30_000
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    oxsort.gensort(a, 1000)
    oxsort.sort(a, a)
    oxsort.gensort(b, 1000, start=1000)
    oxsort.sort(b, b)
    whole = tmp_path / "ab.dat"
    whole.write_bytes(a.read_bytes() + b.read_bytes())
    assert oxsort.valsort([a, b]).to_dict() == oxsort.valsort(whole).to_dict()


def test_explain_gives_the_plan(data: Path, tmp_path: Path) -> None:
    assert oxsort.explain(data, tmp_path / "o", memory="64M")["passes"]["kind"] == "one"
    assert oxsort.explain([data], tmp_path / "o", memory="1M")["passes"]["kind"] == "two"
    assert not (tmp_path / "o").exists()


def test_errors_are_typed_named_and_lose_nothing(tmp_path: Path, data: Path, cli: str) -> None:
    out = tmp_path / "out.dat"
    missing = tmp_path / "missing.dat"
    with pytest.raises(oxsort.BadInputError) as e:
        oxsort.sort(missing, out)
    r = run_cli(cli, "sort", str(missing), "-o", str(out), check=False)
    assert r.stderr.strip() == f"oxsort: {e.value}"
    with pytest.raises(oxsort.SpecError, match=r"fields='1,10,CH,Q': column 9: "):
        oxsort.sort(data, out, fields="1,10,CH,Q")
    with pytest.raises(oxsort.SpecError, match=r"keys: argument '-k2,2Q': "):
        oxsort.sort(data, out, lines=True, keys="-k2,2Q")
    with pytest.raises(oxsort.SpecError, match="lines=True or nul=True"):
        oxsort.sort(data, out, keys="-k2")
    with pytest.raises(oxsort.SpecError, match="RECORD LENGTH=50 conflicts with record_size=100"):
        oxsort.sort(data, out, record_size=100, control=" RECORD TYPE=F,LENGTH=50")
    with pytest.raises(oxsort.SpecError, match="a copy .* has no key, but fields= gives one"):
        oxsort.sort(data, out, control=" OPTION COPY", fields="1,4,CH,A")
    with pytest.raises(oxsort.SpecError, match="too small"):
        oxsort.sort(data, out, memory=1000)
    with pytest.raises(oxsort.BadInputError, match="not a whole number of 100-byte records"):
        part = tmp_path / "part.dat"
        part.write_bytes(b"x" * 150)
        oxsort.sort(part, out)
    with open(data) as text, pytest.raises(oxsort.BadInputError, match="text mode"):
        oxsort.sort(text, out)  # type: ignore[arg-type]
    with pytest.raises(oxsort.BadInputError, match="text mode"):
        oxsort.sort(data, io.StringIO())  # type: ignore[arg-type]
    with open(data, "rb") as f, pytest.raises(oxsort.SpecError, match="resume=True needs"):
        oxsort.sort(f, out, resume=True)
    assert issubclass(oxsort.OutOfSpaceError, oxsort.Error)
    assert leftovers(tmp_path) == ["in.dat", "part.dat"]


def test_progress_callable_sees_every_phase(tmp_path: Path, data: Path) -> None:
    seen: list[tuple[str, int, int | None]] = []
    oxsort.sort(data, tmp_path / "o", memory="1M", progress=lambda *p: seen.append(p))
    phases = [p for p, _, _ in seen]
    assert "input" in phases and "merge" in phases
    assert all(t is None or 0 <= d <= t for _, d, t in seen)
    oxsort.sort(data, tmp_path / "o", progress=True)


def big_input(tmp_path: Path) -> Path:
    p = tmp_path / "big.dat"
    oxsort.gensort(p, 2_000_000)
    return p


def _interrupt_thread(ident: int) -> None:
    n = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(KeyboardInterrupt)
    )
    assert n == 1


def test_an_interrupt_from_another_thread_stops_the_sort(tmp_path: Path) -> None:
    src = big_input(tmp_path)
    out, temp = tmp_path / "out.dat", tmp_path / "tmp"
    temp.mkdir()
    started = threading.Event()
    outcome: list[BaseException | None] = []

    def work() -> None:
        try:
            oxsort.sort(
                src,
                out,
                memory="4M",
                temp_dirs=[temp],
                threads=1,
                progress=lambda *p: started.set(),
            )
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    t = threading.Thread(target=work)
    t.start()
    assert started.wait(30)
    t0 = time.monotonic()
    assert t.ident is not None
    _interrupt_thread(t.ident)
    t.join(10)
    assert time.monotonic() - t0 < 1.0
    assert len(outcome) == 1 and isinstance(outcome[0], KeyboardInterrupt)
    assert leftovers(temp) == [] and not out.exists()
    assert leftovers(tmp_path) == ["big.dat", "tmp"]


def test_an_interrupted_resumable_sort_goes_on_where_it_stopped(tmp_path: Path) -> None:
    src = big_input(tmp_path)
    out, temp = tmp_path / "out.dat", tmp_path / "tmp"
    temp.mkdir()
    merging = threading.Event()
    outcome: list[BaseException | None] = []

    def on_progress(phase: str, done: int, total: int | None) -> None:
        if phase == "merge":
            merging.set()

    def work() -> None:
        try:
            oxsort.sort(
                src,
                out,
                memory="4M",
                temp_dirs=[temp],
                threads=1,
                resume=True,
                progress=on_progress,
            )
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    t = threading.Thread(target=work)
    t.start()
    assert merging.wait(60)
    assert t.ident is not None
    _interrupt_thread(t.ident)
    t.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], KeyboardInterrupt)
    # The runs and journal stay for the resume; the partial output does not.
    assert [n for n in leftovers(temp) if n.startswith(".oxsort-resume-")]
    assert not out.exists()
    stats = oxsort.sort(src, out, memory="4M", temp_dirs=[temp], threads=1, resume=True)
    assert stats.runs_reused > 0 and stats.input_bytes_read == 0
    assert oxsort.valsort(out).sorted and leftovers(temp) == []
    assert oxsort.valsort(out).checksum == oxsort.valsort(src).checksum


def test_ctrl_c_stops_the_sort(tmp_path: Path) -> None:
    src = big_input(tmp_path)
    out = tmp_path / "out.dat"
    main = threading.get_ident()
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        oxsort.sort(src, out, memory="4M", threads=1)
    assert time.monotonic() - t0 < 1.3
    assert leftovers(tmp_path) == ["big.dat"]


def test_two_sorts_in_two_threads_run_together(tmp_path: Path, cli: str) -> None:
    src = big_input(tmp_path)
    events: list[tuple[float, int]] = []
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            oxsort.sort(
                src,
                tmp_path / f"out{i}",
                memory="16M",
                threads=1,
                progress=lambda *p: events.append((time.monotonic(), i)),
            )
        except BaseException as e:
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    # Each sort reports progress while the other is running: their events interleave.
    order = [i for _, i in sorted(events)]
    first_end = min(max(k for k, i in enumerate(order) if i == j) for j in (0, 1))
    assert set(order[:first_end]) == {0, 1}
    run_cli(cli, "sort", str(src), "-o", str(tmp_path / "cli"))
    want = (tmp_path / "cli").read_bytes()
    assert (tmp_path / "out0").read_bytes() == want == (tmp_path / "out1").read_bytes()
