"""What the site shows, derived from the board's entries (pure; :class:`~kgpubench.results.result.BoardEntry`): the
plots to draw with their data, per-GPU scores and each result's provenance."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

import numpy as np

from kgpubench.board.ranking import field as record_field
from kgpubench.board.ranking import headline
from kgpubench.board.result_set import BY_GPU, ResultSet
from kgpubench.board.site.plots import colour_map
from kgpubench.results.result import BoardEntry, Result
from kgpubench.tasks import Task
from kgpubench.tasks.metrics import METRICS

CDF_MODELS = 5
BAR_MODELS = 3
# Units of the targets, for axis labels.
TARGET_UNITS = {"time_ms_median": "time (ms)", "time_ms_mean": "time per call (ms)", "power_w_avg": "power (W)"}


@dataclass(frozen=True)
class PlotSpec:
    """One plot: its file (relative to the board folder), the drawing function's name, data and text."""

    name: str
    kind: str  # "predicted", "regret", "per-gpu", "curves"
    data: object
    title: str
    alt: str
    caption: str
    options: dict = field(default_factory=dict)


def plot_labels(spec: PlotSpec) -> tuple[str, ...]:
    """The models (or strategies) a plot draws, each in its own colour: its series' labels, or a scatter's
    model."""
    if spec.kind == "curves":
        return tuple(label for label, _ in spec.data)
    if spec.kind in ("regret", "per-gpu"):
        return tuple(spec.data)
    return (spec.options["model"],) if spec.options.get("model") else ()


def with_colours(specs: list[PlotSpec]) -> list[PlotSpec]:
    """``specs`` with ``options["colors"]`` (label -> colour) set from one map over all of them
    (:func:`kgpubench.board.site.plots.colour_map`): a model has one colour on every plot of the site."""
    colours = colour_map([plot_labels(s) for s in specs])
    return [replace(s, options={**s.options, "colors": {m: colours[m] for m in plot_labels(s)}}) for s in specs]


def extra_plot_specs(extras) -> list[PlotSpec]:
    """The plots of a task's extra tables (:class:`kgpubench.tasks.extras.ExtraPlot`, drawn as lines)."""
    return [PlotSpec(e.plot.file, "curves", e.plot.series, e.plot.title, e.plot.title, e.plot.caption,
                     {"xlabel": e.plot.xlabel, "ylabel": e.plot.ylabel, "ylim": e.plot.ylim,
                      **({"xscale": e.plot.xscale} if e.plot.xscale != "log" else {})})
            for e in extras or () if e.plot is not None and e.plot.file]


def _best_with_samples(task: Task, entries: list[BoardEntry]) -> Result | None:
    return next((r for r in ResultSet.of(task, entries).ranked() if r.samples), None)


def regrets_of(task: Task, result: Result) -> tuple[list[float], str]:
    """A result's regrets and what one value is: per test problem where the folds record the problems'
    chosen and best times (``chosen / best - 1``, exact, no noise allowance), else per fold (the primary
    metric, which allows for noise)."""
    per_problem = [rec["chosen"] / rec["best"] - 1.0 for fold in result.folds.values()
                   for rec in (fold.problems or {}).values() if rec.get("best")]
    if per_problem:
        return per_problem, "test problems"
    metric = task.primary_metric
    return [f.score(metric) for f in result.folds.values() if f.score(metric) is not None], "folds"


def regret_metric(task: Task) -> bool:
    """Whether the task's primary metric is a regret (a recommendation task ranked by loss against the best)."""
    return task.kind == "recommendation"


