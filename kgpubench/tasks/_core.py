"""Task declarations: a config, a target, the allowed features, the split schemes and the metrics.

A :class:`Task` is frozen data. :func:`feature_frame` is the only place that turns rows into model inputs,
so a model can never see a column its task does not declare (the leakage guard test checks the lists).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import SchemaValidationError
from kgpubench.schema import canonical_value, get_table
from kgpubench.schema.common import provenance_columns
from kgpubench.sources import KNOWN_SOURCES, citation_line
from kgpubench.tasks.extras import Section, section_from_fields
from kgpubench.tasks.goals import Goal, goal_from_fields

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
        Metric names (see :data:`kgpubench.tasks.metrics.METRICS`); the first is the ranking metric.
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
        Deterministic hashed subsample of the training rows of each fold (recorded in every result as
        ``train_subsample``; test folds are never subsampled). operator-latency (60,000) and rodinia-time
        (10,000) set one, to keep their board runs within minutes on two cores; the other tasks train on every
        row (a cap changed their rankings). Which rows go together: :attr:`subsample_by`.
    subsample_by : tuple of str
        The unit of that subsample: empty, single rows; else the columns whose values name one unit, whose rows
        are kept or dropped together (a recommendation task whose problems must stay whole names its problem
        columns: conv-solver). :func:`kgpubench.tasks.data.train_subsample` is the rule.
    board_schemes : tuple of str
        Schemes ``kgpubench leaderboard run`` evaluates (default: all of ``schemes``).
    seed_metrics : tuple of str
        The seed study's headline metrics (a subset of ``metrics``), shown beside ours on the board.
    seed_reference : str
        The seed study's own figures for those metrics, quoted for comparison (SEEDS.md).
    completeness : str, optional
        Name of the rule (:mod:`kgpubench.tasks.selection`) that decides whether a problem has every
        configuration its sweep defines; incomplete problems are excluded and counted.
    scorer : str
        How a recommendation task scores the choice made per problem: a name in
        :data:`kgpubench.tasks.scoring.SCORERS` (``"choice"``: the generic chosen/best per problem; ``"tiles"``:
        regret against the best tile and improvement over the untiled baseline; ``"npb-app"``: the
        application time of one TPB per kernel). The scorer also names the derived columns it reads.
    record_problems : bool
        Whether every fold records each test problem's chosen/best/baseline time (the seed-protocol sections
        of the board).
    oracle : str, optional
        The measurement oracle (a name in :data:`kgpubench.tasks.scoring.ORACLES`) a measuring strategy may
        query on the test problems (seed 001's Profiling, Exhausting); None: models only learn.
    split_files : bool
        Whether ``kgpubench leaderboard run`` writes the task's split files to ``splits/``. The folds are a pure
        function of the rows (:func:`kgpubench.tasks.splits.assign_folds`) and every result records the sha256 of
        the split it used, so a task with many rows (the imported LLM-operator and convolution tasks) derives them
        when it loads and ships no file.
    measured_inputs : bool
        Whether the task may use its config's ``measured`` columns (profiler counters read on the target GPU during
        the very run whose time is the label) as features. Such a task says so in its name, which must end in
        ``-counters``; every other task is refused them (:func:`check_features`).
    sources : tuple of str
        The upstream sources (names in :data:`kgpubench.sources.KNOWN_SOURCES`) whose rows the task uses; the
        board cites each with its licence. Empty for tasks on kgpubench's own measurements.
    extras : tuple of str
        Tables the board shows beside the task's scores, computed by a script outside the board run (names in
        :data:`kgpubench.tasks.extras.EXTRAS`, e.g. NeuSight's paper metric).
    sections : tuple of Section
        Sections the board computes from the task's results beside its score tables (the seed study's own
        protocol, the goal on unseen GPUs): :class:`kgpubench.tasks.extras.Section` instances whose kind names
        the renderer, with the models, schemes and paper figures they show as data.
    goals : tuple of Goal
        The targets the board reports against (:class:`kgpubench.tasks.goals.Goal`: a per-GPU figure on one of the
        task's schemes, read from the board's results or computed from predictions), in the order the ``goals``
        extra shows them; ``scripts/fewshot_curves.py --goals-out`` judges them. A task with goals names the
        ``goals`` extra.
    gpu_baseline : str, optional
        The model that carries another GPU's measurements over to an unseen GPU (``transfer``): the per-GPU
        views show it beside the best models. None: the task has none.
    relative_cost : float
        Rough cost of one fold of this task against the others (rows times search-space work); a scheduling
        hint only: ``leaderboard run`` starts the costliest jobs first so that its workers finish together.
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
    subsample_by: tuple[str, ...] = ()
    board_schemes: tuple[str, ...] | None = None
    seed_metrics: tuple[str, ...] = ()
    seed_reference: str = ""
    completeness: str | None = None
    scorer: str = "choice"
    record_problems: bool = False
    oracle: str | None = None
    relative_cost: float = 1.0
    sources: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    goals: tuple[Goal, ...] = ()
    gpu_baseline: str | None = None
    split_files: bool = True
    measured_inputs: bool = False

    def __post_init__(self) -> None:
        if self.measured_inputs and not self.name.endswith("-counters"):
            raise ValueError(f"task {self.name!r}: a task that uses measured counters as inputs must say so in its "
                             "name (end it in '-counters')")
        if self.kind not in ("regression", "recommendation"):
            raise ValueError(f"task {self.name!r}: kind {self.kind!r}; expected 'regression' or 'recommendation'")
        if self.kind == "recommendation" and not self.problem_columns:
            raise ValueError(f"task {self.name!r}: a recommendation task needs problem_columns")
        if not self.metrics or not self.schemes or not self.features:
            raise ValueError(f"task {self.name!r}: features, metrics and schemes must be non-empty")
        if not self.relative_cost > 0:
            raise ValueError(f"task {self.name!r}: relative_cost {self.relative_cost!r} must be positive")
        unknown = [s for s in self.sources if s not in KNOWN_SOURCES]
        if unknown:
            raise ValueError(f"task {self.name!r}: sources {unknown} are not in kgpubench.sources.KNOWN_SOURCES")
        if any(isinstance(s, dict) for s in self.sections):  # the JSON form (the sandbox sends a task so)
            object.__setattr__(self, "sections", tuple(section_from_fields(s) if isinstance(s, dict) else s
                                                       for s in self.sections))
        if not all(isinstance(s, Section) and s.kind for s in self.sections):
            raise ValueError(f"task {self.name!r}: sections must be kgpubench.tasks.extras.Section subclasses "
                             "with a kind")
        if any(isinstance(g, dict) for g in self.goals):  # the JSON form, as for sections
            object.__setattr__(self, "goals", tuple(goal_from_fields(g) if isinstance(g, dict) else g
                                                    for g in self.goals))
        if not all(isinstance(g, Goal) for g in self.goals):
            raise ValueError(f"task {self.name!r}: goals must be kgpubench.tasks.goals.Goal instances")
        if self.subsample_by and not self.max_train_rows:
            raise ValueError(f"task {self.name!r}: subsample_by {self.subsample_by} names the unit of a training "
                             "subsample, but max_train_rows is not set; set both or neither")
        if not set(self.seed_metrics) <= set(self.metrics):
            raise ValueError(f"task {self.name!r}: seed_metrics {self.seed_metrics} must be among its metrics")

    @property
    def measures(self) -> bool:
        """Whether a model may measure the test problems through the task's :attr:`oracle`."""
        return self.oracle is not None

    def source_citations(self) -> list[str]:
        """One line per source of the task's rows: its citation and licence (for the board)."""
        return [f"{citation_line(KNOWN_SOURCES[s])} ({KNOWN_SOURCES[s].license})" for s in self.sources]

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

    @property
    def ours_metrics(self) -> tuple[str, ...]:
        """The metrics that are not the seed study's, in declaration order."""
        return tuple(m for m in self.metrics if m not in self.seed_metrics)

    def used_columns(self) -> list[str]:
        """Every column the task reads: features, target, problem/choice columns, filters, row_id."""
        cols = ["row_id", self.target, "status", *self.features, *self.problem_columns, *self.choice_columns,
                *self.subsample_by]
        cols += [c for c, _ in self.filters]
        return list(dict.fromkeys(cols))


