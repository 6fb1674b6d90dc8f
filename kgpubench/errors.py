"""The exception hierarchy: one root, each subclass also inherits the matching builtin.

Every message says what was found, what was expected, and how to fix it.
"""

from __future__ import annotations


class KgpubenchError(Exception):
    """Root of every error kgpubench raises on purpose."""


class DataFileNotFoundError(KgpubenchError, FileNotFoundError):
    """A file or folder the user named (or the store lists) does not exist."""


class SchemaValidationError(KgpubenchError, ValueError):
    """Rows break the declared schema; ``violations`` holds every one of them."""

    def __init__(self, message: str, violations: list | None = None) -> None:
        super().__init__(message)
        self.violations = list(violations or [])

    def details(self) -> list[str]:
        """One line per violation, for the command line to list under the error."""
        return [str(v) for v in self.violations]


class ManifestError(KgpubenchError, ValueError):
    """A store's manifest is missing, malformed, or disagrees with the files (hash, rows)."""


class MergeConflictError(KgpubenchError, ValueError):
    """Rows with the identity (row_id, run_id) of a row already in the store (or in another shard being merged)
    but different values; ``conflicts`` holds every one (file, row, column and both values)."""

    def __init__(self, message: str, conflicts: list | None = None) -> None:
        super().__init__(message)
        self.conflicts = list(conflicts or [])

    def details(self) -> list[str]:
        """One line per conflict, for the command line to list under the error."""
        return [str(c) for c in self.conflicts]


class StoreLockedError(KgpubenchError, TimeoutError):
    """Another process is writing the store (holds its lock) and the wait for it timed out."""


class OutputExistsError(KgpubenchError, FileExistsError):
    """An output file already exists and overwriting it was not asked for (``--force``)."""


class OutputWriteError(KgpubenchError, OSError):
    """An output (shard, store file, export) could not be written: a missing, read-only or full location."""


class NotWritableError(OutputWriteError, PermissionError):
    """An output location is not writable by this user."""


class UnknownNameError(KgpubenchError, KeyError):
    """A config, task, scheme, suite or GPU name that does not exist.

    ``KeyError`` quotes its argument in ``str()``; this class prints the plain message instead.
    """

    def __str__(self) -> str:  # pragma: no cover - trivial
        return str(self.args[0]) if self.args else ""


class MissingDependencyError(KgpubenchError, ImportError):
    """An optional dependency (extra) is needed for this feature and is not installed."""


class ToolchainError(KgpubenchError, RuntimeError):
    """The CUDA toolchain (nvcc/ptxas) is missing or failed."""


class NoGpuError(KgpubenchError, RuntimeError):
    """No usable NVIDIA GPU (or no CuPy) on this machine."""


class ClusterError(KgpubenchError, RuntimeError):
    """A Ray cluster (``--ray``) that cannot be used: unreachable, too small, or that lost work it could not
    resume."""


def did_you_mean(name: str, choices) -> str:
    """Return a ' Did you mean ...?' hint (or '') for an unknown ``name`` among ``choices``."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def unknown_name(kind: str, name: str, choices) -> UnknownNameError:
    """Build the standard error for an unknown ``kind`` called ``name``."""
    choices = sorted(choices)
    return UnknownNameError(
        f"unknown {kind} {name!r}.{did_you_mean(name, choices)} Known {kind}s: {', '.join(choices) or '(none)'}."
    )
