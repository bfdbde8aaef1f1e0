"""File sorts: sort, merge, check, explain, gensort, valsort."""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from typing import IO, Any, Callable, Optional, Union

from . import _native
from ._native import BadInputError, SpecError

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, IO[bytes]]
Inputs = Union[Source, Sequence[Source]]
ProgressArg = Union[None, bool, Callable[[str, int, Optional[int]], Any]]
#: ``dd=``: DD names (``SORTIN``, ``SORTOUT``, ``SORTOF01``, ``SORTJNF1``, ...) or data set
#: names of a DFSORT job, each mapped to a file; a list of paths for ``SORTIN`` (or a JOINKEYS
#: input) is a concatenation.
DataSets = Mapping[str, Union[PathLike, Sequence[PathLike]]]

#: Seconds the caller's thread waits for a running sort between two looks at Ctrl-C,
#: asynchronous exceptions and progress: short enough that an interrupt stops a sort well
#: within a second, long enough that the loop costs nothing measurable.
POLL_INTERVAL = 0.05

#: Bytes copied at a time between a file object and a private temp file.
COPY_BLOCK = 8 << 20


def parse_size(size: Union[int, str, None]) -> Optional[int]:
    """Bytes from ``4096``, ``"64K"``, ``"512M"``, ``"1.5G"`` (binary units), as the CLI."""
    if size is None or isinstance(size, int):
        if isinstance(size, int) and size < 0:
            raise SpecError(f"memory={size}: a size cannot be negative")
        return size
    return _native.parse_size(str(size))


@dataclass
class SortStats:
    """What a sort did (``oxsort sort --stats=json``): records, checksum, passes, runs, ..."""

    records: int = 0
    records_written: int = 0
    bytes: int = 0
    passes: int = 0
    runs: int = 0
    fan_in: int = 0
    merge_levels: int = 0
    bytes_spilled: int = 0
    input_bytes_read: int = 0
    runs_reused: int = 0
    bytes_reused: int = 0
    peak_rss: int = 0
    memory_budget: int = 0
    threads: int = 0
    elapsed_s: float = 0.0
    checksum: str = ""
    input_checksum: str = ""
    dropped_by_filter: int = 0
    dropped_duplicates: int = 0
    dropped_checksum: str = ""
    duplicate_keys: int = 0
    phases: list[dict[str, Any]] = field(default_factory=list)
    reclaimed: list[dict[str, Any]] = field(default_factory=list)
    #: A table sort's with ``row_checksum=True``: the sum of its rows' contents (16 hex digits).
    rows_checksum: str = ""

    @classmethod
    def _from_json(cls, text: str) -> SortStats:
        d = json.loads(text)
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)

    def to_dict(self) -> dict[str, Any]:
        """The statistics as a plain dict (JSON-ready)."""
        return asdict(self)


@dataclass
class Summary:
    """valsort's summary of a sequence of records."""

    records: int
    checksum: str
    unordered: int
    first_unordered: Optional[int]
    duplicates: int
    report: str

    @property
    def sorted(self) -> bool:
        """Whether every record is in order."""
        return self.unordered == 0

    def to_dict(self) -> dict[str, Any]:
        """The summary as a plain dict."""
        return asdict(self)


@dataclass
class Disorder:
    """The first record out of order found by :func:`check` (1-based, as the CLI counts)."""

    path: str
    record: int

    def to_dict(self) -> dict[str, Any]:
        """The place as a plain dict."""
        return asdict(self)


def _is_file_object(x: object) -> bool:
    return hasattr(x, "read") or hasattr(x, "write")


def _check_binary(f: object, what: str) -> None:
    mode = getattr(f, "mode", None)
    if isinstance(f, io.TextIOBase) or (isinstance(mode, str) and "b" not in mode):
        raise BadInputError(
            f"{what}: the file object is open in text mode; open it in binary mode ('rb' / 'wb')"
        )


def _as_list(inputs: Inputs) -> list[Source]:
    if isinstance(inputs, (str, bytes, os.PathLike)) or _is_file_object(inputs):
        return [inputs]  # type: ignore[list-item]
    return list(inputs)  # type: ignore[arg-type]


