"""The one reader of a model file: found, under the size cap, its bytes and their sha256; read as Python
without running it (:func:`parse_model_file`) or run as a fresh module (:func:`module_from_source`).

:class:`kgpubench.sandbox.session.ModelSession` reads the file here and sends the bytes to its child, which
runs them with :func:`module_from_source`; ``kgpubench.models.submission`` reads ``make_model`` and ``TASKS``
with :func:`parse_model_file`; trusted in-process runs (``kgpubench.models.evaluation.load_model_module``) use
both. Standard library only: the sandboxed child imports this before its limits are applied.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import linecache
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError, SubmissionError

MAX_MODEL_BYTES = 16 * 2**20  # a model file is Python source: 16 MiB is far beyond any real one


@dataclass(frozen=True)
class ModelFile:
    """A model file's path and bytes, as read once (what is hashed is what runs)."""

    path: Path
    source: bytes

    @property
    def sha256(self) -> str:
        """sha256 of the bytes (hex), as results record it (``model_sha256``)."""
        return hashlib.sha256(self.source).hexdigest()


def read_model_file(path: Path | str) -> ModelFile:
    """Read a model file: it must exist and hold under :data:`MAX_MODEL_BYTES` bytes.

    Raises
    ------
    kgpubench.errors.DataFileNotFoundError
        No such file.
    kgpubench.errors.SubmissionError
        The file holds :data:`MAX_MODEL_BYTES` bytes or more.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such model file; pass the path of a .py file.")
    with path.open("rb") as fh:
        source = fh.read(MAX_MODEL_BYTES + 1)  # never more than the cap, even if the file grows meanwhile
    if len(source) > MAX_MODEL_BYTES:
        raise SubmissionError(f"{path}: refused, a model file must be under {MAX_MODEL_BYTES // 2**20} MiB.")
    return ModelFile(path, source)


def parse_model_file(path: Path | str) -> ast.Module:
    """The model file's syntax tree, read and not run (errors: :func:`read_model_file`, or a
    :class:`~kgpubench.errors.SubmissionError` naming the line that is not valid Python)."""
    model = read_model_file(path)
    try:
        return ast.parse(model.source, filename=str(model.path))
    except (SyntaxError, ValueError) as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, SyntaxError) else str(exc)
        raise SubmissionError(f"{model.path}: not valid Python ({where}).") from None


def module_from_source(module_name: str, source: bytes, filename: str) -> types.ModuleType:
    """Run ``source`` as a new module ``module_name`` (registered in ``sys.modules``) whose ``__file__`` is
    ``filename``; tracebacks show its lines. Exceptions of the model's own code propagate."""
    module = types.ModuleType(module_name)
    module.__file__ = filename
    text = importlib.util.decode_source(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    sys.modules[module_name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module
