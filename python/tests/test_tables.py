"""Tables sorted by column names (oxsort.sort with by=, oxsort.sort_table past memory, the CLI's
--by) against pyarrow's sort_indices with the row number as the last key: every key type, nulls
first and last, NaN, descending, stability, one and two passes, several inputs, errors."""

from __future__ import annotations

import json
import os
import random
import subprocess
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import leftovers, run_cli

import oxsort

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pq = pytest.importorskip("pyarrow.parquet")
pacsv = pytest.importorskip("pyarrow.csv")

SEED = int(os.environ.get("OXSORT_TEST_SEED", "26"))


def make_table(n: int, seed: int = SEED, first: int = 0) -> pa.Table:
    """Every key type, each with nulls, few distinct values (so ties are many) and, for
    floats, NaN of both signs, infinities and both zeros."""
    rng = random.Random(seed)

    def col(gen, nulls=0.15):
        return [None if rng.random() < nulls else gen() for _ in range(n)]

    floats = [float("nan"), -float("nan"), 0.0, -0.0, float("inf"), -float("inf"), 1.5, -2.5, 3.0]
    base = datetime(2020, 1, 1, tzinfo=timezone.utc)
    return pa.table(
        {
            "row": pa.array(range(first, first + n), pa.int64()),
            "i8": pa.array(col(lambda: rng.randint(-128, 127)), pa.int8()),
            "i64": pa.array(col(lambda: rng.choice([-(2**63), -1, 0, 7, 2**63 - 1])), pa.int64()),
            "u32": pa.array(col(lambda: rng.choice([0, 1, 2**31, 2**32 - 1])), pa.uint32()),
            "u64": pa.array(col(lambda: rng.choice([0, 5, 2**63, 2**64 - 1])), pa.uint64()),
            "f32": pa.array(col(lambda: rng.choice(floats)), pa.float32()),
            "f64": pa.array(col(lambda: rng.choice(floats)), pa.float64()),
            "s": pa.array(
                col(lambda: rng.choice(["", "a", "ab", "b", "é", "a\x00", "zz"])), pa.string()
            ),
            "ls": pa.array(col(lambda: rng.choice(["x", "xy", "y"])), pa.large_string()),
            "bin": pa.array(
                col(lambda: rng.choice([b"", b"\x00", b"\xff", b"\x00\x01"])), pa.binary()
            ),
            "d": pa.array(
                col(lambda: date(2000, 1, 1) + timedelta(days=rng.randint(-5, 5))), pa.date32()
            ),
            "ts": pa.array(
                col(lambda: base + timedelta(seconds=rng.randint(-3, 3))),
                pa.timestamp("us", tz="UTC"),
            ),
            "dec": pa.array(
                col(lambda: Decimal(rng.randint(-300, 300)) / 100), pa.decimal128(10, 2)
            ),
            "b": pa.array(col(lambda: rng.random() < 0.5), pa.bool_()),
            "payload": pa.array(["p" * rng.randint(0, 40) for _ in range(n)], pa.string()),
        }
    )


KEY_COLUMNS = ["i8", "i64", "u32", "u64", "f32", "f64", "s", "ls", "bin", "d", "ts", "dec", "b"]


def expected_rows(table: pa.Table, by: list[tuple[str, str, str]]) -> list[int]:
    """The oracle: pyarrow's sort_indices, with nulls and NaN placed by helper columns (nulls
    where asked, NaN as the largest value) and the row number last (a stable order)."""
    cols, keys = {}, []
    for i, (name, order, nulls) in enumerate(by):
        c = table.column(name)
        null = pc.is_null(c)
        cols[f"n{i}"] = pc.cast(pc.invert(null) if nulls == "at_start" else null, pa.int8())
        keys.append((f"n{i}", "ascending"))
        if pa.types.is_floating(c.type):
            nan = pc.fill_null(pc.is_nan(c), False)
            cols[f"nan{i}"] = pc.cast(nan, pa.int8())
            keys.append((f"nan{i}", order))
        cols[f"v{i}"] = c
        keys.append((f"v{i}", order))
    cols["row"] = table.column("row")
    keys.append(("row", "ascending"))
    idx = pc.sort_indices(pa.table(cols), sort_keys=keys)
    return table.column("row").take(idx).to_pylist()


