"""oxsort on a Ray cluster: the same bytes as :func:`oxsort.sort`, split into partitions.

::

    import oxsort.ray
    oxsort.ray.gensort("/shared/in", records=10_000_000, partitions=8)
    result = oxsort.ray.sort(sorted(glob.glob("/shared/in/part-*")), "/shared/out", partitions=8)

The job runs as Ray tasks, each calling the Rust engine (no record passes through Python):

- *sample*: every input gives keys at seeded random records; the driver takes R-1 splitters
  over (key, input index, position), so a key shared by many records can be cut between
  partitions and the order stays stable;
- *map*: each task sorts one input (or a byte range of it, on record boundaries) with the
  engine and cuts the sorted stream at the splitters into its sorted buckets on its node's
  local disk as the stream is written (each byte read and written once);
- *reduce*: task r merges bucket r of every map, by key and then map order, into
  ``output_dir/part-NNNNN`` as the buckets stream in: a bucket on the reduce's node (or visible
  to it on a shared file system) is read in place, one on another node arrives in chunks
  through Ray's object transfer (memory to memory). Nothing is copied to the reduce's disk:
  each byte is read once from its bucket and written once to its partition.

Each map or reduce task keeps to budgets, as a sort on one machine does: memory, threads and
local disk per task (by default the node's memory, cores and free local disk divided by the
tasks Ray runs there at once), checked before any task writes.

``by=`` sorts tables (Parquet or Arrow IPC files) by columns the same way: the stages are in
:mod:`oxsort.ray._tables`.

The driver checks that the partitions are in order across their boundaries and that their
checksums add up to the input's, then writes ``output_dir/manifest.json``. Buckets are removed
at the end, after a failure and after Ctrl-C. A map whose node died is run again on a live
node; Ray retries tasks whose worker died.
"""

from __future__ import annotations

import collections
import functools
import glob
import json
import logging
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional, TypeVar, Union

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("oxsort.ray needs Ray: pip install ray") from e

from .. import _native
from .._files import By, PathLike, _spec, parse_size
from .._native import BadInputError, Error, OutOfSpaceError, SpecError

__all__ = ["Partition", "RaySortResult", "gensort", "sort"]

#: An input: a path every node can read (a shared file system), or ``(node, path)`` for a file
#: on one node's local disk (``node``: a Ray node id or the node's IP address).
Input = Union[PathLike, tuple[str, PathLike]]

#: Keys sampled per output partition: the largest partition then stays within a few percent
#: of the mean (the quantile of k samples is off by about 1/sqrt(k) of a partition).
SAMPLES_PER_PARTITION = 2000

#: Bytes per map task by default at most: inputs larger than this are cut into byte ranges (on
#: record boundaries) so every core of the cluster has a map to run.
DEFAULT_MAP_SIZE = 1 << 30

#: The default cut is made finer, up to this many maps per task slot of the cluster, until the
#: busiest node's share of the maps is within :data:`MAP_BALANCE` of an even share: four 1 GB
#: inputs on three one-slot nodes are four maps of 1 GB in two waves, the second a lone map
#: with the other slots idle (a third of the stage), or twelve maps of 333 MB in four full
#: waves.
MAX_MAP_WAVES = 8

#: How far above an even share of the input per slot the busiest node may be left by the
#: default cut.
MAP_BALANCE = 1.10

#: The default cut makes no map smaller than this to even out the slots: below it a map's
#: fixed cost (a Ray task, an engine started, a bucket file per partition, a bucket more for
#: every reduce to merge) outweighs the idle slot it saves.
MIN_BALANCED_MAP_SIZE = 64 << 20

#: Largest chunk a reduce fetches from another node in one object (smaller when the memory
#: budget, shared by every bucket a reduce merges, asks for it).
FETCH_CHUNK = 64 << 20

#: Smallest fetched chunk: below it the per-object cost of Ray outweighs the transfer.
MIN_FETCH_CHUNK = 256 << 10

#: Fetches a reduce keeps in flight per bucket of another node.
FETCH_DEPTH = 2

#: Read buffer of a bucket file a reduce merges, at most and at least (the native merge's
#: own floor): within these, the memory budget shared by the buckets decides.
MAX_READ_BUFFER = 8 << 20
MIN_READ_BUFFER = 64 << 10

#: Local disk a map needs per byte of its range at its peak: its sorted buckets, and the
#: engine's runs when the range is larger than the map's memory.
MAP_DISK_FACTOR = 2

#: Rounds in which maps lost with their node are run again before the job gives up.
MAX_ROUNDS = 3

#: Width of the partition numbers in ``part-NNNNN``.
PART_DIGITS = 5

#: Seconds to wait for a TCP connection to a cluster's address before calling it unreachable.
CONNECT_TIMEOUT = 5.0

#: Seconds to wait for cancelled tasks to end before their directories are removed.
CANCEL_WAIT = 30.0

MANIFEST = "manifest.json"


def _hex(v: int) -> str:
    """A checksum as valsort prints it (the 128-bit sum in hex)."""
    return format(v & ((1 << 128) - 1), "x")


def _part_name(r: int) -> str:
    return f"part-{r:0{PART_DIGITS}d}"


@dataclass
class Partition:
    """One output partition."""

    name: str
    path: str
    node: str
    records: int
    checksum: str

    def to_dict(self) -> dict[str, Any]:
        """As a plain dict."""
        return asdict(self)