def _spec(
    *,
    record_size: Optional[int],
    lines: bool,
    nul: bool,
    fields: Optional[str],
    control: Optional[str],
    keys: Union[str, Sequence[str], None],
    unique: bool,
    memory: Union[int, str, None],
    threads: Optional[int],
    temp_dirs: Optional[Sequence[PathLike]],
    dd: Optional[DataSets] = None,
    by: Optional[By] = None,
    format: Optional[str] = None,
    output_format: Optional[str] = None,
    types: Optional[Mapping[str, str]] = None,
    row_checksum: bool = False,
) -> dict[str, Any]:
    import shlex

    if isinstance(keys, str):
        try:
            key_args = shlex.split(keys)
        except ValueError as e:
            raise SpecError(f"keys='{keys}': {e}") from None
    else:
        key_args = list(keys or [])
    if threads is not None and threads < 1:
        raise SpecError(f"threads={threads}: at least 1")
    return {
        "record_size": record_size,
        "lines": bool(lines),
        "nul": bool(nul),
        "fields": fields,
        "control": control,
        "keys": key_args,
        "unique": bool(unique),
        "memory": parse_size(memory),
        "threads": threads,
        "temp_dirs": [os.fspath(d) for d in (temp_dirs or [])],
        "resume": False,
        "dd": _data_sets(dd),
        "by": _by(by),
        "format": format,
        "output_format": output_format,
        "types": [f"{name}={ty}" for name, ty in (types or {}).items()],
        "row_checksum": bool(row_checksum),
    }


#: A table sort's columns: a name, ``"a,b:desc"``, or a list of names and tuples
#: ``(name, "ascending"|"descending"[, "at_start"|"at_end"])`` (pyarrow's words).
By = Union[str, Sequence[Union[str, tuple[str, ...]]]]

_ORDERS = {"ascending": "", "asc": "", "descending": ":desc", "desc": ":desc"}
_NULLS = {
    "at_end": "",
    "nulls_last": "",
    "last": "",
    "at_start": ":nulls_first",
    "nulls_first": ":nulls_first",
    "first": ":nulls_first",
}


def _quoted(name: str) -> str:
    """A column ``name`` as a ``by=`` item names it: in double quotes, a quote in it doubled,
    when it holds ``:``, ``,`` or a quote (a tuple's name is the name, whatever it holds)."""
    if any(c in name for c in ':,"'):
        return '"' + name.replace('"', '""') + '"'
    return name


def _by(by: Optional[By]) -> list[str]:
    """``by=`` as the job layer reads it: one ``NAME[:desc][:nulls_first]`` per column."""
    if by is None:
        return []
    if isinstance(by, str):
        # Split by the job layer, where a comma in a quoted name is the name's.
        return [by]
    out = []
    for item in by:
        if isinstance(item, str):
            out.append(item)
            continue
        if not isinstance(item, (tuple, list)) or not 1 <= len(item) <= 3:
            raise SpecError(f"by=: {item!r}: a name or (name, order[, null placement])")
        name, *rest = item
        order = rest[0] if rest else "ascending"
        nulls = rest[1] if len(rest) > 1 else "at_end"
        if order not in _ORDERS:
            raise SpecError(f"by=: '{order}' for column '{name}': ascending or descending")
        if nulls not in _NULLS:
            raise SpecError(f"by=: '{nulls}' for column '{name}': at_start or at_end")
        out.append(f"{_quoted(name)}{_ORDERS[order]}{_NULLS[nulls]}")
    if not out:
        raise SpecError("by=: no column given")
    return out


