"""Streaming: push chunks, get sorted blocks back; the data goes through a private temp
file, so it may be far bigger than memory."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Optional, Union

from . import _native
from ._files import PathLike, ProgressArg, _sort, _spec
from ._native import BadInputError, SpecError

#: Bytes per block :meth:`Sorter.sorted` yields by default (rounded to whole records).
DEFAULT_BLOCK = 8 << 20

#: The record size of a sorter given neither ``record_size`` nor ``lines``/``nul``: the Sort
#: Benchmark's 100-byte records, as the engine's default.
DEFAULT_RECORD_SIZE = 100

Chunk = Union[bytes, bytearray, memoryview, Any]


class Sorter:
    """Sorts what is pushed into it, however big::

        with oxsort.Sorter(record_size=100) as s:
            for chunk in chunks:
                s.push(chunk)
            for block in s.sorted():
                consume(block)

    Chunks are bytes, memoryviews or NumPy arrays (one kind per sorter); blocks come back of
    the same kind (NumPy arrays with the pushed dtype, whose itemsize is the record size).
    Pushed data goes to a private temp file in ``temp_dirs[0]`` (or the system's temp
    directory); the sort runs there within ``memory``; every temp file is removed on
    :meth:`close`, at the end of the ``with`` block, and on error.
    """

    def __init__(
        self,
        *,
        record_size: Optional[int] = None,
        lines: bool = False,
        nul: bool = False,
        fields: Optional[str] = None,
        keys: Union[str, Sequence[str], None] = None,
        unique: bool = False,
        memory: Union[int, str, None] = None,
        temp_dirs: Optional[Sequence[PathLike]] = None,
        threads: Optional[int] = None,
        progress: ProgressArg = None,
    ) -> None:
        self._args: dict[str, Any] = dict(
            record_size=record_size,
            lines=lines,
            nul=nul,
            fields=fields,
            keys=keys,
            unique=unique,
            memory=memory,
            temp_dirs=temp_dirs,
            threads=threads,
        )
        # Check the specification now, before any data is pushed.
        _native.check_spec(_spec(control=None, **self._args))
        self._progress = progress
        near = os.fspath(temp_dirs[0]) if temp_dirs else None
        self._dir: Optional[str] = tempfile.mkdtemp(prefix=".oxsort-stream-", dir=near)
        self._in = open(os.path.join(self._dir, "pushed"), "wb")
        self._kind: Optional[str] = None
        self._dtype: Any = None
        self._sorted = False

    def __enter__(self) -> Sorter:
        return self

    def __exit__(
        self,
        et: Optional[type[BaseException]],
        ev: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Removes every temp file; the sorter cannot be used after."""
        f = getattr(self, "_in", None)
        if f is not None and not f.closed:
            f.close()
        d = getattr(self, "_dir", None)
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)
            self._dir = None

    def _live(self) -> str:
        if self._dir is None:
            raise BadInputError("this Sorter is closed")
        return self._dir

    def push(self, chunk: Chunk) -> None:
        """Adds records: bytes, a memoryview or a NumPy array, of whole records (a chunk that is
        not is refused with :class:`BadInputError`)."""
        self._live()
        if self._sorted:
            raise BadInputError("push() after sorted(): make a new Sorter")
        if isinstance(chunk, (bytes, bytearray)):
            kind = "bytes"
        elif isinstance(chunk, memoryview):
            kind = "memoryview"
        elif type(chunk).__module__ == "numpy" and hasattr(chunk, "dtype"):
            kind = "numpy"
            if self._dtype is None:
                self._dtype = chunk.dtype
                if self._args["record_size"] is None and not (
                    self._args["lines"] or self._args["nul"]
                ):
                    self._args["record_size"] = chunk.dtype.itemsize
            elif chunk.dtype != self._dtype:
                raise BadInputError(f"push(): dtype {chunk.dtype} after {self._dtype}")
            if self._args["record_size"] != chunk.dtype.itemsize:
                raise SpecError(
                    f"push(): items of {chunk.dtype.itemsize} bytes, but "
                    f"record_size={self._args['record_size']}"
                )
        else:
            raise BadInputError(
                f"push(): bytes, memoryview or NumPy array, not {type(chunk).__name__}"
            )
        if kind != "numpy" and not (self._args["lines"] or self._args["nul"]):
            # Fixed records: a chunk that is not whole records is refused here, where the
            # caller can see which one it is, not when the sort reads the temp file.
            size = self._args["record_size"] or DEFAULT_RECORD_SIZE
            n = memoryview(chunk).nbytes
            if n % size:
                left = n % size
                raise BadInputError(
                    f"push(): {n} bytes is not a whole number of {size}-byte records "
                    f"({left} byte{'' if left == 1 else 's'} left over): push whole records"
                )
        if self._kind is None:
            self._kind = kind
        elif kind != self._kind:
            raise BadInputError(f"push(): a {kind} after {self._kind} chunks: push one kind")
        if kind == "numpy":
            import numpy as np

            self._in.write(np.ascontiguousarray(chunk).data)
        else:
            self._in.write(chunk)

    def sorted(self, block_size: int = DEFAULT_BLOCK) -> Iterator[Any]:
        """Sorts what was pushed and yields it in blocks of about ``block_size`` bytes, each of
        whole records, of the kind pushed."""
        d = self._live()
        self._in.close()
        self._sorted = True
        src, out = os.path.join(d, "pushed"), os.path.join(d, "sorted")
        spec = _spec(control=None, **{**self._args, "temp_dirs": self._args["temp_dirs"] or [d]})
        _sort([src], out, False, self._progress, False, spec)
        os.remove(src)
        return self._blocks(out, block_size)

    def _blocks(self, path: str, block_size: int) -> Iterator[Any]:
        size = self._args["record_size"]
        delim = b"\n" if self._args["lines"] else b"\0" if self._args["nul"] else None
        try:
            with open(path, "rb") as f:
                if delim is None:
                    size = size or 100
                    want = max(1, block_size // size) * size
                    while True:
                        b = f.read(want)
                        if not b:
                            break
                        yield self._as_kind(b)
                else:
                    rest = b""
                    while True:
                        b = f.read(block_size)
                        if not b:
                            if rest:
                                yield self._as_kind(rest)
                            break
                        b = rest + b
                        cut = b.rfind(delim) + 1
                        rest = b[cut:]
                        if cut:
                            yield self._as_kind(b[:cut])
        finally:
            self.close()

    def _as_kind(self, b: bytes) -> Any:
        if self._kind == "numpy":
            import numpy as np

            return np.frombuffer(b, dtype=self._dtype)
        if self._kind == "memoryview":
            return memoryview(b)
        return b
