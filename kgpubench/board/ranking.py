"""The board's one ranking rule: every table, plot, "best model" sentence and ``evaluate``'s "would rank" reads
its order from here (pure: result records in, standings out).

The rule, said once (:data:`RULE`):

* **Headline value**: the mean over test folds of the task's primary metric (``aggregate[metric].mean``
  of the result record). The mean, not the median: every fold is a fixed slice of the data scored once, so
  each counts equally; a fold where a model fails badly should cost it (with the handful of folds the board
  has, the median ignores the worst fold outright); and the bootstrap interval below is an interval of the
  mean, so value and interval describe the same number.
* **Interval**: a 95 % percentile bootstrap interval of that mean, resampling the folds with replacement
  (:data:`RESAMPLES` resamples, seed :data:`SEED`; numpy only). It says how much the headline depends on
  which folds there happened to be; with one fold there is no interval.
* **Ranking**: learned models only, by headline value (missing scores last, then by name). Two models whose
  headline values are equal at the displayed precision (:data:`DIGITS` significant digits) are tied and
  share the rank, shown ``=2``.
* **Apart, never ranked or named best**: the reference (``kind == "reference"``, the oracle: an upper bound
  that measures the test rows) and strategies that measure the target instead of predicting it (their
  folds record ``measurements`` > 0, e.g. the Profiling and Exhausting strategies of seed study 001).

Records are :class:`~kgpubench.results.result.Result` (and :class:`~kgpubench.results.result.Skipped`, never scored),
for ``evaluate``'s summary, ``predict`` and the board alike (the board ranks the records of its
:class:`~kgpubench.results.result.BoardEntry` items).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgpubench.board.counts import SchemeProblems
from kgpubench.results.result import ABSENT, Record, Result
from kgpubench.sources import seed_study
from kgpubench.tasks import Task
from kgpubench.tasks.intervals import RESAMPLES, SEED, percentile_interval
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.splits import SCHEMES

DIGITS = 4
MEASUREMENTS = "measurements"
REFERENCE_LABEL = "upper bound (measures the test rows)"
MEASURES_LABEL = "measures the target"
RULE = ("Each score is the mean over the test folds, with its 95 % bootstrap interval in brackets (the folds "
        f"resampled with replacement, {RESAMPLES:,} times, fixed seed); one fold: no interval. Models are ranked by "
        "the mean of the task's primary metric; equal means at the 4 significant digits shown are ties and share "
        "a rank (`=2`). The oracle is an upper bound that measures the test rows, and strategies that measure "
        f"the target ({seed_study('001').short}'s Profiling, Exhausting) are shown apart: neither is ranked nor named "
        "best.")


def number(value: float | None, digits: int = DIGITS) -> str:
    """``digits`` significant digits, but a whole number rather than an exponent from 1 to 1e9."""
    if value is None:
        return "—"
    text = f"{value:.{digits}g}"
    return f"{value:.0f}" if "e" in text and 1 <= abs(value) < 1e9 else text


@functools.lru_cache(maxsize=65536)
def _bootstrap(values: tuple[float, ...], resamples: int, seed: int) -> tuple[float, float] | None:
    return percentile_interval(values, np.mean, resamples=resamples, seed=seed)


def bootstrap_interval(values, *, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """The 95 % percentile bootstrap interval of the mean of ``values`` (non-finite values dropped); None for
    fewer than two values (:func:`kgpubench.tasks.intervals.percentile_interval`, cached: the board asks for the
    same folds' interval many times)."""
    return _bootstrap(tuple(float(v) for v in values if v is not None and np.isfinite(v)), resamples, seed)


def field(result: Record, name: str, default: Any = None) -> Any:
    """A record's field, ``default`` when it has none (:data:`~kgpubench.results.result.ABSENT`, or a field its kind
    of record does not declare: a :class:`~kgpubench.results.result.Skipped` names no model)."""
    value = getattr(result, name, default)
    return default if value is ABSENT else value


def status(result: Record) -> str:
    """``ok``, ``failed`` or ``skipped``."""
    return result.status


def _folds(result: Record) -> dict:
    return field(result, "folds") or {}


def _aggregate(result: Record) -> dict:
    return field(result, "aggregate") or {}


def fold_values(result: Record, metric: str) -> list[float]:
    """The per-fold scores of ``metric`` (folds without one are left out), in fold order."""
    out = []
    folds = _folds(result)
    for name in sorted(folds):
        v = folds[name].score(metric)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
            out.append(float(v))
    return out


def headline(result: Record, metric: str) -> float | None:
    """The headline value of ``metric``: the mean over folds recorded in the result's aggregate."""
    agg = _aggregate(result).get(metric)
    return float(agg.mean) if agg else None


def interval(result: Record, metric: str) -> tuple[float, float] | None:
    """The 95 % bootstrap interval of ``metric``'s mean over the result's folds."""
    return bootstrap_interval(fold_values(result, metric))


def cell(result: Record, metric: str, digits: int = DIGITS) -> str:
    """``0.1234 [0.1011, 0.1502]``: the headline value and its interval (``—`` without a score)."""
    value = headline(result, metric)
    if value is None:
        return "—"
    ci = interval(result, metric)
    return number(value, digits) + ("" if ci is None else f" [{number(ci[0], 3)}, {number(ci[1], 3)}]")


def is_reference(result: Record) -> bool:
    return ORACLE.names(result)


def measures_target(result: Record) -> bool:
    """Whether the strategy measured the test problems (mean ``measurements`` above 0)."""
    agg = _aggregate(result).get(MEASUREMENTS)
    return bool(agg) and agg.mean > 0


def role(result: Record) -> str:
    """``reference``, ``measures`` or ``model``."""
    return "reference" if is_reference(result) else ("measures" if measures_target(result) else "model")


def label(result: Record) -> str:
    """The model's name with its mark when it is not a ranked model."""
    r, name = role(result), field(result, "model")
    return (f"{name} — {REFERENCE_LABEL}" if r == "reference" else
            f"{name} ({MEASURES_LABEL})" if r == "measures" else name)


@dataclass(frozen=True)
class Standing:
    """One scored record's place (``result``: the record as given)."""

    result: Result
    rank: int | None  # None: not ranked (reference, measures the target, or no score)
    tied: bool

    @property
    def rank_text(self) -> str:
        return "—" if self.rank is None else (f"={self.rank}" if self.tied else str(self.rank))


def _key_value(value: float, higher: bool) -> float:
    return -value if higher else value


def standings(task: Task, results: list[Record]) -> list[Standing]:
    """Every scored (``status == "ok"``) result of one task and scheme: the references first, then the strategies
    that measure the target (both unranked), then the learned models ranked by :data:`RULE` (ties share the
    rank), then those without a primary score (unranked)."""
    metric = task.primary_metric
    higher = METRICS[metric].higher_is_better if metric in METRICS else False

    def model(r: Record) -> str:
        return field(r, "model")

    def value(r: Record) -> float | None:
        return headline(r, metric)

    ok = [r for r in results if status(r) == "ok"]
    roles = {id(r): role(r) for r in ok}
    refs = sorted((r for r in ok if roles[id(r)] == "reference"), key=model)
    meas = sorted((r for r in ok if roles[id(r)] == "measures"),
                  key=lambda r: (value(r) is None, _key_value(value(r) or 0.0, higher), model(r)))
    models = [r for r in ok if roles[id(r)] == "model"]
    scored = sorted((r for r in models if value(r) is not None), key=lambda r: (_key_value(value(r), higher), model(r)))
    unscored = sorted((r for r in models if value(r) is None), key=model)
    shown = [number(value(r)) for r in scored]
    out = [Standing(r, None, False) for r in (*refs, *meas)]
    for i, r in enumerate(scored):
        first = shown.index(shown[i])  # sorted, so equal shown values are adjacent
        out.append(Standing(r, first + 1, shown.count(shown[i]) > 1))
    return out + [Standing(r, None, False) for r in unscored]


def ranked(task: Task, results: list[Record]) -> list[Result]:
    """The ranked learned models, best first (what "best" means everywhere)."""
    return [s.result for s in standings(task, results) if s.rank is not None]


def best(task: Task, results: list[Record]) -> list[Result]:
    """The best learned model(s) of one task and scheme: every model holding rank 1 (ties), empty when none."""
    return [s.result for s in standings(task, results) if s.rank == 1]


def _listed(names: list[str]) -> str:
    """``1``, ``1 and 3``, ``0, 1 and 3``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def folds_note(scheme: str, results: list[Record], counts: SchemeProblems | None = None) -> str:
    """The caption of one task's table under ``scheme``: the test folds its scored results cover (the widest of
    them), against the scheme's nominal count where a hash scheme evaluates fewer, and why (the hash buckets that
    drew no row or problem); then the task's problems.

    ``counts`` (:func:`kgpubench.board.counts.scheme_problems`, counted on the store) gives the problems and how the
    folds hold them; it is used only when its rows are the rows the results record. Without it, the problems the
    folds record (tasks that record per-problem choices) are counted: ``Test folds: 2; 2 test problems.``
    """
    ok = [r for r in results if status(r) == "ok" and _folds(r)]
    if not ok:
        return ""
    widest = max(ok, key=lambda r: (len(_folds(r)), field(r, "model")))
    folds = [str(f) for f in _folds(widest)]
    k = len(folds)
    dataset = field(widest, "dataset")
    if counts is not None and (dataset.rows if dataset else ABSENT) != counts.rows:
        counts = None  # counted on other rows than the results were scored on: say nothing about them
    sch = SCHEMES.get(scheme)
    if sch is not None and sch.kind == "hash" and k < sch.n_folds:
        empty = sorted(set(map(str, range(sch.n_folds))) - set(folds), key=int)
        buckets = f"bucket{'s' if len(empty) > 1 else ''} {_listed(empty)}"
        unit, what = (("problem", "none of them") if counts is not None else
                      ("row (each problem, in a task with problems)", "no row or problem of this task"))
        text = (f"Test folds: {k} of {sch.n_folds}: `{scheme}` hashes each {unit} into one of {sch.n_folds} buckets, "
                f"one bucket a test fold, and {buckets} drew {what}")
    else:
        text = f"Test folds: {k}" + (" (one split: no interval)" if k == 1 else "")
    if counts is not None:
        tested = sum(counts.per_fold.get(f, 0) for f in folds)
        where = ("each in one test fold" if tested == counts.problems else
                 f"{tested:,} of them in the test fold" + ("s" if k > 1 else ""))
        return f"{counts.problems:,} problems ({', '.join(counts.columns)}), {where}. {text}."
    problems = max((sum(len(f.problems or {}) for f in _folds(r).values()) for r in ok), default=0)
    if problems:
        text += f"; {problems:,} test problems"
    return text + "."


def would_rank(value: float, others: list[float], metric: str) -> int:
    """The rank a headline ``value`` takes among ``others`` by the rule (ties share the better rank)."""
    higher = METRICS[metric].higher_is_better if metric in METRICS else False
    mine = float(number(value))
    better = 0
    for v in others:
        theirs = float(number(v))
        better += theirs > mine if higher else theirs < mine
    return better + 1


__all__ = ["DIGITS", "MEASURES_LABEL", "REFERENCE_LABEL", "RESAMPLES", "RULE", "SEED", "Standing", "best",
           "bootstrap_interval", "cell", "field", "fold_values", "folds_note", "headline", "interval", "is_reference",
           "label", "measures_target", "number", "ranked", "role", "standings", "status", "would_rank"]
