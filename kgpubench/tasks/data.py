"""A task's data under one scheme: its usable rows, features, target and folds (:class:`TaskData`, built by
:func:`task_data`), whether the scheme can be evaluated on them (:func:`usable_task_data`, else an
:class:`Unusable` saying why), and the hashes that name what they were read from (:func:`rows_sha256`,
:func:`task_sha256`, :func:`files_sha256`, :func:`inputs_sha256`).

No model code runs here: the models layer (:mod:`kgpubench.models.evaluation`) takes a :class:`TaskData` and runs a
model on its folds; ``leaderboard run --reuse`` and ``verify`` compare the hashes recorded in a result's dataset
block with these.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.buildinfo import code_sha256, package_versions
from kgpubench.errors import NoDataError
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.resources import cache_home, default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import Task, as_task, feature_frame, problem_keys, select
from kgpubench.tasks.scoring import with_scoring_columns
from kgpubench.tasks.splits import evaluated_folds, fold_column, get_scheme, split_sha256_of


def hashed_order(row_ids: list[str], salt: str) -> np.ndarray:
    """Rank of every row under ``sha256(salt + row_id)``: a fixed order for deterministic subsamples."""
    keys = [hashlib.sha256(f"{salt}\x1f{r}".encode()).digest()[:8] for r in row_ids]
    order = np.argsort(np.asarray(keys, dtype="S8"), kind="mergesort")
    rank = np.empty(len(row_ids), dtype=np.int64)
    rank[order] = np.arange(len(row_ids))
    return rank


def subsample_rank(task: Task, rows: pa.Table) -> np.ndarray:
    """Per row of ``rows``, the rank of its subsample unit in the task's fixed order (:func:`train_subsample`).

    Rows (``task.subsample_by`` empty): ``hashed_order(row_ids, task.name)``, one rank per row. Otherwise the unit
    is the rows sharing the values of ``task.subsample_by``: each unit's key (the canonical JSON list of those
    values, :func:`kgpubench.tasks.problem_keys`) is ranked by ``sha256(task.name + key)``, and its rows share
    the rank. Neither depends on the order of the rows."""
    if not task.subsample_by:
        return hashed_order(rows["row_id"].to_pylist(), task.name)
    keys = problem_keys(task, rows, task.subsample_by)
    units, inverse = np.unique(keys.astype(str), return_inverse=True)
    return hashed_order(units.tolist(), task.name)[inverse.ravel()]


def train_subsample(task: Task, rows: pa.Table, train: np.ndarray, cap: int | None = None, *,
                    rank: np.ndarray | None = None) -> np.ndarray:
    """The training subsample: the indices of ``train`` (row indices of ``rows``) kept under a cap.

    ``cap`` defaults to ``task.max_train_rows``; no cap, or at most ``cap`` training rows: ``train`` unchanged.
    Otherwise the training rows are ordered by their unit's rank (:func:`subsample_rank`; pass ``rank``, computed
    once for all folds, to skip recomputing it) and whole units are taken in that order while the row total stays
    at most ``cap``: the first unit that does not fit ends the subsample (no smaller unit after it is tried), so a
    unit is never split. With single rows as units this is the first ``cap`` rows in hashed order. Returns the
    kept indices, sorted."""
    cap = task.max_train_rows if cap is None else cap
    train = np.asarray(train)
    if not cap or train.size <= cap:
        return train
    rank = subsample_rank(task, rows) if rank is None else rank
    ordered = train[np.argsort(rank[train], kind="mergesort")]
    if not task.subsample_by:
        return np.sort(ordered[:cap])
    r = rank[ordered]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])  # first position of each unit in the order
    ends = np.r_[starts[1:], r.size]  # one past its last: the row total up to and with it
    fits = np.flatnonzero(ends <= cap)
    return np.sort(ordered[: ends[fits[-1]] if fits.size else 0])


@dataclass
class TaskData:
    """A task's usable rows with their features, target and folds under one scheme."""

    task: Task
    scheme: str
    rows: pa.Table
    X: Any
    y: np.ndarray
    folds: np.ndarray
    dataset: dict = field(default_factory=dict)

    @property
    def fold_names(self) -> list[str]:
        return evaluated_folds(self.scheme, self.folds)

    @property
    def sample_rank(self) -> np.ndarray:
        """Fixed order of the rows for the plotted (measured, predicted) samples (computed once)."""
        if "_sample_rank" not in self.__dict__:
            self.__dict__["_sample_rank"] = hashed_order(self.rows["row_id"].to_pylist(), "samples")
        return self.__dict__["_sample_rank"]

    @functools.cached_property
    def split_sha256(self) -> str:
        """sha256 of the split file these rows and folds make (:func:`kgpubench.tasks.splits.split_digest`)."""
        return split_sha256_of(self.rows["row_id"].to_pylist(), self.folds)


