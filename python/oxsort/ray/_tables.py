"""Tables across the cluster: :func:`oxsort.ray.sort` with ``by=`` on Parquet or Arrow IPC files.

The stages, each a Ray task calling the engine through :func:`oxsort.sort` (no row is sorted in
Python):

- *map*: each input file is sorted by the engine on its node into a local Arrow IPC stream (the
  single-node table sort: stable, ties in input order), which gives evenly spaced sample rows
  of its key columns;
- the driver takes R-1 splitters over (key, map index, position in the map's sorted file) at
  the quantiles of the samples, so a key shared by many rows can be cut between partitions;
- *cut*: on each map's node, a binary search over the sorted file finds where each splitter
  cuts it (its rows of a splitter's key go below the splitter when the map comes before the
  splitter's map, above it when after, and at the splitter's position in its own map);
- *reduce*: task r takes rows ``[cut r, cut r+1)`` of every map, in map order, read in place
  (the map's node, or a shared file system) or fetched from the map's node through Ray's
  object transfer in chunks, writes them as its local buckets, and sorts them (stably) with
  the engine into ``output_dir/part-NNNNN.parquet``.

Reading the partitions in order then gives the rows, in order, of the single-node sort of the
inputs concatenated: ties keep the input order across partitions, the schema is the first
input's and a Parquet output has the first Parquet input's compression.

Every sort checks its own rows (count, order, checksum); the driver checks what moved between
them: each partition holds the rows its buckets held, the partitions' keys are in order across
their edges, and the partitions' rows checksums (``row_checksum=True``: a sum of each row's
content, whatever its order or numbering) add up to the maps', which read the inputs.

The keys are compared in Python exactly as the engine orders them (``oxsort-table``'s row
encoding): each key's direction, its nulls first or last whatever the direction, NaN after
every number (so first when descending), ``-0.0 == 0.0``, strings and binary by bytes,
dictionaries by their values, dates, times, timestamps and durations by their numbers.
"""

from __future__ import annotations

import math
import os
import shutil
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

import ray

from .._files import By, _by
from .._files import sort as _sort_file
from .._native import BadInputError, Error, SpecError, table_files, table_keys
from . import (
    FETCH_CHUNK,
    FETCH_DEPTH,
    MANIFEST,
    MAX_ROUNDS,
    MIN_FETCH_CHUNK,
    SAMPLES_PER_PARTITION,
    Partition,
    RaySortResult,
    _alive_nodes,
    _ask_nodes,
    _budgets,
    _carry_errors,
    _check_budgets,
    _get,
    _guarded,
    _MapTask,
    _node_dir,
    _node_id,
    _part_name,
    _pinned,
    _place,
    _prepare_output,
    _Source,
    _task_spec,
    _unwrap,
    _visible,
    _working,
)

#: The table formats a map reads, by the magic bytes that open the file.
PARQUET, ARROW = "parquet", "arrow"

#: The format of the maps' sorted files and of a reduce's buckets when not Parquet: an Arrow
#: IPC stream, which (unlike an IPC file) takes a dictionary column whose batches have
#: different dictionaries, as the engine writes them.
STREAM = "arrows"

#: Extension of a file in each format.
EXTENSIONS = {PARQUET: ".parquet", ARROW: ".arrow", STREAM: ".arrows"}

#: The formats a partition may be written in.
OUTPUT_FORMATS = (PARQUET, ARROW)

#: Parquet codecs (as the footer names them) as pyarrow's writer takes them.
CODECS = {
    "UNCOMPRESSED": "none",
    "SNAPPY": "snappy",
    "GZIP": "gzip",
    "BROTLI": "brotli",
    "ZSTD": "zstd",
    "LZ4": "lz4",
    "LZ4_RAW": "lz4",
}

#: Rows per batch a reduce writes into a bucket file.
BUCKET_BATCH_ROWS = 64 * 1024


