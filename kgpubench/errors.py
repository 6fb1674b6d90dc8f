"""The exception hierarchy: one root, every class here, each subclass also inheriting the matching builtin.

Every message says what was found, what was expected, and how to fix it. The command line turns any of them
into one red line and exits with the class's :attr:`KgpubenchError.exit_code` (1 unless a class says otherwise;
``KGPUBENCH_DEBUG=1`` shows the traceback). A class with ``details()`` has those lines listed on stdout first.

This module imports nothing from kgpubench, so every other module can import it. ``tests/test_errors.py`` checks
that no other module of the package defines a ``KgpubenchError``. Three exceptions of the package are not
errors of this hierarchy, on purpose: ``kgpubench.sandbox.process.Stop`` (control flow inside the sandbox's
parent), ``kgpubench.sandbox.linux.IsolationError`` (raised in the sandbox's launcher, which imports only the
standard library, before isolation) and ``kgpubench.measure.backends.fake.FakeCudaError`` (the fake backend's stand-in
for CuPy's CUDA error, which is foreign by definition).

Suites (``collectors/``) raise :class:`SuiteError` subclasses of their own.
"""

from __future__ import annotations

import difflib

# Bidirectional embeddings, overrides and isolates: they reorder what a terminal or a page shows. They are
# format characters, which str.isprintable() refuses already; named here so that the rule says so explicitly.
BIDI_CONTROLS = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
# The rule every text value of every table obeys (strings, lists of strings, parameter names and values).
ONE_LINE_RULE = ("must be one line of printable text (no control character: ESC, BEL, NUL, newline, tab; no "
                 "bidi override or other format character)")


def is_printable_line(text: str) -> bool:
    """Whether ``text`` is one line of printable text: ``str.isprintable()`` (which refuses control, format,
    separator and unassigned characters other than the ASCII space) and no bidi control."""
    return text.isprintable() and BIDI_CONTROLS.isdisjoint(text)


def escape_text(text: object, max_len: int | None = None) -> str:
    """``text`` as one printable line for a terminal or a page: every character :func:`is_printable_line`
    refuses is written as its Python escape (``\\x1b``, ``\\u202e``, ``\\n``); ``max_len`` cuts the result."""
    text = str(text)
    if not is_printable_line(text):
        text = "".join(c if c.isprintable() and c not in BIDI_CONTROLS else repr(c)[1:-1] for c in text)
    if max_len is not None and len(text) > max_len:
        text = text[:max_len] + "..."
    return text


class KgpubenchError(Exception):
    """Root of every error kgpubench raises on purpose."""

    #: The command line's exit status for this error.
    exit_code: int = 1


# ----- data files, stores and outputs -------------------------------------------------------------------------
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


class DerivedChangeError(MergeConflictError):
    """Rows that repeat stored measurements but carry other catalogue (derived) figures, merged without asking to
    replace them; ``conflicts`` holds every differing value. The message names the first; none is listed under it
    (a corrected catalogue changes thousands of rows alike)."""

    def details(self) -> list[str]:
        return []


class StoreLockedError(KgpubenchError, TimeoutError):
    """Another process is writing the store (holds its lock) and the wait for it timed out."""


class OutputExistsError(KgpubenchError, FileExistsError):
    """An output file already exists and overwriting it was not asked for (``--force``)."""


class OutputWriteError(KgpubenchError, OSError):
    """An output (shard, store file, export) could not be written: a missing, read-only or full location."""


class NotWritableError(OutputWriteError, PermissionError):
    """An output location is not writable by this user."""


class BundleError(KgpubenchError, ValueError):
    """A bundle that cannot be trusted or read: truncated, tampered, incomplete or of another format."""


class ImportFormatError(KgpubenchError, ValueError):
    """An input file is not a readable Kernel Tuner cache or T4 results file, or lacks what the import needs."""


class NoRowsError(KgpubenchError, LookupError):
    """An export selected no rows."""


# ----- names, options and dependencies ------------------------------------------------------------------------
class UnknownNameError(KgpubenchError, KeyError):
    """A config, task, scheme, suite or GPU name that does not exist.

    ``KeyError`` quotes its argument in ``str()``; this class prints the plain message instead.
    """

    def __str__(self) -> str:  # pragma: no cover - trivial
        return str(self.args[0]) if self.args else ""


class OptionError(KgpubenchError, ValueError):
    """A command-line value in the wrong form."""


class MissingDependencyError(KgpubenchError, ImportError):
    """An optional dependency (extra) is needed for this feature and is not installed."""


# ----- tasks, splits, metrics and results --------------------------------------------------------------------
class DuplicateNameError(KgpubenchError, ValueError):
    """A name is registered twice in one registry (:class:`kgpubench.registry.Registry`): two tasks, metrics,
    import formats, suites or baselines of one name, built in or plugged in; the message names both origins."""


# The name the duplicate-task error had before every registry shared one type (issue 42).
DuplicateTaskError = DuplicateNameError


class PluginError(KgpubenchError, ImportError):
    """A plugin (an entry point of an installed distribution) fails to import, gives an object of the wrong type
    or is refused by its registry's checks; the message names the distribution and the entry point."""


class SplitError(KgpubenchError, ValueError):
    """A split request that cannot be met (fold missing, split without scheme, ...)."""


class MetricInputError(KgpubenchError, ValueError):
    """Arrays given to a metric are empty, of different lengths, or outside the metric's domain."""


class MeasurementError(KgpubenchError, LookupError):
    """An assignment the test problem has no measured row for, or a problem without a default TPB."""


class NoDataError(KgpubenchError, LookupError):
    """The task's config has no usable rows in the store, or a scheme has no fold with training rows."""


