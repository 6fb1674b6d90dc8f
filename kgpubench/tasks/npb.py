"""What the ``npb-tpb`` task needs beyond its rows: NPB-GPU's default TPB per kernel, the default run's
non-kernel remainder, and the measurement oracle of the strategies that profile the test problem.

Application time of a threads-per-block assignment ``a`` of one problem (GPU, benchmark, class, variant)::

    T(a) = remainder_s(default run) + sum_k calls_per_run(k) * time_ms_mean(k, a_k) / 1000

with ``time_ms_mean(k, t)`` the kernel row of ``k`` at ``t`` (measured with every other kernel at the
NPB-GPU default) and the remainder the ``remainder_s`` of the problem's ``run`` row with assignment
``default`` (``kgpubench/schema/npb.py``). Only when the data holds no such row does the remainder fall back
to the median ``remainder_s`` of the problem's kernel rows (each a whole run with one kernel off default).

**Oracle-with-budget strategies.** Seed 001's Profiling and Exhausting do not learn: they measure the test
problem, and their cost is the number of profiling runs. A model whose class sets ``uses_measurements =
True`` is evaluated with ``predict(X, problems=...)``: one :class:`NpbProblem` per test problem, whose
:meth:`NpbProblem.measure` returns the application time (and per-kernel times) of any assignment of the
kernels' measured TPBs, from the test rows, as above. A problem counts the *distinct* full assignments
measured (a repeated measurement returns the first result at no extra cost); the evaluation records the
mean per problem as the score ``measurements``. Every other model of the task is recorded with 0.
Because ``measure`` and the score use the same additive formula, an assignment measured by the oracle
scores exactly its measured time.

Nothing here imports the collector; :data:`NPB_GPU_DEFAULT_TPB` mirrors ``collectors/npb/spec.py``
(a test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import MeasurementError
from kgpubench.tasks._core import Task, problem_keys

# GMAP NPB-GPU's shipped threads per block, per benchmark and kernel (our kernel names).
_CG = dict(zip([f"kernel_{w}" for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                        "ten", "eleven")],
               (1024, 256, 64, 256, 64, 256, 512, 64, 512, 256, 512)))
NPB_GPU_DEFAULT_TPB: dict[str, dict[str, int]] = {
    "EP": {"ep": 32},
    "CG": _CG,
    "MG": {"comm3": 1024, "interp": 32, "norm2u3": 32, "psinv": 1024, "resid": 512, "rprj3": 512, "zero3": 128},
    "FT": {"fftx_1": 1024, "fftx_2": 32, "fftx_3": 256, "ffty_1": 32, "ffty_2": 32, "ffty_3": 32, "fftz_1": 32,
           "fftz_2": 32, "fftz_3": 32, "checksum": 32, "compute_indexmap": 32, "compute_initial_conditions": 32,
           "evolve": 32, "init_ui": 32},
}
# Columns the evaluation adds to the task rows (derived, not in the npb table).
DEFAULT_REMAINDER = "default_remainder_s"
DEFAULT_TPB = "default_tpb"
KERNEL_REMAINDER = "remainder_s"


def npb_app_time_s(calls: np.ndarray, time_ms: np.ndarray, remainder_s: float) -> float:
    """Application time of one assignment: ``remainder + sum_k calls_k * time_k / 1000`` (seconds)."""
    return float(remainder_s + np.sum(np.asarray(calls, float) * np.asarray(time_ms, float)) / 1000.0)


def npb_gpu_default_tpb(benchmark: str, kernel: str) -> int | None:
    """NPB-GPU's shipped threads per block of ``kernel`` of ``benchmark`` (None when it is not an NPB-GPU kernel)."""
    return NPB_GPU_DEFAULT_TPB.get(str(benchmark).upper(), {}).get(kernel)