def spec(by: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [(n, o, p) for n, o, p in by]


def same_rows(got: pa.Table, table: pa.Table, order: list[int]) -> None:
    """``got`` is ``table``'s rows in ``order`` (by their row numbers), every value and the
    schema kept."""
    assert got.schema == table.schema
    assert got.column("row").to_pylist() == order
    want = table.take(pa.array(order))
    for name in table.column_names:
        a, b = got.column(name), want.column(name)
        if pa.types.is_floating(a.type):
            # NaN != NaN: compare the bits.
            width = pa.int32() if a.type == pa.float32() else pa.int64()
            a = pc.cast(a.combine_chunks().view(width), pa.int64())
            b = pc.cast(b.combine_chunks().view(width), pa.int64())
        assert a.to_pylist() == b.to_pylist(), name


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return make_table(3000)


@pytest.mark.parametrize("name", KEY_COLUMNS)
def test_every_key_type_both_directions_and_null_placements(tmp_path: Path, table, name) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(table, src, row_group_size=700)
    for order in ("ascending", "descending"):
        for nulls in ("at_end", "at_start"):
            by = [(name, order, nulls)]
            out = tmp_path / "out.parquet"
            stats = oxsort.sort(src, out, by=by)
            assert stats.records == table.num_rows
            same_rows(pq.read_table(out), table, expected_rows(table, by))


def test_several_keys_and_stability(tmp_path: Path, table) -> None:
    src = tmp_path / "in.arrow"
    with pa.OSFile(str(src), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    for by in (
        [("b", "ascending", "at_end"), ("s", "descending", "at_start")],
        [
            ("d", "descending", "at_end"),
            ("f64", "ascending", "at_start"),
            ("u32", "ascending", "at_end"),
        ],
        [("dec", "ascending", "at_start"), ("ls", "descending", "at_end")],
    ):
        out = tmp_path / "out.arrow"
        oxsort.sort([src], out, by=by)
        same_rows(pa.ipc.open_file(str(out)).read_all(), table, expected_rows(table, by))


def test_two_passes_within_a_small_budget(tmp_path: Path) -> None:
    t = make_table(150_000, seed=SEED + 1)
    src = tmp_path / "big.parquet"
    pq.write_table(t, src, row_group_size=20_000)
    temp = tmp_path / "tmp"
    temp.mkdir()
    by = [("s", "ascending", "at_end"), ("f64", "descending", "at_start")]
    stats = oxsort.sort(src, tmp_path / "out.parquet", by=by, memory="8M", temp_dirs=[temp])
    assert stats.passes == 2 and stats.runs > 1
    same_rows(pq.read_table(tmp_path / "out.parquet"), t, expected_rows(t, by))
    assert leftovers(temp) == []


def test_explain_plans_a_table_sort_without_sorting(tmp_path: Path) -> None:
    t = make_table(150_000, seed=SEED + 3)
    src = tmp_path / "big.parquet"
    pq.write_table(t, src, row_group_size=20_000)
    out = tmp_path / "out.parquet"
    by = [("s", "ascending", "at_end"), ("f64", "descending", "at_start")]
    plan = oxsort.explain(src, out, by=by, memory="8M")
    assert plan["rows"] == t.num_rows
    assert plan["keys"] == ["s ascending, nulls last", "f64 descending, nulls first"]
    assert [c.split(":")[0] for c in plan["schema"]] == t.column_names
    assert plan["engine"]["inputs"][0]["expected"] == plan["encoded_bytes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.parquet"]
    # The estimate from the first rows is within a tenth of what the sort then sorts, and the
    # sort spills as the plan's budget says it must.
    stats = oxsort.sort(src, out, by=by, memory="8M")
    assert abs(plan["encoded_bytes"] / stats.bytes - 1) < 0.1
    assert plan["encoded_bytes"] > plan["engine"]["geometry"]["arena_bytes"]
    assert stats.passes == 2


def test_cli_reads_standard_input_and_writes_standard_output(cli: str, tmp_path: Path) -> None:
    """A table on a pipe: CSV or an Arrow IPC stream in (the format given), any format out."""
    import subprocess

    rng = random.Random(SEED + 5)
    # More lines than the types are inferred from, so the rows read after them count too.
    n = 150_000
    t = pa.table(
        {
            "k": pa.array([rng.randint(0, 99) for _ in range(n)], pa.int64()),
            "name": pa.array([f"n{i}" for i in range(n)], pa.string()),
        }
    )
    src = tmp_path / "in.csv"
    pacsv.write_csv(t, src)

    def sort(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([cli, "sort", "-q", *args], input=stdin, capture_output=True)

    r = sort("--by", "k:desc", "--format", "csv", stdin=src.read_bytes())
    assert r.returncode == 0, r.stderr
    got = pacsv.read_csv(pa.py_buffer(r.stdout))
    want = t.take(pc.sort_indices(t, sort_keys=[("k", "descending")]))  # stable
    assert got.column("name").to_pylist() == want.column("name").to_pylist()

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    r = sort(
        "--by",
        "name",
        "--format",
        "arrows",
        "--output-format",
        "parquet",
        "-o",
        "-",
        stdin=sink.getvalue().to_pybytes(),
    )
    assert r.returncode == 0, r.stderr
    got = pq.read_table(pa.BufferReader(r.stdout))
    assert got.column("name").to_pylist() == sorted(t.column("name").to_pylist())

    for args, why in [
        (("--by", "k"), "give it"),
        (("--by", "k", "--format", "parquet"), "cannot come as a stream"),
        (("--by", "k", "--format", "csv", "-", "-"), "named twice"),
    ]:
        r = sort(*args, stdin=src.read_bytes())
        assert r.returncode != 0 and why in r.stderr.decode(), (args, r.stderr)


def test_csv_column_types_given(cli: str, tmp_path: Path) -> None:
    """types= (and the CLI's --column-type) replace the types inferred from a CSV's first rows."""
    src = tmp_path / "codes.csv"
    src.write_text("code,amount\n10,2.5\n9,10.25\n007,1.10\n")
    out = tmp_path / "out.csv"
    oxsort.sort(src, out, by=["code"], types={"code": "string", "amount": "Decimal128(10, 2)"})
    assert out.read_text() == "code,amount\n007,1.10\n10,2.50\n9,10.25\n"
    plan = oxsort.explain(src, out, by=["code"], types={"code": "string"})
    assert "code: Utf8 (nullable)" in plan["schema"]
    with pytest.raises(oxsort.SpecError, match="types=.*'numeric' is not a column type"):
        oxsort.sort(src, out, by=["code"], types={"code": "numeric"})
    r = run_cli(
        cli, "sort", str(src), "-o", str(out), "--by", "code:desc", "--column-type", "code=int64"
    )
    assert out.read_text().splitlines()[1:] == ["10,2.5", "9,10.25", "7,1.1"], r.stderr


def test_several_inputs_are_one_table(tmp_path: Path) -> None:
    parts = [make_table(1000, seed=SEED + 2 + i, first=1000 * i) for i in range(3)]
    paths = []
    for i, p in enumerate(parts):
        paths.append(tmp_path / f"p{i}.parquet")
        pq.write_table(p, paths[-1], row_group_size=300)
    whole = pa.concat_tables(parts)
    by = [("b", "ascending", "at_end")]  # few values: ties everywhere, across the files
    oxsort.sort(paths, tmp_path / "out.parquet", by=by)
    same_rows(pq.read_table(tmp_path / "out.parquet"), whole, expected_rows(whole, by))


def test_csv_in_and_out(tmp_path: Path) -> None:
    t = pa.table(
        {"row": list(range(6)), "name": ["b", "a", None, "b", "c", "a"], "v": [3, 1, 2, 2, 0, 1]}
    )
    pacsv.write_csv(t, tmp_path / "in.csv")
    oxsort.sort(tmp_path / "in.csv", tmp_path / "out.csv", by=["name", ("v", "descending")])
    got = pacsv.read_csv(tmp_path / "out.csv")
    by = [("name", "ascending", "at_end"), ("v", "descending", "at_end")]
    # An empty field is a null (as arrow's CSV reader reads it).
    nulls = pacsv.ConvertOptions(strings_can_be_null=True)
    want = expected_rows(pacsv.read_csv(tmp_path / "in.csv", convert_options=nulls), by)
    assert got.column("row").to_pylist() == want


@pytest.mark.parametrize("sep", [";", "|", "\t"])
def test_csv_separated_otherwise_than_by_commas(cli: str, tmp_path: Path, sep: str) -> None:
    """A .csv file whose header has no comma but semicolons (as spreadsheets write CSV where the
    comma is the decimal mark), tabs or pipes is read by that separator, from a file or standard
    input, and a CSV output keeps it; quoted separators stay in their values."""
    t = pa.table(
        {
            "row": list(range(8)),
            "name": ["b", "a", f"x{sep}y", "b", "c", "a", "z", "a"],
            "v": ["3,5", "1,0", "2,25", "2,0", "0,5", "1,75", "9", "0"],
        }
    )
    src = tmp_path / "in.csv"
    pacsv.write_csv(t, src, write_options=pacsv.WriteOptions(delimiter=sep))
    assert "," not in src.read_text().splitlines()[0]
    by = [("name", "ascending", "at_end"), ("v", "descending", "at_end")]
    want = expected_rows(t, by)
    out = tmp_path / "out.csv"
    oxsort.sort(src, out, by=["name", ("v", "descending")])
    assert out.read_text().splitlines()[0] == sep.join(["row", "name", "v"])
    got = pacsv.read_csv(out, parse_options=pacsv.ParseOptions(delimiter=sep))
    assert got.column("row").to_pylist() == want
    assert got.column("name").to_pylist() == [t.column("name")[i].as_py() for i in want]
    r = subprocess.run(
        [cli, "sort", "-", "--format", "csv", "-o", "-", "--by", "name,v:desc", "--quiet"],
        input=src.read_bytes(),
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    piped = pacsv.read_csv(pa.py_buffer(r.stdout), parse_options=pacsv.ParseOptions(delimiter=sep))
    assert piped.column("row").to_pylist() == want


def test_columns_named_with_colons_commas_and_quotes(cli: str, tmp_path: Path) -> None:
    """A column whose name holds `:` or `,` (or a quote) is named in double quotes, a quote in
    it doubled; an unclosed quote is refused, naming the key."""
    t = pa.table(
        {
            "a:desc": [2, 1, 2, 1, 3],
            "x,y": ["p", "q", "o", "r", "s"],
            'say "hi"': [0] * 5,
            "row": list(range(5)),
        }
    )
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(t, src)
    r = run_cli(cli, "sort", str(src), "-o", str(out), "--by", '"a:desc":desc,"x,y"', "--quiet")
    assert r.returncode == 0, r.stderr
    by = [("a:desc", "descending", "at_end"), ("x,y", "ascending", "at_end")]
    assert pq.read_table(out).equals(t.take(expected_rows(t, by)))
    r = run_cli(cli, "sort", str(src), "-o", str(out), "--by", '"say ""hi""":desc', "--quiet")
    assert r.returncode == 0, r.stderr
    # The Python door: a tuple's name is the name whatever it holds; a string is a key list.
    want = t.take(expected_rows(t, by))
    oxsort.sort(src, out, by=[("a:desc", "descending"), ("x,y",)])
    assert pq.read_table(out).equals(want)
    oxsort.sort(src, out, by='"a:desc":desc,"x,y"')
    assert pq.read_table(out).equals(want)
    no = tmp_path / "no.parquet"
    r = run_cli(cli, "sort", str(src), "-o", str(no), "--by", '"a:desc', check=False)
    assert r.returncode != 0 and "quote" in r.stderr, r.stderr
    assert not no.exists()


def test_sort_table_past_memory(table) -> None:
    by = [("s", "descending"), ("ts", "ascending", "at_start")]
    got = oxsort.sort_table(table, by=by, memory="64M")
    full = [("s", "descending", "at_end"), ("ts", "ascending", "at_start")]
    same_rows(got, table, expected_rows(table, full))
    # Keys the in-memory path cannot order (strings, nulls) go through the engine by themselves.
    got = oxsort.sort_table(table, by=["s"])
    same_rows(got, table, expected_rows(table, [("s", "ascending", "at_end")]))


def test_errors_name_the_problem_and_leave_nothing(tmp_path: Path, table) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    out = tmp_path / "out.parquet"
    with pytest.raises(oxsort.SpecError, match=r"no column 'nope'.*row, i8, i64"):
        oxsort.sort(src, out, by=["nope"])
    with pytest.raises(oxsort.SpecError, match="'s'.*named twice"):
        oxsort.sort(src, out, by=["s", ("s", "descending")])
    with pytest.raises(oxsort.SpecError, match="'sideways'"):
        oxsort.sort(src, out, by=[("s", "sideways")])
    other = tmp_path / "other.parquet"
    pq.write_table(table.drop_columns(["payload"]), other)
    with pytest.raises(
        oxsort.SpecError, match=r"other.parquet.*in.parquet.*15 columns, not 16|other"
    ):
        oxsort.sort([src, other], out, by=["s"])
    lists = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"l": [[1], [2]]}), lists)
    with pytest.raises(oxsort.SpecError, match="(?i)'l'.*list"):
        oxsort.sort(lists, out, by=["l"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "in.parquet",
        "lists.parquet",
        "other.parquet",
    ]


def test_cli_sorts_a_parquet_file_by_columns(cli: str, tmp_path: Path, table) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(table, src, row_group_size=500)
    out = tmp_path / "out.parquet"
    r = run_cli(
        cli, "sort", str(src), "-o", str(out), "--by", "u64:desc:nulls_first,s", "--memory", "64M"
    )
    assert "Rows: 3000" in r.stderr
    by = [("u64", "descending", "at_start"), ("s", "ascending", "at_end")]
    same_rows(pq.read_table(out), table, expected_rows(table, by))
    r = run_cli(cli, "sort", str(src), "-o", str(out), "--by", "zz", check=False)
    assert r.returncode != 0 and "no column 'zz'" in r.stderr
    # The CLI's explain gives the plan the Python door gives, as text and as JSON.
    args = ("explain", str(src), "-o", str(out), "--by", "u64:desc:nulls_first,s")
    text = run_cli(cli, *args).stdout
    assert text.startswith("table sort\n") and "3000 rows of about" in text, text
    assert "u64 descending, nulls first; s ascending, nulls last" in text, text
    plan = json.loads(run_cli(cli, *args, "--json").stdout)
    assert plan["rows"] == 3000 and plan["keys"] == oxsort.explain(src, out, by=by)["keys"]


def test_cli_resumes_a_table_sort_killed_anywhere(cli: str, tmp_path: Path) -> None:
    """``--resume``: a two-pass table sort killed with SIGKILL at moments spread over reading,
    run formation and the merge writes, when run again, the uninterrupted sort's rows, takes
    over the runs it journaled, and leaves nothing behind; a changed input is refused with the
    reason, ``--restart`` starts over, and standard input cannot be resumed."""
    import signal
    import subprocess
    import time

    table = make_table(150_000)
    src = tmp_path / "in.parquet"
    pq.write_table(table, src, row_group_size=20_000)
    out_dir, temp = tmp_path / "out", tmp_path / "temp"
    out_dir.mkdir()
    temp.mkdir()
    out = out_dir / "sorted.parquet"
    by = "s,u64:desc"
    args = [cli, "sort", str(src), "-o", str(out), "--by", by, "--memory", "8M"]
    args += ["--temp-dir", str(temp), "--threads", "2", "--no-progress", "--stats=json"]

    def stats(r: subprocess.CompletedProcess[str]) -> dict:
        return json.loads([x for x in r.stderr.splitlines() if x.startswith("{")][-1])

    def nothing_left(what: str) -> None:
        assert leftovers(temp) == [], what
        assert leftovers(out_dir) == ["sorted.parquet"], what

    t0 = time.monotonic()
    r = subprocess.run([*args, "--resume"], capture_output=True, text=True)
    full = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    fresh = stats(r)
    assert fresh["runs"] >= 4, fresh
    order = expected_rows(table, [("s", "ascending", "at_end"), ("u64", "descending", "at_end")])
    same_rows(pq.read_table(out), table, order)
    nothing_left("uninterrupted")

    rng = random.Random(SEED)
    kills = 8
    reused = 0
    for k in range(kills):
        out.unlink()
        at = full * (k + rng.random()) / kills
        t0 = time.monotonic()
        child = subprocess.Popen(
            [*args, "--resume"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # Anywhere: before the journal exists and after it is gone too, the output's
        # temporary is the next sort's to reclaim (its owner's lock died with it).
        time.sleep(max(0.0, at - (time.monotonic() - t0)))
        child.send_signal(signal.SIGKILL)
        child.wait()
        r = subprocess.run([*args, "--resume"], capture_output=True, text=True)
        what = f"kill {k} at {at:.2f} s of {full:.2f} s"
        assert r.returncode == 0, f"{what}: {r.stderr}"
        same_rows(pq.read_table(out), table, order)
        reused += stats(r)["runs_reused"] > 0
        nothing_left(what)
    assert reused > 0, "no kill left a run to take over"

    def kill_once_a_run_is_journaled(run: list[str]) -> None:
        child = subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not any('"run":' in p.read_text() for p in temp.glob(".oxsort-resume-*/journal")):
            assert time.monotonic() < deadline and child.poll() is None, "no run was journaled"
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
        child.wait()

    # Resumed on another number of threads, in the middle of reading: it is fed the same rows
    # in the same order (a resumable sort's rows come in row group order, not a batch of each
    # reader in turn), so the runs it takes over hold what it skips.
    out.unlink()
    kill_once_a_run_is_journaled([*args, "--resume"])
    one_thread = [*args, "--resume"]
    one_thread[one_thread.index("--threads") + 1] = "1"
    r = subprocess.run(one_thread, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 0 < stats(r)["runs_reused"] < fresh["runs"], stats(r)
    same_rows(pq.read_table(out), table, order)
    nothing_left("resumed on one thread")

    # A resumable sort killed once its journal lists a run; then the input changes.
    kill_once_a_run_is_journaled([*args, "--resume"])
    pq.write_table(make_table(150_000, seed=SEED + 1), src, row_group_size=20_000)
    r = subprocess.run([*args, "--resume"], capture_output=True, text=True)
    assert r.returncode != 0 and "journal" in r.stderr and "changed" in r.stderr, r.stderr
    r = subprocess.run([*args, "--resume", "--restart"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out).num_rows == 150_000
    nothing_left("restarted")

    csv = tmp_path / "in.csv"
    csv.write_text("a,b\n2,x\n1,y\n")
    r = subprocess.run(
        [cli, "sort", "--format", "csv", "--by", "a", "-o", str(tmp_path / "o.csv"), "--resume"],
        input=csv.read_text(),
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "standard input cannot be read again" in r.stderr, r.stderr


def test_parquet_codecs_kept_and_those_not_read_named(cli: str, tmp_path: Path) -> None:
    """gzip, zstd and LZ4 pages are read and the output keeps the input's codec; Brotli pages
    (a codec oxsort does not read) are refused before any row, naming the file, row group and
    column, and nothing is left."""
    t = make_table(500)
    order = expected_rows(t, [("i64", "ascending", "at_end")])
    for codec in ["gzip", "zstd", "lz4", "none"]:
        src, out = tmp_path / f"in-{codec}.parquet", tmp_path / f"out-{codec}.parquet"
        pq.write_table(t, src, compression=codec)
        run_cli(cli, "sort", str(src), "-o", str(out), "--by", "i64", "-q")
        same_rows(pq.read_table(out), t, order)
        got = pq.ParquetFile(out).metadata.row_group(0).column(0).compression
        assert got == ("UNCOMPRESSED" if codec == "none" else codec.upper()), got
    src = tmp_path / "in-brotli.parquet"
    pq.write_table(t, src, compression="brotli")
    r = run_cli(
        cli, "sort", str(src), "-o", str(tmp_path / "o.parquet"), "--by", "i64", check=False
    )
    assert r.returncode != 0, r.stderr
    assert "in-brotli.parquet: row group 0, column 'row'" in r.stderr, r.stderr
    assert "compressed with BROTLI, which oxsort does not read" in r.stderr, r.stderr
    assert not (tmp_path / "o.parquet").exists()


def test_parquet_dictionary_kept_where_the_input_kept_it(cli: str, tmp_path: Path) -> None:
    """A Parquet output builds a column's dictionary where the input's data pages were
    dictionary encoded, and writes plain pages where the input wrote them (no dictionary asked
    for, or one that outgrew its limit and fell back)."""
    rng = random.Random(SEED)
    n = 40_000
    t = pa.table(
        {
            "row": pa.array(range(n), pa.int64()),
            "few": pa.array([rng.choice(["red", "green", "blue"]) for _ in range(n)]),
            "plain": pa.array([rng.randrange(10**12) for _ in range(n)], pa.int64()),
            "overgrown": pa.array([f"value-{rng.randrange(10**12):012d}" for _ in range(n)]),
        }
    )
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(t, src, use_dictionary=["few", "overgrown"], dictionary_pagesize_limit=4096)
    before = pq.ParquetFile(src).metadata.row_group(0)
    assert before.column(3).has_dictionary_page  # the fallback: a dictionary, then plain pages
    run_cli(cli, "sort", str(src), "-o", str(out), "--by", "few,plain", "-q")
    same_rows(
        pq.read_table(out),
        t,
        expected_rows(t, [("few", "ascending", "at_end"), ("plain", "ascending", "at_end")]),
    )
    after = pq.ParquetFile(out).metadata.row_group(0)
    got = {after.column(i).path_in_schema: after.column(i).has_dictionary_page for i in range(4)}
    assert got == {"row": False, "few": True, "plain": False, "overgrown": False}, got


def test_rows_longer_than_a_record_sort_and_nothing_is_left(cli: str, tmp_path: Path) -> None:
    """Rows of hundreds of kB (a text column longer than one of the engine's records) sort
    like any other, in one pass and in two within a small budget; their payloads' file leaves
    nothing in the temp directory. A resumable sort cannot find such a file again: it names
    the row that is too long and writes nothing."""
    rng = random.Random(SEED)
    n = 600

    def text(i: int) -> str | None:
        r = rng.random()
        if r < 0.1:
            return None
        if r < 0.4:
            return chr(97 + i % 26) * rng.randint(65_000, 300_000)
        return f"short-{i}"

    t = pa.table(
        {
            "row": pa.array(range(n), pa.int64()),
            "k": pa.array([rng.randint(0, 40) for _ in range(n)], pa.int32()),
            "text": pa.array([text(i) for i in range(n)], pa.large_string()),
        }
    )
    src = tmp_path / "in.parquet"
    pq.write_table(t, src)
    order = expected_rows(t, [("k", "descending", "at_end")])
    for memory in ["512M", "40M"]:
        tmp, out = tmp_path / f"tmp-{memory}", tmp_path / f"out-{memory}.parquet"
        tmp.mkdir()
        by = ["--by", "k:desc", "--memory", memory, "--temp-dir", str(tmp), "-q"]
        run_cli(cli, "sort", str(src), "-o", str(out), *by)
        same_rows(pq.read_table(out), t, order)
        assert list(tmp.iterdir()) == []
    # The plan shows the payloads put beside the runs (the first rows are all of the table's
    # here: the estimate is their bytes, give or take the encoding), and writes nothing.
    tmp = tmp_path / "tmp-512M"
    plan = json.loads(
        run_cli(
            cli, "explain", str(src), "-o", str(out), "--by", "k", "--temp-dir", str(tmp), "--json"
        ).stdout
    )
    text_bytes = sum(len(v) for v in t.column("text").to_pylist() if v and len(v) > 65_000)
    assert plan["long_rows_dir"] == str(tmp)
    assert text_bytes <= plan["long_row_bytes"] <= text_bytes + 64 * n, plan["long_row_bytes"]
    assert list(tmp.iterdir()) == []
    out = tmp_path / "resumed.parquet"
    r = run_cli(cli, "sort", str(src), "-o", str(out), "--by", "k", "--resume", check=False)
    assert r.returncode != 0
    assert "in.parquet: row" in r.stderr and "more than the 65531-byte maximum" in r.stderr, (
        r.stderr
    )
    assert not out.exists()
    # Its plan says so too; without --resume the plan is made.
    r = run_cli(cli, "explain", str(src), "-o", str(out), "--by", "k", "--resume", check=False)
    assert r.returncode != 0 and "more than the 65531-byte maximum" in r.stderr, r.stderr


def test_csv_ending_inside_a_quoted_value_is_refused(cli: str, tmp_path: Path) -> None:
    """A CSV quote that is never closed would take every row after it into one value: the sort
    names the file and the line the quote opened on, from a file or standard input, and writes
    nothing. Closed quotes (doubled inside, over several lines, in the middle of a field) sort
    as values."""
    rows = [f"{i},v{i}" for i in range(5000)]
    rows[4000] = '4000,"never closed'
    bad = tmp_path / "bad.csv"
    bad.write_text("k,v\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out.csv"
    r = run_cli(cli, "sort", str(bad), "-o", str(out), "--by", "k", check=False)
    assert r.returncode == 1, r.stderr
    assert "bad.csv: the input ends inside a quoted value opened on line 4002" in r.stderr, r.stderr
    assert not out.exists()
    r = subprocess.run(
        [cli, "sort", "--format", "csv", "--by", "k"],
        input=bad.read_bytes(),
        capture_output=True,
        check=False,
    )
    assert r.returncode == 1 and b"opened on line 4002" in r.stderr, r.stderr

    good = tmp_path / "good.csv"
    good.write_text('k,v\n3,"say ""hi"""\n1,5"\n2,"two\nlines"\n')
    run_cli(cli, "sort", str(good), "-o", str(out), "--by", "k", "-q")
    got = pacsv.read_csv(out)
    assert got.column("v").to_pylist() == ['5"', "two\nlines", 'say "hi"']


def test_dictionary_columns_into_an_arrow_file(cli: str, tmp_path: Path) -> None:
    """An Arrow IPC file holds one dictionary per column for all its batches: dictionary
    columns of many batches (each decoded batch has its own dictionary) are written on one
    growing dictionary, their values kept."""
    rng = random.Random(SEED)
    n = 60_000
    words = [f"w{i}" for i in range(300)]
    t = pa.table(
        {
            "row": pa.array(range(n), pa.int64()),
            "k": pa.array([rng.randint(0, 50) for _ in range(n)], pa.int32()),
            "c": pa.array(
                [None if rng.random() < 0.1 else rng.choice(words[:40]) for _ in range(n)]
            ).dictionary_encode(),
        }
    )
    order = expected_rows(t, [("k", "ascending", "at_end")])
    for src in [tmp_path / "in.parquet", tmp_path / "in.arrow"]:
        if src.suffix == ".parquet":
            pq.write_table(t, src, row_group_size=7_000)
        else:
            with pa.ipc.new_file(src, t.schema) as w:
                for b in t.to_batches(max_chunksize=7_000):
                    w.write_batch(b)
        out = tmp_path / "out.arrow"
        run_cli(cli, "sort", str(src), "-o", str(out), "--by", "k", "-q")
        got = pa.ipc.open_file(out).read_all()
        assert got.schema == t.schema
        assert got.column("row").to_pylist() == order
        want = t.take(pa.array(order)).column("c").cast(pa.string()).to_pylist()
        assert got.column("c").cast(pa.string()).to_pylist() == want


def test_row_checksum_adds_up_over_parts_orders_and_formats(tmp_path: Path) -> None:
    """``row_checksum=True``: a sum of the rows' contents that the same rows give whatever
    their order, file format or split into parts (modulo 2**64), and another row does not."""
    table = make_table(6_000)
    by = ["s", ("f64", "descending")]
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=700)

    def rows_sum(*tables: pa.Table, name: str = "t") -> int:
        paths = []
        for i, t in enumerate(tables):
            if i % 2:
                p = tmp_path / f"{name}{i}.arrow"
                with pa.ipc.new_file(p, t.schema) as w:
                    w.write_table(t)
            else:
                p = tmp_path / f"{name}{i}.parquet"
                pq.write_table(t, p, row_group_size=500)
            paths.append(p)
        stats = oxsort.sort(
            paths, tmp_path / f"{name}.out.parquet", by=by, row_checksum=True, memory="64M"
        )
        assert stats.records == sum(t.num_rows for t in tables)
        assert len(stats.rows_checksum) == 16
        return int(stats.rows_checksum, 16)

    whole = rows_sum(table, name="whole")
    shuffled = table.take(random.Random(SEED).sample(range(6_000), 6_000))
    assert rows_sum(shuffled.slice(0, 3_500), shuffled.slice(3_500), name="two") == whole
    parts = [rows_sum(table.slice(i, 2_000), name=f"p{i}") for i in range(0, 6_000, 2_000)]
    assert sum(parts) % (1 << 64) == whole
    # One value changed (a payload column, not a key): another sum.
    payload = table.column("payload").to_pylist()
    payload[4321] += "!"
    changed = table.set_column(table.schema.get_field_index("payload"), "payload", [payload])
    assert rows_sum(changed, name="changed") != whole
    # Not asked for: empty; a record sort has no rows to sum.
    plain = oxsort.sort([tmp_path / "in.parquet"], tmp_path / "plain.parquet", by=by)
    assert plain.rows_checksum == ""
    (tmp_path / "r").write_bytes(b"b\na\n")
    with pytest.raises(oxsort.SpecError, match="row_checksum=True sums a table sort's rows"):
        oxsort.sort([tmp_path / "r"], tmp_path / "r.out", lines=True, row_checksum=True)
    assert not (tmp_path / "r.out").exists()


def test_a_named_pipe_is_read_once_from_its_first_byte(cli: str, tmp_path: Path) -> None:
    """A table named by a pipe (``<(zcat t.csv.gz)``, a FIFO) is a stream: read once, the bytes
    its header and types came from kept, so every row is sorted (a CSV longer than the rows
    its types are inferred from lost them when the pipe was opened again). An Arrow IPC stream
    under a ``.arrow`` name is read as a stream; Parquet cannot come through a pipe; a
    directory is named as one. Nothing is written on error."""
    import threading

    n = 150_000  # past the 100,000 rows CSV types are inferred from
    rng = random.Random(SEED)
    keys = [rng.randint(0, 10**6) for _ in range(n)]
    csv_text = "k,v\n" + "".join(f"{k},v{i}\n" for i, k in enumerate(keys))
    stream = tmp_path / "t.arrows"
    t = pa.table({"k": keys, "v": [f"v{i}" for i in range(n)]})
    with pa.ipc.new_stream(stream, t.schema) as w:
        w.write_table(t)

    def through_pipe(name: str, data: bytes, *args: str) -> subprocess.CompletedProcess[str]:
        fifo = tmp_path / name
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)

        def write() -> None:
            try:
                with open(fifo, "wb") as f:
                    f.write(data)
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=write)
        writer.start()
        # (A sort that opened the pipe again would wait for a writer forever.)
        r = subprocess.run(
            [cli, "sort", str(fifo), *args], capture_output=True, text=True, timeout=120
        )
        if writer.is_alive():  # refused before opening it: let the writer go
            with open(fifo, "rb") as f:
                f.read()
        writer.join()
        return r

    order = sorted(range(n), key=lambda i: keys[i])
    out = tmp_path / "out.csv"
    r = through_pipe("in.csv", csv_text.encode(), "-o", str(out), "--by", "k", "-q")
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "k,v" and len(lines) == n + 1
    assert lines[1:] == [f"{keys[i]},v{i}" for i in order]

    out = tmp_path / "out.parquet"
    r = through_pipe("in.arrow", stream.read_bytes(), "-o", str(out), "--by", "k", "-q")
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out).column("v").to_pylist() == [f"v{i}" for i in order]

    pq.write_table(t, tmp_path / "t.parquet")
    out = tmp_path / "refused.parquet"
    r = through_pipe(
        "in.parquet", (tmp_path / "t.parquet").read_bytes(), "-o", str(out), "--by", "k"
    )
    assert r.returncode != 0
    assert "a pipe: a parquet file is read from its end and cannot come as a stream" in r.stderr
    assert not out.exists()
    (tmp_path / "dir.parquet").mkdir()
    r = run_cli(
        cli, "sort", str(tmp_path / "dir.parquet"), "-o", str(out), "--by", "k", check=False
    )
    assert r.returncode != 0 and "a directory with no table file in it" in r.stderr, r.stderr
    assert not out.exists()


def test_a_dataset_directory_is_its_files_in_name_order(cli: str, tmp_path: Path) -> None:
    """A directory as the input (a dataset written as part files, with a writer's markers
    beside them) sorts its table files in name order, as if each were named; a directory
    partitioned into subdirectories is refused, naming one."""
    table = make_table(9_000)
    data = tmp_path / "data"
    data.mkdir()
    for i, name in enumerate(["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]):
        pq.write_table(table.slice(i * 3_000, 3_000), data / name)
    (data / "_SUCCESS").write_bytes(b"")
    (data / ".part-00000.parquet.crc").write_bytes(b"not a table")
    by = [("s", "ascending", "at_end"), ("i64", "descending", "at_end")]
    out = tmp_path / "out.parquet"
    run_cli(cli, "sort", str(data), "-o", str(out), "--by", "s,i64:desc", "-q")
    same_rows(pq.read_table(out), table, expected_rows(table, by))
    (data / "k=1").mkdir()
    r = run_cli(
        cli, "sort", str(data), "-o", str(tmp_path / "no.parquet"), "--by", "s", check=False
    )
    assert r.returncode != 0 and "holds the directory 'k=1'" in r.stderr, r.stderr
    assert not (tmp_path / "no.parquet").exists()


def test_csv_output_of_named_time_zones_and_nested_columns(cli: str, tmp_path: Path) -> None:
    """A timestamp with a named time zone (what pandas writes) goes to CSV in that zone's
    offset at each instant; a nested column, which CSV has no form for, is refused before the
    sort reads a row, naming the column, and nothing is written."""
    # 1970-01-01 and 2023-11-14 in winter time (+01:00), 2023-07-22 in summer time (+02:00).
    paris = [0, 1_700_000_000_000_000, 1_690_000_000_000_000]
    t = pa.table(
        {
            "k": pa.array([3, 1, 2], pa.int64()),
            "ts": pa.array(paris, pa.timestamp("us", tz="Europe/Paris")),
        }
    )
    pq.write_table(t, tmp_path / "tz.parquet")
    out = tmp_path / "tz.csv"
    run_cli(cli, "sort", str(tmp_path / "tz.parquet"), "-o", str(out), "--by", "k", "-q")
    assert out.read_text().splitlines() == [
        "k,ts",
        "1,2023-11-14T23:13:20+01:00",
        "2,2023-07-22T06:26:40+02:00",
        "3,1970-01-01T01:00:00+01:00",
    ]
    nested = pa.table({"k": [2, 1], "st": pa.array([{"a": 1}, {"a": 2}])})
    pq.write_table(nested, tmp_path / "nested.parquet")
    out = tmp_path / "nested.csv"
    r = run_cli(
        cli, "sort", str(tmp_path / "nested.parquet"), "-o", str(out), "--by", "k", check=False
    )
    assert r.returncode != 0
    assert "nested.csv: csv cannot hold column 'st' of type Struct" in r.stderr, r.stderr
    assert not out.exists() and leftovers(tmp_path) == ["nested.parquet", "tz.csv", "tz.parquet"]
