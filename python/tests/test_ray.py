"""oxsort.ray on a local Ray cluster (a head and two worker nodes): the partitions concatenated
are the single-node sort's output byte for byte (also with unique keys, and with every bucket
of another node fetched as a stream rather than read in place), valsort passes on them, the
partitions are balanced, budgets that cannot be kept are refused before any task writes, and a
worker node killed during the map stage changes nothing.

Ray's session files (logs, sockets) go to a temp directory removed with the cluster."""

from __future__ import annotations

import datetime
import json
import logging
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import oxsort

if os.environ.get("CI") != "true":
    pytest.importorskip("ray")
import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import oxsort.ray as oxray  # noqa: E402

#: Object store per node: the stages pass keys and bucket chunks, a few MiB here.
OBJECT_STORE = 96 << 20


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Cluster, list[Any]]]:
    # Every Ray process of the cluster (and the drivers the tests start) keeps its session
    # under RAY_TMPDIR: a short path (Ray's sockets live there) removed at the end.
    ray_tmp = tempfile.mkdtemp(prefix="oxsort-raytest-", dir="/tmp")
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = ray_tmp
    try:
        c = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE},
        )
        try:
            workers = [c.add_node(num_cpus=1, object_store_memory=OBJECT_STORE) for _ in range(2)]
            c.wait_for_nodes()
            ray.init(address=c.address, logging_level=logging.ERROR, log_to_driver=False)
            yield c, workers
        finally:
            ray.shutdown()
            c.shutdown()
    finally:
        if saved is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = saved
        shutil.rmtree(ray_tmp, ignore_errors=True)


def concat(paths: list[str]) -> bytes:
    return b"".join(Path(p).read_bytes() for p in paths)


def job_dirs(local: Path) -> list[str]:
    """What the jobs left under ``local`` (every file, to show in a failure)."""
    return sorted(str(p.relative_to(local)) for p in local.rglob("*")) if local.exists() else []


#: The options of oxsort.ray.sort that oxsort.sort does not have.
CLUSTER_ONLY = ("map_size", "shared_local_dir", "local_disk", "task_cpus")


def check_same_as_single_node(
    tmp_path: Path, inputs: list[str], partitions: int, **kw: Any
) -> oxray.RaySortResult:
    """Sorts on the cluster and on one node; asserts the bytes, valsort and the checksums."""
    local = tmp_path / "local"
    out = tmp_path / "out"
    res = oxray.sort(inputs, out, partitions=partitions, local_dir=local, overwrite=True, **kw)
    for k in CLUSTER_ONLY:
        kw.pop(k, None)
    single = tmp_path / "single.out"
    stats = oxsort.sort(inputs, single, **kw)
    parts = [p.path for p in res.partitions]
    assert [Path(p).name for p in parts] == [f"part-{r:05d}" for r in range(partitions)]
    assert concat(parts) == single.read_bytes()
    assert res.records == stats.records_written
    assert res.checksum == stats.checksum
    assert res.dropped == stats.dropped_duplicates + stats.dropped_by_filter
    assert job_dirs(local) == []
    # Nothing but the partitions and the manifest (no partition left under a temp name).
    assert sorted(os.listdir(out)) == sorted([*(Path(p).name for p in parts), "manifest.json"])
    assert (tmp_path / "out" / "manifest.json").exists()
    return res


def balance(res: oxray.RaySortResult) -> float:
    counts = [p.records for p in res.partitions]
    return max(counts) / (sum(counts) / len(counts))


def test_benchmark_records(cluster: Any, tmp_path: Path) -> None:
    gen = oxray.gensort(tmp_path / "in", 30_000, 3)
    inputs = [p.path for p in gen.partitions]
    whole = tmp_path / "whole.dat"
    one = oxsort.gensort(whole, 30_000)
    # Disjoint record ranges: the pieces are `gensort 30000` byte for byte.
    assert concat(inputs) == whole.read_bytes()
    assert gen.checksum == one.checksum
    res = check_same_as_single_node(tmp_path, inputs, 4, map_size=400_000)
    assert res.maps == 9
    parts = [p.path for p in res.partitions]
    summary = oxsort.valsort(parts)
    assert summary.sorted and summary.records == 30_000 and summary.checksum == one.checksum


def test_skewed_records_are_balanced(cluster: Any, tmp_path: Path) -> None:
    path = tmp_path / "skew.dat"
    oxsort.gensort(path, 40_000, skew=True)
    res = check_same_as_single_node(tmp_path, [str(path)], 4, map_size=1_000_000)
    assert oxsort.valsort([p.path for p in res.partitions]).sorted
    assert balance(res) <= 1.10


def test_half_the_records_share_one_key(cluster: Any, tmp_path: Path) -> None:
    src = tmp_path / "src.dat"
    oxsort.gensort(src, 40_000)
    data = bytearray(src.read_bytes())
    rng = random.Random(7)
    for i in rng.sample(range(40_000), 20_000):
        data[i * 100 : i * 100 + 10] = b"SAME--KEY!"
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    a.write_bytes(data[: 25_000 * 100])
    b.write_bytes(data[25_000 * 100 :])
    res = check_same_as_single_node(tmp_path, [str(a), str(b)], 4, map_size=700_000)
    assert oxsort.valsort([p.path for p in res.partitions]).sorted
    assert balance(res) <= 1.10
    # The shared key is cut between partitions, and each keeps the input order of its records.
    holders = [p for p in res.partitions if b"SAME--KEY!" in Path(p.path).read_bytes()]
    assert len(holders) >= 2


def test_lines_with_a_gnu_key(cluster: Any, tmp_path: Path) -> None:
    rng = random.Random(3)
    paths = []
    for f in range(2):
        lines = [f"name{f}-{i},{rng.randint(-50, 50)},{rng.random():.6f}" for i in range(6000)]
        text = "\n".join(lines)  # the last line has no newline: the sort adds one
        p = tmp_path / f"in{f}.txt"
        p.write_text(text)
        paths.append(str(p))
    res = check_same_as_single_node(
        tmp_path, paths, 3, lines=True, keys="-t, -k2,2n", map_size=50_000
    )
    assert res.maps > 4
    keys = [
        int(line.split(b",")[1])
        for p in res.partitions
        for line in Path(p.path).read_bytes().splitlines()
    ]
    assert keys == sorted(keys)
    assert oxsort.check(tmp_path / "single.out", lines=True, keys="-t, -k2,2n") is None