def default_run_kernels(task: Task, table: pa.Table) -> dict[str, set[str]]:
    """Problem key -> the kernels its ``ok`` default run rows name in ``tpb_assignment``."""
    runs = _default_runs(table)
    out: dict[str, set[str]] = {}
    if not runs.num_rows:
        return out
    for key, assignment in zip(problem_keys(task, runs), runs["tpb_assignment"].to_pylist()):
        out.setdefault(key, set()).update(p["name"] for p in assignment or ())
    return out


def _floats(table: pa.Table, column: str) -> np.ndarray:
    if column not in table.column_names:
        return np.full(table.num_rows, np.nan)
    return np.asarray([np.nan if v is None else v for v in table[column].to_pylist()], dtype=float)


def attach_npb_columns(task: Task, table: pa.Table, rows: pa.Table) -> pa.Table:
    """``rows`` (the task's kernel rows of ``table``) plus :data:`DEFAULT_REMAINDER` and :data:`DEFAULT_TPB`.

    Per problem, from the ``ok`` run rows of ``table`` with assignment ``default``: the median of their
    ``remainder_s``, and each kernel's TPB in their ``tpb_assignment``. A kernel the default run does not name
    gets :func:`npb_gpu_default_tpb`; a problem without a default run row gets a null remainder (the
    scorer then uses its kernel rows' median, see the module docstring).
    """
    runs = _default_runs(table)
    keys = problem_keys(task, runs) if runs.num_rows else np.array([], dtype=object)
    run_rem = _floats(runs, "remainder_s")
    remainder: dict[str, float] = {}
    assigned: dict[str, dict[str, int]] = {}
    for key in sorted(set(keys)):
        idx = np.flatnonzero(keys == key)
        finite = run_rem[idx][np.isfinite(run_rem[idx])]
        if finite.size:
            remainder[key] = float(np.median(finite))
        for i in idx:
            for p in runs["tpb_assignment"][int(i)].as_py() or ():
                assigned.setdefault(key, {}).setdefault(p["name"], int(p["value"]))
    row_keys = problem_keys(task, rows)
    bench, kern = rows["benchmark"].to_pylist(), rows["kernel"].to_pylist()
    rem_col = [remainder.get(k) for k in row_keys]
    tpb_col = [assigned.get(k, {}).get(n, npb_gpu_default_tpb(b, n)) for k, b, n in zip(row_keys, bench, kern)]
    for name, values, typ in ((DEFAULT_REMAINDER, rem_col, pa.float64()), (DEFAULT_TPB, tpb_col, pa.int32())):
        if name in rows.column_names:
            rows = rows.drop_columns([name])
        rows = rows.append_column(name, pa.array(values, typ))
    return rows


def _default_runs(table: pa.Table) -> pa.Table:
    need = ("row_kind", "assignment", "status", "tpb_assignment")
    if any(c not in table.column_names for c in need):
        return table.slice(0, 0)
    mask = pc.and_(pc.and_(pc.equal(table["row_kind"], "run"), pc.equal(table["assignment"], "default")),
                   pc.equal(table["status"], "ok"))
    return table.filter(pc.fill_null(mask, False))


def problem_remainder_s(rows: pa.Table, idx: np.ndarray) -> float:
    """The non-kernel remainder (s) of the problem whose rows are ``idx``: the default run's when the rows
    carry it (:data:`DEFAULT_REMAINDER`), else the median ``remainder_s`` of its kernel rows, else 0."""
    for column in (DEFAULT_REMAINDER, KERNEL_REMAINDER):
        vals = _floats(rows, column)[idx]
        vals = vals[np.isfinite(vals)]
        if vals.size:
            return float(np.median(vals))
    return 0.0


