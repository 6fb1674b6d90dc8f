"""Which rows a task uses: status, target, filters, the measurement-protocol rule and complete problems.

Rules, applied in this order to one config's table:

1. **Protocol.** For a GPU (``gpu_name``) with any row of ``measurement_protocol >= 2``, only those rows are
   used; its protocol-1 rows (``measurement_protocol`` null) stay loadable through ``load_dataset`` but no
   task uses them. A GPU measured only under protocol 1 keeps its rows (counted on the board). Tables
   without the column (imported data) are unaffected.
2. **Usable rows.** ``status == "ok"``, a non-null target, and every filter of the task.
   **One row per configuration:** a configuration measured again in another run (the same ``row_id``; the
   store keeps each run's row) is used once, with its first run's row (the earliest ``collected_at``, then
   ``run_id``), so a task has one label per configuration, a prediction file one line per test row, and a
   later repeat changes no task's rows. The rows left out are counted (``repeated_rows``).
3. **Complete problems** (recommendation tasks with a ``completeness`` rule). A problem missing
   configurations would be scored against the wrong best, so it is excluded and counted:

   - ``npb``: every kernel of the problem (those its default run names; without a default run row, those
     measured) has a kernel row, of any status, at every threads-per-block value measured for any kernel of
     the problem (a failed configuration is measured; a missing one is not).
   - ``stencil``: per variant, every tile of the sweep (``collectors/stencil/spec.py``: the training grids
     256/512/1024 use the 190 tiles up to 512 points, shared-tile those with at least 128 points whose padded
     box fits 96 KiB; the evaluation grids 200..1100 the small tile set) has a row of any status. An
     incomplete variant's rows are dropped; a problem whose thread-tile sweep is incomplete is dropped.
     Grids outside the sweep have no declared configuration set and are kept as measured.
   - ``search-space``: the problem has as many rows (any status) as its ``search_space_size``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import SchemaValidationError
from kgpubench.tasks._core import Task, group_codes, problem_keys
from kgpubench.tasks.npb import default_run_kernels
from kgpubench.tasks.stencil import expected_tiles

PROTOCOL = "measurement_protocol"


@dataclass(frozen=True)
class Selection:
    """The rows a task uses and what was left out on the way (shown on the board).

    Attributes
    ----------
    rows : pyarrow.Table
        The usable rows.
    protocol_1_rows : int or None
        Used rows measured under protocol 1 (``measurement_protocol`` null); None for tables without the column.
    superseded_rows : int
        Usable protocol-1 rows left out because their GPU has protocol-2 rows.
    repeated_rows : int
        Usable rows left out as later runs of a configuration already used (rule 2).
    incomplete_problems : list of str
        Problems excluded as incomplete, each with the reason.
    incomplete_rows : int
        Usable rows left out by the completeness rule.
    """

    rows: pa.Table
    protocol_1_rows: int | None = None
    superseded_rows: int = 0
    incomplete_problems: list[str] = field(default_factory=list)
    incomplete_rows: int = 0
    repeated_rows: int = 0

    def report(self) -> dict:
        """Counts for the result file and the board (JSON-ready); ``repeated_rows`` only where there are some."""
        gpus = sorted(set(self.rows["gpu_name"].to_pylist())) if "gpu_name" in self.rows.column_names else []
        out = {"rows": self.rows.num_rows, "gpus": gpus, "protocol_1_rows": self.protocol_1_rows,
               "superseded_rows": self.superseded_rows, "incomplete_rows": self.incomplete_rows,
               "incomplete_problems": list(self.incomplete_problems)}
        if self.repeated_rows:
            out["repeated_rows"] = self.repeated_rows
        return out


def protocol_mask(table: pa.Table) -> np.ndarray:
    """Rows kept by the protocol rule (rule 1 of the module doc)."""
    n = table.num_rows
    if PROTOCOL not in table.column_names or n == 0:
        return np.ones(n, dtype=bool)
    proto = table[PROTOCOL].to_numpy(zero_copy_only=False).astype(np.float64)
    new = np.nan_to_num(proto, nan=0.0) >= 2
    if not new.any():
        return np.ones(n, dtype=bool)
    gpu = np.asarray(table["gpu_name"].to_pylist(), dtype=object)
    upgraded = np.isin(gpu, np.unique(gpu[new]))
    return ~upgraded | new


def _usable_mask(task: Task, table: pa.Table, *, status: bool) -> np.ndarray:
    mask = pc.is_valid(table[task.target]) if status else pa.array(np.ones(table.num_rows, dtype=bool))
    if status:
        mask = pc.and_(mask, pc.equal(table["status"], "ok"))
    for column, values in task.filters:
        mask = pc.and_(mask, pc.is_in(table[column], value_set=pa.array(list(values), table[column].type)))
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def first_runs(table: pa.Table) -> np.ndarray:
    """Rows kept by the one-row-per-configuration rule (rule 2): of the rows sharing a ``row_id``, the first run's
    (earliest ``collected_at``, then ``run_id``; nulls last). Every row when the ids are distinct."""
    n = table.num_rows
    if "row_id" not in table.column_names or n < 2 or pc.count_distinct(table["row_id"]).as_py() == n:
        return np.ones(n, dtype=bool)
    def codes(column: str) -> np.ndarray:  # ascending codes of a column's values, nulls after every value
        if column not in table.column_names:
            return np.zeros(n, dtype=np.int64)
        values = table[column]
        if pa.types.is_timestamp(values.type):
            values = values.cast(pa.int64())
        rank = pc.rank(values, sort_keys="ascending", tiebreaker="dense")  # nulls rank last by default
        return rank.to_numpy(zero_copy_only=False).astype(np.int64)

    ids = codes("row_id")
    order = np.lexsort((codes("run_id"), codes("collected_at"), ids))  # the last key sorts first
    first = np.ones(n, dtype=bool)
    first[1:] = ids[order][1:] != ids[order][:-1]
    keep = np.zeros(n, dtype=bool)
    keep[order[first]] = True
    return keep


def _filter(table: pa.Table, mask: np.ndarray) -> pa.Table:
    """``table`` filtered by a boolean mask, taking only the kept rows (faster than filter on wide tables)."""
    if mask.all():
        return table
    return table.take(pa.array(np.flatnonzero(mask), pa.int64()))


def select(task: Task, table: pa.Table) -> Selection:
    """The task's rows of ``table`` under the rules of the module doc, with the counts of what was left out."""
    missing = [c for c in task.used_columns() if c not in table.column_names]
    if missing:
        raise SchemaValidationError(
            f"task {task.name!r} needs columns {missing} that the {task.config!r} table lacks; "
            "load the task's config (kgpubench.load_dataset(task.config, format='arrow')).")
    keep = protocol_mask(table)
    usable = _usable_mask(task, table, status=True)
    superseded = int(np.sum(usable & ~keep))
    kept = table if keep.all() else table.filter(pa.array(keep))
    rows = _filter(kept, usable[keep])
    first = first_runs(rows)
    repeated = int(np.sum(~first))
    rows = _filter(rows, first)
    dropped: list[str] = []
    incomplete_rows = 0
    rule = COMPLETENESS.get(task.completeness) if task.completeness else None
    if rule is not None and rows.num_rows:
        measured = _filter(kept, _usable_mask(task, kept, status=False))
        complete, dropped = rule(task, kept, measured, rows)
        incomplete_rows = int(np.sum(~complete))
        rows = _filter(rows, complete)
    p1 = None
    if PROTOCOL in rows.column_names:
        p1 = int(rows.num_rows - pc.sum(pc.is_valid(rows[PROTOCOL])).as_py() or 0) if rows.num_rows else 0
    return Selection(rows, p1, superseded, dropped, incomplete_rows, repeated)


