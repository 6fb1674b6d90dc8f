"""Reading an upstream file with a ceiling on its (decompressed) size: bombs are refused cheaply.

Every importer reads its files through :func:`read_capped` (bytes) or :func:`open_capped_text` (a text stream
for CSV readers). A gzip member or a bzip2 stream is recognised by its magic bytes, not its name, and is
decompressed in chunks; the read stops, with one line naming the file, as soon as the output passes the ceiling,
so a 2 MB file that expands to 2 GiB costs about one ceiling's worth of work, never the whole expansion.

The ceiling is :data:`DEFAULT_MAX_BYTES` (1 GiB per file, decompressed: the largest staged upstream file,
benchmark_hub's biggest cache, is under 100 MB), or the ``KGPUBENCH_IMPORT_MAX_BYTES`` environment variable
(a byte count) for a user who really has a larger file.
"""

from __future__ import annotations

import bz2
import csv
import io
import json
import os
import zlib
from pathlib import Path
from typing import Any

from kgpubench.errors import DataFileNotFoundError, ImportFormatError

DEFAULT_MAX_BYTES = 1 << 30
ENV_VAR = "KGPUBENCH_IMPORT_MAX_BYTES"
_CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"


def max_bytes() -> int:
    """The ceiling in force: ``KGPUBENCH_IMPORT_MAX_BYTES`` when set to a positive integer, else the default."""
    raw = os.environ.get(ENV_VAR)
    if raw is None or raw.strip() == "":
        return DEFAULT_MAX_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ImportFormatError(f"{ENV_VAR}={raw!r}: expected a positive byte count (e.g. {ENV_VAR}=2147483648).")
    return value


def _too_big(path: Path, limit: int, what: str) -> ImportFormatError:
    return ImportFormatError(
        f"{path}: {what} is larger than the import ceiling of {limit:,} bytes; a real upstream file is far "
        f"smaller. If this file is genuine, raise the ceiling with {ENV_VAR}=BYTES.")


def read_capped(path: Path | str, *, limit: int | None = None) -> bytes:
    """The bytes of ``path``, gunzipped (bunzipped) when it starts with the gzip (bzip2) magic, never more than
    ``limit``.

    Raises
    ------
    DataFileNotFoundError
        The path is not a readable file.
    ImportFormatError
        The file (or its decompressed content) passes the ceiling, or it starts like gzip or bzip2 but is
        truncated or corrupt.
    """
    path = Path(path)
    cap = max_bytes() if limit is None else limit
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such file; check the path.")
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
            if head[:2] != GZIP_MAGIC and not _is_bz2(head):
                rest = fh.read(cap + 1 - len(head))
                data = head + rest
                if len(data) > cap:
                    raise _too_big(path, cap, "the file")
                return data
            fh.seek(0)
            return _gunzip_capped(fh, path, cap) if head[:2] == GZIP_MAGIC else _bunzip_capped(fh, path, cap)
    except OSError as exc:
        raise DataFileNotFoundError(f"{path}: cannot read the file ({exc.strerror or exc}); check its "
                                    "permissions.") from None


def _gunzip_capped(fh, path: Path, cap: int) -> bytes:
    """Decompress every gzip member of ``fh`` in chunks, stopping past ``cap`` bytes of output."""
    out = bytearray()
    pending = b""
    while True:
        d = zlib.decompressobj(wbits=31)
        member_started = False
        while True:
            chunk = pending or fh.read(_CHUNK)
            pending = b""
            if not chunk:
                if member_started and not d.eof:
                    raise ImportFormatError(f"{path}: the gzip stream is truncated (it ends before its last "
                                            "member does); fetch the file again.")
                return bytes(out)
            member_started = True
            try:
                piece = d.decompress(chunk, max(cap + 1 - len(out), 1))
                out += piece
                while d.unconsumed_tail and len(out) <= cap:
                    out += d.decompress(d.unconsumed_tail, max(cap + 1 - len(out), 1))
            except zlib.error as exc:
                raise ImportFormatError(f"{path}: starts like gzip but does not decompress ({exc}); fetch the file "
                                        "again.") from None
            if len(out) > cap:
                raise _too_big(path, cap, "the decompressed content")
            if d.eof:
                pending = d.unused_data
                if not pending:
                    pending = fh.read(_CHUNK)
                    if not pending:
                        return bytes(out)
                if pending[:2] != GZIP_MAGIC:  # trailing garbage after the last member
                    raise ImportFormatError(f"{path}: bytes after the end of the gzip stream; fetch the file "
                                            "again.")
                break