def _data_sets(dd: Optional[DataSets]) -> list[tuple[str, str]]:
    """``dd=`` as ``(name, path)`` pairs in order, a list of paths as a concatenation."""
    if dd is None:
        return []
    if not isinstance(dd, Mapping):
        raise SpecError("dd= takes a dict of DD names to paths, like {'SORTIN': 'in.dat'}")
    pairs = []
    for name, paths in dd.items():
        if not isinstance(name, str):
            raise SpecError(f"dd={{{name!r}: ...}}: a DD name is a str, like 'SORTIN'")
        items = [paths] if isinstance(paths, (str, bytes, os.PathLike)) else list(paths)
        if not items:
            raise SpecError(f"dd={{'{name}': []}}: no path given")
        for p in items:
            pairs.append((name, os.fspath(p)))  # type: ignore[arg-type]
    return pairs


@contextmanager
def _private_dir(near: Optional[PathLike]) -> Iterator[str]:
    """A private temp directory (mode 0700), removed on exit whatever happens."""
    d = tempfile.mkdtemp(prefix=".oxsort-py-", dir=near)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _input_paths(inputs: Inputs, stack: ExitStack, temp_near: Optional[str]) -> list[str]:
    """Paths of the inputs; file objects are copied to a private temp file first."""
    items = _as_list(inputs)
    if not items:
        raise SpecError("no input given")
    for i, x in enumerate(items):
        if _is_file_object(x):
            _check_binary(x, f"input {i + 1}")
    paths = []
    for x in items:
        if _is_file_object(x):
            d = stack.enter_context(_private_dir(temp_near))
            p = os.path.join(d, f"input-{len(paths)}")
            with open(p, "wb") as f:
                shutil.copyfileobj(x, f, COPY_BLOCK)  # type: ignore[misc]
            paths.append(p)
        else:
            paths.append(os.fspath(x))  # type: ignore[arg-type]
    return paths