def task_rows(task: Task, table: pa.Table) -> pa.Table:
    """The rows of ``table`` the task uses (see the module doc); :func:`select` also says what was left out."""
    return select(task, table).rows


# ----- completeness rules -----------------------------------------------------------------------------------
Rule = Callable[[Task, pa.Table, pa.Table, pa.Table], tuple[np.ndarray, list[str]]]


def _npb_complete(task: Task, table: pa.Table, measured: pa.Table, rows: pa.Table) -> tuple[np.ndarray, list[str]]:
    declared = default_run_kernels(task, table)
    m_keys = problem_keys(task, measured)
    m_kern = measured["kernel"].to_pylist()
    m_tpb = measured["tpb"].to_pylist()
    present: dict[str, set] = {}
    for k, kern, tpb in zip(m_keys, m_kern, m_tpb):
        present.setdefault(k, set()).add((kern, tpb))
    keys = problem_keys(task, rows)
    bad: dict[str, str] = {}
    for key in sorted(set(keys)):
        have = present.get(key, set())
        kernels = declared.get(key) or {k for k, _ in have}
        tpbs = sorted({t for _, t in have if t is not None})
        want = set(itertools.product(sorted(kernels), tpbs))
        if not want <= have:
            bad[key] = (f"{len(want & have)} of {len(want)} kernel x TPB configurations measured "
                        f"({len(kernels)} kernels x {len(tpbs)} TPBs)")
    return np.asarray([k not in bad for k in keys], dtype=bool), [f"{k}: {r}" for k, r in bad.items()]


