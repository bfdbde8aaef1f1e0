"""oxsort on a Ray cluster: the same bytes as :func:`oxsort.sort`, split into partitions.

::

    import oxsort.ray
    oxsort.ray.gensort("/shared/in", records=10_000_000, partitions=8)
    result = oxsort.ray.sort(sorted(glob.glob("/shared/in/part-*")), "/shared/out", partitions=8)

The job runs as Ray tasks, each calling the Rust engine (no record passes through Python):

- *sample*: every input gives keys at seeded random records; the driver takes R-1 splitters
  over (key, input index, position), so a key shared by many records can be cut between
  partitions and the order stays stable;
- *map*: each task reads one input (or a byte range of it, on record boundaries), sends each
  record to its bucket, and sorts every bucket with the engine on its node's local disk;
- *reduce*: task r fetches bucket r of every map (from the map's node) and merges them, in map
  order, into ``output_dir/part-NNNNN``.

The driver checks that the partitions are in order across their boundaries and that their
checksums add up to the input's, then writes ``output_dir/manifest.json``. Buckets are removed
at the end, after a failure and after Ctrl-C. A map whose node died is run again on a live
node; Ray retries tasks whose worker died.
"""

from __future__ import annotations

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
from .._files import PathLike, _spec, parse_size
from .._native import BadInputError, Error, SpecError

__all__ = ["Partition", "RaySortResult", "gensort", "sort"]

#: An input: a path every node can read (a shared file system), or ``(node, path)`` for a file
#: on one node's local disk (``node``: a Ray node id or the node's IP address).
Input = Union[PathLike, tuple[str, PathLike]]

#: Keys sampled per output partition: the largest partition then stays within a few percent
#: of the mean (the quantile of k samples is off by about 1/sqrt(k) of a partition).
SAMPLES_PER_PARTITION = 2000

#: Bytes per map task by default: inputs larger than this are cut into byte ranges (on record
#: boundaries) so every core of the cluster has a map to run.
DEFAULT_MAP_SIZE = 1 << 30

#: Bytes a reduce fetches from another node in one object (several stay in flight).
FETCH_CHUNK = 64 << 20

#: Fetches a reduce keeps in flight per bucket.
FETCH_DEPTH = 4

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