def _pa() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "oxsort.ray.sort(by=...) reads tables with pyarrow: pip install pyarrow"
        ) from e
    return pyarrow


# ---- the engine's order of keys ----------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """One sort column, as ``NAME[:asc|:desc][:nulls_first|:nulls_last]`` reads."""

    name: str
    descending: bool = False
    nulls_first: bool = False


def parse_keys(by: By) -> list[Key]:
    """The sort columns of ``by=`` (as :func:`oxsort.sort` reads it)."""
    return [Key(n, d, f) for n, d, f in table_keys(_by(by))]


class Desc:
    """A value whose order is reversed (a descending key's)."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Desc) and bool(self.v == other.v)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __lt__(self, other: Desc) -> bool:
        return bool(other.v < self.v)

    def __le__(self, other: Desc) -> bool:
        return bool(other.v <= self.v)

    def __gt__(self, other: Desc) -> bool:
        return bool(other.v > self.v)

    def __ge__(self, other: Desc) -> bool:
        return bool(other.v >= self.v)

    def __hash__(self) -> int:
        return hash(self.v)

    def __repr__(self) -> str:
        return f"Desc({self.v!r})"

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (Desc, (self.v,))


def _float(v: Any) -> tuple[int, float]:
    # NaN (any sign, any payload) after every number; -0.0 == 0.0 as Python compares them.
    f = float(v)
    return (1, 0.0) if math.isnan(f) else (0, f)


def _text(v: str) -> bytes:
    return v.encode("utf-8", "surrogatepass")


def _column_order(column: Any, pa: Any) -> tuple[Any, Callable[[Any], Any]]:
    """A key column made ready to be read a value at a time, and what makes each (non-null)
    value comparable as the engine compares it."""
    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = t.value_type
    if pa.types.is_temporal(t):
        # Dates, times, timestamps and durations order as their numbers.
        column = column.cast(pa.int32() if t.bit_width == 32 else pa.int64())
        return column, lambda v: v
    if pa.types.is_floating(t):
        return column, _float
    if pa.types.is_string(t) or pa.types.is_large_string(t) or str(t) == "string_view":
        return column, _text
    return column, lambda v: v


class KeyReader:
    """The keys of a table's rows, each a tuple whose Python order is the engine's order of
    the rows by ``keys`` (input order aside)."""

    def __init__(self, table: Any, keys: Sequence[Key]) -> None:
        pa = _pa()
        self.keys = list(keys)
        self.columns = []
        self.orders = []
        for k in self.keys:
            col, order = _column_order(table.column(k.name), pa)
            self.columns.append(col)
            self.orders.append(order)
        self.rows = table.num_rows

    def _value(self, i: int, v: Any) -> Any:
        k = self.keys[i]
        if v is None:
            return (0,) if k.nulls_first else (2,)
        x = self.orders[i](v)
        return (1, Desc(x) if k.descending else x)

    def row(self, r: int) -> tuple[Any, ...]:
        """The key of row ``r``."""
        return tuple(self._value(i, c[r].as_py()) for i, c in enumerate(self.columns))

    def take(self, positions: Sequence[int]) -> list[tuple[Any, ...]]:
        """The keys of the rows at ``positions``."""
        if not positions:
            return []
        pa = _pa()
        idx = pa.array(positions, type=pa.int64())
        cols = [c.take(idx).to_pylist() for c in self.columns]
        return [
            tuple(self._value(i, cols[i][j]) for i in range(len(cols)))
            for j in range(len(positions))
        ]

    def bound(self, key: tuple[Any, ...], upper: bool) -> int:
        """The first row whose key is not less than ``key`` (``upper``: greater than it)."""
        lo, hi = 0, self.rows
        while lo < hi:
            mid = (lo + hi) // 2
            k = self.row(mid)
            if k < key or (upper and k == key):
                lo = mid + 1
            else:
                hi = mid
        return lo


def sort_keys(table: Any, keys: Sequence[Key]) -> list[tuple[Any, ...]]:
    """The engine's key of every row of ``table`` (for checks and tests)."""
    return KeyReader(table, keys).take(list(range(table.num_rows)))