HASH_EXTRA = ("run_id", "time_ms_std", "repeats", "time_rse", "default_remainder_s", "default_tpb", "remainder_s")


def rows_sha256(task: Task, rows: pa.Table) -> str:
    """sha256 over the values the task reads (features, target, problem and filter columns, the noise and
    scoring columns, row_id and run_id) of ``rows``, in (row_id, run_id) order.

    Results are tied to this hash, not to the store's manifest: data added to other configs, GPUs or suites
    leaves it unchanged. Numbers are hashed as little-endian float64 (null = NaN), strings joined by a unit
    separator (null = NUL), parameter lists as their lengths, names and values.
    """
    cols = sorted({*task.used_columns(), *(c for c in HASH_EXTRA if c in rows.column_names)})
    keys = [(c, "ascending") for c in ("row_id", "run_id") if c in rows.column_names]
    t = rows.select(cols).take(pc.sort_indices(rows, sort_keys=keys)) if rows.num_rows else rows.select(cols)
    h = hashlib.sha256(f"{task.name}\x1e{rows.num_rows}".encode())
    for name in cols:
        h.update(f"\x1e{name}\x1f".encode())
        _hash_array(h, t[name].combine_chunks())
    return h.hexdigest()


def _hash_array(h, arr: pa.Array) -> None:
    typ = arr.type
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ):
        vals = arr.to_numpy(zero_copy_only=False).astype("<f8")
        h.update(np.where(np.isnan(vals), np.nan, vals).tobytes())
    elif pa.types.is_list(typ) or pa.types.is_large_list(typ):
        h.update(pc.fill_null(pc.list_value_length(arr), -1).to_numpy(zero_copy_only=False).astype("<i8").tobytes())
        flat = pc.list_flatten(arr)
        if pa.types.is_struct(flat.type):
            for i in range(flat.type.num_fields):
                h.update(f"\x1d{flat.type.field(i).name}".encode())
                _hash_array(h, flat.field(i))
        else:
            _hash_array(h, flat)
    else:
        text = pc.fill_null(pc.cast(arr, pa.string()), "\x00").to_pylist()
        h.update("\x1f".join(text).encode())


# Task fields that change only what the board shows or when a job runs, never which rows are read nor how a
# prediction is scored: left out of :func:`task_sha256`. Every other field (a new one too) is in it.
PRESENTATION_FIELDS = frozenset({"description", "seed", "schemes", "board_schemes", "seed_metrics", "seed_reference",
                                 "relative_cost", "sources", "extras", "sections", "goals", "gpu_baseline",
                                 "split_files"})


# Task fields added after committed results had recorded their task_sha256: left out of the hash while at their
# default, so that a task which does not set one keeps the hash its results recorded (and ``--reuse`` keeps them);
# a task that sets one gets a new hash. A field added later goes here too (tests/tasks/test_subsample.py).
LATER_FIELDS = frozenset({"subsample_by"})


def task_sha256(task: Task) -> str:
    """sha256 of the task's declaration as far as it decides a score: every field of the
    :class:`~kgpubench.tasks.Task` except :data:`PRESENTATION_FIELDS` (name, config, target, features, metrics,
    filters, scorer, ...). Recorded in a result's dataset block; part of what ``leaderboard run --reuse`` compares."""
    decl = {f.name: getattr(task, f.name) for f in fields(task) if f.name not in PRESENTATION_FIELDS
            and not (f.name in LATER_FIELDS and getattr(task, f.name) == f.default)}
    return hashlib.sha256(json.dumps(decl, sort_keys=True, default=repr).encode()).hexdigest()


def files_sha256(task: Task, store) -> str:
    """sha256 of the files of the task's config in ``store`` (their paths and sha256, from the manifest): equal
    hashes mean the task reads the very same rows, without reading one. Data merged into another config leaves it
    unchanged; data merged into this one changes it (the task's own rows may still be the same:
    :func:`rows_sha256` tells)."""
    files = sorted([f["path"], f["sha256"]] for f in store.files(task.config))
    return hashlib.sha256(json.dumps([task.config, files]).encode()).hexdigest()