class _Bars:
    """One tqdm bar per phase."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._tqdm = tqdm
        self._bar: Any = None
        self._phase: Optional[str] = None

    def __call__(self, phase: str, done: int, total: Optional[int]) -> None:
        if phase != self._phase:
            self.close()
            self._bar = self._tqdm(total=total, desc=phase, unit="B", unit_scale=True)
            self._phase = phase
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _progress_fn(progress: ProgressArg) -> Optional[Callable[[str, int, Optional[int]], Any]]:
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            return _Bars()
        except ImportError:
            warnings.warn(
                "progress=True draws its bars with tqdm, which is not installed: "
                "pip install 'oxsort[progress]' (the sort goes on without bars)",
                stacklevel=4,
            )
            return None
    if not callable(progress):
        raise SpecError("progress= takes True, False, None or a callable (phase, done, total)")
    return progress


Event = tuple[str, int, Optional[int]]


def _report(
    cb: Callable[[str, int, Optional[int]], Any], events: list[Event], last: Optional[Event]
) -> Optional[Event]:
    """Hands `cb` each event it has not seen (every phase's last one, then the latest)."""
    for p in events:
        if p != last:
            cb(*p)
            last = p
    return last


def _run(job: Any, progress: ProgressArg) -> SortStats:
    """Waits for a job in short slices, so Ctrl-C and asynchronous exceptions stop it."""
    cb = _progress_fn(progress)
    last: Optional[Event] = None
    try:
        while not job.wait(POLL_INTERVAL):
            if cb is not None:
                last = _report(cb, job.progress(), last)
        if cb is not None:
            _report(cb, job.progress(), last)
    except BaseException:
        # Stop the sort and wait for its cleanup (temp files, partial output) before
        # letting the exception go on.
        job.cancel()
        try:
            job.result()
        except BaseException:
            pass
        raise
    finally:
        if isinstance(cb, _Bars):
            cb.close()
    return SortStats._from_json(job.result())


def _sort(
    inputs: Optional[Inputs],
    output: Union[PathLike, IO[bytes], None],
    merge: bool,
    progress: ProgressArg,
    resume: bool,
    spec: dict[str, Any],
) -> SortStats:
    out_obj = output if _is_file_object(output) else None
    given = [] if inputs is None else _as_list(inputs)
    if resume and (out_obj is not None or any(_is_file_object(x) for x in given)):
        raise SpecError(
            "resume=True needs input and output paths: a file object cannot be read again"
        )
    spec = dict(spec, resume=resume)
    if out_obj is not None:
        _check_binary(out_obj, "output")
    with ExitStack() as stack:
        near = spec["temp_dirs"][0] if spec["temp_dirs"] else None
        paths = [] if inputs is None else _input_paths(inputs, stack, near)
        out_path: Optional[str]
        if output is None:
            out_path = None
        elif out_obj is None:
            out_path = os.fspath(output)  # type: ignore[arg-type]
        else:
            d = stack.enter_context(_private_dir(near))
            out_path = os.path.join(d, "output")
        job = _native.start(paths, out_path, spec, merge)
        stats = _run(job, progress)
        if out_obj is not None:
            with open(out_path, "rb") as f:
                shutil.copyfileobj(f, out_obj, COPY_BLOCK)  # type: ignore[misc]
        return stats


def sort(
    inputs: Optional[Inputs] = None,
    output: Union[PathLike, IO[bytes], None] = None,
    *,
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
    progress: ProgressArg = None,
    resume: bool = False,
    dd: Optional[DataSets] = None,
    by: Optional[By] = None,
    format: Optional[str] = None,
    output_format: Optional[str] = None,
    types: Optional[Mapping[str, str]] = None,
    row_checksum: bool = False,
) -> SortStats:
    """Sorts ``inputs`` (a path, a list of paths or binary file objects, concatenated) into
    ``output`` (a path or a binary file object), stably, as ``oxsort sort`` does.

    Tables: ``by=["k1", ("k2", "descending"), ("k3", "ascending", "at_start")]`` sorts
    Parquet, Arrow IPC or CSV/TSV files (with a header) by column names, past memory, the
    schema kept: nulls last unless ``"at_start"``, NaN after every number, ties in input order.
    The formats come from the extensions, or ``format=``/``output_format=`` (``"parquet"``,
    ``"arrow"``, ``"arrows"``, ``"csv"``, ``"tsv"``); several inputs must share one schema.
    ``types={"amount": "Decimal128(12, 2)", "day": "date32"}`` gives CSV/TSV columns' types
    in place of those inferred from the first rows. ``row_checksum=True`` also sums the
    rows' contents into the result's ``rows_checksum`` (a CRC32 a row): the same for the same
    rows sorted by the same columns, whatever their order, files or format, so the sums of
    sorts of a table's parts add up (modulo 2**64) to the sum of a sort of the whole.

    Records: ``record_size=N`` fixed records (default 100), ``lines=True`` or ``nul=True``.
    Key: ``fields="1,10,CH,A"`` (DFSORT), ``control="SORT FIELDS=..."`` (DFSORT statements) or
    ``keys="-t, -k2,2n"`` (GNU sort flags, with lines/nul).

    A DFSORT job runs as ``oxsort sort --control`` runs it: ``control=`` may be a JCL step, and
    ``dd={"SORTIN": path, "SORTOUT": path, "SORTOF01": path, ...}`` maps its DD names (or
    data set names) to files, as the CLI's ``--dd``. ``inputs`` and ``output`` may be left
    out when ``dd=`` or the step's DD statements name them (``SORTIN``, ``SORTOUT``, OUTFIL's
    outputs, a JOINKEYS job's ``SORTJNF1``/``SORTJNF2``). ``OPTION MAINSIZE=`` is the memory
    budget when ``memory=`` is not given. ``memory="1G"`` caps memory (a
    smaller budget than the input sorts in two passes through ``temp_dirs``). ``progress=True``
    draws a tqdm bar; a callable receives ``(phase, done, total)``. Ctrl-C stops the sort and
    removes its temp files and partial output.

    ``resume=True`` makes a two-pass sort resumable, as ``oxsort sort --resume``: its runs and a
    journal stay in ``.oxsort-resume-HASH`` in the first temp directory until it succeeds (also
    after Ctrl-C or a crash), and the same call made again goes on from there, reading only
    the input not yet in a run. A journal whose inputs changed raises :class:`Error` with the
    reason.
    """
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
        temp_dirs=temp_dirs,
        dd=dd,
        by=by,
        format=format,
        output_format=output_format,
        types=types,
        row_checksum=row_checksum,
    )
    return _sort(inputs, output, False, progress, resume, spec)