@ray.remote(num_cpus=1, max_retries=3)
@_carry_errors
def _map_task(
    path: str,
    index: int,
    map_index: int,
    start: int,
    end: int,
    splitters: list[tuple[bytes, int, int]],
    spec: dict[str, Any],
    local_dir: Optional[str],
    job: str,
) -> dict[str, Any]:
    d = os.path.join(_node_dir(local_dir, job), f"map-{map_index:05d}")
    with _working(d):
        shutil.rmtree(d, ignore_errors=True)  # what an earlier try of this map left here
        os.makedirs(d)
        records, checksum, buckets = _native.map(path, index, (start, end), splitters, spec, d)
    return {
        "node": _node_id(),
        "records": records,
        "checksum": checksum,
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


@ray.remote(num_cpus=1, max_retries=3)
@_carry_errors
def _reduce_task(
    r: int,
    buckets: list[tuple[str, str, int]],
    output: str,
    spec: dict[str, Any],
    local_dir: Optional[str],
    job: str,
) -> dict[str, Any]:
    here = _node_id()
    d = os.path.join(_node_dir(local_dir, job), f"reduce-{r:05d}")
    with _working(d):
        return _reduce_in(here, d, buckets, output, spec)


def _reduce_in(
    here: str, d: str, buckets: list[tuple[str, str, int]], output: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """The body of a reduce, in its directory ``d``."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    try:
        paths = []
        for m, (node, path, size) in enumerate(buckets):
            if node == here or size == 0:
                paths.append(path if size else os.devnull)
                continue
            local = os.path.join(d, f"from-map-{m:05d}")
            strategy = _pinned(node)
            offsets = list(range(0, size, FETCH_CHUNK))
            with open(local, "wb") as f:
                pending = [
                    _read_chunk.options(scheduling_strategy=strategy).remote(
                        path, o, min(FETCH_CHUNK, size - o)
                    )
                    for o in offsets[:FETCH_DEPTH]
                ]
                nxt = FETCH_DEPTH
                while pending:
                    f.write(ray.get(pending.pop(0)))
                    if nxt < len(offsets):
                        o = offsets[nxt]
                        pending.append(
                            _read_chunk.options(scheduling_strategy=strategy).remote(
                                path, o, min(FETCH_CHUNK, size - o)
                            )
                        )
                        nxt += 1
            if os.path.getsize(local) != size:
                raise Error(
                    f"bucket {path} on node {node}: fetched {os.path.getsize(local)} "
                    f"of {size} bytes"
                )
            paths.append(local)
        paths = [p for p in paths if p != os.devnull]
        records, checksum, edges = _native.reduce(paths, output, spec, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return {
        "node": here,
        "records": records,
        "checksum": checksum,
        "first": edges[0] if edges else None,
        "last": edges[1] if edges else None,
    }


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


def _check_inputs(sources: list[_Source], record_size: Optional[int]) -> None:
    """Every input exists where its map may run (its node, or every node for a shared path):
    the error names the node and the path, before any stage runs."""
    nodes = _alive_nodes()
    shared = [s.path for s in sources if s.node is None]
    asks: dict[str, list[str]] = {nid: list(shared) for nid in nodes} if shared else {}
    for s in sources:
        if s.node is not None:
            asks.setdefault(s.node, []).append(s.path)
    refs = {
        nid: _stat_task.options(scheduling_strategy=_pinned(nid)).remote(paths)
        for nid, paths in asks.items()
    }
    sizes: dict[tuple[str, str], int] = {}
    for nid, ref in refs.items():
        _, got = _get(ref)
        for p, size in zip(asks[nid], got):
            if size is None:
                raise BadInputError(f"input missing on {_describe(nid, nodes)}: {p}")
            if record_size and size % record_size:
                raise BadInputError(
                    f"input {p} on {_describe(nid, nodes)}: {size} bytes is not a whole number "
                    f"of {record_size}-byte records ({size % record_size} bytes left over)"
                )
            sizes[(nid, p)] = size
    for s in sources:
        if s.node is not None:
            s.size = sizes[(s.node, s.path)]
        else:
            seen = {sizes[(nid, s.path)] for nid in nodes}
            if len(seen) > 1:
                raise BadInputError(
                    f"input {s.path} differs in size between nodes: {sorted(seen)}"
                    " (a shared input must be the same file on every node)"
                )
            s.size = seen.pop()


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
        if name == MANIFEST or (name.startswith("part-") and name[5:].isdigit()):
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


def _splitters(
    samples: list[tuple[bytes, int, int]], partitions: int
) -> list[tuple[bytes, int, int]]:
    samples.sort()
    if not samples:
        return []
    return [samples[(j * len(samples)) // partitions] for j in range(1, partitions)]


def _options(s: _Source) -> dict[str, Any]:
    if s.node is not None:
        return {"scheduling_strategy": _pinned(s.node)}
    return {"scheduling_strategy": "SPREAD"}


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
) -> RaySortResult:
    """Sorts ``inputs`` (concatenated, as :func:`oxsort.sort` takes them) across the Ray
    cluster into ``output_dir/part-00000`` ... ``part-{R-1}``, whose concatenation is the
    single-node sort's output byte for byte.

    ``inputs``: paths every node can read, or ``(node, path)`` pairs for files on one node's
    local disk. ``partitions``: R. ``address``: the cluster (default: what ``ray.init()``
    finds). ``overwrite=True`` replaces the partitions and manifest of a non-empty
    ``output_dir``. ``map_size``: bytes per map task (inputs are cut into byte ranges on record
    boundaries). ``local_dir``: where each node keeps its buckets (default: its temp dir).
    The record, key and resource options are :func:`oxsort.sort`'s; ``memory`` and ``threads``
    apply to each task; ``temp_dirs`` is not used (each task spills into ``local_dir``);
    ``unique`` is refused, as equal keys may be cut between partitions.
    """
    del temp_dirs  # every stage spills into its node's job directory
    if partitions < 1:
        raise SpecError(f"partitions={partitions}: at least 1")
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
    _native.check_cluster_spec(spec)
    msize = parse_size(map_size) or DEFAULT_MAP_SIZE
    out_dir = os.path.abspath(os.fspath(output_dir))
    ldir = os.path.abspath(os.fspath(local_dir)) if local_dir is not None else None
    _connect(address)
    sources = _resolve_inputs(inputs)
    _check_inputs(sources, _record_size(spec))
    _prepare_output(out_dir, overwrite)
    before = set(os.listdir(out_dir))

    job = uuid.uuid4().hex[:12]
    times: dict[str, float] = {}
    inflight: list[ray.ObjectRef] = []
    ok = False
    try:
        result = _run(sources, out_dir, partitions, msize, ldir, seed, spec, job, times, inflight)
        ok = True
        return result
    except BaseException:
        _cancel(inflight)
        raise
    finally:
        _cleanup(ldir, job)
        if not ok:
            # The partitions written, and what a reduce killed in its write left (the engine's
            # unfinished output under a temp name): every entry that was not there before.
            for name in set(os.listdir(out_dir)) - before:
                p = os.path.join(out_dir, name)
                try:
                    if os.path.isdir(p):
                        shutil.rmtree(p)
                    else:
                        os.remove(p)
                except OSError:
                    pass


def _cancel(refs: list[ray.ObjectRef]) -> None:
    """Stops the tasks (their workers are killed) and waits for them to be gone, so that none
    writes in the job's directories after they are removed."""
    for ref in refs:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001 - a finished task cannot be cancelled
            pass
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT)


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


def _run(
    sources: list[_Source],
    out_dir: str,
    partitions: int,
    map_size: int,
    local_dir: Optional[str],
    seed: int,
    spec: dict[str, Any],
    job: str,
    times: dict[str, float],
    inflight: list[ray.ObjectRef],
) -> RaySortResult:
    record_size = _record_size(spec)
    total = sum(s.size for s in sources)

    def track(ref: ray.ObjectRef) -> ray.ObjectRef:
        # Every task is known to the driver from its submission on, so that an interrupt
        # (which may come in the middle of a stage's submissions) cancels it.
        inflight.append(ref)
        return ref

    t0 = time.monotonic()
    want = SAMPLES_PER_PARTITION * partitions if partitions > 1 else 0
    refs = [
        track(
            _sample_task.options(**_options(s)).remote(
                s.path, s.index, max(1, -(-want * s.size // total)), seed, spec
            )
        )
        for s in sources
        if s.size and want
    ]
    samples = [k for got in _get(refs) for k in got]
    splitters = _splitters(samples, partitions) if want else []
    times["sample"] = time.monotonic() - t0

    t0 = time.monotonic()
    tasks = _map_tasks(sources, record_size, map_size)
    split_ref = ray.put(splitters)

    def submit_map(t: _MapTask) -> ray.ObjectRef:
        return track(
            _map_task.options(**_options(t.source)).remote(
                t.source.path,
                t.source.index,
                t.index,
                t.start,
                t.end,
                split_ref,
                spec,
                local_dir,
                job,
            )
        )

    map_refs = [submit_map(t) for t in tasks]
    maps: list[dict[str, Any]] = _get(map_refs)
    times["map"] = time.monotonic() - t0

    t0 = time.monotonic()
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
            refs = [submit_map(tasks[i]) for i in lost]
            for i, m in zip(lost, _get(refs)):
                maps[i] = m
        todo = [r for r in range(partitions) if r not in reduces]
        outs = {r: os.path.join(out_dir, _part_name(r)) for r in todo}
        rrefs = {
            r: track(
                _reduce_task.options(scheduling_strategy="SPREAD").remote(
                    r,
                    [(m["node"], m["buckets"][r]["path"], m["buckets"][r]["size"]) for m in maps],
                    outs[r],
                    spec,
                    local_dir,
                    job,
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

    return _finish(sources, out_dir, partitions, maps, reduces, times, rerun)


def _finish(
    sources: list[_Source],
    out_dir: str,
    partitions: int,
    maps: list[dict[str, Any]],
    reduces: dict[int, dict[str, Any]],
    times: dict[str, float],
    rerun: int,
) -> RaySortResult:
    """The driver's checks (order across partitions, checksums) and the manifest."""
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
        if int(red["checksum"], 16) != want or red["records"] != want_n:
            raise Error(
                f"partition {r}: {red['records']} records, checksum {red['checksum']}; "
                f"its buckets held {want_n} records, checksum {_hex(want)}"
            )
        if red["first"] is not None:
            if prev is not None and prev[1] > red["first"]:
                raise Error(
                    f"partitions out of order: the last key of {_part_name(prev[0])} "
                    f"is greater than the first key of {_part_name(r)}"
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
        maps_rerun=rerun,
    )
    doc = {
        "inputs": [{"path": s.path, "node": s.node, "bytes": s.size} for s in sources],
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