@dataclass
class RaySortResult:
    """What a sort across the cluster did."""

    records: int
    checksum: str
    partitions: list[Partition]
    maps: int
    manifest: str
    dropped: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    maps_rerun: int = 0
    #: Buckets the reduces fetched from another node, and read where they lie.
    buckets_fetched: int = 0
    buckets_read_in_place: int = 0
    #: Per node (by id): the tasks Ray runs there at once and each one's budgets.
    budgets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As a plain dict (JSON-ready)."""
        return asdict(self)


@dataclass
class _Source:
    index: int
    path: str
    node: Optional[str]  # None: any node (a shared path)
    size: int = 0


@dataclass
class _MapTask:
    index: int
    source: _Source
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class _Node:
    """A node's share of the job: the tasks Ray runs there at once, and each one's budgets."""

    id: str
    ip: str
    tasks_at_once: int
    memory: int
    threads: int
    local_disk: int
    local_dir: str
    disk_free: int
    object_store: int


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover - the loop returns


class _TaskError(Exception):
    """An oxsort error raised in a task, as it crosses to the driver: the native exception
    classes cannot be pickled by reference, so the class travels by name."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind, message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message

    def error(self) -> Error:
        """The oxsort error it carries."""
        cls = getattr(_native, self.kind, Error)
        return cls(self.message)  # type: ignore[no-any-return]


F = TypeVar("F", bound=Callable[..., Any])


def _carry_errors(f: F) -> F:
    """Makes the oxsort errors a task raises reach the driver as themselves."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        # Through the module: the task is pickled by value, and a class of the native module
        # pickled by value would be a copy that the real errors are not instances of.
        except _native.Error as e:
            raise _TaskError(type(e).__name__, str(e)) from None

    return wrapper  # type: ignore[return-value]


# ---- tasks -------------------------------------------------------------------------------


def _node_id() -> str:
    return str(ray.get_runtime_context().get_node_id())


def _job_root(local_dir: Optional[str], job: str) -> str:
    return os.path.join(local_dir or tempfile.gettempdir(), f"oxsort-ray-{job}")


def _node_dir(local_dir: Optional[str], job: str) -> str:
    """This node's directory of the job (per node, as local disks are)."""
    d = os.path.join(_job_root(local_dir, job), _node_id()[:16])
    os.makedirs(d, exist_ok=True)
    return d


@ray.remote(num_cpus=0)
def _stat_task(paths: list[str]) -> tuple[str, list[Optional[int]]]:
    sizes: list[Optional[int]] = []
    for p in paths:
        try:
            sizes.append(os.stat(p).st_size)
        except OSError:
            sizes.append(None)
    return _node_id(), sizes


@contextmanager
def _working(d: str) -> Iterator[None]:
    """Marks ``d`` as being written by this process (``d.pid``) while the block runs: the
    cleanup of a cancelled job waits for such a process to be gone before it removes the
    directories (a force-cancelled task's worker is killed some time after the cancel)."""
    mark = d + ".pid"
    with open(mark, "w") as f:
        f.write(str(os.getpid()))
    try:
        yield
    finally:
        try:
            os.remove(mark)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@ray.remote(num_cpus=1)
@_carry_errors
def _sample_task(
    path: str, index: int, count: int, seed: int, spec: dict[str, Any]
) -> list[tuple[bytes, int, int]]:
    keys, _ = _native.sample(path, index, count, seed, spec)
    return keys