def feature_frame(task: Task, table: pa.Table) -> pd.DataFrame:
    """Model inputs: the declared feature columns only (``params`` expanded to ``param.<name>`` floats).

    String features stay strings (object dtype); numeric ones become float64 (NaN for null).
    """
    decl = get_table(task.config)
    out: dict[str, object] = {}
    for name in task.features:
        col = decl.column(name)
        if col.type in ("params", "params_text"):
            out.update(_expand_params(table[name], numeric=col.type == "params"))
        elif col.is_numeric or col.type == "bool":
            out[name] = table[name].to_numpy(zero_copy_only=False).astype(np.float64)
        else:
            out[name] = np.asarray(table[name].to_pylist(), dtype=object)
    frame = pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))
    strings = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    return frame.astype(dict.fromkeys(strings, object))  # object, not pandas' string dtype, for every version


def _expand_params(column: pa.ChunkedArray, *, numeric: bool) -> dict[str, np.ndarray]:
    """(name, value) lists -> one column per name, sorted by name: floats (NaN when absent) or strings (None).

    Vectorised: the lists are flattened once and scattered by their parent row (no per-row Python).
    """
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(arr)
    flat = pc.list_flatten(arr)
    if len(flat) == 0:
        return {}
    parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
    enc = pc.dictionary_encode(flat.field("name"))
    codes = enc.indices.to_numpy(zero_copy_only=False)
    dictionary = enc.dictionary.to_pylist()
    values = flat.field("value")
    values = (values.to_numpy(zero_copy_only=False).astype(np.float64) if numeric
              else np.asarray(values.to_pylist(), dtype=object))
    out = {}
    for code in sorted(range(len(dictionary)), key=lambda i: str(dictionary[i])):
        sel = codes == code
        col = np.full(n, np.nan) if numeric else np.full(n, None, dtype=object)
        col[parents[sel]] = values[sel]  # a repeated name in one row: the last one wins, as before
        out[PARAMS_PREFIX + str(dictionary[code])] = col
    return out