def inputs_sha256(task: Task, scheme: str, store) -> str:
    """Provenance only: the task's declaration, the scheme, the files of its config in the store (paths and sha256
    from the manifest), the library's code (:func:`kgpubench.buildinfo.code_sha256`) and the installed packages,
    as one hash. Any commit changes it, so it is not what ``leaderboard run --reuse`` compares (that is the data
    identity: :func:`task_sha256`, :func:`files_sha256` or :func:`rows_sha256`, the split, the model file, seed
    and threads); ``leaderboard verify`` (CI) is what catches a code change that moves a score."""
    files = [[f["path"], f["sha256"]] for f in store.files(task.config)]
    blob = json.dumps([repr(task), scheme, files, code_sha256(), package_versions()], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


_ROWS: dict[tuple, str | None] = {}
ROWS_FORMAT = 1  # of the on-disk entries of current_rows_sha256


def current_rows_sha256(task: Task, data_dir: Path | str | None = None) -> str | None:
    """:func:`rows_sha256` of the task's usable rows in the store now (None: it has none), without building
    features or folds (a few seconds for the largest configs; the config's table is :func:`config_table`'s, read
    once for its tasks).

    Cached per process, (task, data folder, manifest), and on disk as JSON under ``rows/`` of kgpubench's cache
    root (:func:`kgpubench.resources.cache_home`), keyed by everything the rows follow from: the task's declaration
    (:func:`task_sha256`), its config's store files (:func:`files_sha256`), the library's code
    (:func:`kgpubench.buildinfo.code_sha256`: the selection rules among it) and the installed packages. So a
    ``leaderboard run --reuse`` reads no row again until one of them changes. An entry that does not read back as
    one such hash is computed again and rewritten (atomically)."""
    store = Store(data_dir or default_data_dir())
    key = (task.name, str(store.path), store.manifest_sha256())
    if key not in _ROWS:
        _ROWS[key] = _kept_rows_sha256(task, store)
    return _ROWS[key]


def _kept_rows_sha256(task: Task, store: Store) -> str | None:
    blob = json.dumps([ROWS_FORMAT, task.name, task_sha256(task), files_sha256(task, store), code_sha256(),
                       package_versions()], sort_keys=True)
    path = cache_home("rows") / f"{task.name}-{hashlib.sha256(blob.encode()).hexdigest()}.json"
    try:
        kept = json.loads(path.read_text())
        if isinstance(kept, dict) and set(kept) == {"rows_sha256"} and (
                kept["rows_sha256"] is None or _is_sha256(kept["rows_sha256"])):
            return kept["rows_sha256"]
    except (OSError, ValueError):
        pass
    table = config_table(store, task.config)
    rows = with_scoring_columns(task, table, select(task, table).rows)
    fresh = rows_sha256(task, rows) if rows.num_rows else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, json.dumps({"rows_sha256": fresh}).encode())
    except OSError:  # a cache that cannot be written costs the next run a read, nothing else
        pass
    return fresh


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


_TABLES: dict[tuple, pa.Table] = {}


def config_table(store: Store, config: str) -> pa.Table:
    """``store.read(config)``, kept for the next call on the same store folder, manifest and config (the last
    :data:`KEPT_TABLES` configs read): the jobs of one config's tasks and schemes read its files once."""
    key = (str(store.path.resolve()), store.manifest_sha256(), config)
    if key not in _TABLES:
        while len(_TABLES) >= KEPT_TABLES:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = store.read(config)
    return _TABLES[key]


KEPT_TABLES = 2


def task_data(task: Task | str, scheme: str, data_dir: Path | str | None = None,
              table: pa.Table | None = None) -> TaskData:
    """Load the task's rows from a store (default: the packaged data) and assign folds (``task``: a name is
    looked up in the registry; :data:`kgpubench.tasks.as_task`)."""
    task = as_task(task)
    store = Store(data_dir or default_data_dir())
    table_given = table
    if table is None:
        table = config_table(store, task.config)
    selection = select(task, table)
    rows = with_scoring_columns(task, table, selection.rows)
    if rows.num_rows == 0:
        raise NoDataError(no_data_reason(task, store.path, table.num_rows, selection.report()))
    dataset = {"config": task.config, "version": store.version, "manifest_sha256": store.manifest_sha256(),
               "rows": rows.num_rows, "rows_sha256": rows_sha256(task, rows), "selection": selection.report(),
               "task_sha256": task_sha256(task)}
    if table_given is None:  # rows read from the store: what they were read from is known
        dataset["files_sha256"] = files_sha256(task, store)
        dataset["inputs_sha256"] = inputs_sha256(task, scheme, store)
    return TaskData(task, scheme, rows, feature_frame(task, rows),
                    rows[task.target].to_numpy(zero_copy_only=False).astype(np.float64),
                    fold_column(task, rows, scheme), dataset)


