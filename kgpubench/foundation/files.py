"""Writing any output safely: atomic, no-clobber writes of bytes and parquet, and the checks of an output path.

A write goes to a temp file in the target's folder, is fsynced, then renamed over the target (``overwrite=False``
links instead, so an existing file is never replaced, even by a racing writer); an ``OSError`` becomes one
:class:`~kgpubench.errors.OutputWriteError` line naming the path. ``-`` as an ``--out`` means standard output
everywhere. Every layer writes through here: shards, the store, results, the board, exports, caches.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import KgpubenchError, NotWritableError, OutputExistsError, OutputWriteError

COMPRESSION = "zstd"


STDOUT = "-"


def is_stdout(path: Path | str | None) -> bool:
    """Whether an ``--out`` value means standard output: ``-``, everywhere (never a file named ``-``)."""
    return path is not None and str(path) == STDOUT


def refuse_stdout(path: Path | str | None, what: str = "a folder") -> None:
    """A command whose ``--out`` is ``what`` (a folder, a parquet file) refuses ``-``, which means standard
    output everywhere, rather than writing a file or folder named ``-``.

    Raises
    ------
    OutputWriteError
        When ``path`` is ``-``.
    """
    if is_stdout(path):
        raise OutputWriteError(f"--out -: '-' means standard output, and this command writes {what}, which "
                               "cannot go there; give a path.")


def check_output(path: Path, *, force: bool = False) -> Path:
    """Refuse an output ``path`` that exists (unless ``force``) or that names a folder, and ``-`` (standard
    output, which a caller that can print handles before calling this).

    Raises
    ------
    OutputExistsError
        When ``path`` exists and ``force`` is false, or is a folder.
    """
    path = Path(path)
    refuse_stdout(path, "a file")
    if path.is_dir():
        raise OutputExistsError(f"{path}: is a folder; give a file name for the output.")
    if not force and (path.exists() or path.is_symlink()):
        raise OutputExistsError(f"{path}: already exists; pass --force to overwrite it, or choose another path.")
    return path


def check_writable(path: Path | str, *, force: bool = False) -> Path:
    """Before a long run: refuse ``path`` as :func:`check_output` does, and when its folder (or the nearest
    folder above it that exists, since the writers create folders) cannot be written, say so now rather than
    after the run.

    Raises
    ------
    OutputExistsError
        As :func:`check_output`.
    OutputWriteError
        When a file stands where a folder must be, or the folder is not writable (:class:`NotWritableError`).
    """
    path = check_output(Path(path), force=force)
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        if parent.is_symlink():
            break
        parent = parent.parent
    if not parent.is_dir():
        raise OutputWriteError(f"{path}: could not be written ({parent} is not a folder); choose another path.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise NotWritableError(f"{path}: cannot write here ({parent} is not writable); choose a writable location "
                               "or fix the folder's permissions.")
    return path


def write_error(path: Path, exc: OSError) -> OutputWriteError:
    """The one-line error for an ``OSError`` raised while writing ``path``."""
    why = exc.strerror or str(exc)
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return NotWritableError(f"{path}: cannot write here ({why}); choose a writable location or fix the "
                                "folder's permissions.")
    return OutputWriteError(f"{path}: could not be written ({why}); check that its folder exists, is a folder "
                            "and has space.")


def _install(tmp: str, path: Path, overwrite: bool) -> None:
    """Move the finished temp file ``tmp`` to ``path``; without ``overwrite``, never replace a file."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # atomic and fails when path exists: no window for a second writer
    except FileExistsError:
        raise OutputExistsError(f"{path}: already exists; pass --force to overwrite it, or choose another "
                                "path.") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise
        check_output(path)  # a file system without hard links: check, then rename
        os.replace(tmp, path)
    else:
        os.unlink(tmp)


TEMP_SUFFIX = ".tmp"


def file_mode() -> int:
    """The mode a new file gets from ``open()`` under the process umask (0644 under the usual 022).

    ``tempfile.mkstemp`` creates its file 0600; an atomic write gives the finished file this mode instead, so
    shards, results, exports and board files are readable by others as any file the user writes.
    """
    try:  # Linux: read the umask without changing it (os.umask is a process-wide set, racy with threads)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic_write(path: Path, fill: Callable[[int, str], None], overwrite: bool,
                  before_rename: Callable[[Path], None] | None) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        os.fchmod(fd, file_mode())
        fill(fd, tmp)
        if before_rename is not None:
            before_rename(path)
        _install(tmp, path, overwrite)
    except KgpubenchError:
        Path(tmp).unlink(missing_ok=True)
        raise
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise write_error(path, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes, *, overwrite: bool = True,
                       before_rename: Callable[[Path], None] | None = None) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename).

    Parameters
    ----------
    path : Path
        The file to write; its folder is created.
    data : bytes
        The whole content.
    overwrite : bool
        When false, an existing ``path`` is never replaced (:class:`OutputExistsError`), even by a writer
        racing this one.
    before_rename : callable, optional
        Called with ``path`` once the temp file is complete, just before it becomes ``path`` (a test hook).

    Raises
    ------
    OutputWriteError
        One line naming ``path`` when the write fails (:class:`NotWritableError` for permissions).
    """
    def fill(fd: int, _tmp: str) -> None:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    _atomic_write(path, fill, overwrite, before_rename)


def write_parquet_atomic(table: pa.Table, path: Path, *, overwrite: bool = True) -> None:
    """Write ``table`` as parquet to ``path`` atomically (see :func:`atomic_write_bytes` for ``overwrite``)."""
    def fill(fd: int, tmp: str) -> None:
        os.close(fd)
        pq.write_table(table, tmp, compression=COMPRESSION)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())

    _atomic_write(path, fill, overwrite, None)
