"""Task declarations: a config, a target, the allowed features, the split schemes and the metrics.

A :class:`Task` is frozen data. :func:`feature_frame` is the only place that turns rows into model inputs,
so a model can never see a column its task does not declare (the leakage guard test checks the lists).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from kgpubench.errors import SchemaValidationError

Kind = Literal["regression", "recommendation"]
PARAMS_PREFIX = "param."


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One benchmark task.

    Parameters
    ----------
    name : str
        Registry name (``kernel-time``).
    config : str
        Dataset config the rows come from.
    target : str
        Column the model predicts (a time or a power).
    features : tuple of str
        Columns a model may see. A ``params``-typed column is expanded into ``param.<name>`` columns.
    kind : {"regression", "recommendation"}
        A recommendation task picks, per problem, the row with the smallest predicted target.
    metrics : tuple of str
        Metric names (see :data:`kgpubench.metrics.METRICS`); the first is the ranking metric.
    schemes : tuple of str
        Split schemes the task is evaluated under.
    description : str
        One paragraph for the board.
    seed : str
        Which seed study the task comes from.
    problem_columns : tuple of str
        Recommendation tasks: the columns naming one problem; all its rows stay in one fold.
    choice_columns : tuple of str
        Within a problem, the choice is made separately for each value of these columns (NPB: per kernel).
    filters : tuple of (column, values)
        Rows kept: ``status == "ok"``, a non-null target, and every ``column`` in ``values``.
    max_train_rows : int, optional
        Deterministic hashed subsample of the training rows of each fold (keeps the board fast).
    board_schemes : tuple of str
        Schemes ``kgpubench leaderboard run`` evaluates (default: all of ``schemes``).
    """

    name: str
    config: str
    target: str
    features: tuple[str, ...]
    kind: Kind
    metrics: tuple[str, ...]
    schemes: tuple[str, ...]
    description: str
    seed: str
    problem_columns: tuple[str, ...] = ()
    choice_columns: tuple[str, ...] = ()
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()
    max_train_rows: int | None = None
    board_schemes: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("regression", "recommendation"):
            raise ValueError(f"task {self.name!r}: kind {self.kind!r}; expected 'regression' or 'recommendation'")
        if self.kind == "recommendation" and not self.problem_columns:
            raise ValueError(f"task {self.name!r}: a recommendation task needs problem_columns")
        if not self.metrics or not self.schemes or not self.features:
            raise ValueError(f"task {self.name!r}: features, metrics and schemes must be non-empty")

    @property
    def primary_metric(self) -> str:
        """The metric the board ranks by."""
        return self.metrics[0]

    @property
    def group_columns(self) -> tuple[str, ...]:
        """Columns whose values must never be split across folds (the problem, for recommendation)."""
        return self.problem_columns

    @property
    def evaluated_schemes(self) -> tuple[str, ...]:
        return self.board_schemes if self.board_schemes is not None else self.schemes

    def used_columns(self) -> list[str]:
        """Every column the task reads: features, target, problem/choice columns, filters, row_id."""
        cols = ["row_id", self.target, "status", *self.features, *self.problem_columns, *self.choice_columns]
        cols += [c for c, _ in self.filters]
        return list(dict.fromkeys(cols))


def task_rows(task: Task, table: pa.Table) -> pa.Table:
    """The rows of ``table`` the task uses: status ok, target present, filters met."""
    import pyarrow.compute as pc

    missing = [c for c in task.used_columns() if c not in table.column_names]
    if missing:
        raise SchemaValidationError(
            f"task {task.name!r} needs columns {missing} that the {task.config!r} table lacks; "
            "load the task's config (kgpubench.load_dataset(task.config, format='arrow')).")
    mask = pc.and_(pc.equal(table["status"], "ok"), pc.is_valid(table[task.target]))
    for column, values in task.filters:
        mask = pc.and_(mask, pc.is_in(table[column], value_set=pa.array(list(values), table[column].type)))
    return table.filter(pc.fill_null(mask, False))