def test_errors_before_any_stage(cluster: Any, tmp_path: Path) -> None:
    local = tmp_path / "local"
    missing = tmp_path / "missing.dat"
    with pytest.raises(oxsort.BadInputError, match=r"input missing on node \w+ .*missing\.dat"):
        oxray.sort([str(missing)], tmp_path / "out", local_dir=local)
    present = tmp_path / "in.dat"
    oxsort.gensort(present, 100)
    out = tmp_path / "full"
    out.mkdir()
    (out / "part-00007").write_bytes(b"old")
    with pytest.raises(oxsort.Error, match=r"full is not empty .*overwrite=True"):
        oxray.sort([str(present)], out, local_dir=local)
    assert (out / "part-00007").read_bytes() == b"old"
    res = oxray.sort([str(present)], out, partitions=2, overwrite=True, local_dir=local)
    assert sorted(os.listdir(out)) == ["manifest.json", "part-00000", "part-00001"]
    assert res.records == 100
    # SKIPREC counts records from the start of the concatenated inputs: no map could count them.
    for statement, what in [
        ("OUTREC FIELDS=(1,100)", "OUTREC"),
        ("OPTION SKIPREC=5", "OPTION SKIPREC/STOPAFT"),
    ]:
        with pytest.raises(oxsort.SpecError, match=f"{what} is not supported across partitions"):
            control = f"SORT FIELDS=(1,10,CH,A)\n {statement}"
            oxray.sort([str(present)], tmp_path / "o", control=control, local_dir=local)
    with pytest.raises(oxsort.BadInputError, match="not a whole number of 100-byte records"):
        (tmp_path / "odd.dat").write_bytes(b"x" * 150)
        oxray.sort([str(tmp_path / "odd.dat")], tmp_path / "odd", local_dir=local)
    assert job_dirs(local) == []


@pytest.mark.parametrize("partitions", [1, 4])
def test_a_failed_stage_removes_everything(cluster: Any, tmp_path: Path, partitions: int) -> None:
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 5000)
    local = tmp_path / "local"
    # Benchmark records are not packed decimal: a key cannot be built. With 4 partitions the
    # sample stage finds it (naming the record's byte), with 1 (no splitters, no sample) the
    # map's sort (naming its number).
    where = r"record \d+" if partitions == 1 else r"the record at byte \d+"
    with pytest.raises(oxsort.BadInputError, match=rf"in\.dat: {where}: key"):
        oxray.sort(
            [str(path)],
            tmp_path / "out",
            partitions=partitions,
            fields="1,4,PD,A",
            local_dir=local,
        )
    assert job_dirs(local) == []
    assert os.listdir(tmp_path / "out") == []