class ResultFormatError(KgpubenchError, ValueError):
    """A result file that is not a kgpubench result: not JSON, or a field missing or of the wrong type."""


class VerifyError(KgpubenchError, AssertionError):
    """Re-running committed results gave other scores or other hashes; ``problems`` lists them all."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class BoardWriteError(KgpubenchError, FileExistsError):
    """A file the board would write exists and was not written by kgpubench."""


# ----- model code and its sandbox ----------------------------------------------------------------------------
class SubmissionError(KgpubenchError, ValueError):
    """A model file that cannot be evaluated: no factory, bad predictions, a crash, a limit hit."""


class SandboxError(SubmissionError):
    """The sandboxed model failed: ``kind`` says how (timeout, memory, crash, exit, output, invalid-output,
    model-error, import, protocol); ``log`` holds the head and tail of what it printed."""

    def __init__(self, message: str, kind: str = "model-error", log: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.log = log


class SandboxUnavailableError(KgpubenchError, RuntimeError):
    """This machine cannot isolate model code (no Linux namespaces), and trust was not given."""


class LimitsError(KgpubenchError, ValueError):
    """A sandbox limit that is not a finite positive number."""


# ----- static features and the toolchain ---------------------------------------------------------------------
class ToolchainError(KgpubenchError, RuntimeError):
    """The CUDA toolchain (nvcc/ptxas) is missing or failed."""


class CompileError(ToolchainError):
    """nvcc, NVRTC or ptxas rejected the input; the message carries the compiler's own message."""


class PtxParseError(KgpubenchError, ValueError):
    """PTX text the reader does not understand; the message names the line."""


class ExpressionError(KgpubenchError, ValueError):
    """A trip-count (or size) expression that cannot be parsed or evaluated safely."""


class TripCountError(KgpubenchError, ValueError):
    """A loop without a trip count, a trip count for a loop that does not exist, or a bad value."""


class LaunchConfigError(KgpubenchError, ValueError):
    """A grid or block that is not 1 to 3 positive integers, or neither source nor PTX given."""


class PowerFactorError(KgpubenchError, ValueError):
    """Power factors with an unknown space, a negative value, or a global factor other than 1."""


# ----- the measurement harness -------------------------------------------------------------------------------
class NoGpuError(KgpubenchError, RuntimeError):
    """No usable NVIDIA GPU (or no CuPy) on this machine."""

    exit_code = 2


class SuiteLoadError(KgpubenchError, ImportError):
    """A suite does not load, or does not follow the suite contract (:mod:`kgpubench.measure.suite`)."""


class SuiteError(KgpubenchError):
    """Raised by a suite's own code (its spec, its references); suites subclass it with a builtin."""


class ContractError(KgpubenchError, AssertionError):
    """A suite or backend breaks its declared contract (:func:`kgpubench.testing.check_suite`,
    :func:`kgpubench.testing.check_backend`)."""


class ClockLockError(KgpubenchError, ValueError):
    """A ``--lock-clocks`` value that cannot be honoured (not root, not a number, out of range)."""


class CompileCacheError(KgpubenchError, OSError):
    """The compile cache folder cannot be created or written."""


class ModelCacheError(KgpubenchError, PermissionError):
    """``kgpubench predict``'s model cache holds what kgpubench did not write (a pickle whose sha256 is not the one
    recorded when it was written, a folder another user owns or others may enter): reading it would run its
    code, so it is refused, never read and never silently rebuilt."""


class CaseFailure(KgpubenchError, RuntimeError):
    """A configuration that cannot be measured; becomes a row with :attr:`status` and :attr:`detail`."""

    status = "launch_error"

    def __init__(self, detail: str, code: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code


class CompileFailed(CaseFailure):
    """NVRTC rejected the source (with these defines)."""

    status = "compile_error"


class Infeasible(CaseFailure):
    """The configuration does not fit the device (threads, shared memory, registers, memory)."""

    status = "infeasible"


class LaunchFailed(CaseFailure):
    """A kernel launch or execution failed; ``sticky`` errors leave the CUDA context unusable."""

    status = "launch_error"

    def __init__(self, detail: str, code: int | None = None, sticky: bool = False) -> None:
        super().__init__(detail, code)
        self.sticky = sticky


class CaptureUnsupported(KgpubenchError, RuntimeError):
    """A unit of work cannot be captured in a CUDA graph (it synchronises, allocates or copies to the host);
    the harness then times it with back-to-back launches (``batch``)."""


class ContextLostError(KgpubenchError, RuntimeError):
    """A sticky CUDA error: the process cannot use the GPU any more; rerun the same command to resume."""


class ClusterError(KgpubenchError, RuntimeError):
    """A Ray cluster (``--ray``) that cannot be used: unreachable, too small, or that lost work it could not
    resume."""


class WorkerProcessError(KgpubenchError, RuntimeError):
    """A worker process of a ``jobs`` above 1 stopped before it returned (killed, out of memory, or a script
    without ``if __name__ == "__main__":`` whose top level ran again in it)."""


# ----- helpers -----------------------------------------------------------------------------------------------
def did_you_mean(name: str, choices) -> str:
    """Return a ' Did you mean ...?' hint (or '') for an unknown ``name`` among ``choices``."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def unknown_name(kind: str, name: str, choices) -> UnknownNameError:
    """Build the standard error for an unknown ``kind`` called ``name``."""
    choices = sorted(choices)
    return UnknownNameError(
        f"unknown {kind} {name!r}.{did_you_mean(name, choices)} Known {kind}s: {', '.join(choices) or '(none)'}."
    )