def _stencil_complete(task: Task, table: pa.Table, measured: pa.Table, rows: pa.Table
                      ) -> tuple[np.ndarray, list[str]]:
    def tiles_by(t: pa.Table):
        keys = problem_keys(task, t)
        out: dict[tuple[str, str], set] = {}
        for k, v, a, b, c in zip(keys, t["variant"].to_pylist(), t["tile_b1"].to_pylist(),
                                 t["tile_b2"].to_pylist(), t["tile_b3"].to_pylist()):
            out.setdefault((k, v), set()).add((a, b, c))
        return keys, out

    _, have = tiles_by(measured)
    keys, _ = tiles_by(rows)
    variants = rows["variant"].to_pylist()
    first = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    heads = {k: {c: rows[c][i].as_py() for c in ("grid_nx", "grid_ny", "grid_nz", "space_order", "dtype")}
             for k, i in first.items()}
    ok_variant: dict[tuple[str, str], bool] = {}
    notes = []
    for (key, variant) in sorted({(k, v) for k, v in zip(keys, variants)}):
        want = expected_tiles(variant=variant, **heads[key])
        got = have.get((key, variant), set())
        ok_variant[(key, variant)] = want is None or set(want) <= got
        if not ok_variant[(key, variant)]:
            notes.append(f"{key} {variant}: {len(set(want) & got)} of {len(want)} tiles measured")
    keep = np.asarray([ok_variant[(k, v)] and ok_variant.get((k, "thread-tile"), True)
                       for k, v in zip(keys, variants)], dtype=bool)
    return keep, notes


def _search_space_complete(task: Task, table: pa.Table, measured: pa.Table, rows: pa.Table
                           ) -> tuple[np.ndarray, list[str]]:
    if "search_space_size" not in measured.column_names:
        return np.ones(rows.num_rows, dtype=bool), []
    codes, first = group_codes(measured, task.problem_columns)
    size = measured["search_space_size"].to_numpy(zero_copy_only=False).astype(np.float64)
    counts = np.bincount(codes, minlength=first.size)
    want = np.full(first.size, np.nan)
    np.fmax.at(want, codes, size)
    m_keys = problem_keys(task, measured)
    short = {m_keys[first[g]]: (int(counts[g]), int(want[g])) for g in range(first.size)
             if np.isfinite(want[g]) and counts[g] < want[g]}
    keys = problem_keys(task, rows)
    notes = [f"{k}: {have} of {w} configurations of the search space" for k, (have, w) in sorted(short.items())]
    return np.asarray([k not in short for k in keys], dtype=bool), notes


def _choice_complete(task: Task, table: pa.Table, measured: pa.Table, rows: pa.Table
                     ) -> tuple[np.ndarray, list[str]]:
    """A problem is a choice when it has at least two usable rows (two solvers timed): a problem of one row has
    nothing to choose, and every model would score it perfectly."""
    if rows.num_rows == 0:
        return np.ones(0, dtype=bool), []
    codes, first = group_codes(rows, task.problem_columns)
    counts = np.bincount(codes, minlength=first.size)
    single = int(np.sum(counts < 2))
    notes = [f"{single} problem(s) with one usable row: nothing to choose"] if single else []
    return counts[codes] >= 2, notes


COMPLETENESS: dict[str, Rule] = {"npb": _npb_complete, "stencil": _stencil_complete,
                                 "search-space": _search_space_complete, "choice": _choice_complete}