Splitter = tuple[tuple[Any, ...], int, int]


def cuts(reader: KeyReader, m: int, splitters: Sequence[Splitter]) -> list[int]:
    """Where the splitters cut map ``m``'s sorted rows: ``[0, c1, ..., rows]``. Rows are
    ordered by (key, map, position); a map's rows of a splitter's key go below it when the
    map comes before the splitter's map, above it when after, and at its position in its own
    map."""
    out = [0]
    for key, i, p in splitters:
        if m < i:
            c = reader.bound(key, upper=True)
        elif m > i:
            c = reader.bound(key, upper=False)
        else:
            c = p
        out.append(max(out[-1], c))
    out.append(reader.rows)
    return out


def choose_splitters(
    samples: list[tuple[tuple[Any, ...], int, int]], partitions: int
) -> list[Splitter]:
    """R-1 splitters at the quantiles of the samples (key, map, position)."""
    if not samples:
        return []
    samples.sort()
    return [samples[(j * len(samples)) // partitions] for j in range(1, partitions)]


# ---- inputs ------------------------------------------------------------------------------


def _magic(path: str) -> Optional[str]:
    with open(path, "rb") as f:
        head = f.read(6)
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 6))
        tail = f.read(6)
    if head[:4] == b"PAR1" and tail[-4:] == b"PAR1":
        return PARQUET
    if head == b"ARROW1" and tail == b"ARROW1":
        return ARROW
    return None


def table_info(path: str) -> dict[str, Any]:
    """What the driver needs of an input: its format, rows, schema, Parquet compression
    (its first row group's first column chunk's, as the engine takes it) and decoded size;
    ``problem`` when it is not a table."""
    pa = _pa()
    size = os.stat(path).st_size
    fmt = _magic(path)
    if fmt is None:
        return {"size": size, "problem": "not a Parquet or Arrow IPC file"}
    try:
        if fmt == PARQUET:
            import pyarrow.parquet as pq

            md = pq.ParquetFile(path).metadata
            schema = pq.read_schema(path)
            codec = None
            if md.num_row_groups > 0 and md.num_columns > 0:
                codec = md.row_group(0).column(0).compression
            decoded = sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups))
            rows = md.num_rows
        else:
            with pa.memory_map(path) as src:
                r = pa.ipc.open_file(src)
                schema = r.schema
                rows = sum(r.get_batch(i).num_rows for i in range(r.num_record_batches))
            codec, decoded = None, size
    except (OSError, pa.ArrowException) as e:
        return {"size": size, "problem": f"cannot be read as {fmt}: {e}"}
    return {
        "size": size,
        "format": fmt,
        "rows": rows,
        "schema": schema,
        "compression": codec,
        "decoded": max(size, decoded),
    }


@ray.remote(num_cpus=0)
def _table_stat_task(paths: list[str]) -> tuple[str, list[Optional[dict[str, Any]]]]:
    out: list[Optional[dict[str, Any]]] = []
    for p in paths:
        try:
            out.append(table_info(p))
        except OSError:
            out.append(None)
    return _node_id(), out


def schema_difference(first: Any, other: Any) -> Optional[str]:
    """The first difference of ``other`` from ``first`` (names, types, nullability), as the
    engine names it."""
    for i, (x, y) in enumerate(zip(first, other)):
        if x.name != y.name:
            return f"column {i + 1} is '{y.name}', not '{x.name}'"
        if x.type != y.type:
            return f"column '{x.name}' is of type {y.type}, not {x.type}"
        if x.nullable != y.nullable:

            def word(n: bool) -> str:
                return "nullable" if n else "non-nullable"

            return f"column '{x.name}' is {word(y.nullable)}, not {word(x.nullable)}"
    if len(first) != len(other):
        return f"it has {len(other)} columns, not {len(first)}"
    return None


