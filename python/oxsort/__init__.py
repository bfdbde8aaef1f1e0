"""oxsort: a stable external sort at the speed of the disks, from Python.

Files (bigger than memory)::

    import oxsort
    oxsort.gensort("in.dat", 1_000_000)
    stats = oxsort.sort("in.dat", "out.dat", memory="1G")
    assert oxsort.valsort("out.dat").sorted

Arrays: :func:`sort_array`, :func:`argsort` (NumPy), :func:`sort_table` (pyarrow).
Streams: :class:`Sorter`. Errors: :class:`Error` and its subclasses; an error of the
operating system (a missing input, a missing output directory) is also the matching
:class:`OSError` (:class:`FileNotFoundError`, ...).
"""

from ._arrays import argsort, sort_array, sort_table
from ._files import (
    Disorder,
    GensortStats,
    SortStats,
    Summary,
    check,
    explain,
    gensort,
    merge,
    sort,
    valsort,
)
from ._native import BadInputError, DisorderError, Error, OutOfSpaceError, SpecError, __version__
from ._stream import Sorter

__all__ = [
    "BadInputError",
    "Disorder",
    "DisorderError",
    "Error",
    "GensortStats",
    "OutOfSpaceError",
    "SortStats",
    "Sorter",
    "SpecError",
    "Summary",
    "__version__",
    "argsort",
    "check",
    "explain",
    "gensort",
    "merge",
    "sort",
    "sort_array",
    "sort_table",
    "valsort",
]