def _is_bz2(head: bytes) -> bool:
    """Whether ``head`` opens a bzip2 stream: ``BZh`` and a block size digit 1-9."""
    return head[:3] == BZ2_MAGIC and head[3:4] in tuple(str(d).encode() for d in range(1, 10))


def _bunzip_capped(fh, path: Path, cap: int) -> bytes:
    """Decompress every bzip2 stream of ``fh`` (pbzip2 writes several) in chunks, stopping past ``cap`` bytes."""
    pieces: list[bytes] = []
    size = 0
    pending = b""
    while True:
        d = bz2.BZ2Decompressor()
        while not d.eof:
            if d.needs_input:
                chunk = pending or fh.read(_CHUNK)
                pending = b""
                if not chunk:
                    raise ImportFormatError(f"{path}: the bzip2 stream is truncated (it ends before its end-of-stream "
                                            "marker); fetch the file again.")
            else:
                chunk = b""
            try:
                piece = d.decompress(chunk, max(cap + 1 - size, 1))
            except (OSError, ValueError) as exc:
                raise ImportFormatError(f"{path}: starts like bzip2 but does not decompress ({exc}); fetch the file "
                                        "again.") from None
            pieces.append(piece)
            size += len(piece)
            if size > cap:
                raise _too_big(path, cap, "the decompressed content")
        pending = d.unused_data
        while len(pending) < 4:  # the next stream's magic may straddle a chunk boundary
            more = fh.read(_CHUNK)
            if not more:
                break
            pending += more
        if not pending:
            return b"".join(pieces)
        if not _is_bz2(pending[:4]):  # trailing garbage after the last stream
            raise ImportFormatError(f"{path}: bytes after the end of the bzip2 stream; fetch the file again.")


def open_capped_text(path: Path | str, *, limit: int | None = None, encoding: str = "utf-8") -> io.StringIO:
    """The decoded text of ``path`` (see :func:`read_capped`) as a stream for CSV readers.

    Raises
    ------
    ImportFormatError
        As :func:`read_capped`, or when the content is not text in ``encoding``.
    """
    data = read_capped(path, limit=limit)
    try:
        return io.StringIO(data.decode(encoding))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: byte {exc.start} is not {encoding} text; expected the upstream CSV "
                                "as published.") from None


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (which value counts is ambiguous); ``key`` is that key."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def lists_to_tuples(value: Any) -> Any:
    """``value`` with every list, at any depth, made a tuple: JSON carries as lists what frozen records hold as
    tuples (a goal's ``where``, a section's columns)."""
    return tuple(lists_to_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


def loads_json(raw: bytes | str, path: Path | str, *, expected: str = "a JSON document") -> Any:
    """Parse ``raw`` (read from ``path``) as strict JSON: a key repeated in one object, nesting too deep for
    the parser, and invalid JSON are each refused in one line naming ``path`` (``expected`` says what the file
    should be, for the fix).

    Raises
    ------
    ImportFormatError
        Invalid JSON, a duplicate key, or nesting too deep.
    """
    try:
        return json.loads(raw, object_pairs_hook=_refuse_duplicate_keys)
    except DuplicateKeyError as exc:
        raise ImportFormatError(f"{path}: the key {exc.key[:80]!r} appears twice in one JSON object; which value "
                                f"counts is ambiguous, so nothing is read. Expected {expected} with each key "
                                "once.") from None
    except RecursionError:
        raise ImportFormatError(f"{path}: JSON nested too deeply to read; expected {expected}.") from None
    except ValueError as exc:
        raise ImportFormatError(f"{path}: not valid JSON ({exc}); expected {expected}.") from None


class CheckedDictReader(csv.DictReader):
    """:class:`csv.DictReader` over an upstream CSV whose :class:`csv.Error` (a field over the module's field
    limit of 131,072 characters, a NUL byte, an unterminated quote) is one :class:`ImportFormatError` naming
    ``path`` and the line, never an internal error."""

    def __init__(self, stream: io.StringIO, path: Path | str) -> None:
        super().__init__(stream)
        self._path = path

    def _refuse(self, exc: csv.Error) -> ImportFormatError:
        why = " ".join(str(exc).split())[:120]
        return ImportFormatError(f"{self._path}: line {self.line_num + 1}: not a readable CSV row ({why}); expected "
                                 "the upstream CSV as published (fetch it again).")

    @property
    def fieldnames(self):  # the header is read on first use
        try:
            return csv.DictReader.fieldnames.fget(self)
        except csv.Error as exc:
            raise self._refuse(exc) from None

    @fieldnames.setter
    def fieldnames(self, value) -> None:
        csv.DictReader.fieldnames.fset(self, value)

    def __next__(self) -> dict[str, Any]:
        try:
            return super().__next__()
        except csv.Error as exc:
            raise self._refuse(exc) from None
