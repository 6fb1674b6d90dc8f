"""Results made before the baselines' ``TASKS`` literals moved out of their files still stand for the files.

Each bundled baseline once listed its tasks in a top-level ``TASKS = (...)`` assignment; those lines moved to
:data:`kgpubench.board.baselines.RUNS_ON`, which changed every file's sha256 but none of its behaviour (the board
reads the literal without running the file, and no baseline reads its own ``TASKS``). The results made before
keep the sha256 of the bytes that ran, and are not rewritten. ``baselines/moved_tasks.json`` records, per
baseline, the exact text taken out and the line it started at; a result's ``model_sha256`` stands for a baseline
file when it is the file's sha256, or the sha256 of the file's current bytes with that text put back at that line
(:func:`stands_for`). Any later edit of the file changes the bytes the text is put back into, so its old results
stop standing for it, as they should.
"""

from __future__ import annotations

import ast
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kgpubench.errors import ResultFormatError
from kgpubench.foundation.capped import loads_json
from kgpubench.resources import bundled_path

RECORD_NAME = "moved_tasks.json"
RECORD_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Moved:
    """The text taken out of one baseline file (``text``, whole lines) and the 1-based line it started at."""

    line: int
    text: str

    def restore(self, data: bytes) -> bytes | None:
        """``data`` with :attr:`text` put back before its line ``line``; None when ``data`` has fewer lines."""
        at = 0
        for _ in range(self.line - 1):
            found = data.find(b"\n", at)
            if found < 0:
                return None
            at = found + 1
        return data[:at] + self.text.encode() + data[at:]


def record_path() -> Path:
    """The committed equivalence record, beside the bundled baselines."""
    return bundled_path("baselines") / RECORD_NAME


def check_moved(name: str, line: object, text: object, where: str | os.PathLike = RECORD_NAME) -> Moved:
    """One entry of the record as a :class:`Moved`; raises :class:`~kgpubench.errors.ResultFormatError` (one line
    naming the file and baseline) unless ``line`` is a positive line number and ``text`` is whole lines that parse
    as exactly one assignment of a tuple of string literals to ``TASKS`` (nothing else: no import, no call)."""
    bad = None
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        bad = f"line {line!r} is not a positive line number"
    elif not isinstance(text, str) or not text.endswith("\n"):
        bad = "text is not whole lines (a string ending in a newline)"
    else:
        try:
            body = ast.parse(text).body
        except (SyntaxError, ValueError):
            body = None
        node = body[0] if body and len(body) == 1 else None
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "TASKS" and isinstance(node.value, ast.Tuple)
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)):
            bad = f"text {text!r} is not exactly one assignment TASKS = (\"task\", ...) of string literals"
    if bad:
        raise ResultFormatError(f"{where}: baseline {name!r}: refused, {bad}; the record may only put back the "
                                "TASKS line(s) taken out of the file, as `git show` of that change gives them.")
    return Moved(line, text)


def read_moved(path: str | os.PathLike | None = None) -> dict[str, Moved]:
    """Baseline name -> :class:`Moved`, from the record at ``path`` (default :func:`record_path`); every entry
    checked (:func:`check_moved`). No record file: nothing moved."""
    path = Path(path or record_path())
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _read(path: str, _mtime_ns: int, _size: int) -> dict[str, Moved]:
    with open(path, "rb") as fh:
        raw = fh.read(RECORD_MAX_BYTES + 1)
    if len(raw) > RECORD_MAX_BYTES:
        raise ResultFormatError(f"{path}: larger than {RECORD_MAX_BYTES:,} bytes; the record is a few kilobytes.")
    doc = loads_json(raw, path, expected="the moved-TASKS record: {\"moved\": {baseline: {\"line\", \"text\"}}}")
    moved = doc.get("moved") if isinstance(doc, dict) else None
    if not isinstance(moved, dict) or not all(isinstance(v, dict) and set(v) == {"line", "text"}
                                              for v in moved.values()):
        raise ResultFormatError(f"{path}: expected {{\"moved\": {{baseline: {{\"line\": int, \"text\": str}}}}}}; "
                                "restore the committed file (git checkout baselines/moved_tasks.json).")
    return {name: check_moved(name, v["line"], v["text"], path) for name, v in moved.items()}


def restored_sha256(data: bytes, moved: Moved) -> str | None:
    """sha256 (hex) of a baseline file's bytes ``data`` with ``moved`` put back; None when it cannot be."""
    back = moved.restore(data)
    return None if back is None else hashlib.sha256(back).hexdigest()


def stands_for(recorded: object, path: str | os.PathLike, moved: dict[str, Moved] | None = None) -> bool:
    """Whether a result whose ``model_sha256`` is ``recorded`` was made by the model file at ``path`` as it is
    now: ``recorded`` is the file's sha256, or ``path`` is a bundled baseline and ``recorded`` is the sha256 of
    its bytes with the TASKS text the record holds for it put back (:func:`restored_sha256`)."""
    if not isinstance(recorded, str):
        return False
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if hashlib.sha256(data).hexdigest() == recorded:
        return True
    if moved is None:
        if not _bundled(path):
            return False
        moved = read_moved()
    entry = moved.get(path.stem)
    return entry is not None and restored_sha256(data, entry) == recorded


def _bundled(path: Path) -> bool:
    try:
        return path.resolve().parent == bundled_path("baselines").resolve()
    except OSError:
        return False


__all__ = ["RECORD_NAME", "Moved", "check_moved", "read_moved", "record_path", "restored_sha256", "stands_for"]