def no_data_reason(task: Task, store_path: Path, table_rows: int, report: dict) -> str:
    """Why a task has no usable rows, in one line."""
    if table_rows == 0:
        why = f"the {task.config!r} config of store {store_path} has no rows"
    elif report.get("incomplete_problems"):
        why = (f"every problem of the {task.config!r} config is incomplete ({len(report['incomplete_problems'])} "
               f"excluded, e.g. {report['incomplete_problems'][0]})")
    else:
        filt = "; ".join(f"{c} in {list(v)}" for c, v in task.filters)
        why = (f"none of the {table_rows} rows of the {task.config!r} config is usable (status ok, {task.target} "
               f"present{', ' + filt if filt else ''})")
    return f"task {task.name!r}: {why}; collect or merge data first (`kgpubench info`)."


def scheme_problem(data: TaskData) -> str | None:
    """Why a scheme cannot be evaluated on this data (no fold with training rows), else None."""
    names = data.fold_names
    if not names:
        return f"scheme {data.scheme!r} has no test fold"
    if all(np.all(data.folds == f) for f in names):
        sch = get_scheme(data.scheme)
        what = {"gpu_name": "GPU", "kernel": "kernel"}.get(sch.column or "", "problem" if data.task.group_columns
                                                           else "row group")
        if sch.kind == "column":
            return (f"every row has one {what} ({names[0]}), so leave-one-{what}-out has no training fold; it needs "
                    f"rows of at least two {what}s")
        if data.task.group_columns:
            n = len(set(problem_keys(data.task, data.rows)))
            cols = ", ".join(c for c in data.task.problem_columns)
            return (f"the {data.rows.num_rows} rows form {n} problem{'s' if n != 1 else ''} ({cols}), all in one "
                    "fold, so no fold has training rows; it needs problems in at least two folds")
        return f"all {data.rows.num_rows} rows fall in one fold, so no fold has training rows"
    return None


@dataclass(frozen=True)
class Unusable:
    """Why (task, scheme) cannot be evaluated on the data there is, in one line, and what the rows were read from
    (``dataset``, as in a :class:`TaskData`; the config, task and files hashes only when the task has no rows).
    The board writes it as its :class:`~kgpubench.results.result.Skipped` record
    (:meth:`~kgpubench.results.result.Skipped.of`)."""

    task: str
    scheme: str
    reason: str
    dataset: dict


_USABLE: dict[tuple, TaskData | Unusable] = {}


def usable_task_data(task: Task | str, scheme: str, data_dir: Path | str | None = None) -> TaskData | Unusable:
    """The task data of (task, scheme) (:func:`task_data`), or the :class:`Unusable` saying why it cannot be
    evaluated with what data there is (:func:`scheme_problem`, or the :class:`~kgpubench.errors.NoDataError`
    message).

    Cached per process, (task, scheme, data folder) and store manifest, the last few only: the leaderboard's
    jobs (``kgpubench.board.leaderboard.run_job``) and the Ray fold tasks (``kgpubench.ray.board``) of one
    (task, scheme) share it.
    """
    task = as_task(task)
    key = (task.name, scheme, str(data_dir), Store(data_dir or default_data_dir()).manifest_sha256())
    if key not in _USABLE:
        while len(_USABLE) >= 4:
            _USABLE.pop(next(iter(_USABLE)))
        try:
            data = task_data(task, scheme, data_dir)
            why = scheme_problem(data)
            _USABLE[key] = Unusable(task=task.name, scheme=scheme, reason=why, dataset=data.dataset) if why else data
        except NoDataError as exc:  # what the (missing) rows would be read from: reusable while nothing changes
            store = Store(data_dir or default_data_dir())
            dataset = {"config": task.config, "task_sha256": task_sha256(task),
                       "files_sha256": files_sha256(task, store)}
            _USABLE[key] = Unusable(task=task.name, scheme=scheme, reason=str(exc), dataset=dataset)
    return _USABLE[key]