def plots_for(task: Task, grouped: dict[str, list[BoardEntry]]) -> list[PlotSpec]:
    """Every plot of one task's page: per scheme the best model's predicted vs measured points and, for
    recommendation tasks, the regret distribution of the best models; per GPU bars when ``by-gpu`` ran."""
    out = []
    quantity = TARGET_UNITS.get(task.target, task.target)
    for scheme in sorted(grouped):
        recs = grouped[scheme]
        best = _best_with_samples(task, recs)
        if best:
            n = len(best.samples)
            out.append(PlotSpec(
                f"plots/{task.name}--{scheme}--predicted.svg", "predicted", best.samples,
                f"{task.name} / {scheme}: {best.model}",
                f"Scatter plot of {n} test rows: predicted against measured {quantity} for {best.model}, "
                "log-log axes",
                f"Predicted vs measured {quantity} of `{best.model}` (the best-ranked model whose predictions "
                f"are times), {n} test rows drawn evenly from the folds; log-log, the dashed lines are a "
                "factor of 2 off.", {"quantity": quantity, "model": best.model}))
        if regret_metric(task):
            series, unit = {}, "folds"
            for r in ResultSet.of(task, recs).ranked()[:CDF_MODELS]:
                values, unit = regrets_of(task, r)
                if values:
                    series[r.model] = values
            if series:
                out.append(PlotSpec(
                    f"plots/{task.name}--{scheme}--regret.svg", "regret", series,
                    f"{task.name} / {scheme}: regret distribution",
                    f"Cumulative distribution of the regret over {unit} for {', '.join(series)}",
                    f"Share of {unit} whose choice is at most x % slower than the best, for the "
                    f"{len(series)} best-ranked models (further up and left is better). "
                    + ("Per problem: chosen / best time − 1, exact (the board's score also counts a pick within "
                       "measurement noise as optimal)." if unit == "test problems" else
                       f"Per fold: `{task.primary_metric}` (this task's results record no per-problem times)."),
                    {"unit": unit}))
    bars = ResultSet.of(task, grouped.get(BY_GPU, [])).per_gpu(limit=BAR_MODELS)
    if bars:
        metric = task.primary_metric
        out.append(PlotSpec(
            f"plots/{task.name}--per-gpu.svg", "per-gpu", bars, f"{task.name}: {metric} per held-out GPU",
            f"Bar chart of {metric} per held-out GPU for {', '.join(bars)}",
            f"`{metric}` on each GPU when that GPU is left out of training (`by-gpu`), for the best models"
            + (f" and `{task.gpu_baseline}`" if task.gpu_baseline in bars else "")
            + f" ({_direction(metric)} is better).",
            {"metric": metric}))
    return out


def _direction(metric: str) -> str:
    return "higher" if metric in METRICS and METRICS[metric].higher_is_better else "lower"


def gpus_of(entries: list[BoardEntry]) -> list[str]:
    """The GPUs whose rows a task's results used (from the recorded data selection)."""
    for e in entries:
        sel = record_field(record_field(e.record, "dataset"), "selection") or {}
        if sel.get("gpus"):
            return list(sel["gpus"])
    return []


def _short(digest) -> str:
    return f"{digest[:12]}…" if isinstance(digest, str) and len(digest) > 12 else (digest or "—")


PACKAGES_SHOWN = ("kgpubench", "python", "numpy", "scikit-learn", "lightgbm", "xgboost")


def provenance(entry: BoardEntry, base: Path | None) -> dict[str, tuple[str, str | None]]:
    """What a result was made from, as label -> (shown text, full value or link): model file and hash, the
    commit it ran at, data version and hashes, split hash, seed, threads, package versions, date, wall time,
    and the result file itself (relative to the board folder ``base``). ``commit`` and ``submission`` are keys
    of the file that no field declares (``Result.extra``)."""
    result = entry.record
    extra = result.extra

    def get(name: str, default: object = None):
        return record_field(result, name, default)

    ds = get("dataset")

    def data(name: str, default: object = None):
        return record_field(ds, name, default)

    packages = get("packages") or {}
    out = {
        "model file": (get("model_file") or "—", None),
        "model sha256": (_short(get("model_sha256")), get("model_sha256")),
        "commit": (_short(extra.get("commit")) if extra.get("commit") else "not recorded", extra.get("commit")),
        "dataset": (f"{data('config', '—')} {data('version', '')}, {data('rows', '—')} rows", None),
        "task rows sha256": (_short(data("rows_sha256")), data("rows_sha256")),
        "manifest sha256": (_short(data("manifest_sha256")), data("manifest_sha256")),
        "split sha256": (_short(get("split_sha256")), get("split_sha256")),
        "seed / threads": (f"{get('seed', '—')} / {(get('limits') or {}).get('threads', '—')}", None),
        "versions": (", ".join(f"{k} {packages[k]}" for k in PACKAGES_SHOWN if k in packages) or "—", None),
        "date / wall time": (f"{get('date', '—')} / {get('wall_time_s', 0):.1f} s", None),
    }
    sub = extra.get("submission")
    if sub:
        who = f"{sub.get('name')} by {', '.join(sub.get('authors') or [])}"
        out["submission"] = (who, sub.get("url"))
    link = result_link(entry, base)
    if link:
        out["result file"] = (link, link)
    return out


def result_link(entry: BoardEntry, base: Path | None) -> str | None:
    """The result file's path relative to the board folder, when it lies inside it."""
    path = entry.path
    if not path or base is None:
        return None
    try:
        return PurePosixPath(Path(path).resolve().relative_to(Path(base).resolve()).as_posix()).as_posix()
    except ValueError:
        return None


def summary_value(task: Task, result: Result) -> float | None:
    """The headline value of a result on its task's primary metric (:func:`kgpubench.board.ranking.headline`)."""
    return headline(result, task.primary_metric)


def finite(values) -> np.ndarray:
    arr = np.asarray(list(values), dtype=float)
    return arr[np.isfinite(arr)]