def merge(
    inputs: Optional[Inputs] = None,
    output: Union[PathLike, IO[bytes], None] = None,
    *,
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
    progress: ProgressArg = None,
    dd: Optional[DataSets] = None,
) -> SortStats:
    """Merges inputs that are each sorted by the key (DFSORT ``MERGE``); an input out of order
    raises :class:`DisorderError` naming the file and the record. ``dd=`` as :func:`sort`."""
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
        temp_dirs=temp_dirs,
        dd=dd,
    )
    return _sort(inputs, output, True, progress, False, spec)


def check(
    path: PathLike,
    *,
    record_size: Optional[int] = None,
    lines: bool = False,
    nul: bool = False,
    fields: Optional[str] = None,
    control: Optional[str] = None,
    keys: Union[str, Sequence[str], None] = None,
    memory: Union[int, str, None] = None,
    temp_dirs: Optional[Sequence[PathLike]] = None,
    threads: Optional[int] = None,
) -> Optional[Disorder]:
    """The first record of ``path`` out of key order (1-based), or None when it is sorted.

    The file is read once by the engine's order check; nothing is written.
    """
    spec = _spec(
        record_size=record_size,
        lines=lines,
        nul=nul,
        fields=fields,
        control=control,
        keys=keys,
        unique=False,
        memory=memory,
        threads=threads,
        temp_dirs=temp_dirs,
    )
    record = _native.check(os.fspath(path), spec)
    if record is None:
        return None
    return Disorder(path=os.fspath(path), record=int(record))


def explain(
    inputs: Union[PathLike, Sequence[PathLike], None] = None,
    output: Optional[PathLike] = None,
    *,
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
    dd: Optional[DataSets] = None,
    by: Optional[By] = None,
    format: Optional[str] = None,
    output_format: Optional[str] = None,
    types: Optional[Mapping[str, str]] = None,
) -> dict[str, Any]:
    """The plan of a sort as a dict (``oxsort explain --json``): passes, runs, memory, temp;
    for a JOINKEYS job, each file's subtask, the join and the main task; for a table sort
    (``by=``, ``format=``, ``output_format=`` as :func:`sort`), the inputs, keys, the rows'
    expected encoded size and the engine's plan for them. ``dd=`` as :func:`sort`."""
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
        temp_dirs=temp_dirs,
        dd=dd,
        by=by,
        format=format,
        output_format=output_format,
        types=types,
    )
    paths = [] if inputs is None else [os.fspath(p) for p in _as_list(inputs)]  # type: ignore[arg-type]
    out = None if output is None else os.fspath(output)
    return json.loads(_native.explain(paths, out, spec))  # type: ignore[no-any-return]


@dataclass
class GensortStats:
    """What :func:`gensort` wrote."""

    records: int
    checksum: str
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        """The statistics as a plain dict."""
        return asdict(self)


def gensort(
    path: PathLike,
    records: int,
    start: int = 0,
    ascii: bool = False,
    skew: bool = False,
    threads: Optional[int] = None,
) -> GensortStats:
    """Writes ``records`` Sort Benchmark records (gensort 1.5, byte for byte) to ``path``."""
    if records < 0 or start < 0:
        raise SpecError("records and start cannot be negative")
    t0 = time.monotonic()
    checksum = _native.gensort(
        os.fspath(path), int(records), int(start), bool(ascii), bool(skew), threads or 0
    )
    return GensortStats(records=int(records), checksum=checksum, elapsed_s=time.monotonic() - t0)


def valsort(paths: Union[PathLike, Iterable[PathLike]], threads: Optional[int] = None) -> Summary:
    """valsort's summary of a file, or of several files taken in order as one sequence
    (as ``valsort -s`` merges their summaries)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        items = [os.fspath(paths)]
    else:
        items = [os.fspath(p) for p in paths]
    if not items:
        raise SpecError("valsort: no file given")
    return Summary(**_native.valsort(items, threads or 0))