# Units of measured outcomes: a column in one of them is a label, never an input (hardware specs excepted).
OUTCOME_UNITS = ("ms", "s", "W", "J", "GFLOP/s", "GB/s")
# Columns that describe how a row was produced rather than what was run.
NON_FEATURES = ("row_id", "run_id", "status", "status_detail", "failure", "time_cv", "time_cv_high", "repeats",
                "power_samples", "power_method", "power_launches", "verified", "objective", "source_format",
                # operators: how a call was timed, and what the library launched at run time (profiler records)
                "calls_timed", "calls_kept", "timed_unit", "kernel_name", "kernels", "warps_per_sm")


def forbidden_features(config: str) -> set[str]:
    """Columns of ``config`` no task may use as input: outcomes (times, power, energy, throughput the run
    reported), run bookkeeping, provenance, anything read around the measurement (clocks, temperatures) and
    every column its schema declares ``measured`` (profiler counters of the run, whatever their unit)."""
    decl = get_table(config)
    prov = {c.name for c in provenance_columns()}
    out = set()
    for col in decl.columns:
        outcome = col.unit in OUTCOME_UNITS and not col.name.startswith("gpu_")
        around = col.name.endswith(("_before", "_after"))
        if outcome or around or col.measured or col.name in prov or col.name in NON_FEATURES or col.name.startswith(
                ("time_", "power_", "energy")):
            out.add(col.name)
    return out


def task_forbidden_features(task: Task) -> set[str]:
    """The columns ``task`` may not use: :func:`forbidden_features`, less the ``measured`` ones when the task
    declares ``measured_inputs``."""
    forbidden = forbidden_features(task.config)
    if task.measured_inputs:
        measured = {c.name for c in get_table(task.config).columns if c.measured}
        forbidden -= measured
    return forbidden


def check_features(task: Task) -> None:
    """Raise when a task's features are not real columns of its config or include forbidden ones."""
    decl = get_table(task.config)
    unknown = [f for f in task.features if f not in decl.column_names]
    bad = sorted(set(task.features) & task_forbidden_features(task))
    if unknown or bad or task.target in task.features:
        raise SchemaValidationError(
            f"task {task.name!r}: features {unknown} are not columns of {task.config!r}; {bad} are outcomes or "
            f"bookkeeping (label leakage); target in features: {task.target in task.features}. Declare only "
            "static, pre-run columns.")


def group_codes(table: pa.Table, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Integer group of every row by the values of ``columns`` (nulls are a value), and the first row of each
    group. Codes are dense, 0..k-1, in order of first appearance. Vectorised through arrow's dictionary
    encoding; list-typed columns fall back to their canonical JSON."""
    n = table.num_rows
    combined = np.zeros(n, dtype=np.int64)
    for name in columns:
        arr = table[name].combine_chunks()
        try:
            enc = pc.dictionary_encode(arr, null_encoding="encode")
            codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
            text = [json.dumps(canonical_value(v), separators=(",", ":")) for v in arr.to_pylist()]
            _, codes = np.unique(np.asarray(text, dtype=object), return_inverse=True)
        _, combined = np.unique(combined * (int(codes.max(initial=0)) + 1) + codes, return_inverse=True)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="mergesort")  # renumber by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.ravel()], first[order]


def problem_keys(task: Task, table: pa.Table, columns: tuple[str, ...] | None = None) -> np.ndarray:
    """One string per row naming its problem (or its (problem, choice) group with ``columns``): the canonical
    JSON list of the columns' values. Computed once per distinct problem, not per row."""
    cols = task.problem_columns if columns is None else columns
    if not cols:
        return np.asarray(table["row_id"].to_pylist(), dtype=object)
    if table.num_rows == 0:
        return np.array([], dtype=object)
    codes, first = group_codes(table, tuple(cols))
    heads = table.select(list(cols)).take(pa.array(first))
    lists = [heads[c].to_pylist() for c in cols]
    keys = np.asarray([json.dumps([canonical_value(v) for v in vals], separators=(",", ":"))
                       for vals in zip(*lists)], dtype=object)
    return keys[codes]