@dataclass(frozen=True)
class Measurement:
    """What one profiled run of an assignment gives: the application time and each kernel's time in it (s)."""

    app_time_s: float
    kernel_time_s: dict[str, float]

    def share(self, kernel: str) -> float:
        """Fraction of the application time spent in ``kernel``."""
        return self.kernel_time_s[kernel] / self.app_time_s if self.app_time_s > 0 else 0.0

    def to_wire(self) -> dict:
        """The measurement as the sandbox's channel carries it (JSON)."""
        return {"app_time_s": self.app_time_s, "kernel_time_s": self.kernel_time_s}

    @classmethod
    def from_wire(cls, d: dict) -> Measurement:
        """The measurement :meth:`to_wire` sent."""
        return cls(float(d["app_time_s"]), {k: float(v) for k, v in d["kernel_time_s"].items()})


@dataclass
class NpbProblem:
    """One test problem of ``npb-tpb`` as a measuring strategy sees it.

    Attributes
    ----------
    key : str
        The problem (GPU, benchmark, class, variant as canonical JSON).
    benchmark : str
        NPB benchmark.
    kernels : tuple of str
        Kernel names, sorted.
    choices : dict
        Kernel -> the TPB values measured for it (ascending).
    default : dict
        Kernel -> NPB-GPU default TPB (from the default run, else the NPB-GPU table).
    rows : dict
        (kernel, tpb) -> positions in the ``X`` handed to ``predict`` (the first is the measured one).
    """

    key: str
    benchmark: str
    kernels: tuple[str, ...]
    choices: dict[str, tuple[int, ...]]
    default: dict[str, int]
    rows: dict[tuple[str, int], list[int]]
    _calls: dict[tuple[str, int], float] = field(repr=False)
    _time_ms: dict[tuple[str, int], float] = field(repr=False)
    remainder_s: float = 0.0
    _seen: dict[tuple[tuple[str, int], ...], Measurement] = field(default_factory=dict, repr=False)

    @property
    def measurements(self) -> int:
        """Distinct full assignments measured so far."""
        return len(self._seen)

    def full(self, assignment: Mapping[str, int] | None = None) -> dict[str, int]:
        """``assignment`` completed with the defaults (unknown kernels raise :class:`MeasurementError`)."""
        out = dict(self.default)
        for kernel, tpb in (assignment or {}).items():
            if kernel not in out:
                raise MeasurementError(f"problem {self.key}: no kernel {kernel!r}; kernels: {', '.join(self.kernels)}.")
            out[kernel] = int(tpb)
        return out

    def measure(self, assignment: Mapping[str, int] | None = None) -> Measurement:
        """Application and per-kernel times of ``assignment`` (kernels it omits stay at the default).

        Raises :class:`MeasurementError` for a TPB the problem has no measured row for.
        """
        full = self.full(assignment)
        key = tuple(sorted(full.items()))
        if key not in self._seen:
            missing = [f"{k}@{t}" for k, t in key if (k, t) not in self._time_ms]
            if missing:
                raise MeasurementError(
                    f"problem {self.key}: no measured (ok) row for {', '.join(missing)}; measurable TPBs: "
                    + "; ".join(f"{k} {list(self.choices[k])}" for k in self.kernels) + ".")
            per = {k: self._calls[(k, t)] * self._time_ms[(k, t)] / 1000.0 for k, t in key}
            self._seen[key] = Measurement(self.remainder_s + sum(per.values()), per)
        return self._seen[key]

    def describe(self) -> dict:
        """What a model in the sandbox may know of the problem (JSON): names and row positions, no times."""
        return {"key": self.key, "benchmark": self.benchmark, "kernels": list(self.kernels),
                "choices": {k: list(v) for k, v in self.choices.items()}, "default": dict(self.default),
                "rows": [[k, int(t), list(map(int, p))] for (k, t), p in self.rows.items()]}