def check_tables(sources: list[_Source], keys: Sequence[Key]) -> list[dict[str, Any]]:
    """Each input's table information, read where its map may run; refuses (naming the file)
    a missing input, one that is not a table, schemas that differ and unknown columns."""
    nodes, found = _ask_nodes(sources, _table_stat_task, lambda info: info["size"])
    first = next(iter(nodes))
    infos: list[dict[str, Any]] = [found[(s.node or first, s.path)] for s in sources]
    tables = [s.path for s, i in zip(sources, infos) if "problem" not in i]
    for s, info in zip(sources, infos):
        if "problem" in info:
            mixed = f" (unlike {tables[0]}, a table)" if tables else ""
            raise BadInputError(
                f"input {s.path}: {info['problem']}{mixed}: by= sorts Parquet or Arrow IPC "
                "files, all of one schema"
            )
    first = infos[0]["schema"]
    for s, info in zip(sources[1:], infos[1:]):
        diff = schema_difference(first, info["schema"])
        if diff is not None:
            raise SpecError(f"{s.path}: its schema differs from {sources[0].path}'s: {diff}")
    for k in keys:
        if k.name not in first.names:
            raise SpecError(
                f"{sources[0].path}: no column '{k.name}'; its columns are: "
                f"{', '.join(first.names)}"
            )
    return infos


# ---- tasks -------------------------------------------------------------------------------


def _by_specs(keys: Sequence[Key]) -> list[str]:
    """``keys`` as the ``by=`` items a stage's :func:`oxsort.sort` takes (written by ``_by``)."""
    return _by(
        [
            (
                k.name,
                "descending" if k.descending else "ascending",
                "at_start" if k.nulls_first else "at_end",
            )
            for k in keys
        ]
    )


def _read_ipc(path: str) -> Any:
    """The table of an Arrow IPC file or stream, memory-mapped (nothing is copied)."""
    pa = _pa()
    with pa.memory_map(path) as src:
        if path.endswith(EXTENSIONS[STREAM]):
            return pa.ipc.open_stream(src).read_all()
        return pa.ipc.open_file(src).read_all()


