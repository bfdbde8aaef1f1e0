"""Operating system errors as oxsort's exceptions and Python's own at once: a missing input is
an :class:`oxsort.BadInputError` and a :class:`FileNotFoundError`, so ``except OSError`` and
``except oxsort.Error`` both catch it. The native module raises them through :func:`os_error`."""

from __future__ import annotations

from typing import Optional

#: The classes made so far, by (oxsort's class, Python's OSError subclass).
_CLASSES: dict[tuple[type, type], type] = {}


def _message(self: OSError) -> str:
    # The whole message, as the CLI prints it ("in.dat: No such file or directory"), not
    # OSError's "[Errno 2] ...".
    return str(self.strerror)


def os_error(base: type, errno: int, message: str, filename: Optional[str] = None) -> OSError:
    """An exception of class ``base`` (an :class:`oxsort.Error`) that is also the
    :class:`OSError` subclass Python uses for ``errno`` (FileNotFoundError, PermissionError,
    IsADirectoryError, ...); ``str()`` of it is ``message``."""
    system = type(OSError(errno, ""))
    cls = _CLASSES.get((base, system))
    if cls is None:
        cls = type(
            base.__name__,
            (base, system),
            {"__module__": "oxsort", "__str__": _message, "__doc__": base.__doc__},
        )
        _CLASSES[(base, system)] = cls
    if filename is None:
        return cls(errno, message)  # type: ignore[no-any-return]
    return cls(errno, message, filename)  # type: ignore[no-any-return]
