"""In-memory sorts of NumPy arrays and pyarrow tables on the oxsort kernels."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._native import SpecError

if TYPE_CHECKING:
    import numpy as np


def _numpy(what: str) -> Any:
    """NumPy, or a ModuleNotFoundError that says how to install it with oxsort."""
    try:
        import numpy
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            f"oxsort.{what} needs NumPy, which is not installed: pip install 'oxsort[numpy]'",
            name="numpy",
        ) from e
    return numpy


def _pyarrow(what: str) -> Any:
    """pyarrow, or a ModuleNotFoundError that says how to install it with oxsort."""
    try:
        import pyarrow
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            f"oxsort.{what} needs pyarrow, which is not installed: pip install 'oxsort[arrow]'",
            name="pyarrow",
        ) from e
    return pyarrow


#: NumPy kinds oxsort encodes: unsigned, signed, bool, float, bytes, unicode.
_KINDS = {"u": "u", "i": "i", "b": "b", "f": "f", "S": "S", "U": "U"}

Order = Union[str, Sequence[str], None]
Reverse = Union[bool, Sequence[bool]]
#: A key field for the native sort: (offset, kind, size, big_endian, descending).
Field = tuple[int, str, int, bool, bool]


def _field(name: str, dt: Any, offset: int, descending: bool) -> Field:
    """One key field for the native sort: (offset, kind, size, big_endian, descending)."""
    what = f"field '{name}'" if name else "the array"
    if dt.names is not None:
        raise SpecError(f"{what} is a nested structure ({dt}): sort by its own fields")
    if dt.subdtype is not None:
        raise SpecError(f"{what} is a sub-array ({dt}): it cannot be a key")
    if dt.kind not in _KINDS or (dt.kind == "f" and dt.itemsize not in (2, 4, 8)):
        raise SpecError(
            f"{what} has dtype {dt}, which cannot be sorted (integers, floats, bool, "
            "fixed bytes and fixed unicode can)"
        )
    big = dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder == "big")
    return (offset, _KINDS[dt.kind], dt.itemsize, big, descending)


def _key_fields(dtype: Any, order: Order, reverse: Reverse) -> list[Field]:
    if dtype.names is None:
        if order is not None:
            raise SpecError("order= names fields of a structured array; this array has none")
        if not isinstance(reverse, bool):
            raise SpecError("reverse= is one bool for an array without fields")
        return [_field("", dtype, 0, reverse)]
    names = [order] if isinstance(order, str) else list(order or [])
    for n in names:
        if n not in dtype.names:
            raise SpecError(f"order=: no field '{n}' in {dtype}")
    if len(set(names)) != len(names):
        raise SpecError(f"order=: a field is named twice in {names}")
    if isinstance(reverse, bool):
        desc = {n: reverse for n in dtype.names}
    else:
        flags = list(reverse)
        if len(flags) != len(names):
            raise SpecError(f"reverse=: {len(flags)} flags for {len(names)} fields in order=")
        desc = dict(zip(names, flags))
    # As NumPy: the fields named first, then every other field in dtype order to break ties.
    keys = names + [n for n in dtype.names if n not in names]
    out = []
    for n in keys:
        dt, offset = dtype.fields[n][:2]
        out.append(_field(n, dt, offset, bool(desc.get(n, False))))
    return out


def _prepare(a: Any, order: Order, reverse: Reverse) -> tuple[Any, list[Field]]:
    np = _numpy("argsort")

    if not isinstance(a, np.ndarray):
        raise SpecError(f"expected a NumPy array, got {type(a).__name__}")
    if a.ndim != 1:
        raise SpecError(f"expected a one-dimensional array, got {a.ndim} dimensions")
    fields = _key_fields(a.dtype, order, reverse)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a, fields


def argsort(
    a: np.ndarray, order: Order = None, reverse: Reverse = False, threads: Optional[int] = None
) -> np.ndarray:
    """The indexes that sort ``a`` stably: ``a[argsort(a)]`` equals ``np.sort(a, order=...,
    kind="stable")`` (NaN last, as NumPy). ``reverse=True`` sorts descending, still stable
    (equal keys keep their order; NaN still last); a list gives one flag per ``order`` field."""
    np = _numpy("argsort")

    a, fields = _prepare(a, order, reverse)
    out = np.empty(len(a), dtype=np.int64)
    _native.sort_records(
        a.ctypes.data,
        len(a),
        a.dtype.itemsize,
        fields,
        out.ctypes.data,
        threads or _native.cores(),
        True,
    )
    return out


def sort_array(
    a: np.ndarray, order: Order = None, reverse: Reverse = False, threads: Optional[int] = None
) -> np.ndarray:
    """A sorted copy of ``a`` (the one copy made: records are gathered straight from ``a``);
    equal to ``np.sort(a, order=..., kind="stable")``. See :func:`argsort` for ``reverse``."""
    np = _numpy("sort_array")

    a, fields = _prepare(a, order, reverse)
    out = np.empty_like(a)
    _native.sort_records(
        a.ctypes.data,
        len(a),
        a.dtype.itemsize,
        fields,
        out.ctypes.data,
        threads or _native.cores(),
        False,
    )
    return out


def sort_table(
    table: Any,
    by: Union[str, Sequence[Union[str, tuple[str, ...]]]],
    threads: Optional[int] = None,
    memory: Union[int, str, None] = None,
    temp_dirs: Optional[Sequence[Any]] = None,
) -> Any:
    """A pyarrow table sorted stably by columns: ``by=[("k", "descending"), "j"]`` (a name
    alone is ascending; a third item ``"at_start"`` puts the column's nulls first).

    Keys of integers, floats, bools or fixed-size binary without nulls sort in memory. Any
    other key (strings, binary, dates, timestamps, decimals, nulls), or ``memory=``/
    ``temp_dirs=``, goes through the engine as :func:`oxsort.sort` of an Arrow file does: within
    the budget, spilling to ``temp_dirs``, the result memory-mapped from the sorted file."""
    pa = _pyarrow("sort_table")
    if isinstance(by, str):
        by = [by]
    if memory is not None or temp_dirs is not None or not _in_memory_keys(table, by, pa):
        return _sort_table_past_memory(table, by, threads, memory, temp_dirs, pa)
    np = _numpy("sort_table")
    names, flags = [], []
    for item in by:
        if isinstance(item, str):
            name, direction = item, "ascending"
        else:
            name, direction = item[0], item[1]
        if direction not in ("ascending", "descending"):
            raise SpecError(f"by=: '{direction}' for column '{name}': ascending or descending")
        if name not in table.column_names:
            raise SpecError(f"by=: no column '{name}' in the table")
        names.append(name)
        flags.append(direction == "descending")
    if not names:
        raise SpecError("by=: no column given")
    cols = []
    for name in names:
        col = table.column(name)
        if col.null_count:
            raise SpecError(f"column '{name}' has {col.null_count} nulls: oxsort cannot order them")
        t = col.type
        if pa.types.is_fixed_size_binary(t):
            arr = np.array(col.to_pylist(), dtype=f"S{t.byte_width}")
        elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
            arr = col.to_numpy()
        else:
            raise SpecError(f"column '{name}' has type {t}, which cannot be a key")
        cols.append(arr)
    keys = np.empty(table.num_rows, dtype=[(f"f{i}", c.dtype) for i, c in enumerate(cols)])
    for i, c in enumerate(cols):
        keys[f"f{i}"] = c
    idx = argsort(keys, order=[f"f{i}" for i in range(len(cols))], reverse=flags, threads=threads)
    return table.take(pa.array(idx))


def _in_memory_keys(table: Any, by: Sequence[Any], pa: Any) -> bool:
    """Whether the in-memory path orders these keys: numbers, bools or fixed-size binary
    without nulls, named with at most a direction."""
    for item in by:
        if not isinstance(item, str) and len(item) != 2:
            return False
        name = item if isinstance(item, str) else item[0]
        if name not in table.column_names:
            return True  # the in-memory path names the missing column
        col = table.column(name)
        t = col.type
        if col.null_count or not (
            pa.types.is_fixed_size_binary(t)
            or pa.types.is_integer(t)
            or pa.types.is_floating(t)
            or pa.types.is_boolean(t)
        ):
            return False
    return True


def _sort_table_past_memory(
    table: Any, by: Sequence[Any], threads: Optional[int], memory: Any, temp_dirs: Any, pa: Any
) -> Any:
    """``table`` sorted through the engine: written as an Arrow file, sorted file to file, the
    result memory-mapped (the files go once it is read: the mapping keeps the data)."""
    import shutil
    import tempfile

    import pyarrow.ipc

    from ._files import sort as sort_files

    dirs = [os.fspath(d) for d in (temp_dirs or [])]
    d = tempfile.mkdtemp(prefix=".oxsort-table-", dir=dirs[0] if dirs else None)
    try:
        src, dst = os.path.join(d, "in.arrow"), os.path.join(d, "out.arrow")
        with pa.OSFile(src, "wb") as f, pyarrow.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
        sort_files([src], dst, by=by, memory=memory, temp_dirs=dirs or None, threads=threads)
        os.unlink(src)
        return pyarrow.ipc.open_file(pa.memory_map(dst)).read_all()
    finally:
        shutil.rmtree(d, ignore_errors=True)