@dataclass
class RemoteNpbProblem(NpbProblem):
    """An :class:`NpbProblem` rebuilt from its :meth:`~NpbProblem.describe` in the sandbox's child: it has no
    times, so ``measure`` asks ``_ask`` (a full assignment -> the :meth:`Measurement.to_wire` of the parent's
    real problem, which measures and counts)."""

    _ask: Callable[[dict[str, int]], dict] | None = field(default=None, repr=False)

    def measure(self, assignment: Mapping[str, int] | None = None) -> Measurement:
        full = self.full(assignment)
        key = tuple(sorted(full.items()))
        if key not in self._seen:
            self._seen[key] = Measurement.from_wire(self._ask(dict(key)))
        return self._seen[key]

    @classmethod
    def from_description(cls, d: dict, ask: Callable[[dict[str, int]], dict]) -> RemoteNpbProblem:
        """The problem :meth:`~NpbProblem.describe` gave as ``d``, measuring through ``ask``."""
        return cls(key=d["key"], benchmark=d["benchmark"], kernels=tuple(d["kernels"]),
                   choices={k: tuple(v) for k, v in d["choices"].items()}, default=dict(d["default"]),
                   rows={(k, int(t)): list(p) for k, t, p in d["rows"]}, _calls={}, _time_ms={}, _ask=ask)


def npb_problems(task: Task, rows: pa.Table, y: np.ndarray) -> list[NpbProblem]:
    """The test problems of ``rows`` (aligned with the target ``y``, time per call in ms), in key order.

    ``rows`` should carry :data:`DEFAULT_TPB` and :data:`DEFAULT_REMAINDER` (``kgpubench.tasks.data.task_data``
    adds them); a kernel without a default TPB raises :class:`MeasurementError`.
    """
    keys = problem_keys(task, rows)
    kern = rows["kernel"].to_pylist()
    tpb = rows["tpb"].to_pylist()
    bench = rows["benchmark"].to_pylist()
    calls = _floats(rows, "calls_per_run")
    if np.isnan(calls).any():
        raise MeasurementError("npb-tpb measurements need calls_per_run on every test row; some are null (the "
                               "npb-gpu variant records none).")
    defaults = (rows[DEFAULT_TPB].to_pylist() if DEFAULT_TPB in rows.column_names
                else [npb_gpu_default_tpb(b, k) for b, k in zip(bench, kern)])
    out = []
    for key in sorted(set(keys)):
        idx = np.flatnonzero(keys == key)
        positions: dict[tuple[str, int], list[int]] = {}
        for i in idx:
            positions.setdefault((kern[i], int(tpb[i])), []).append(int(i))
        first = {kt: pos[0] for kt, pos in positions.items()}
        kernels = tuple(sorted({k for k, _ in positions}))
        default = {}
        for k in kernels:
            d = next((defaults[i] for i in idx if kern[i] == k and defaults[i] is not None), None)
            if d is None:
                raise MeasurementError(
                    f"problem {key}: kernel {k!r} has no default threads per block (no default run row naming it "
                    "and not an NPB-GPU kernel); collect the problem's default run (row_kind=run, "
                    "assignment=default) with its tpb_assignment.")
            default[k] = int(d)
        out.append(NpbProblem(
            key=key, benchmark=bench[idx[0]], kernels=kernels,
            choices={k: tuple(sorted(t for kk, t in positions if kk == k)) for k in kernels}, default=default,
            rows=positions, _calls={kt: float(calls[i]) for kt, i in first.items()},
            _time_ms={kt: float(y[i]) for kt, i in first.items()}, remainder_s=problem_remainder_s(rows, idx)))
    return out


def assignment_scores(problems: Sequence[NpbProblem], assignments: Sequence[Mapping[str, int]], n: int) -> np.ndarray:
    """Scores for ``predict``: 0 on the rows of each problem's chosen (kernel, TPB), 1 elsewhere."""
    out = np.ones(n)
    for problem, assignment in zip(problems, assignments, strict=True):
        for kernel, tpb in problem.full(assignment).items():
            if (kernel, int(tpb)) not in problem.rows:
                raise MeasurementError(f"problem {problem.key}: chose TPB {tpb} for {kernel!r}, which has no row; "
                                       f"choose one of {list(problem.choices[kernel])}.")
            out[problem.rows[(kernel, int(tpb))]] = 0.0
    return out
