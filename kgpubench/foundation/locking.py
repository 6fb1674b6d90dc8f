"""The lock that serialises a store's writers: ``fcntl.flock`` on ``<store>/.kgpubench.lock``.

A writer holds it exclusively for the whole transaction; a reader that must not see a write midway (``validate``
looking for orphaned parts) holds it shared. The lock file is never removed: removing it would let a waiting
process lock a file nobody else sees. A process that dies releases its lock, so a lock is never stale.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kgpubench.errors import (
    DataFileNotFoundError,
    MissingDependencyError,
    NotWritableError,
    SchemaValidationError,
    StoreLockedError,
)
from kgpubench.foundation.files import write_error

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: reading works unlocked, writing is refused (_open)
    fcntl = None

LOCK = ".kgpubench.lock"
DEFAULT_LOCK_TIMEOUT = 600.0


@contextmanager
def store_lock(folder: Path, *, exclusive: bool, timeout: float | None = DEFAULT_LOCK_TIMEOUT,
               on_wait: Callable[[str], None] | None = None,
               on_locked: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock of the store ``folder``: exclusive for writers, shared for a reader.

    Parameters
    ----------
    folder : Path
        The store folder (created for an exclusive lock).
    exclusive : bool
        A writer's lock; a shared one is best effort: without a lock file (no writer ever ran) or on a
        read-only store there is nothing to wait for.
    timeout : float or None
        Seconds to wait for another holder (0: fail at once; None or inf: no limit).
    on_wait : callable, optional
        Receives one line when the lock is busy (default: printed on stderr).
    on_locked : callable, optional
        Called once the lock is held (a test hook).

    Raises
    ------
    StoreLockedError
        Another process held the lock for ``timeout`` seconds.
    NotWritableError
        The store folder is not writable (exclusive lock).
    """
    check_timeout(timeout)
    fd = _open(Path(folder), exclusive)
    if fd is None:
        yield
        return
    try:
        _acquire(Path(folder), fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, timeout, on_wait)
        if on_locked is not None:
            on_locked()
        yield
    finally:
        os.close(fd)  # releases the lock


def _open(folder: Path, exclusive: bool) -> int | None:
    if fcntl is None:  # pragma: no cover - not POSIX
        if exclusive:
            raise MissingDependencyError("writing a store needs POSIX file locks (fcntl); merge on Linux or "
                                         "macOS.")
        return None
    if folder.exists() and not folder.is_dir():
        raise DataFileNotFoundError(f"{folder}: is a file, expected a dataset store folder.")
    lock = folder / LOCK
    if not exclusive:
        try:
            return os.open(lock, os.O_RDONLY)
        except OSError:
            return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        err, why = write_error(lock, exc), exc.strerror or str(exc)
    if isinstance(err, NotWritableError):
        raise NotWritableError(f"{folder}: the store is not writable ({why}); merge into a copy you can "
                               "write, or fix its permissions.")
    raise err


def _acquire(folder: Path, fd: int, mode: int, timeout: float | None,
             on_wait: Callable[[str], None] | None) -> None:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    busy = f"{folder}: another kgpubench process is writing this store"
    if timeout is not None and timeout <= 0:
        raise StoreLockedError(f"{busy}; try again when it has finished, or pass --lock-timeout SECONDS to "
                               "wait for it.")
    limit = "" if timeout is None or math.isinf(timeout) else f" (up to {timeout:g} s)"
    (on_wait or _print_wait)(f"{busy}; waiting for it to finish{limit} ...")
    deadline = math.inf if timeout is None else time.monotonic() + timeout
    delay = 0.02
    while True:
        time.sleep(delay)
        delay = min(delay * 2, 0.5)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StoreLockedError(f"{busy} and still was after {timeout:g} s; try again when it has "
                                       "finished, or pass a longer --lock-timeout.") from None


def check_timeout(timeout: float | None) -> None:
    """Refuse a lock timeout that is not a number of seconds >= 0 (None and inf mean no limit)."""
    if timeout is not None and (not isinstance(timeout, (int, float)) or math.isnan(timeout) or timeout < 0):
        raise SchemaValidationError(f"lock timeout {timeout!r}: give seconds >= 0 (0: fail at once if another "
                                    "process is writing; inf: wait as long as it takes).")


def _print_wait(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