def feature_frame(task: Task, table: pa.Table) -> pd.DataFrame:
    """Model inputs: the declared feature columns only (``params`` expanded to ``param.<name>`` floats).

    String features stay strings (object dtype); numeric ones become float64 (NaN for null).
    """
    from kgpubench.schema import get_table

    decl = get_table(task.config)
    out: dict[str, object] = {}
    for name in task.features:
        col = decl.column(name)
        if col.type == "params":
            out.update(_expand_params(table[name].to_pylist(), float))
        elif col.type == "params_text":
            out.update(_expand_params(table[name].to_pylist(), str))
        elif col.is_numeric or col.type == "bool":
            out[name] = table[name].to_numpy(zero_copy_only=False).astype(np.float64)
        else:
            out[name] = np.asarray(table[name].to_pylist(), dtype=object)
    frame = pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))
    strings = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    return frame.astype(dict.fromkeys(strings, object))  # object, not pandas' string dtype, for every version


def _expand_params(values: list, kind: type) -> dict[str, np.ndarray]:
    """(name, value) lists -> one column per name: floats (NaN when absent) or strings (None when absent)."""
    names = sorted({p["name"] for row in values if row for p in row})
    if kind is float:
        cols = {n: np.full(len(values), np.nan) for n in names}
    else:
        cols = {n: np.full(len(values), None, dtype=object) for n in names}
    for i, row in enumerate(values):
        for p in row or ():
            v = p["value"]
            cols[p["name"]][i] = (np.nan if v is None else float(v)) if kind is float else v
    return {PARAMS_PREFIX + n: cols[n] for n in names}


# Units of measured outcomes: a column in one of them is a label, never an input (hardware specs excepted).
OUTCOME_UNITS = ("ms", "s", "W", "J", "GFLOP/s", "GB/s")
# Columns that describe how a row was produced rather than what was run.
NON_FEATURES = ("row_id", "run_id", "status", "status_detail", "failure", "time_cv", "time_cv_high", "repeats",
                "power_samples", "power_method", "power_launches", "verified", "objective", "source_format")


def forbidden_features(config: str) -> set[str]:
    """Columns of ``config`` no task may use as input: outcomes (times, power, energy, throughput the run
    reported), run bookkeeping, provenance and anything read around the measurement (clocks, temperatures)."""
    from kgpubench.schema import get_table
    from kgpubench.schema.common import provenance_columns

    decl = get_table(config)
    prov = {c.name for c in provenance_columns()}
    out = set()
    for col in decl.columns:
        outcome = col.unit in OUTCOME_UNITS and not col.name.startswith("gpu_")
        around = col.name.endswith(("_before", "_after"))
        if outcome or around or col.name in prov or col.name in NON_FEATURES or col.name.startswith(
                ("time_", "power_", "energy")):
            out.add(col.name)
    return out


def check_features(task: Task) -> None:
    """Raise when a task's features are not real columns of its config or include forbidden ones."""
    from kgpubench.errors import SchemaValidationError
    from kgpubench.schema import get_table

    decl = get_table(task.config)
    unknown = [f for f in task.features if f not in decl.column_names]
    bad = sorted(set(task.features) & forbidden_features(task.config))
    if unknown or bad or task.target in task.features:
        raise SchemaValidationError(
            f"task {task.name!r}: features {unknown} are not columns of {task.config!r}; {bad} are outcomes or "
            f"bookkeeping (label leakage); target in features: {task.target in task.features}. Declare only "
            "static, pre-run columns.")


def problem_keys(task: Task, table: pa.Table, columns: tuple[str, ...] | None = None) -> np.ndarray:
    """One string per row naming its problem (or its (problem, choice) group with ``columns``)."""
    import json

    from kgpubench.schema import canonical_value

    cols = task.problem_columns if columns is None else columns
    if not cols:
        return np.asarray(table["row_id"].to_pylist(), dtype=object)
    lists = [table[c].to_pylist() for c in cols]
    return np.asarray([json.dumps([canonical_value(v) for v in vals], separators=(",", ":"))
                       for vals in zip(*lists)], dtype=object)