def _task_spec(spec: dict[str, Any], budgets: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """The task's specification: the memory and threads not given take this node's per-task
    defaults (the smallest of any node, on a node that joined after the job started)."""
    memory, threads = budgets.get(_node_id()) or min(budgets.values())
    s = dict(spec)
    if s["memory"] is None:
        s["memory"] = memory
    if s["threads"] is None:
        s["threads"] = threads
    return s


@ray.remote(max_retries=3)
@_carry_errors
def _map_task(
    path: str,
    index: int,
    map_index: int,
    start: int,
    end: int,
    splitters: list[tuple[bytes, int, int]],
    spec: dict[str, Any],
    budgets: dict[str, tuple[int, int]],
    local_dir: Optional[str],
    job: str,
) -> dict[str, Any]:
    d = os.path.join(_node_dir(local_dir, job), f"map-{map_index:05d}")
    with _working(d):
        shutil.rmtree(d, ignore_errors=True)  # what an earlier try of this map left here
        os.makedirs(d)
        records, checksum, buckets, below = _native.map(
            path, index, (start, end), splitters, _task_spec(spec, budgets), d
        )
    return {
        "node": _node_id(),
        "records": records,
        "checksum": checksum,
        "below": below,
        "buckets": [
            {
                "path": str(p),
                "records": n,
                "checksum": c,
                "dropped": dn,
                "dropped_checksum": dc,
                "size": os.path.getsize(p),
            }
            for p, n, c, dn, dc in buckets
        ],
    }


@ray.remote(num_cpus=0, max_retries=0)
def _read_chunk(path: str, offset: int, length: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def _pinned(node: str, soft: bool = False) -> NodeAffinitySchedulingStrategy:
    return NodeAffinitySchedulingStrategy(node_id=node, soft=soft)


def _fetch(node: str, path: str, size: int, chunk: int) -> Iterator[bytes]:
    """The bytes of bucket ``path`` on ``node``, as chunks read there and passed by Ray's
    object transfer (memory to memory: nothing is written on this node), with
    :data:`FETCH_DEPTH` chunks in flight."""
    strategy = _pinned(node)
    offsets = iter(range(0, size, chunk))
    pending: deque[ray.ObjectRef] = deque()

    def submit() -> None:
        o = next(offsets, None)
        if o is not None:
            pending.append(
                _read_chunk.options(scheduling_strategy=strategy).remote(
                    path, o, min(chunk, size - o)
                )
            )

    for _ in range(FETCH_DEPTH):
        submit()
    got = 0
    while pending:
        data: bytes = ray.get(pending.popleft())
        submit()
        got += len(data)
        yield data
    if got != size:
        raise Error(f"bucket {path} on node {node}: fetched {got} of {size} bytes")


def _visible(path: str, size: int) -> bool:
    """Whether this node sees bucket ``path`` of another node (a shared file system: the
    job's directories are named after their nodes, so no other file has this path)."""
    try:
        return os.stat(path).st_size == size
    except OSError:
        return False


@ray.remote(max_retries=3)
@_carry_errors
def _reduce_task(
    buckets: list[tuple[str, str, int]],
    output: str,
    spec: dict[str, Any],
    budgets: dict[str, tuple[int, int]],
    drop_key: Optional[bytes],
    shared: Optional[bool],
    object_store: int,
) -> dict[str, Any]:
    here = _node_id()
    spec = _task_spec(spec, budgets)
    live = [(m, b) for m, b in enumerate(buckets) if b[2] > 0]
    # The memory budget is shared by the buckets merged: a read buffer for each bucket file,
    # FETCH_DEPTH chunks in flight and one being merged for each bucket fetched (and no more
    # of the node's object store than its share).
    per = spec["memory"] // max(1, len(live))
    buffer = max(MIN_READ_BUFFER, min(MAX_READ_BUFFER, per // 2))
    far = [
        (m, b)
        for m, b in live
        if not (b[0] == here or shared is True or (shared is None and _visible(b[1], b[2])))
    ]
    chunk = min(FETCH_CHUNK, per // (FETCH_DEPTH + 1))
    if far:
        chunk = min(chunk, object_store // (len(far) * (FETCH_DEPTH + 1)))
    chunk = max(MIN_FETCH_CHUNK, chunk)
    fetched = {m for m, _ in far}
    sources: list[tuple[str, Optional[Iterator[bytes]]]] = [
        (
            (f"{path} on node {node[:12]}", _fetch(node, path, size, chunk))
            if m in fetched
            else (path, None)
        )
        for m, (node, path, size) in live
    ]
    records, checksum, dropped, dropped_sum, edges = _native.merge_buckets(
        sources, output, spec, buffer, drop_key
    )
    return {
        "node": here,
        "records": records,
        "checksum": checksum,
        "dropped": dropped,
        "dropped_checksum": dropped_sum,
        "fetched": len(far),
        "read_in_place": len(live) - len(far),
        "first": edges[0] if edges else None,
        "last": edges[1] if edges else None,
    }


@ray.remote(num_cpus=0)
def _disk_task(local_dir: Optional[str]) -> tuple[str, str, int]:
    """This node's job directory parent and the bytes free there (of its nearest existing
    ancestor, as the directory is made on first use)."""
    d = local_dir or tempfile.gettempdir()
    p = d
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    st = os.statvfs(p)
    return _node_id(), d, st.f_bavail * st.f_frsize


@ray.remote(num_cpus=0, max_retries=0)
def _cleanup_task(local_dir: Optional[str], job: str) -> None:
    root = _job_root(local_dir, job)
    deadline = time.monotonic() + CANCEL_WAIT
    for mark in glob.glob(os.path.join(glob.escape(root), "*", "*.pid")):
        try:
            with open(mark) as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            continue
        while pid and _alive(pid) and os.path.exists(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
    shutil.rmtree(root, ignore_errors=True)


@ray.remote(num_cpus=1)
@_carry_errors
def _gensort_task(path: str, records: int, start: int, ascii: bool, skew: bool) -> tuple[str, str]:
    return _node_id(), _native.gensort(path, records, start, ascii, skew, 0)


# ---- driver ------------------------------------------------------------------------------


def _get(refs: Any) -> Any:
    """``ray.get``, raising an oxsort error a task raised as itself (with its message)."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        raise _unwrap(e) from None


def _unwrap(e: BaseException) -> BaseException:
    """The oxsort error carried by a task's failure (else the failure itself)."""
    cause = getattr(e, "cause", None)
    if isinstance(cause, _TaskError):
        return cause.error()
    return e


def _connect(address: Optional[str]) -> None:
    """Joins the cluster at ``address`` (or the one ``ray.init()`` finds)."""
    if ray.is_initialized():
        return
    if address and address != "auto" and "://" not in address:
        _probe(address)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - Ray raises several kinds for an unreachable cluster
        where = address if address is not None else "the address ray.init() finds (RAY_ADDRESS)"
        raise Error(f"no Ray cluster at {where}: {e}") from None


def _probe(address: str) -> None:
    """Fails fast when nothing listens at ``host:port`` (``ray.init`` waits minutes for it)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise Error(f"no Ray cluster at {address}: give the address as HOST:PORT")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as e:
        raise Error(f"no Ray cluster at {address}: {e.strerror or e}") from None


def _alive_nodes() -> dict[str, dict[str, Any]]:
    return {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}


def _describe(node: str, nodes: dict[str, dict[str, Any]]) -> str:
    n = nodes.get(node)
    ip = n.get("NodeManagerAddress", "?") if n else "?"
    return f"node {node[:12]} ({ip})"


def _resolve_inputs(inputs: Union[Input, Sequence[Input]]) -> list[_Source]:
    if isinstance(inputs, (str, os.PathLike)) or (
        isinstance(inputs, tuple)
        and len(inputs) == 2
        and isinstance(inputs[0], str)
        and isinstance(inputs[1], (str, os.PathLike))
    ):
        items: list[Input] = [inputs]  # type: ignore[list-item]
    else:
        items = list(inputs)  # type: ignore[arg-type]
    if not items:
        raise SpecError("no input given")
    nodes = _alive_nodes()
    by_ip: dict[str, list[str]] = {}
    for nid, n in nodes.items():
        by_ip.setdefault(str(n.get("NodeManagerAddress")), []).append(nid)
    out = []
    for i, it in enumerate(items):
        if isinstance(it, tuple):
            node, p = it
            if node in nodes:
                nid = node
            elif len(by_ip.get(node, [])) == 1:
                nid = by_ip[node][0]
            elif node in by_ip:
                raise SpecError(
                    f"input {os.fspath(p)}: several nodes have the address {node}: "
                    "name the node by its id"
                )
            else:
                raise SpecError(f"input {os.fspath(p)}: no live node {node} in the cluster")
            out.append(_Source(i, os.path.abspath(os.fspath(p)), nid))
        else:
            out.append(_Source(i, os.path.abspath(os.fspath(it)), None))
    return out


def _ask_nodes(
    sources: list[_Source], task: Any, size: Callable[[Any], int]
) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], Any]]:
    """Runs the remote ``task`` (paths -> (node, one answer per path, ``None`` for a missing
    input)) on every node for the inputs its maps may read (its own inputs, and every shared
    path), before any stage runs; sets each source's ``size`` (``size`` of its answer). Refuses
    a missing input naming the node and the path, and a shared input whose size differs between
    nodes. Returns the live nodes and each (node, path)'s answer."""
    nodes = _alive_nodes()
    shared = [s.path for s in sources if s.node is None]
    asks: dict[str, list[str]] = {nid: list(shared) for nid in nodes} if shared else {}
    for s in sources:
        if s.node is not None:
            asks.setdefault(s.node, []).append(s.path)
    refs = {
        nid: task.options(scheduling_strategy=_pinned(nid)).remote(paths)
        for nid, paths in asks.items()
    }
    found: dict[tuple[str, str], Any] = {}
    for nid, ref in refs.items():
        _, got = _get(ref)
        for p, answer in zip(asks[nid], got):
            if answer is None:
                raise BadInputError(f"input missing on {_describe(nid, nodes)}: {p}")
            found[(nid, p)] = answer
    for s in sources:
        if s.node is not None:
            s.size = size(found[(s.node, s.path)])
            continue
        seen = {size(found[(nid, s.path)]) for nid in nodes}
        if len(seen) > 1:
            raise BadInputError(
                f"input {s.path} differs in size between nodes: {sorted(seen)}"
                " (a shared input must be the same file on every node)"
            )
        s.size = seen.pop()
    return nodes, found


def _check_inputs(sources: list[_Source], record_size: Optional[int]) -> None:
    """Every input exists where its map may run (its node, or every node for a shared path)
    and holds whole records: the error names the node and the path, before any stage runs."""
    nodes, sizes = _ask_nodes(sources, _stat_task, int)
    for (nid, p), size in sizes.items():
        if record_size and size % record_size:
            raise BadInputError(
                f"input {p} on {_describe(nid, nodes)}: {size} bytes is not a whole number "
                f"of {record_size}-byte records ({size % record_size} bytes left over)"
            )


def _prepare_output(output_dir: str, overwrite: bool) -> None:
    os.makedirs(output_dir, exist_ok=True)
    present = sorted(os.listdir(output_dir))
    if not present:
        return
    if not overwrite:
        raise Error(
            f"output directory {output_dir} is not empty ({len(present)} entries, "
            f"such as {present[0]}): pass overwrite=True (--overwrite) to replace "
            "its partitions"
        )
    for name in present:
        stem, ext = os.path.splitext(name)
        if name == MANIFEST or (
            stem.startswith("part-") and stem[5:].isdigit() and ext in ("", ".parquet", ".arrow")
        ):
            os.remove(os.path.join(output_dir, name))


def _map_tasks(sources: list[_Source], record_size: Optional[int], map_size: int) -> list[_MapTask]:
    tasks: list[_MapTask] = []
    for s in sources:
        if s.size == 0:
            continue
        n = max(1, -(-s.size // map_size))
        step = -(-s.size // n)
        if record_size:
            step = -(-step // record_size) * record_size
        start = 0
        while start < s.size:
            end = min(s.size, start + step)
            tasks.append(_MapTask(len(tasks), s, start, end))
            start = end
    return tasks


def _balanced_map_tasks(
    sources: list[_Source], record_size: Optional[int], nodes: dict[str, _Node]
) -> list[_MapTask]:
    """The default cut: maps of at most :data:`DEFAULT_MAP_SIZE`, made finer (whole waves of
    the cluster's task slots, up to :data:`MAX_MAP_WAVES`, none below
    :data:`MIN_BALANCED_MAP_SIZE`) until :func:`_place` leaves the busiest node within
    :data:`MAP_BALANCE` of an even share; the most even cut tried if none is. No cut is finer
    than a reduce's memory budget can merge (a read buffer per map)."""
    total = sum(s.size for s in sources)
    slots = sum(b.tasks_at_once for b in nodes.values())
    coarse = _map_tasks(sources, record_size, DEFAULT_MAP_SIZE)
    if total == 0 or slots == 0:
        return coarse
    even = total / slots
    most_maps = min(b.memory for b in nodes.values()) // _reduce_buffer_floor(nodes)
    best, best_span = coarse, _map_span(coarse, nodes)
    waves = max(1, -(-total // (slots * DEFAULT_MAP_SIZE)))
    while best_span > MAP_BALANCE * even and waves <= MAX_MAP_WAVES:
        size = -(-total // (slots * waves))
        if size < MIN_BALANCED_MAP_SIZE:
            break
        tasks = _map_tasks(sources, record_size, size)
        if len(tasks) > most_maps:
            break
        span = _map_span(tasks, nodes)
        if span < best_span:
            best, best_span = tasks, span
        waves += 1
    return best


def _map_span(tasks: list[_MapTask], nodes: dict[str, _Node]) -> float:
    """The bytes the busiest node sorts per task slot when ``tasks`` are placed: its share
    spread over its slots, or its largest map, whichever is more."""
    load = dict.fromkeys(nodes, 0)
    largest = dict.fromkeys(nodes, 0)
    for t, nid in zip(tasks, _place(tasks, nodes)):
        load[nid] += t.size
        largest[nid] = max(largest[nid], t.size)
    return max(max(load[n] / nodes[n].tasks_at_once, largest[n]) for n in nodes)


def _reduce_buffer_floor(nodes: dict[str, _Node]) -> int:
    """The memory a reduce needs at least per bucket it merges (one bucket per map): a read
    buffer, or the chunks in flight of a bucket fetched from another node."""
    fetch_floor = MIN_FETCH_CHUNK * (FETCH_DEPTH + 1) if len(nodes) > 1 else 0
    return max(MIN_READ_BUFFER, fetch_floor)


def _splitters(
    samples: list[tuple[bytes, int, int]], partitions: int
) -> list[tuple[bytes, int, int]]:
    """R-1 splitters at the quantiles of the samples. A key sampled once becomes ``(key, 0,
    0)``: every record of it goes above the splitter, and no map has to find the records of
    the key before a position. A key sampled more than once is common enough that cutting it
    by position keeps the partitions even, and keeps its input and position."""
    samples.sort()
    if not samples:
        return []
    seen = collections.Counter(k for k, _, _ in samples)
    picks = [samples[(j * len(samples)) // partitions] for j in range(1, partitions)]
    return [s if seen[s[0]] > 1 else (s[0], 0, 0) for s in picks]


def _budgets(
    local_dir: Optional[str],
    task_cpus: float,
    memory: Optional[int],
    threads: Optional[int],
    local_disk: Optional[int],
) -> dict[str, _Node]:
    """Each live node's budgets per task: what is given, else its share of the node (the
    node's memory and free local disk divided by the tasks Ray runs there at once, its cores
    by the same number, at least 1)."""
    nodes = _alive_nodes()
    refs = {
        nid: _disk_task.options(scheduling_strategy=_pinned(nid)).remote(local_dir) for nid in nodes
    }
    out: dict[str, _Node] = {}
    for nid, n in nodes.items():
        res = n.get("Resources") or {}
        cpus = float(res.get("CPU", 0))
        slots = int(cpus // task_cpus)
        _, d, free = _get(refs[nid])
        if slots < 1:
            continue  # runs no map or reduce
        out[nid] = _Node(
            id=nid,
            ip=str(n.get("NodeManagerAddress", "?")),
            tasks_at_once=slots,
            memory=memory if memory is not None else int(res.get("memory", 0)) // slots,
            threads=threads if threads is not None else max(1, int(cpus) // slots),
            local_disk=local_disk if local_disk is not None else free // slots,
            local_dir=d,
            disk_free=free,
            object_store=int(res.get("object_store_memory", 0)) // slots,
        )
    if not out:
        raise Error(f"no live node of the cluster has the {task_cpus:g} CPUs a task asks for")
    return out


def _place(tasks: list[_MapTask], nodes: dict[str, _Node]) -> list[str]:
    """The node of each map: its input's node, or (a shared input) the node with the fewest
    bytes of maps per task it runs at once, so that each node's local disk can be checked."""
    load = dict.fromkeys(nodes, 0)
    where: list[str] = []
    for t in tasks:
        nid = t.source.node
        if nid is None:
            nid = min(nodes, key=lambda n: ((load[n] + t.size) / nodes[n].tasks_at_once, n))
        elif nid not in nodes:
            raise Error(
                f"input {t.source.path} is on node {nid[:12]}, which has fewer CPUs than a "
                "task asks for (task_cpus)"
            )
        load[nid] += t.size
        where.append(nid)
    return where


def _check_budgets(tasks: list[_MapTask], where: list[str], nodes: dict[str, _Node]) -> None:
    """Refuses, before any task writes, budgets a stage cannot keep: a map's local disk
    (:data:`MAP_DISK_FACTOR` times its range) above the per-task budget, a node's local disk
    short of its maps' buckets (kept until the reduce) and the maps sorting at once there, a
    reduce's memory short of a buffer per bucket it merges."""
    # A reduce may run on another node than a bucket (reduces go where Ray puts them).
    floor = len(tasks) * _reduce_buffer_floor(nodes)
    for nid, b in nodes.items():
        where_ = f"node {nid[:12]} ({b.ip})"
        if tasks and b.memory < floor:
            raise SpecError(
                f"memory budget {_human(b.memory)} per task on {where_} is too small for a "
                f"reduce merging {len(tasks)} buckets: it needs {_human(floor)} (give more "
                "memory or a larger map_size, for fewer maps)"
            )
        sizes = [t.size for t, w in zip(tasks, where) if w == nid]
        if not sizes:
            continue
        biggest = max(sizes)
        if MAP_DISK_FACTOR * biggest > b.local_disk:
            raise SpecError(
                f"local disk budget {_human(b.local_disk)} per task on {where_} ({b.local_dir}): "
                f"a map of {_human(biggest)} needs {_human(MAP_DISK_FACTOR * biggest)} "
                "(give a smaller map_size or a larger local_disk)"
            )
        kept = sum(sizes)
        at_once = min(b.tasks_at_once, len(sizes)) * biggest * (MAP_DISK_FACTOR - 1)
        if kept + at_once > b.disk_free:
            raise OutOfSpaceError(
                f"local disk of {where_}: {b.local_dir} needs {_human(kept + at_once)} for "
                f"its {len(sizes)} maps ({_human(kept)} of buckets kept until the reduce, "
                f"{_human(at_once)} more while {min(b.tasks_at_once, len(sizes))} sort at "
                f"once) and has {_human(b.disk_free)} free"
            )


def sort(
    inputs: Union[Input, Sequence[Input]],
    output_dir: PathLike,
    *,
    partitions: int = 4,
    address: Optional[str] = None,
    overwrite: bool = False,
    map_size: Union[int, str, None] = None,
    local_dir: Optional[PathLike] = None,
    seed: int = 0,
    record_size: Optional[int] = None,
    lines: bool = False,
    nul: bool = False,
    fields: Optional[str] = None,
    control: Optional[str] = None,
    keys: Union[str, Sequence[str], None] = None,
    unique: bool = False,
    memory: Union[int, str, None] = None,
    temp_dirs: Optional[Sequence[PathLike]] = None,
    threads: Optional[int] = None,
    local_disk: Union[int, str, None] = None,
    task_cpus: float = 1,
    shared_local_dir: Optional[bool] = None,
    by: Optional[By] = None,
    output_format: Optional[str] = None,
) -> RaySortResult:
    """Sorts ``inputs`` (concatenated, as :func:`oxsort.sort` takes them) across the Ray
    cluster into ``output_dir/part-00000`` ... ``part-{R-1}``, whose concatenation is the
    single-node sort's output byte for byte.

    ``inputs``: paths every node can read, or ``(node, path)`` pairs for files on one node's
    local disk. ``partitions``: R. ``address``: the cluster (default: what ``ray.init()``
    finds). ``overwrite=True`` replaces the partitions and manifest of a non-empty
    ``output_dir``. ``map_size``: bytes per map task (inputs are cut into byte ranges on record
    boundaries; by default at most 1 GiB, cut finer so that the cluster's task slots get even
    shares of the maps). ``local_dir``: where each node keeps its buckets (default: its temp dir).
    The record, key and resource options are :func:`oxsort.sort`'s; ``unique`` keeps the
    first record of each key across all partitions; ``temp_dirs`` is not used (each map
    spills into ``local_dir``).

    Budgets, per map or reduce task, as one machine's sort has them: ``memory`` (default: the
    node's Ray memory divided by the tasks it runs at once), ``threads`` (default: the node's
    cores divided likewise, at least 1) and ``local_disk`` (default: the free space of
    ``local_dir`` there divided likewise). ``task_cpus``: the CPUs each task reserves, hence
    how many run at once on a node. They are checked before any task writes.
    ``shared_local_dir``: whether every node sees every node's ``local_dir`` (a shared file
    system: a reduce reads other nodes' buckets in place); by default a bucket is read in
    place when its file is visible, else fetched from its node.

    Tables: ``by=["k1", ("k2", "descending"), ("k3", "ascending", "at_start")]`` (as
    :func:`oxsort.sort` takes it) sorts Parquet or Arrow IPC files, the partitions of one table,
    into ``output_dir/part-00000.parquet`` ... (``.arrow`` for Arrow inputs, or as
    ``output_format=`` says): read in order, the partitions are the rows, in order, of
    :func:`oxsort.sort` of the inputs into one file, with its schema and compression (see
    :mod:`oxsort.ray._tables`). Each input is one map; the record options (``record_size``,
    ``lines``, ``nul``, ``fields``, ``control``, ``keys``, ``unique``, ``map_size``) are
    refused with it. The result's ``records`` are rows and its checksums rows checksums (see
    :func:`oxsort.sort`'s ``row_checksum``): the partitions' add up to the inputs'.
    """
    del temp_dirs  # every stage spills into its node's job directory
    if partitions < 1:
        raise SpecError(f"partitions={partitions}: at least 1")
    if not task_cpus > 0:
        raise SpecError(f"task_cpus={task_cpus}: more than 0")
    if by is not None or output_format is not None:
        records = {
            "record_size": record_size is not None,
            "lines": lines,
            "nul": nul,
            "fields": fields is not None,
            "control": control is not None,
            "keys": bool(keys),
            "unique": unique,
            "map_size": map_size is not None,
        }
        given = [name for name, on in records.items() if on]
        if by is None:
            raise SpecError("output_format= is a table sort's: give by= (the sort columns)")
        if given:
            raise SpecError(
                f"by= sorts tables by columns: {', '.join(n + '=' for n in given)} "
                "(options of a record sort) cannot come with it"
            )
        from ._tables import sort_tables

        if threads is not None and threads < 1:
            raise SpecError(f"threads={threads}: at least 1")
        mem = parse_size(memory)
        _connect(address)
        return sort_tables(
            inputs,
            os.path.abspath(os.fspath(output_dir)),
            by=by,
            partitions=partitions,
            output_format=output_format,
            overwrite=overwrite,
            local_dir=os.path.abspath(os.fspath(local_dir)) if local_dir is not None else None,
            memory=mem,
            threads=threads,
            local_disk=parse_size(local_disk),
            task_cpus=task_cpus,
            shared_local_dir=shared_local_dir,
            resolve=_resolve_inputs,
        )
    spec = _spec(
        record_size=record_size,
        lines=lines,
        nul=nul,
        fields=fields,
        control=control,
        keys=keys,
        unique=unique,
        memory=memory,
        threads=threads,
        temp_dirs=None,
    )
    is_unique = _native.check_cluster_spec(spec)
    msize = parse_size(map_size)
    disk = parse_size(local_disk)
    out_dir = os.path.abspath(os.fspath(output_dir))
    ldir = os.path.abspath(os.fspath(local_dir)) if local_dir is not None else None
    _connect(address)
    sources = _resolve_inputs(inputs)
    record_size_ = _record_size(spec)
    _check_inputs(sources, record_size_)
    nodes = _budgets(ldir, task_cpus, spec["memory"], spec["threads"], disk)
    tasks = (
        _map_tasks(sources, record_size_, msize)
        if msize
        else _balanced_map_tasks(sources, record_size_, nodes)
    )
    where = _place(tasks, nodes)
    _check_budgets(tasks, where, nodes)
    _prepare_output(out_dir, overwrite)

    job = uuid.uuid4().hex[:12]
    plan = _Plan(
        sources=sources,
        tasks=tasks,
        where=where,
        nodes=nodes,
        out_dir=out_dir,
        partitions=partitions,
        local_dir=ldir,
        seed=seed,
        spec=spec,
        unique=is_unique,
        task_cpus=task_cpus,
        shared=shared_local_dir,
        job=job,
    )
    return _guarded(out_dir, ldir, job, lambda inflight: _run(plan, inflight))


def _guarded(
    out_dir: str,
    local_dir: Optional[str],
    job: str,
    run: Callable[[list[ray.ObjectRef]], RaySortResult],
) -> RaySortResult:
    """Runs a job's stages (``run`` adds every task it submits to the list it is given): on
    any failure or interrupt its tasks are cancelled and what it wrote in ``out_dir`` is
    removed; its node-local directories are removed in any case."""
    before = set(os.listdir(out_dir))
    inflight: list[ray.ObjectRef] = []
    ok = False
    try:
        result = run(inflight)
        ok = True
        return result
    except BaseException:
        _cancel(inflight)
        raise
    finally:
        _cleanup(local_dir, job)
        if not ok:
            # The partitions written, and what a reduce killed in its write left (its
            # unfinished partition under a temp name): every entry that was not there before.
            for name in set(os.listdir(out_dir)) - before:
                p = os.path.join(out_dir, name)
                try:
                    if os.path.isdir(p):
                        shutil.rmtree(p)
                    else:
                        os.remove(p)
                except OSError:
                    pass


@dataclass
class _Plan:
    """What a job runs: its maps and where, the budgets, the options of its stages."""

    sources: list[_Source]
    tasks: list[_MapTask]
    where: list[str]
    nodes: dict[str, _Node]
    out_dir: str
    partitions: int
    local_dir: Optional[str]
    seed: int
    spec: dict[str, Any]
    unique: bool
    task_cpus: float
    shared: Optional[bool]
    job: str


def _cancel(refs: list[ray.ObjectRef]) -> None:
    """Stops the tasks (their workers are killed) and waits for them to be gone, so that none
    writes in the job's directories after they are removed.

    Only the tasks not yet ended are cancelled: Ray's driver process aborts (a failed internal
    check, "Tried to complete task that was not pending") when a forced cancel crosses the
    reply of a task that has just ended, and an ended task needs no cancel."""
    if not refs:
        return
    _, running = ray.wait(refs, num_returns=len(refs), timeout=0)
    for ref in running:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001 - a finished task cannot be cancelled
            pass
    if running:
        ray.wait(running, num_returns=len(running), timeout=CANCEL_WAIT)


def _record_size(spec: dict[str, Any]) -> Optional[int]:
    """The size of fixed records (None for delimited ones)."""
    return _native.record_size(spec)


def _cleanup(local_dir: Optional[str], job: str) -> None:
    """Removes the job's directory on every live node (and on the driver's)."""
    refs = [
        _cleanup_task.options(scheduling_strategy=_pinned(nid)).remote(local_dir, job)
        for nid in _alive_nodes()
    ]
    try:
        ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT + 30)
    finally:
        shutil.rmtree(_job_root(local_dir, job), ignore_errors=True)


def _run(plan: _Plan, inflight: list[ray.ObjectRef]) -> RaySortResult:
    sources, tasks, partitions, spec = plan.sources, plan.tasks, plan.partitions, plan.spec
    total = sum(s.size for s in sources)
    times: dict[str, float] = {}

    def track(ref: ray.ObjectRef) -> ray.ObjectRef:
        # Every task is known to the driver from its submission on, so that an interrupt
        # (which may come in the middle of a stage's submissions) cancels it.
        inflight.append(ref)
        return ref

    t0 = time.monotonic()
    want = SAMPLES_PER_PARTITION * partitions if partitions > 1 else 0
    refs = [
        track(
            _sample_task.options(
                scheduling_strategy=_pinned(s.node) if s.node is not None else "SPREAD"
            ).remote(s.path, s.index, max(1, -(-want * s.size // total)), seed=plan.seed, spec=spec)
        )
        for s in sources
        if s.size and want
    ]
    samples = [k for got in _get(refs) for k in got]
    splitters = _splitters(samples, partitions) if want else []
    times["sample"] = time.monotonic() - t0

    t0 = time.monotonic()
    split_ref = ray.put(splitters)
    budgets_ref = ray.put({nid: (b.memory, b.threads) for nid, b in plan.nodes.items()})

    def submit_map(i: int) -> ray.ObjectRef:
        t = tasks[i]
        # A shared input's map goes where the disk check counted it; should that node die,
        # it runs on another (soft affinity).
        strategy = _pinned(plan.where[i], soft=t.source.node is None)
        return track(
            _map_task.options(num_cpus=plan.task_cpus, scheduling_strategy=strategy).remote(
                t.source.path,
                t.source.index,
                t.index,
                t.start,
                t.end,
                split_ref,
                spec,
                budgets_ref,
                plan.local_dir,
                plan.job,
            )
        )

    maps: list[dict[str, Any]] = _get([submit_map(i) for i in range(len(tasks))])
    times["map"] = time.monotonic() - t0

    t0 = time.monotonic()
    # The least object store a reduce may find on its node (reduces go where Ray puts them).
    store = min(b.object_store for b in plan.nodes.values())
    reduces: dict[int, dict[str, Any]] = {}
    rerun = 0
    for _round in range(MAX_ROUNDS + 1):
        alive = _alive_nodes()
        lost = [i for i, m in enumerate(maps) if m["node"] not in alive]
        if lost:
            if any(tasks[i].source.node is not None for i in lost):
                bad = next(tasks[i].source for i in lost if tasks[i].source.node is not None)
                raise Error(f"the node of input {bad.path} died: its map cannot run elsewhere")
            rerun += len(lost)
            live = {nid: b for nid, b in plan.nodes.items() if nid in alive}
            for i, nid in zip(lost, _place([tasks[i] for i in lost], live or plan.nodes)):
                plan.where[i] = nid
            for i, m in zip(lost, _get([submit_map(i) for i in lost])):
                maps[i] = m
        # Under `unique`, partition r drops the records of splitter r-1's key when a record of
        # that key went below the splitter (an earlier partition keeps the first of them).
        below = [any(m["below"][j] for m in maps) for j in range(len(splitters))]
        todo = [r for r in range(partitions) if r not in reduces]
        rrefs = {
            r: track(
                _reduce_task.options(num_cpus=plan.task_cpus, scheduling_strategy="SPREAD").remote(
                    [(m["node"], m["buckets"][r]["path"], m["buckets"][r]["size"]) for m in maps],
                    os.path.join(plan.out_dir, _part_name(r)),
                    spec,
                    budgets_ref,
                    splitters[r - 1][0] if r > 0 and below[r - 1] else None,
                    plan.shared,
                    store,
                )
            )
            for r in todo
        }
        failed: list[BaseException] = []
        for r, ref in rrefs.items():
            try:
                reduces[r] = ray.get(ref)
            except (ray.exceptions.RayError, Error) as e:
                failed.append(e)
        if not failed:
            break
        if not [i for i, m in enumerate(maps) if m["node"] not in _alive_nodes()]:
            raise _unwrap(failed[0]) from None
    else:
        raise Error(f"the reduce stage failed {MAX_ROUNDS + 1} times as nodes died")
    times["reduce"] = time.monotonic() - t0
    inflight.clear()

    result = _finish(plan, maps, reduces, times)
    result.maps_rerun = rerun
    return result


def _finish(
    plan: _Plan,
    maps: list[dict[str, Any]],
    reduces: dict[int, dict[str, Any]],
    times: dict[str, float],
) -> RaySortResult:
    """The driver's checks (order across partitions, checksums) and the manifest."""
    out_dir, partitions = plan.out_dir, plan.partitions
    read = sum(m["records"] for m in maps)
    read_sum = sum(int(m["checksum"], 16) for m in maps)
    dropped = sum(b["dropped"] for m in maps for b in m["buckets"])
    dropped_sum = sum(int(b["dropped_checksum"], 16) for m in maps for b in m["buckets"])
    parts: list[Partition] = []
    prev: Optional[tuple[int, bytes]] = None
    for r in range(partitions):
        red = reduces[r]
        want = sum(int(m["buckets"][r]["checksum"], 16) for m in maps)
        want_n = sum(m["buckets"][r]["records"] for m in maps)
        got = int(red["checksum"], 16) + int(red["dropped_checksum"], 16)
        if _hex(got) != _hex(want) or red["records"] + red["dropped"] != want_n:
            raise Error(
                f"partition {r}: {red['records']} records written and {red['dropped']} dropped "
                f"as duplicates, checksum {_hex(got)}; its buckets held {want_n} records, "
                f"checksum {_hex(want)}"
            )
        dropped += red["dropped"]
        dropped_sum += int(red["dropped_checksum"], 16)
        if red["first"] is not None:
            if prev is not None and (
                prev[1] > red["first"] or (plan.unique and prev[1] == red["first"])
            ):
                raise Error(
                    f"partitions out of order: the last key of {_part_name(prev[0])} is "
                    f"{'not less than' if plan.unique else 'greater than'} the first key of "
                    f"{_part_name(r)}"
                )
            prev = (r, red["last"])
        parts.append(
            Partition(
                _part_name(r),
                os.path.join(out_dir, _part_name(r)),
                red["node"],
                red["records"],
                red["checksum"],
            )
        )
    out_n = sum(p.records for p in parts)
    out_sum = sum(int(p.checksum, 16) for p in parts)
    if out_n + dropped != read or _hex(out_sum + dropped_sum) != _hex(read_sum):
        raise Error(
            f"checksum mismatch: read {read} records (checksum {_hex(read_sum)}), "
            f"wrote {out_n} (checksum {_hex(out_sum)}) and dropped {dropped} "
            f"(checksum {_hex(dropped_sum)})"
        )
    manifest = os.path.join(out_dir, MANIFEST)
    result = RaySortResult(
        records=out_n,
        checksum=_hex(out_sum),
        partitions=parts,
        maps=len(maps),
        manifest=manifest,
        dropped=dropped,
        stage_seconds=times,
        buckets_fetched=sum(red["fetched"] for red in reduces.values()),
        buckets_read_in_place=sum(red["read_in_place"] for red in reduces.values()),
        budgets={
            nid: {k: v for k, v in asdict(b).items() if k != "id"} for nid, b in plan.nodes.items()
        },
    )
    doc = {
        "inputs": [{"path": s.path, "node": s.node, "bytes": s.size} for s in plan.sources],
        "input_records": read,
        "input_checksum": _hex(read_sum),
        **result.to_dict(),
    }
    tmp = manifest + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, manifest)
    return result


def gensort(
    output_dir: PathLike,
    records: int,
    partitions: int,
    *,
    ascii: bool = False,
    skew: bool = False,
    address: Optional[str] = None,
    overwrite: bool = False,
) -> RaySortResult:
    """Writes ``records`` Sort Benchmark records across the cluster as ``partitions`` files
    ``output_dir/part-NNNNN``, each a task generating a disjoint record range (as
    ``gensort -bSTART``): concatenated, they are ``gensort RECORDS`` byte for byte."""
    if records < 0 or partitions < 1:
        raise SpecError("records cannot be negative and partitions must be at least 1")
    out_dir = os.path.abspath(os.fspath(output_dir))
    _connect(address)
    _prepare_output(out_dir, overwrite)
    t0 = time.monotonic()
    bounds = [records * i // partitions for i in range(partitions + 1)]
    paths = [os.path.join(out_dir, _part_name(i)) for i in range(partitions)]
    refs: list[ray.ObjectRef] = []
    try:
        for i in range(partitions):
            refs.append(
                _gensort_task.options(scheduling_strategy="SPREAD").remote(
                    paths[i], bounds[i + 1] - bounds[i], bounds[i], ascii, skew
                )
            )
        got = _get(refs)
    except BaseException:
        _cancel(refs)
        for p in paths:
            try:
                os.remove(p)
            except OSError:
                pass
        raise
    parts = [
        Partition(_part_name(i), paths[i], node, bounds[i + 1] - bounds[i], c)
        for i, (node, c) in enumerate(got)
    ]
    return RaySortResult(
        records=records,
        checksum=_hex(sum(int(p.checksum, 16) for p in parts)),
        partitions=parts,
        maps=0,
        manifest="",
        stage_seconds={"gensort": time.monotonic() - t0},
    )