@ray.remote(max_retries=3)
@_carry_errors
def _table_map_task(
    path: str,
    fmt: str,
    map_index: int,
    samples: int,
    keys: list[Key],
    spec: dict[str, Any],
    budgets: dict[str, tuple[int, int]],
    local_dir: Optional[str],
    job: str,
) -> dict[str, Any]:
    d = os.path.join(_node_dir(local_dir, job), f"map-{map_index:05d}")
    with _working(d):
        shutil.rmtree(d, ignore_errors=True)  # what an earlier try of this map left here
        os.makedirs(d)
        s = _task_spec(spec, budgets)
        out = os.path.join(d, "sorted" + EXTENSIONS[STREAM])
        stats = _sort_file(
            [path],
            out,
            by=_by_specs(keys),
            format=fmt,
            output_format=STREAM,
            memory=s["memory"],
            threads=s["threads"],
            temp_dirs=[d],
            row_checksum=True,
        )
        table = _read_ipc(out)
        n = table.num_rows
        k = min(samples, n)
        positions = [((2 * j + 1) * n) // (2 * k) for j in range(k)]
        got = KeyReader(table, keys).take(positions)
        schema = table.schema
    return {
        "node": _node_id(),
        "path": out,
        "size": os.path.getsize(out),
        "rows": n,
        "rows_checksum": stats.rows_checksum,
        "schema": schema,
        "samples": list(zip(got, positions)),
    }


@ray.remote(num_cpus=0, max_retries=0)
@_carry_errors
def _table_cut_task(
    path: str, map_index: int, splitters: list[Splitter], keys: list[Key]
) -> list[int]:
    return cuts(KeyReader(_read_ipc(path), keys), map_index, splitters)


@ray.remote(num_cpus=0, max_retries=0)
def _table_rows_task(path: str, start: int, stop: int) -> bytes:
    """Rows ``[start, stop)`` of a map's sorted file, as an Arrow IPC stream (only their bytes:
    a slice written by the IPC writer is cut to its rows)."""
    pa = _pa()
    t = _read_ipc(path).slice(start, stop - start)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return bytes(sink.getvalue())


def _fetch_rows(node: str, path: str, start: int, stop: int, step: int) -> Iterator[Any]:
    """Rows ``[start, stop)`` of a map's sorted file on ``node``, in tables of ``step`` rows
    read there and passed by Ray's object transfer, :data:`FETCH_DEPTH` in flight."""
    pa = _pa()
    strategy = _pinned(node)
    offsets = iter(range(start, stop, step))
    pending: deque[ray.ObjectRef] = deque()

    def submit() -> None:
        o = next(offsets, None)
        if o is not None:
            pending.append(
                _table_rows_task.options(scheduling_strategy=strategy).remote(
                    path, o, min(stop, o + step)
                )
            )

    for _ in range(FETCH_DEPTH):
        submit()
    got = 0
    while pending:
        data = ray.get(pending.popleft())
        submit()
        t = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
        got += t.num_rows
        yield t
    if got != stop - start:
        raise Error(f"rows of {path} on node {node}: fetched {got} of {stop - start}")


class _BucketWriter:
    """A reduce's local bucket file: Parquet with the inputs' compression (so that the engine
    writes the partition with it), or an Arrow IPC stream; always of the first input's
    schema."""

    def __init__(self, path: str, fmt: str, schema: Any, codec: Optional[str]) -> None:
        pa = _pa()
        self.pa, self.schema = pa, schema
        if fmt == PARQUET:
            import pyarrow.parquet as pq

            self.w: Any = pq.ParquetWriter(
                path, schema, compression=CODECS.get(codec or "", "snappy")
            )
        else:
            self.w = pa.ipc.new_stream(path, schema)

    def write(self, table: Any) -> None:
        for b in table.to_batches(max_chunksize=BUCKET_BATCH_ROWS):
            self.w.write_batch(self.pa.RecordBatch.from_arrays(b.columns, schema=self.schema))

    def close(self) -> None:
        self.w.close()


def _edge_keys(path: str, fmt: str, keys: list[Key]) -> Optional[tuple[Any, Any]]:
    """The keys of a partition's first and last rows (None when it has none)."""
    if fmt == PARQUET:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        if f.metadata.num_rows == 0:
            return None
        names = [k.name for k in keys]
        groups = [i for i in range(f.num_row_groups) if f.metadata.row_group(i).num_rows]
        head = f.read_row_group(groups[0], columns=names)
        tail = f.read_row_group(groups[-1], columns=names)
    else:
        head = tail = _read_ipc(path)
        if head.num_rows == 0:
            return None
    return KeyReader(head, keys).row(0), KeyReader(tail, keys).row(tail.num_rows - 1)


@ray.remote(max_retries=3)
@_carry_errors
def _table_reduce_task(
    part: int,
    buckets: list[tuple[str, str, int, int, int, int]],
    output: str,
    out_fmt: str,
    bucket_fmt: str,
    codec: Optional[str],
    schema: Any,
    keys: list[Key],
    spec: dict[str, Any],
    budgets: dict[str, tuple[int, int]],
    local_dir: Optional[str],
    job: str,
    shared: Optional[bool],
) -> dict[str, Any]:
    here = _node_id()
    s = _task_spec(spec, budgets)
    d = os.path.join(_node_dir(local_dir, job), f"reduce-{part:05d}")
    fetched = in_place = 0
    with _working(d):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        # Every map's rows of this partition in map order; one empty bucket at least, for
        # the schema of an empty partition.
        live = [b for b in buckets if b[4] > b[3]] or buckets[:1]
        paths = []
        for m, (node, path, size, start, stop, rows) in enumerate(live):
            bpath = os.path.join(d, f"bucket-{m:05d}{EXTENSIONS[bucket_fmt]}")
            w = _BucketWriter(bpath, bucket_fmt, schema, codec)
            try:
                if node == here or shared is True or (shared is None and _visible(path, size)):
                    in_place += 1
                    w.write(_read_ipc(path).slice(start, stop - start))
                else:
                    fetched += 1
                    # Chunks of about FETCH_CHUNK bytes (less when the memory budget asks).
                    chunk = max(MIN_FETCH_CHUNK, min(FETCH_CHUNK, s["memory"] // (FETCH_DEPTH + 2)))
                    step = max(1, chunk * max(1, rows) // max(1, size))
                    for t in _fetch_rows(node, path, start, stop, step):
                        w.write(t)
            finally:
                w.close()
            paths.append(bpath)
        stats = _sort_file(
            paths,
            output,
            by=_by_specs(keys),
            format=bucket_fmt,
            output_format=out_fmt,
            memory=s["memory"],
            threads=s["threads"],
            temp_dirs=[d],
            row_checksum=True,
        )
    edges = _edge_keys(output, out_fmt, keys)
    return {
        "node": here,
        "records": stats.records_written,
        "checksum": stats.rows_checksum,
        "fetched": fetched,
        "read_in_place": in_place,
        "first": edges[0] if edges else None,
        "last": edges[1] if edges else None,
    }


# ---- driver ------------------------------------------------------------------------------


def expand_dirs(sources: list[_Source]) -> list[_Source]:
    """``sources`` with each directory (a path every node sees) replaced by its table files in
    name order, as every table sort takes a directory (``_native.table_files``: markers left
    out, a directory partitioned into ``key=value`` directories or without a table file
    refused, naming it)."""
    out: list[_Source] = []
    for s in sources:
        if not os.path.isdir(s.path):
            out.append(_Source(len(out), s.path, s.node, s.size))
            continue
        if s.node is not None:
            raise BadInputError(f"{s.path}: a directory on one node: give its files")
        files = [os.fspath(f) for f in table_files(s.path)]
        out.extend(_Source(len(out) + i, f, None) for i, f in enumerate(files))
    return out


def sort_tables(
    inputs: Any,
    output_dir: str,
    *,
    by: By,
    partitions: int,
    output_format: Optional[str],
    overwrite: bool,
    local_dir: Optional[str],
    memory: Optional[int],
    threads: Optional[int],
    local_disk: Optional[int],
    task_cpus: float,
    shared_local_dir: Optional[bool],
    resolve: Callable[[Any], list[_Source]],
) -> RaySortResult:
    """The table sort of :func:`oxsort.ray.sort` (``by=``), once the cluster is joined."""
    keys = parse_keys(by)
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise SpecError(f"output_format='{output_format}': parquet or arrow")
    sources = expand_dirs(resolve(inputs))
    infos = check_tables(sources, keys)
    out_fmt = output_format or infos[0]["format"]
    codec = next((i["compression"] for i in infos if i["compression"] is not None), None)
    # The partitions get the inputs' compression through Parquet buckets that have it.
    bucket_fmt = PARQUET if out_fmt == PARQUET and codec is not None else STREAM
    nodes = _budgets(local_dir, task_cpus, memory, threads, local_disk)
    # A map's local disk: its sorted file (decoded, as Arrow IPC) and the engine's runs.
    tasks = [_MapTask(s.index, s, 0, info["decoded"]) for s, info in zip(sources, infos)]
    where = _place(tasks, nodes)
    _check_budgets(tasks, where, nodes)
    _prepare_output(output_dir, overwrite)
    job = uuid.uuid4().hex[:12]

    def run(inflight: list[ray.ObjectRef]) -> RaySortResult:
        def track(ref: ray.ObjectRef) -> ray.ObjectRef:
            inflight.append(ref)
            return ref

        spec = {"memory": memory, "threads": threads}
        budgets_ref = ray.put({nid: (b.memory, b.threads) for nid, b in nodes.items()})
        times: dict[str, float] = {}
        total = sum(i["rows"] for i in infos)
        want = SAMPLES_PER_PARTITION * partitions if partitions > 1 else 0

        def submit_map(m: int) -> ray.ObjectRef:
            s, info = sources[m], infos[m]
            # A shared input's map goes where the disk check counted it; should that node
            # die, it runs on another (soft affinity).
            return track(
                _table_map_task.options(
                    num_cpus=task_cpus,
                    scheduling_strategy=_pinned(where[m], soft=s.node is None),
                ).remote(
                    s.path,
                    info["format"],
                    m,
                    -(-want * info["rows"] // total) if total else 0,
                    keys,
                    spec,
                    budgets_ref,
                    local_dir,
                    job,
                )
            )

        t0 = time.monotonic()
        maps: list[dict[str, Any]] = _get([submit_map(m) for m in range(len(sources))])
        times["map"] = time.monotonic() - t0
        for s, info, m in zip(sources, infos, maps):
            if m["rows"] != info["rows"]:
                raise Error(f"input {s.path}: {info['rows']} rows read, {m['rows']} sorted")

        t0 = time.monotonic()
        samples = [(k, mi, p) for mi, m in enumerate(maps) for k, p in m["samples"]]
        splitters = choose_splitters(samples, partitions)
        split_ref = ray.put(splitters)
        schema = maps[0]["schema"]

        def submit_cut(m: int) -> ray.ObjectRef:
            return track(
                _table_cut_task.options(scheduling_strategy=_pinned(maps[m]["node"])).remote(
                    maps[m]["path"], m, split_ref, keys
                )
            )

        def submit_reduce(r: int) -> ray.ObjectRef:
            return track(
                _table_reduce_task.options(num_cpus=task_cpus, scheduling_strategy="SPREAD").remote(
                    r,
                    [
                        (m["node"], m["path"], m["size"], b[r], b[r + 1], m["rows"])
                        for m, b in zip(maps, bounds)
                    ],
                    os.path.join(output_dir, _part_name(r) + EXTENSIONS[out_fmt]),
                    out_fmt,
                    bucket_fmt,
                    codec,
                    schema,
                    keys,
                    spec,
                    budgets_ref,
                    local_dir,
                    job,
                    shared_local_dir,
                )
            )

        # Without splitters (one partition, or no rows) every map is one bucket.
        bounds: list[list[int]] = [[0] * partitions + [m["rows"]] for m in maps]
        cut = [not splitters] * len(maps)
        reduces: dict[int, dict[str, Any]] = {}
        rerun = 0
        for _round in range(MAX_ROUNDS + 1):
            # The maps whose node died are run again (the engine's sort is deterministic: the
            # splitters' positions in their sorted files hold), then cut again.
            alive = _alive_nodes()
            lost = [i for i, m in enumerate(maps) if m["node"] not in alive]
            if lost:
                pinned = [sources[i] for i in lost if sources[i].node is not None]
                if pinned:
                    raise Error(
                        f"the node of input {pinned[0].path} died: its map cannot run elsewhere"
                    )
                rerun += len(lost)
                live = {nid: b for nid, b in nodes.items() if nid in alive}
                for i, nid in zip(lost, _place([tasks[i] for i in lost], live or nodes)):
                    where[i] = nid
                for i, m in zip(lost, _get([submit_map(i) for i in lost])):
                    maps[i] = m
                    cut[i] = not splitters
            failed: list[BaseException] = []
            todo = [i for i in range(len(maps)) if not cut[i]]
            for i, ref in zip(todo, [submit_cut(i) for i in todo]):
                try:
                    bounds[i] = ray.get(ref)
                    cut[i] = True
                except ray.exceptions.RayError as e:
                    failed.append(e)
            if not failed:
                rrefs = {r: submit_reduce(r) for r in range(partitions) if r not in reduces}
                for r, ref in rrefs.items():
                    try:
                        reduces[r] = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        failed.append(e)
            if not failed:
                break
            if not [i for i, m in enumerate(maps) if m["node"] not in _alive_nodes()]:
                raise _unwrap(failed[0]) from None
        else:
            raise Error(f"the reduce stage failed {MAX_ROUNDS + 1} times as nodes died")
        times["reduce"] = time.monotonic() - t0
        inflight.clear()
        result = _finish(
            sources,
            infos,
            maps,
            bounds,
            [reduces[r] for r in range(partitions)],
            times,
            nodes,
            output_dir,
            out_fmt,
            total,
        )
        result.maps_rerun = rerun
        return result

    return _guarded(output_dir, local_dir, job, run)


def _rows_sum(sums: Iterator[str]) -> str:
    """Rows checksums (16 hex digits each) added up as the engine adds them (modulo 2**64)."""
    return f"{sum(int(x, 16) for x in sums) % (1 << 64):016x}"


def _finish(
    sources: list[_Source],
    infos: list[dict[str, Any]],
    maps: list[dict[str, Any]],
    bounds: list[list[int]],
    reduces: list[dict[str, Any]],
    times: dict[str, float],
    nodes: dict[str, Any],
    out_dir: str,
    out_fmt: str,
    total: int,
) -> RaySortResult:
    """The driver's checks (rows per partition, order across partitions, the partitions' rows
    checksums adding up to the inputs') and the manifest."""
    import json
    from dataclasses import asdict

    parts: list[Partition] = []
    prev: Optional[tuple[int, Any]] = None
    for r, red in enumerate(reduces):
        name = _part_name(r) + EXTENSIONS[out_fmt]
        want = sum(b[r + 1] - b[r] for b in bounds)
        if red["records"] != want:
            raise Error(f"{name}: {red['records']} rows written; its buckets held {want}")
        if red["first"] is not None:
            if prev is not None and prev[1] > red["first"]:
                raise Error(
                    f"partitions out of order: the last key of {_part_name(prev[0])} is "
                    f"greater than the first key of {name}"
                )
            prev = (r, red["last"])
        parts.append(
            Partition(
                name, os.path.join(out_dir, name), red["node"], red["records"], red["checksum"]
            )
        )
    out_n = sum(p.records for p in parts)
    if out_n != total:
        raise Error(f"row count mismatch: read {total} rows, wrote {out_n}")
    # Each sort checks its own rows; these sums (of the rows' contents, whatever their order
    # or numbering) check what moved between them: cut, fetched, written into buckets.
    read_sum, written_sum = (
        _rows_sum(m["rows_checksum"] for m in maps),
        _rows_sum(p.checksum for p in parts),
    )
    if read_sum != written_sum:
        raise Error(
            f"rows checksum mismatch: the inputs' rows sum to {read_sum}, "
            f"the partitions' to {written_sum}"
        )
    manifest = os.path.join(out_dir, MANIFEST)
    result = RaySortResult(
        records=out_n,
        checksum=written_sum,
        partitions=parts,
        maps=len(maps),
        manifest=manifest,
        stage_seconds=times,
        buckets_fetched=sum(red["fetched"] for red in reduces),
        buckets_read_in_place=sum(red["read_in_place"] for red in reduces),
        budgets={
            nid: {k: v for k, v in asdict(b).items() if k != "id"} for nid, b in nodes.items()
        },
    )
    doc = {
        "inputs": [
            {"path": s.path, "node": s.node, "bytes": s.size, "rows": i["rows"]}
            for s, i in zip(sources, infos)
        ],
        "input_records": total,
        "format": out_fmt,
        **result.to_dict(),
    }
    tmp = manifest + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, manifest)
    return result


__all__ = ["Key", "KeyReader", "choose_splitters", "cuts", "parse_keys", "sort_keys", "sort_tables"]
