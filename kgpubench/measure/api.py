"""The harness as a library: :func:`collect` measures one suite into its shard folder and returns the typed rows
and the :class:`~kgpubench.measure.runner.CollectSummary`, the way Kernel Tuner's ``tune_kernel`` returns its
results. ``kgpubench collect`` is a thin layer over it (options, clock lock, progress bar, bundle), and so is
``kgpubench.collect``.

Imports only the harness (NumPy, pyarrow; CuPy and nvidia-ml-py when a GPU backend is made): never datasets,
lightgbm or xgboost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgpubench.buildinfo import COMMIT_ENV, PACKAGE_DIR, project_commit
from kgpubench.errors import OptionError
from kgpubench.measure.backends.base import Backend
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.power import MIN_WINDOW_MS
from kgpubench.measure.runner import CollectOptions, CollectSummary, keyed_cases, run_suite, select_cases
from kgpubench.measure.settings import StopRule
from kgpubench.measure.stored import StoredRows, stored_rows
from kgpubench.measure.suite import Case
from kgpubench.measure.suites import load_suite
from kgpubench.schema import get_table

DEFAULT_OUT = Path("kgpubench-shards")


@dataclass(frozen=True)
class Collected:
    """What :func:`collect` returns for one suite.

    Attributes
    ----------
    suite : str
        The suite's name.
    table : str
        The table its rows belong to (``kernels``, ``npb``, ``stencil``).
    folder : Path
        The suite's shard folder, ``OUT/<suite>/``.
    summary : CollectSummary
        What the collection did (rows written, skipped, statuses, times).
    records : tuple of dict
        The shard's rows (those written now and any that were already there), as stored: every column of the
        table, with the schema's types.
    """

    suite: str
    table: str
    folder: Path
    summary: CollectSummary
    records: tuple[dict[str, Any], ...]

    @cached_property
    def rows(self) -> pa.Table:
        """The shard's rows as an Arrow table in the table's schema (typed columns)."""
        return get_table(self.table).from_rows(list(self.records), fill_row_id=False)

    def __len__(self) -> int:
        return len(self.records)


def collect(suite: str | Any, *, backend: str | Backend = "cupy", out: Path | str = DEFAULT_OUT, quick: bool = False,
            kernels: Sequence[str] | None = None, max_minutes: float | None = None, l2_policy: str | None = None,
            rule: StopRule | None = None, seed: int = 0, power_window_ms: float = MIN_WINDOW_MS,
            clocks_locked: bool = False, row_ids: Iterable[str] | None = None, device: int = 0,
            store: Path | str | StoredRows | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            notice: Callable[[str], None] | None = None) -> Collected:
    """Measure ``suite`` on ``backend`` into the shard folder ``out/<suite>/`` and return its rows and summary.

    Rerunning with the same ``out`` resumes: rows already in the folder are skipped, and so, with ``store``,
    are the configurations that dataset store already holds for this collection (the same GPU model,
    measurement protocol, L2 policy and cold timer, status ok: :mod:`kgpubench.measure.stored`). Each row is on
    the disk before the next case starts.

    Parameters
    ----------
    suite : str or suite object
        A registered suite's name (``regular``, ``power``, ``stencil``, ``npb``, or one plugged in through the
        ``kgpubench.suites`` entry points), or a suite object (:class:`kgpubench.measure.suite.Suite`).
    backend : str or Backend
        ``"cupy"`` (the GPU ``device``), ``"fake"`` (NumPy, rows that never validate: tests), or a backend object.
    out : Path or str
        Output folder; the suite's rows go to ``out/<suite name>/``.
    quick : bool
        A few configurations per kernel (the suite decides which).
    kernels : sequence of str, optional
        Only these kernels.
    max_minutes : float, optional
        Start no new case after this many minutes.
    l2_policy : {"warm", "flushed"}, optional
        L2 policy of every sample (default: the suite's declared one).
    rule : StopRule, optional
        Protocol 2's sample sizing and stop rule (default :class:`~kgpubench.measure.settings.StopRule()`).
    seed : int
        Base seed of the inputs.
    power_window_ms : float
        Minimum power window (ms) of cases with a power window.
    clocks_locked : bool
        Whether the caller locked the SM clock (:class:`kgpubench.measure.conditions.ClockLock`); recorded on
        every row.
    row_ids : iterable of str, optional
        Only the cases with these row ids.
    device : int
        CUDA device index when ``backend`` is ``"cupy"``.
    store : Path, str or StoredRows, optional
        A dataset store folder (``kgpubench collect`` passes the packaged one, ``kgpubench/data``, unless told
        otherwise): its configurations are not measured again. ``None`` (the default here): skip only the rows
        of ``out``. Or what :func:`kgpubench.measure.stored.stored_rows` already read from one for this
        collection (its table, L2 policy and the backend's cold timer), which is then not read again.
    progress : callable, optional
        ``progress(done, total, label)`` after each case.
    notice : callable, optional
        ``notice(line)`` once before the cases, with ``store``: how many of them the store holds.

    Returns
    -------
    Collected
        ``folder``, ``summary`` (:class:`~kgpubench.measure.runner.CollectSummary`), ``records`` and ``rows``
        (the shard's rows, typed by the table's schema).

    Raises
    ------
    kgpubench.errors.NoGpuError
        ``backend="cupy"`` and no usable GPU (nothing is written).
    kgpubench.errors.KgpubenchError
        ``store`` is missing, not a store, or holds a part that cannot be read, or was read for another
        collection (one line naming the path; nothing is written).
    kgpubench.errors.ContextLostError
        A case left a sticky CUDA error; its row is saved, rerun to resume after it.

    Examples
    --------
    On the CPU test double (its rows carry ``source="fake"`` and never validate):

    >>> import numpy as np, tempfile, kgpubench
    >>> from kgpubench.measure.backends.fake import FakeBackend
    >>> def add(grid, block, args, smem):  # the NumPy stand-in of vector_add's kernel
    ...     a, b, c, n = args
    ...     c[:n] = a[:n] + b[:n]
    >>> fake = FakeBackend(implementations={"vector_add": add}, time_ms=0.5, with_nvml=False)
    >>> done = kgpubench.collect("regular", backend=fake, out=tempfile.mkdtemp(), quick=True,
    ...                          kernels=["vector_add"])
    >>> done.summary.written, dict(done.summary.statuses), done.rows.num_rows
    (4, {'ok': 4}, 4)
    """
    suite_obj = load_suite(suite) if isinstance(suite, str) else suite
    be = get_backend(backend, device=device) if isinstance(backend, str) else backend  # before any file
    _require_commit(be)
    options = CollectOptions(quick=quick, kernels=list(kernels) if kernels else None, max_minutes=max_minutes,
                             rule=rule or StopRule(), l2_policy=l2_policy, power_window_ms=power_window_ms,
                             seed=seed, clocks_locked=clocks_locked,
                             row_ids=frozenset(row_ids) if row_ids is not None else None)
    if store is not None:
        options = replace(options, stored=_stored(store, suite_obj, options, getattr(be, "cold_timer", None)))
    writer = ShardWriter(Path(out) / suite_obj.name, suite_obj.table)
    try:
        summary = run_suite(suite_obj, be, writer, options, progress=progress, notice=notice)
    finally:
        writer.close()
    summary.out = str(writer.folder)
    return Collected(suite=suite_obj.name, table=suite_obj.table, folder=writer.folder, summary=summary,
                     records=tuple(writer.rows()))


def _stored(store: Path | str | StoredRows, suite: Any, options: CollectOptions, cold_timer: str | None) -> StoredRows:
    """What ``store`` holds for this collection: read now, or a reading made for it already (checked)."""
    policy = options.policy_for(suite)
    if not isinstance(store, StoredRows):
        return stored_rows(store, suite.table, l2_policy=policy, cold_timer=cold_timer)
    if not store.read_for(suite.table, policy, cold_timer):
        raise OptionError(f"{store.path}: the store's rows were read for a collection of {store.table} "
                          f"({store.l2_policy or 'no L2 policy'}, cold timer {store.cold_timer}), not for this one "
                          f"({suite.table}, {policy}, cold timer {cold_timer or 'events'}); pass the store's "
                          "path instead")
    return store


def _require_commit(backend: Backend) -> None:
    """Refuse, before anything is measured, a collection whose rows could not name the project commit.

    A measured row of protocol 2 must record ``kgpubench_commit`` or it cannot be merged
    (:func:`kgpubench.store.validation.validate_table`); finding that out after the measuring would waste it.
    The fake backend's rows never validate anyway, so it is not held to this.
    """
    if getattr(backend, "row_source", "measured") != "measured" or project_commit():
        return
    given = os.environ.get(COMMIT_ENV, "").strip()
    if given:
        raise OptionError(f"{COMMIT_ENV}={given!r} is not a commit: give the source tree's commit as 7 to 40 hex "
                          "digits (optionally followed by +dirty), or unset it inside a git checkout")
    raise OptionError(f"cannot tell which kgpubench commit is measuring: no git checkout at {PACKAGE_DIR.parent}, "
                      f"no {COMMIT_ENV} and no commit file in the installed package; its rows could not be "
                      f"merged. Collect from a git checkout, install a wheel built from one, or set {COMMIT_ENV} "
                      "to the commit of this source tree")


def plan(suite: str | Any, *, quick: bool = False, kernels: Sequence[str] | None = None) -> list[Case]:
    """The cases :func:`collect` would measure (no GPU needed; a suite sized by the GPU plans for a default)."""
    suite_obj = load_suite(suite) if isinstance(suite, str) else suite
    return select_cases(suite_obj, CollectOptions(quick=quick, kernels=list(kernels) if kernels else None))


@dataclass(frozen=True)
class Left:
    """What :func:`left_to_measure` finds: of ``total`` planned configurations, those with the row ids
    ``held_ids`` are in the store ``stored``."""

    total: int
    held_ids: frozenset[str]
    stored: StoredRows

    @property
    def held(self) -> int:
        return len(self.held_ids)

    @property
    def left(self) -> int:
        return self.total - self.held


def left_to_measure(suite: str | Any, *, gpu_name: str, store: Path | str, quick: bool = False,
                    kernels: Sequence[str] | None = None, l2_policy: str | None = None,
                    cold_timer: str | None = None) -> Left:
    """How many of the configurations :func:`plan` lists the dataset store ``store`` already holds for a
    collection on ``gpu_name`` (no GPU needed: the row ids take the GPU's name only; a suite sized by the GPU plans
    for a default), by the rule of :mod:`kgpubench.measure.stored`."""
    suite_obj = load_suite(suite) if isinstance(suite, str) else suite
    options = CollectOptions(quick=quick, kernels=list(kernels) if kernels else None, l2_policy=l2_policy)
    cases = select_cases(suite_obj, options)
    stored = stored_rows(store, suite_obj.table, l2_policy=options.policy_for(suite_obj), cold_timer=cold_timer)
    ids = [rid for _c, _b, rid in keyed_cases(cases, get_table(suite_obj.table), {"gpu_name": gpu_name})]
    return Left(total=len(ids), held_ids=frozenset(ids) & stored.row_ids, stored=stored)


__all__ = ["DEFAULT_OUT", "Collected", "Left", "collect", "left_to_measure", "plan"]