def test_ctrl_c_in_the_driver(cluster: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 200_000)
    local = tmp_path / "local"
    cmd = [
        sys.executable,
        "-m",
        "oxsort.ray",
        "sort",
        str(path),
        "-o",
        str(tmp_path / "out"),
        "--address",
        cluster[0].address,
        "--local-dir",
        str(local),
        "--map-size",
        "200000",
        "--partitions",
        "3",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(local.glob("oxsort-ray-*/*/map-*")):
        time.sleep(0.01)
    assert proc.poll() is None, "the sort ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert job_dirs(local) == []
    assert not list((tmp_path / "out").glob("part-*"))


def test_no_cluster_at_the_address(tmp_path: Path) -> None:
    code = (
        "import oxsort, oxsort.ray\n"
        "try:\n"
        "    oxsort.ray.sort(['x'], 'y', address='127.0.0.1:9')\n"
        "except oxsort.Error as e:\n"
        "    print(e)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert "no Ray cluster at 127.0.0.1:9" in p.stdout, p.stderr


def test_cli(cluster: Any, tmp_path: Path) -> None:
    from oxsort.ray.__main__ import main

    address = cluster[0].address
    assert (
        main(
            [
                "gensort",
                str(tmp_path / "in"),
                "--records",
                "2e3",
                "--partitions",
                "2",
                "--address",
                address,
            ]
        )
        == 0
    )
    inputs = sorted(str(p) for p in (tmp_path / "in").glob("part-*"))
    assert (
        main(
            [
                "sort",
                *inputs,
                "-o",
                str(tmp_path / "out"),
                "--partitions",
                "2",
                "--address",
                address,
                "--local-dir",
                str(tmp_path / "local"),
            ]
        )
        == 0
    )
    oxsort.sort(inputs, tmp_path / "single")
    parts = sorted(str(p) for p in (tmp_path / "out").glob("part-*"))
    assert concat(parts) == (tmp_path / "single").read_bytes()
    assert main(["sort", *inputs, "-o", str(tmp_path / "out"), "--address", address]) == 2
    # The budget and unique options reach the sort.
    common = ["--address", address, "--local-dir", str(tmp_path / "local"), "--partitions", "3"]
    assert (
        main(
            [
                "sort",
                *inputs,
                "-o",
                str(tmp_path / "uniq"),
                "--unique",
                "--fields",
                "1,2,CH,A",
                "--memory",
                "8M",
                "--task-cpus",
                "0.5",
                "--shared-local-dir",
                "no",
                *common,
            ]
        )
        == 0
    )
    oxsort.sort(inputs, tmp_path / "single-u", unique=True, fields="1,2,CH,A")
    parts = sorted(str(p) for p in (tmp_path / "uniq").glob("part-*"))
    assert concat(parts) == (tmp_path / "single-u").read_bytes()
    assert len(concat(parts)) < 2000 * 100  # 2-byte keys: duplicates were dropped
    assert main(["sort", *inputs, "-o", str(tmp_path / "d"), "--local-disk", "1K", *common]) == 2
    assert not (tmp_path / "d").exists()


def node_resources() -> dict[str, dict[str, float]]:
    return {n["NodeID"]: n["Resources"] for n in ray.nodes() if n.get("Alive")}


def test_buckets_of_other_nodes_are_fetched_as_streams(cluster: Any, tmp_path: Path) -> None:
    # Every node sees the buckets here (one machine), so they are read in place by default;
    # shared_local_dir=False makes every reduce fetch the buckets of other nodes through Ray,
    # in chunks (of 256 KiB at this memory budget) that cut records, fixed and delimited.
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 60_000, skew=True)
    res = check_same_as_single_node(
        tmp_path, [str(path)], 2, map_size=1_500_000, memory="4M", shared_local_dir=False
    )
    assert res.maps == 4
    assert res.buckets_fetched > 0
    assert res.buckets_fetched + res.buckets_read_in_place == res.maps * 2
    assert oxsort.valsort([p.path for p in res.partitions]).sorted

    rng = random.Random(5)
    text = "".join(f"k{rng.randint(0, 10**9)},{rng.randint(-500, 500)}\n" for _ in range(150_000))
    lines = tmp_path / "in.txt"
    lines.write_text(text)
    res = check_same_as_single_node(
        tmp_path,
        [str(lines)],
        2,
        lines=True,
        keys="-t, -k2,2n",
        map_size=700_000,
        memory="4M",
        shared_local_dir=False,
    )
    assert res.buckets_fetched > 0
    # Read in place (the default here, where every node sees every bucket): the same bytes.
    res = check_same_as_single_node(
        tmp_path, [str(lines)], 2, lines=True, keys="-t, -k2,2n", map_size=700_000
    )
    assert res.buckets_fetched == 0 and res.buckets_read_in_place > 0


@pytest.mark.parametrize("shared", [None, False])
def test_unique_keys_across_partitions(cluster: Any, tmp_path: Path, shared: Any) -> None:
    # 40 distinct keys over 40 000 records in two inputs: every splitter falls inside a run
    # of equal keys, so each cut key has records in two partitions; the first record of each
    # key (in input order) must appear once, as in the single-node unique sort.
    src = tmp_path / "src.dat"
    oxsort.gensort(src, 40_000)
    data = bytearray(src.read_bytes())
    rng = random.Random(11)
    for i in range(40_000):
        data[i * 100 : i * 100 + 10] = b"KEY-%06d" % rng.randrange(40)
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    a.write_bytes(data[: 15_000 * 100])
    b.write_bytes(data[15_000 * 100 :])
    res = check_same_as_single_node(
        tmp_path, [str(a), str(b)], 4, unique=True, map_size=500_000, shared_local_dir=shared
    )
    assert res.records == 40 and res.dropped == 40_000 - 40
    firsts = [Path(p.path).read_bytes()[:10] for p in res.partitions if p.records]
    assert len(firsts) >= 3  # the keys were cut between partitions

    rng = random.Random(12)
    paths = []
    for f in range(2):
        p = tmp_path / f"in{f}.txt"
        p.write_text("".join(f"n{f}-{i},{rng.randint(0, 30)}\n" for i in range(8000)))
        paths.append(str(p))
    res = check_same_as_single_node(
        tmp_path,
        paths,
        3,
        lines=True,
        keys="-t, -k2,2n",
        unique=True,
        map_size=40_000,
        shared_local_dir=shared,
    )
    assert res.records == 31


def test_budgets_per_task(cluster: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 20_000)
    # The defaults: each node's memory, cores and free local disk shared by the tasks Ray
    # runs there at once (one per CPU; two with task_cpus=0.5).
    res = check_same_as_single_node(tmp_path, [str(path)], 2, map_size=500_000)
    nodes = node_resources()
    assert set(res.budgets) == set(nodes)
    for nid, b in res.budgets.items():
        assert b["tasks_at_once"] == 1 and b["threads"] == 1
        assert b["memory"] == int(nodes[nid]["memory"])
        assert 0 < b["local_disk"] == b["disk_free"]
    res = check_same_as_single_node(tmp_path, [str(path)], 2, map_size=500_000, task_cpus=0.5)
    for nid, b in res.budgets.items():
        assert b["tasks_at_once"] == 2 and b["threads"] == 1
        assert b["memory"] == int(nodes[nid]["memory"]) // 2
    # Given budgets are every task's, on every node.
    res = check_same_as_single_node(
        tmp_path, [str(path)], 2, map_size=1_000_000, memory="2M", threads=2, local_disk="3M"
    )
    assert {(b["memory"], b["threads"], b["local_disk"]) for b in res.budgets.values()} == {
        (2 << 20, 2, 3 << 20)
    }


def test_budgets_that_cannot_be_kept_are_refused(cluster: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 8000)
    local = tmp_path / "local"
    out = tmp_path / "out"
    with pytest.raises(
        oxsort.SpecError,
        match=r"local disk budget 100\.0 KiB per task on node \w+ \(.*\) \(.*local\): "
        r"a map of 390\.6 KiB needs 781\.2 KiB",
    ):
        oxray.sort([str(path)], out, map_size=400_000, local_disk="100K", local_dir=local)
    with pytest.raises(
        oxsort.SpecError,
        match=r"memory budget 64\.0 KiB per task on node \w+ .* merging 8 buckets: it needs",
    ):
        oxray.sort([str(path)], out, map_size=100_000, memory="64K", local_dir=local)
    with pytest.raises(oxsort.SpecError, match=r"task_cpus=0: more than 0"):
        oxray.sort([str(path)], out, task_cpus=0, local_dir=local)
    with pytest.raises(oxsort.Error, match=r"no live node .* has the 2 CPUs a task asks for"):
        oxray.sort([str(path)], out, task_cpus=2, local_dir=local)
    # Refused before any task wrote: no job directory, no output directory.
    assert job_dirs(local) == []
    assert not out.exists()


def records(data: bytes) -> list[bytes]:
    return [data[i : i + 100] for i in range(0, len(data), 100)]


def test_the_reduce_merge_on_its_own(tmp_path: Path) -> None:
    """The reduce's merge without a cluster: sorted buckets from files and from iterators of
    chunks that cut records, against a stable sort of all the records in map order."""
    from oxsort import _native
    from oxsort._files import _spec

    def spec(unique: bool = False) -> dict[str, Any]:
        return _spec(
            record_size=None,
            lines=False,
            nul=False,
            fields=None,
            control=None,
            keys=None,
            unique=unique,
            memory=None,
            threads=None,
            temp_dirs=None,
        )

    rng = random.Random(9)
    buckets = []
    for m in range(5):
        recs = [
            b"K%09d%02d-%05d" % (rng.randrange(30), m, i) + b"." * 82
            for i in range(rng.randrange(0, 400))
        ]
        buckets.append(b"".join(sorted(recs, key=lambda r: r[:10])))
    # Map order: records of equal keys come out in map order, then bucket order.
    want = sorted((r for b in buckets for r in records(b)), key=lambda r: r[:10])

    def chunks(data: bytes, size: int) -> Iterator[bytes]:
        return iter([data[i : i + size] for i in range(0, len(data), size)])

    sources: list[tuple[str, Any]] = []
    for m, b in enumerate(buckets):
        if m % 2:
            sources.append((f"fetched-{m}", chunks(b, 37 + m)))  # chunks cut records
        else:
            p = tmp_path / f"bucket-{m}"
            p.write_bytes(b)
            sources.append((str(p), None))
    out = tmp_path / "part"
    n, checksum, dropped, _, edges = _native.merge_buckets(sources, str(out), spec(), 1 << 16)
    assert out.read_bytes() == b"".join(want) and n == len(want) and dropped == 0
    assert checksum == oxsort.valsort(out).checksum
    assert edges == (want[0][:10], want[-1][:10])

    # unique: the first of each key, in map order; drop_key: a key an earlier partition holds.
    first: dict[bytes, bytes] = {}
    for r in want:
        first.setdefault(r[:10], r)
    drop = want[0][:10]
    kept = [r for k, r in first.items() if k != drop]
    sources = [(f"f{m}", chunks(b, 4096)) for m, b in enumerate(buckets)]
    n, _, dropped, _, _ = _native.merge_buckets(sources, str(out), spec(True), 1 << 16, drop)
    assert out.read_bytes() == b"".join(kept) and n + dropped == len(want)

    # A bucket out of order, or ending inside a record: named, and nothing is left behind.
    bad = tmp_path / "bad"
    bad.write_bytes(b"Z" * 100 + b"A" * 100)
    with pytest.raises(oxsort.DisorderError, match=r"bucket .*bad: record 2 is out of key order"):
        _native.merge_buckets([(str(bad), None)], str(tmp_path / "p2"), spec(), 1 << 16)
    with pytest.raises(oxsort.BadInputError, match=r"bucket cut: ends inside a record"):
        _native.merge_buckets([("cut", iter([b"A" * 150]))], str(tmp_path / "p3"), spec(), 1 << 16)
    assert sorted(os.listdir(tmp_path)) == ["bad", "bucket-0", "bucket-2", "bucket-4", "part"]


def test_the_local_disk_check_counts_buckets_kept_and_maps_at_once() -> None:
    # The node check on its own (a cluster's free space cannot be chosen here): 3 maps of
    # 1 MiB on a node running 2 at once keep 3 MiB of buckets and need 2 MiB more while two
    # sort; 5 MiB free is enough, 4 MiB is not.
    src = oxray._Source(0, "/data/in", None, 3 << 20)
    tasks = [oxray._MapTask(i, src, i << 20, (i + 1) << 20) for i in range(3)]

    def node(free: int) -> dict[str, oxray._Node]:
        n = oxray._Node("n" * 56, "10.0.0.9", 2, 1 << 30, 1, 4 << 20, "/scratch/x", free, 1 << 30)
        return {n.id: n}

    oxray._check_budgets(tasks, ["n" * 56] * 3, node(5 << 20))
    with pytest.raises(
        oxsort.OutOfSpaceError,
        match=r"local disk of node nnnnnnnnnnnn \(10\.0\.0\.9\): /scratch/x needs 5\.0 MiB "
        r"for its 3 maps \(3\.0 MiB of buckets kept until the reduce, 2\.0 MiB more while 2 "
        r"sort at once\) and has 4\.0 MiB free",
    ):
        oxray._check_budgets(tasks, ["n" * 56] * 3, node(4 << 20))


def one_slot_nodes(n: int, memory: int = 1 << 32) -> dict[str, oxray._Node]:
    """``n`` nodes running one task at once, with ``memory`` per task and room on disk."""
    nodes = [
        oxray._Node(f"{i}" * 56, f"10.0.0.{i}", 1, memory, 1, 1 << 40, "/s", 1 << 40, 1 << 30)
        for i in range(n)
    ]
    return {b.id: b for b in nodes}


def node_loads(tasks: list[Any], nodes: dict[str, oxray._Node]) -> list[int]:
    """Bytes of maps each node sorts, busiest first."""
    load = dict.fromkeys(nodes, 0)
    for t, nid in zip(tasks, oxray._place(tasks, nodes)):
        load[nid] += t.size
    return sorted(load.values(), reverse=True)


def test_the_default_cut_gives_every_slot_an_even_share_of_the_maps() -> None:
    gb = 10**9
    # Four 1 GB inputs on three one-slot nodes: 1 GiB maps are four, one node sorting two of
    # them while the others idle; the default cut evens the nodes out (12 maps of 333 MB).
    four = [oxray._Source(i, f"/data/in{i}", None, gb) for i in range(4)]
    coarse = oxray._map_tasks(four, 100, oxray.DEFAULT_MAP_SIZE)
    assert node_loads(coarse, one_slot_nodes(3)) == [2 * gb, gb, gb]
    tasks = oxray._balanced_map_tasks(four, 100, one_slot_nodes(3))
    loads = node_loads(tasks, one_slot_nodes(3))
    assert sum(loads) == 4 * gb and loads[0] <= oxray.MAP_BALANCE * 4 * gb / 3
    # Every map's range starts on a record boundary, and the ranges cover each input once.
    for src in four:
        mine = sorted((t.start, t.end) for t in tasks if t.source is src)
        assert mine[0][0] == 0 and mine[-1][1] == gb
        assert all(a[1] == b[0] and a[0] % 100 == 0 for a, b in zip(mine, mine[1:]))
    # Four slots take the four inputs whole: nothing to even out.
    assert len(oxray._balanced_map_tasks(four, 100, one_slot_nodes(4))) == 4
    # Small inputs stay one map each (no map below MIN_BALANCED_MAP_SIZE is made to even out).
    small = [oxray._Source(i, f"/data/s{i}", None, 10 << 20) for i in range(4)]
    assert len(oxray._balanced_map_tasks(small, None, one_slot_nodes(3))) == 4
    # An input larger than DEFAULT_MAP_SIZE is cut as before at least.
    big = [oxray._Source(0, "/data/big", None, 5 * gb)]
    assert all(
        t.size <= oxray.DEFAULT_MAP_SIZE
        for t in oxray._balanced_map_tasks(big, 100, one_slot_nodes(3))
    )
    # No finer than a reduce's memory can merge: a read buffer per map.
    floor = oxray._reduce_buffer_floor(one_slot_nodes(3))
    tight = one_slot_nodes(3, memory=5 * floor)
    assert len(oxray._balanced_map_tasks(four, 100, tight)) == 4
    # An input on one node's disk is sorted there: cutting it finer evens nothing out.
    pinned = [oxray._Source(0, "/local/in", "1" * 56, 2 * gb)]
    assert len(oxray._balanced_map_tasks(pinned, 100, one_slot_nodes(3))) == 2


# ---- tables (by=) ---------------------------------------------------------------------------

#: Names of the table tests' columns, and their keys' words.
TABLE_COLUMNS = ["i", "f", "s", "d", "row"]


def table_of(n: int, seed: int, start: int = 0) -> Any:
    """Rows of every key type the tests sort by: ints, floats (NaN of both signs, -0.0, 0.0,
    infinities), strings (non-ASCII, empty), dates, each with nulls; ``row`` numbers them."""
    pa = pytest.importorskip("pyarrow")
    rng = random.Random(seed)
    floats = [math.nan, -math.nan, -0.0, 0.0, math.inf, -math.inf, None]
    words = ["", "a", "ab", "b", "é", "z", "Z", "\u00e9t\u00e9", None]
    fields = [
        pa.field("i", pa.int64()),
        pa.field("f", pa.float64()),
        pa.field("s", pa.string()),
        pa.field("d", pa.date32()),
        pa.field("row", pa.int64(), nullable=False, metadata={b"note": b"input order"}),
    ]
    schema = pa.schema(fields, metadata={b"origin": b"oxsort ray tests"})
    return pa.table(
        {
            "i": [None if rng.random() < 0.05 else rng.randrange(-20, 20) for _ in range(n)],
            "f": [
                rng.choice(floats) if rng.random() < 0.3 else round(rng.uniform(-50, 50), 1)
                for _ in range(n)
            ],
            "s": [rng.choice(words) for _ in range(n)],
            "d": [
                None if rng.random() < 0.05 else datetime.date(2024, 1, 1 + rng.randrange(28))
                for _ in range(n)
            ],
            "row": list(range(start, start + n)),
        },
        schema=schema,
    )


def write_tables(tmp_path: Path, sizes: list[int], seed: int = 1, **kw: Any) -> list[str]:
    """Parquet inputs of ``sizes`` rows (zstd, small row groups), one table cut in pieces."""
    import pyarrow.parquet as pq

    paths, start = [], 0
    for j, n in enumerate(sizes):
        p = tmp_path / f"in-{j}.parquet"
        pq.write_table(
            table_of(n, seed + j, start),
            p,
            **{"compression": "zstd", "row_group_size": 700, **kw},
        )
        paths.append(str(p))
        start += n
    return paths


def words_of(by: Any) -> list[tuple[str, bool, bool]]:
    """``by=`` as (name, descending, nulls first), read by the test on its own."""
    out = []
    for item in [by] if isinstance(by, str) else by:
        name, *rest = [item] if isinstance(item, str) else list(item)
        out.append((name, rest[:1] == ["descending"], rest[1:2] == ["at_start"]))
    return out


def oracle(tables: list[Any], by: Any) -> Any:
    """The stable sort of the inputs concatenated, by pyarrow alone: every key as columns
    pyarrow orders as oxsort orders the key (nulls first or last whatever the direction, NaN
    above every number, -0.0 as 0.0), and the row number as the last key."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.compute as pc

    t = pa.concat_tables(tables)
    cols: dict[str, Any] = {}
    keys: list[tuple[str, str]] = []
    for j, (name, desc, nulls_first) in enumerate(words_of(by)):
        c = t.column(name)
        if pa.types.is_dictionary(c.type):
            c = c.cast(c.type.value_type)
        order = "descending" if desc else "ascending"
        cols[f"null{j}"] = pc.cast(pc.is_null(c), pa.int8())
        keys.append((f"null{j}", "descending" if nulls_first else "ascending"))
        if pa.types.is_floating(c.type):
            nan = pc.fill_null(pc.is_nan(c), False)
            cols[f"nan{j}"] = pc.cast(nan, pa.int8())
            keys.append((f"nan{j}", order))
            c = pc.add(pc.fill_null(pc.if_else(nan, 0.0, c), 0.0), 0.0)
        cols[f"v{j}"] = c
        keys.append((f"v{j}", order))
    cols["input_row"] = pa.array(range(t.num_rows), pa.int64())
    keys.append(("input_row", "ascending"))
    return t.take(pc.sort_indices(pa.table(cols), sort_keys=keys))


def bits(t: Any) -> Any:
    """``t`` with its float columns as their bits (so that NaN equals NaN, and a sign bit of
    NaN or -0.0 changed would show) and its dictionary columns as their values (the schemas
    are compared on their own), for ``Table.equals``."""
    pa = pytest.importorskip("pyarrow")
    cols = []
    for c in t.columns:
        if pa.types.is_dictionary(c.type):
            c = c.cast(c.type.value_type)
        if pa.types.is_floating(c.type):
            c = c.combine_chunks().view(pa.int64() if c.type.bit_width == 64 else pa.int32())
        cols.append(c)
    return pa.table(cols, names=t.column_names)


def codec(path: str) -> Any:
    import pyarrow.parquet as pq

    md = pq.ParquetFile(path).metadata
    return md.row_group(0).column(0).compression if md.num_row_groups else None


def read_table(path: str) -> Any:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    if path.endswith(".arrow"):
        with pa.memory_map(path) as f:
            return pa.ipc.open_file(f).read_all()
    return pq.read_table(path)


def check_tables_as_single_node(
    tmp_path: Path, inputs: list[str], partitions: int, by: Any, **kw: Any
) -> oxray.RaySortResult:
    """Sorts tables on the cluster and on one node: the partitions read in order are the
    single-node output (rows, order, schema with its metadata, compression) and the oracle's."""
    pa = pytest.importorskip("pyarrow")
    local = tmp_path / "local"
    out = tmp_path / "tout"
    res = oxray.sort(
        inputs, out, by=by, partitions=partitions, local_dir=local, overwrite=True, **kw
    )
    for k in CLUSTER_ONLY:
        kw.pop(k, None)
    ext = ".arrow" if inputs[0].endswith(".arrow") else ".parquet"
    single = str(tmp_path / f"single{ext}")
    one = oxsort.sort(inputs, single, by=by, row_checksum=True, **kw)
    parts = [p.path for p in res.partitions]
    assert [Path(p).name for p in parts] == [f"part-{r:05d}{ext}" for r in range(partitions)]
    want = read_table(single)
    got_parts = [read_table(p) for p in parts]
    for t in got_parts:
        assert t.schema.equals(want.schema, check_metadata=True), (t.schema, want.schema)
    got = pa.concat_tables(got_parts)
    assert got.schema.equals(want.schema, check_metadata=True)
    assert bits(got).equals(bits(want))
    assert bits(got).equals(bits(oracle([read_table(p) for p in inputs], by)))
    if ext == ".parquet":
        assert {codec(p) for p in parts if codec(p) is not None} <= {codec(single)}
    assert [p.records for p in res.partitions] == [t.num_rows for t in got_parts]
    assert res.records == want.num_rows
    # The partitions' rows checksums add up to the single-node sort's (and the driver found
    # them adding up to the maps').
    assert len(res.checksum) == 16 and res.checksum == one.rows_checksum
    total = sum(int(p.checksum, 16) for p in res.partitions) % (1 << 64)
    assert f"{total:016x}" == res.checksum
    assert json.loads((out / "manifest.json").read_text())["checksum"] == res.checksum
    assert job_dirs(local) == []
    assert sorted(os.listdir(out)) == sorted([*(Path(p).name for p in parts), "manifest.json"])
    return res


@pytest.mark.parametrize(
    "by",
    [
        ["i"],
        [("f", "descending"), "s"],
        [("s", "ascending", "at_start"), ("f", "ascending", "at_start")],
        [("d", "descending"), ("i", "descending", "at_start")],
    ],
)
def test_tables_by_columns(cluster: Any, tmp_path: Path, by: Any) -> None:
    # An empty input first (its compression is not the one kept) and one in the middle.
    inputs = write_tables(tmp_path, [0, 1500, 0, 2600, 900])
    res = check_tables_as_single_node(tmp_path, inputs, 4, by)
    assert res.maps == 5
    assert balance(res) <= 1.25


def test_tables_with_a_skewed_key_are_balanced(cluster: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    inputs = write_tables(tmp_path, [3000, 3000], compression="snappy")
    # Nine rows in ten share one key: the splitters cut its rows by input and position.
    for j, p in enumerate(inputs):
        t = pq.read_table(p)
        rng = random.Random(j)
        i = [5 if rng.random() < 0.9 else v for v in t.column("i").to_pylist()]
        t = t.set_column(0, "i", pytest.importorskip("pyarrow").array(i, t.schema.field("i").type))
        pq.write_table(t, p, compression="snappy", row_group_size=1000)
    res = check_tables_as_single_node(tmp_path, inputs, 4, ["i"])
    assert balance(res) <= 1.10
    # Ties across partitions keep the input order: the rows of key 5 are in `row` order.
    rows = [r for p in res.partitions for r in read_table(p.path).column("row").to_pylist()]
    assert len(rows) == 6000


def test_tables_more_partitions_than_keys(cluster: Any, tmp_path: Path) -> None:
    # `s` has 9 values (null among them): 10 partitions still share the rows evenly.
    inputs = write_tables(tmp_path, [400, 300], compression="none")
    res = check_tables_as_single_node(tmp_path, inputs, 10, ["s"], memory="64M")
    assert all(p.records for p in res.partitions)
    assert balance(res) <= 1.25


def test_tables_empty_inputs_and_arrow_files(cluster: Any, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    empty = write_tables(tmp_path, [0, 0])
    res = check_tables_as_single_node(tmp_path, empty, 3, ["s"])
    assert res.records == 0
    arrows = []
    for j, n in enumerate([800, 0, 1200]):
        p = tmp_path / f"in-{j}.arrow"
        with pa.ipc.new_file(p, table_of(1, 0).schema) as w:
            w.write_table(table_of(n, 10 + j))
        arrows.append(str(p))
    check_tables_as_single_node(tmp_path, arrows, 3, [("f", "ascending", "at_start"), "i"])


def test_tables_with_a_dictionary_key(cluster: Any, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    inputs = []
    for j, n in enumerate([1500, 1200]):
        t = table_of(n, 20 + j, 1500 * j)
        rng = random.Random(j)
        words = pa.array([rng.choice(["x", "y", "ä", None]) for _ in range(n)])
        t = t.append_column("k", words.dictionary_encode())
        p = tmp_path / f"in-{j}.parquet"
        pq.write_table(t, p, compression="zstd", row_group_size=400)
        inputs.append(str(p))
    assert pa.types.is_dictionary(pq.read_schema(inputs[0]).field("k").type)
    check_tables_as_single_node(tmp_path, inputs, 3, [("k", "descending"), "f"])


def test_tables_errors_before_any_stage(cluster: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    local = tmp_path / "local"
    a, b = write_tables(tmp_path, [50, 50])
    t = pq.read_table(b)
    other = t.set_column(0, "i", t.column("i").cast("int32"))
    pq.write_table(other, b)
    with pytest.raises(
        oxsort.SpecError,
        match=r"in-1\.parquet: its schema differs from .*in-0\.parquet's: "
        r"column 'i' is of type int32, not int64",
    ):
        oxray.sort([a, b], tmp_path / "o", by=["i"], local_dir=local)
    with pytest.raises(
        oxsort.SpecError,
        match=r"in-0\.parquet: no column 'k'; its columns are: i, f, s, d, row",
    ):
        oxray.sort([a], tmp_path / "o", by=["i", ("k", "descending")], local_dir=local)
    dat = tmp_path / "x.dat"
    oxsort.gensort(dat, 10)
    with pytest.raises(
        oxsort.BadInputError,
        match=r"input .*x\.dat: not a Parquet or Arrow IPC file \(unlike .*in-0\.parquet",
    ):
        oxray.sort([a, str(dat)], tmp_path / "o", by="i", local_dir=local)
    for opts in [{"lines": True}, {"record_size": 100}, {"keys": "-k1,1"}, {"unique": True}]:
        with pytest.raises(oxsort.SpecError, match=f"{next(iter(opts))}=.*cannot come with"):
            oxray.sort([a], tmp_path / "o", by="i", local_dir=local, **opts)
    with pytest.raises(oxsort.SpecError, match="fields=, control="):
        oxray.sort([a], tmp_path / "o", by="i", fields="1,2,CH,A", control="x", local_dir=local)
    assert job_dirs(local) == []
    assert not (tmp_path / "o").exists()


def test_tables_failed_stage_removes_everything(cluster: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    inputs = write_tables(tmp_path, [3000, 3000, 3000])
    # A page of the second input's first column made garbage: its footer reads, its rows do
    # not, while the other maps write their sorted files.
    md = pq.ParquetFile(inputs[1]).metadata
    col = md.row_group(0).column(0)
    data = bytearray(Path(inputs[1]).read_bytes())
    start = col.data_page_offset + 20
    data[start : start + 64] = bytes(64)
    Path(inputs[1]).write_bytes(bytes(data))
    local = tmp_path / "local"
    out = tmp_path / "out"
    with pytest.raises(oxsort.Error, match=r"in-1\.parquet"):
        oxray.sort(inputs, out, by=["s", "i"], partitions=3, local_dir=local)
    assert job_dirs(local) == []
    assert os.listdir(out) == []


@pytest.mark.parametrize(
    "by",
    [
        ["f"],
        [("f", "descending")],
        [("f", "descending", "at_start"), "s"],
        [("s", "descending", "at_end"), "f"],
        [("s", "ascending", "at_start"), ("d", "descending")],
        [("dict", "descending"), ("ts", "ascending", "at_start"), "dec", "b", "bin"],
    ],
)
def test_table_keys_compare_as_the_engine_orders_them(tmp_path: Path, by: Any) -> None:
    """The driver's key order (splitters, cuts) is the engine's: the engine's sorted rows
    have non-decreasing keys, and Python's stable sort by those keys is the engine's order."""
    pa = pytest.importorskip("pyarrow")
    from decimal import Decimal

    from oxsort.ray._tables import Key, sort_keys

    n = 3000
    rng = random.Random(5)
    t = table_of(n, 3)
    t = t.append_column(
        "dict", pa.array([rng.choice(["x", "y", "ä", None]) for _ in range(n)]).dictionary_encode()
    )
    ts = [None if rng.random() < 0.1 else rng.randrange(-(10**12), 10**12) for _ in range(n)]
    t = t.append_column("ts", pa.array(ts, pa.timestamp("ns", tz="Europe/Paris")))
    t = t.append_column(
        "dec",
        pa.array([Decimal(rng.randrange(-999, 999)) / 100 for _ in range(n)], pa.decimal128(6, 2)),
    )
    t = t.append_column("b", pa.array([rng.random() < 0.5 for _ in range(n)]))
    t = t.append_column(
        "bin", pa.array([bytes([rng.randrange(256) for _ in range(2)]) for _ in range(n)])
    )
    src = tmp_path / "in.arrow"
    with pa.ipc.new_file(src, t.schema) as w:
        w.write_table(t)
    # (Parquet: the engine's Arrow IPC file writer refuses a dictionary column whose batches
    # have different dictionaries.)
    out = tmp_path / "out.parquet"
    oxsort.sort([src], out, by=by)
    engine = read_table(str(out))
    keys = [Key(name, desc, first) for name, desc, first in words_of(by)]
    mine = sort_keys(engine, keys)
    assert all(a <= b for a, b in zip(mine, mine[1:]))
    given = sort_keys(t, keys)
    order = sorted(range(n), key=lambda i: (given[i], i))
    assert engine.column("row").to_pylist() == [t.column("row")[i].as_py() for i in order]


def test_tables_rows_fetched_from_other_nodes_and_the_cli(cluster: Any, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    from oxsort.ray.__main__ import main

    inputs = write_tables(tmp_path, [2000, 2000, 2000], compression="lz4")
    by = [("s", "descending"), "f"]
    res = check_tables_as_single_node(tmp_path, inputs, 3, by, shared_local_dir=False)
    assert res.buckets_fetched > 0
    args = ["--address", cluster[0].address, "--local-dir", str(tmp_path / "local")]
    cli = tmp_path / "cli"
    sort = ["sort", *inputs, "-o", str(cli), "--by", "s:desc,f", *args]
    assert main([*sort, "--partitions", "5"]) == 0
    assert main(sort) == 2  # not empty
    # The 5 partitions replaced by 4 (default), none of the old ones left.
    assert main([*sort, "--overwrite"]) == 0
    parts = sorted(str(p) for p in cli.glob("part-*"))
    assert [Path(p).name for p in parts] == [f"part-{r:05d}.parquet" for r in range(4)]
    got = pa.concat_tables([read_table(p) for p in parts])
    assert bits(got).equals(bits(read_table(str(tmp_path / "single.parquet"))))
    assert job_dirs(tmp_path / "local") == []


def test_tables_ctrl_c_in_the_driver(cluster: Any, tmp_path: Path) -> None:
    inputs = write_tables(tmp_path, [150_000, 150_000], compression="snappy")
    local = tmp_path / "local"
    cmd = [sys.executable, "-m", "oxsort.ray", "sort", *inputs, "-o", str(tmp_path / "out")]
    cmd += ["--by", "s,f", "--address", cluster[0].address, "--local-dir", str(local)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(local.glob("oxsort-ray-*/*/map-*")):
        time.sleep(0.01)
    assert proc.poll() is None, "the sort ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert job_dirs(local) == []
    assert not list((tmp_path / "out").glob("part-*"))


def test_a_worker_node_killed_during_the_map_stage(cluster: Any, tmp_path: Path) -> None:
    """Runs last in this module: it takes a worker node away."""
    c, workers = cluster
    path = tmp_path / "in.dat"
    oxsort.gensort(path, 60_000, skew=True)
    local = tmp_path / "local"
    victim = workers[0]
    victim_dir = victim.node_id[:16]
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["res"] = oxray.sort(
                [str(path)], tmp_path / "out", partitions=3, map_size=200_000, local_dir=local
            )
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            out["err"] = e

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    # Kill the node once a map has written its last bucket there (its outputs are then lost
    # with the node, and the maps running there die with it).
    done = f"oxsort-ray-*/{victim_dir}/map-*/bucket-00002"
    while time.monotonic() < deadline and not list(local.glob(done)):
        time.sleep(0.01)
    assert t.is_alive(), "the sort ended before the node could be killed"
    c.remove_node(victim, allow_graceful=False)
    t.join(timeout=120)
    assert "err" not in out, out.get("err")
    res = out["res"]
    oxsort.sort([str(path)], tmp_path / "single")
    assert concat([p.path for p in res.partitions]) == (tmp_path / "single").read_bytes()
    assert all(p.node != victim.node_id for p in res.partitions)
    assert job_dirs(local) == []


def test_tables_a_worker_node_killed_during_the_reduce_stage(cluster: Any, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    c, workers = cluster
    inputs = write_tables(tmp_path, [40_000, 40_000, 40_000], compression="snappy")
    local = tmp_path / "local"
    victim = workers[1]
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["res"] = oxray.sort(
                inputs,
                tmp_path / "out",
                by=["s", "i"],
                partitions=6,
                local_dir=local,
                shared_local_dir=False,
            )
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            out["err"] = e

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    # Kill the node while a reduce runs there: its map's sorted file is lost with it (every
    # other node fetches rows from the node that sorted them), the reduce runs again
    # elsewhere, and so does the lost map.
    running = f"oxsort-ray-*/{victim.node_id[:16]}/reduce-*.pid"
    while time.monotonic() < deadline and not list(local.glob(running)):
        time.sleep(0.005)
    assert t.is_alive(), f"the sort ended before the node could be killed: {out}"
    c.remove_node(victim, allow_graceful=False)
    t.join(timeout=180)
    assert "err" not in out, out.get("err")
    res = out["res"]
    oxsort.sort(inputs, tmp_path / "single.parquet", by=["s", "i"])
    got = pa.concat_tables([read_table(p.path) for p in res.partitions])
    assert bits(got).equals(bits(read_table(str(tmp_path / "single.parquet"))))
    assert res.maps_rerun >= 1
    assert job_dirs(local) == []


def test_tables_driver_refuses_partitions_whose_rows_checksums_do_not_add_up(
    tmp_path: Path,
) -> None:
    """The driver's last check: a row changed between the maps and the reduces (same count,
    keys in order) is caught by the rows checksums, and no manifest is written."""
    from oxsort.ray import _Source
    from oxsort.ray._tables import _finish

    sources = [_Source(0, "a.parquet", None, 10), _Source(1, "b.parquet", None, 10)]
    infos = [{"rows": 3}, {"rows": 2}]
    maps = [{"rows_checksum": "ffffffff00000001"}, {"rows_checksum": "0000000100000002"}]
    bounds = [[0, 2, 3], [0, 1, 2]]

    def reduce(n: int, checksum: str, first: int, last: int) -> dict[str, Any]:
        return {
            "node": "n",
            "records": n,
            "checksum": checksum,
            "first": (first,),
            "last": (last,),
            "fetched": 0,
            "read_in_place": n,
        }

    def finish(sums: list[str]) -> oxray.RaySortResult:
        reduces = [reduce(3, sums[0], 1, 5), reduce(2, sums[1], 5, 9)]
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        return _finish(sources, infos, maps, bounds, reduces, {}, {}, str(out), "parquet", 5)

    # The maps' sums add up to 3 modulo 2**64; so do these.
    ok = finish(["8000000000000000", "8000000000000003"])
    assert ok.checksum == "0000000000000003"
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["checksum"] == ok.checksum
    (tmp_path / "out" / "manifest.json").unlink()
    with pytest.raises(
        oxsort.Error,
        match="rows checksum mismatch: the inputs' rows sum to "
        "0000000000000003, the partitions' to 0000000000000004",
    ):
        finish(["8000000000000000", "8000000000000004"])
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_tables_a_dataset_directory_is_its_files(cluster: Any, tmp_path: Path) -> None:
    """A directory of part files (a writer's marker beside them) sorts as its files in name
    order, one map each, as the single-node sort takes the directory; a partitioned one is
    refused before any stage."""
    data = tmp_path / "data"
    data.mkdir()
    for p in write_tables(tmp_path, [1200, 0, 2000]):
        shutil.move(p, data / Path(p).name)
    (data / "_SUCCESS").write_bytes(b"")
    res = check_tables_as_single_node(tmp_path, [str(data)], 3, [("f", "descending"), "s"])
    assert res.maps == 3
    (data / "k=1").mkdir()
    with pytest.raises(oxsort.BadInputError, match="holds the directory 'k=1'"):
        oxray.sort([str(data)], tmp_path / "no", by=["s"], partitions=2)
    assert not (tmp_path / "no").exists()
