"""What a task shows on the board beyond its score tables, declared on the task (never keyed on a task's name
in the renderer).

Two kinds of declaration:

* **Extra tables** computed outside the board run. A task names its extras (``Task.extras``); each is a JSON file
  ``<results>/<task>/<extra>.json`` (one level above the scheme folders, so it is never read as a result)
  written by the script that computes it, and turned into an :class:`ExtraTable` by the function :data:`EXTRAS`
  holds for its name. A missing file is said as such.
* **Sections** computed from the task's results (``Task.sections``): a :class:`Section` subclass per section kind
  (:class:`SubsetErrors`, :class:`ProblemStrategies`, :class:`ModelsBesideBest`, :class:`SchemeMetrics`,
  :class:`UnseenGpuGoal`) holds the section's text, the models and schemes it names and the seed paper's own
  figures as data; :data:`kgpubench.board.render.SECTION_KINDS` holds the function that renders each kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import ClassVar

from kgpubench.errors import KgpubenchError, unknown_name
from kgpubench.foundation.capped import lists_to_tuples, loads_json
from kgpubench.tasks.intervals import median_interval
from kgpubench.tasks.reference import ORACLE

# NeuSight's operator classes and the paper's per-class errors on its unseen GPUs (kgpubench.tasks.paper_metric
# computes ours; they live here so that the board reads them without importing the trace reader).
CLASSES = ("bmm", "linear", "elementwise", "softmax", "layernorm")
CLASS_LABELS = {"bmm": "BMM", "linear": "FC", "elementwise": "elementwise", "softmax": "softmax",
                "layernorm": "LayerNorm"}
# NeuSight's Table (paper, unseen GPUs): per-class percentage error of NeuSight and of its roofline baseline.
PAPER = {"NeuSight": {"bmm": 13.8, "linear": 13.9, "elementwise": 19.3, "softmax": 13.9, "layernorm": 56.7},
         "NeuSight's roofline": {"bmm": 44.2, "linear": 27.8, "elementwise": 26.1, "softmax": 32.4,
                                 "layernorm": 58.1}}


@dataclass(frozen=True)
class ExtraPlot:
    """Lines to draw beside an extra table on the site: ``series`` holds (label, ((x, y), ...)) per line; ``file``
    (``plots/<task>--<extra>.svg``, relative to the board folder) is set by :func:`load_extras`."""

    title: str
    caption: str
    xlabel: str
    ylabel: str
    series: tuple[tuple[str, tuple[tuple[float, float], ...]], ...] = ()
    file: str = ""
    ylim: tuple[float, ...] = ()  # (bottom, top) of the y axis, or () for matplotlib's choice
    xscale: str = "log"  # "symlog" (linear below 1) where x holds 0


@dataclass(frozen=True)
class ExtraTable:
    """A titled table with a note: ``header`` names the columns, ``rows`` hold text cells; ``plot``: an optional
    line plot the site draws under the table (the Markdown board shows the table only)."""

    title: str
    note: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    plot: ExtraPlot | None = None


def neusight_paper_metric(doc: dict) -> ExtraTable:
    """NeuSight's per-class workload error (``scripts/neusight_paper_metric.py``), the paper's rows first."""
    header = ("model", *(CLASS_LABELS[c] for c in CLASSES))
    rows = [(f"{name} (paper)", *(f"{figs[c]:.1f}" for c in CLASSES)) for name, figs in PAPER.items()]
    models = doc.get("models") or {}

    def mean(errs: dict) -> float:
        vals = [errs[c]["error_pct"] for c in CLASSES if c in errs]
        return sum(vals) / len(vals) if vals else float("inf")
    for name in sorted(models, key=lambda m: (mean(models[m]), m)):
        errs = models[name]
        rows.append((name, *(f"{errs[c]['error_pct']:.1f}" if c in errs else "—" for c in CLASSES)))
    note = (f"NeuSight's own metric, on scheme `neusight` (train: the five older NVIDIA GPUs; test: H100, L4, "
            f"A100 80GB): per operator class, the % error of the summed predicted latency of the class's operators "
            f"in a traced transformer layer against the summed measured latency, averaged over "
            f"{doc.get('workloads', '?')} inference workloads ({doc.get('calls', '?')} operator calls) of the "
            "unseen GPUs; lower is better, models sorted by their mean over the classes. The first rows are the "
            "paper's figures (NeuSight and its roofline). Not the paper's exact experiment: it also sums training "
            "workloads, and its predictor reads GEMM tile sizes from kernel names, which this task withholds. "
            "Computed by `scripts/neusight_paper_metric.py` from NeuSight's layer traces "
            "(docs/NEUSIGHT_PAPER_METRIC.md).")
    return ExtraTable("NeuSight's paper metric beside ours", note, header, tuple(rows))


def _fmt(v) -> str:
    return f"{v:.3g}" if isinstance(v, (int, float)) and v == v else "—"


def _fold_scores(folds: dict, metric: str) -> list[float]:
    """One held-out GPU's figure per fold (a fold's ``scores``; a skipped fold has none)."""
    return [f["scores"][metric] for f in folds.values()
            if isinstance((f.get("scores") or {}).get(metric), (int, float))]


def _with_interval(median, values: list[float]) -> str:
    """``median [lo, hi]``: the 95 % bootstrap interval of the median over the GPUs (:mod:`~kgpubench.tasks.intervals`);
    the median alone where fewer than two GPUs scored."""
    ci = median_interval(values)
    return _fmt(median) + (f" [{ci[0]:.3g}, {ci[1]:.3g}]" if ci else "")


SINGLE_GPU = ("A task on our own measured rows (kernel-*, npb-tpb, stencil-tile: one or two Hopper GPUs so far) has no "
              "few-shot curve: holding one GPU out leaves at most one to learn how the figures move the times.")
METRIC_HEADS = {"mdape": "median APE %"}


def fewshot_ylim(series) -> tuple[float, ...]:
    """(0, top) when the worst line lies far above the others (its lowest point over 3 times the highest point of
    every other line): top is 1.5 times that highest point, so the others stay readable; else () (matplotlib's)."""
    highs = sorted((max(y for _, y in pts), min(y for _, y in pts)) for _, pts in series if pts)
    if len(highs) < 2 or highs[-1][1] <= 3 * highs[-2][0] or highs[-2][0] <= 0:
        return ()
    return (0.0, 1.5 * highs[-2][0])


def fewshot(doc: dict) -> ExtraTable:
    """``scripts/fewshot_curves.py``'s few-shot curves: per model and k, the median over held-out GPUs of the
    metrics the file keeps (``metrics``; an older file: the ranking metric and ``mdape``), and a plot of the
    ranking metric against k."""
    plan = doc.get("plan") or {}
    metric = doc.get("metric", "?")
    metrics = list(doc.get("metrics") or (metric, "mdape"))
    header = ("model", "k (revealed rows)",
              *(f"{METRIC_HEADS.get(m, m)} (median over GPUs [95 % interval])" for m in metrics), "GPUs")
    rows, series = [], []
    for name in sorted(doc.get("models") or {}):
        points = []
        for k, rec in sorted((doc["models"][name] or {}).items(), key=lambda kv: int(kv[0])):
            med = rec.get("median") or {}
            folds = rec.get("folds") or {}
            rows.append((name, str(k), *(_with_interval(med.get(m), _fold_scores(folds, m)) for m in metrics),
                         str(len(folds))))
            if isinstance(med.get(metric), (int, float)):
                points.append((float(k), float(med[metric])))
        series.append((name, tuple(points)))
    train = plan.get("train_rule") or {}
    test = plan.get("test_rule") or {}
    skipped = plan.get("skipped") or {}
    scored = (f"A revealed row is one configuration of one of the GPU's problems with its measured time (k in all, "
              f"not per problem). Scored on {test.get('scored', '?')}, the same rows at every k"
              if test.get("whole_problems") else
              f"Scored on {test.get('scored', '?')} (at most {test.get('max_test_rows') or 'all'} per GPU, the same "
              "rows at every k, never a revealed one)")
    note = (f"How much a contributor must measure on a new GPU: scheme `{plan.get('scheme', '?')}`, each GPU held "
            f"out in turn; k of its rows, chosen by a fixed hashed order (the same rows for every model), join the "
            f"training rows of the other GPUs ("
            + (f"at most {train['cap']} of them, a hashed subsample). " if train.get("cap") else "all of them). ")
            + f"{scored}; `{metric}` is the task's ranking metric, lower is better. "
            + (f"Skipped GPUs: {'; '.join(f'{g} ({why})' for g, why in sorted(skipped.items()))}. " if skipped else "")
            + f"{SINGLE_GPU} "
            + "Computed by `scripts/fewshot_curves.py` (trusted baselines, in process; kgpubench/board/fewshot.py, "
              "docs/FEWSHOT.md).")
    ylim = fewshot_ylim(series)
    cut = (f" The axis stops at {ylim[1]:.3g}: {', '.join(far)} (above it) in the table."
           if ylim and (far := [n for n, pts in series if pts and min(y for _, y in pts) > ylim[1]]) else "")
    plot = ExtraPlot("Few-shot curves: median over the held-out GPUs",
                     f"`{metric}` (median over the held-out GPUs) after k rows of the held-out GPU are revealed; "
                     f"lower is better, k = 0 is the GPU never seen.{cut}",
                     "k (revealed rows of the held-out GPU)", f"{metric} (median over GPUs)", tuple(series),
                     ylim=ylim, xscale="symlog")
    return ExtraTable("Few-shot curves on an unseen GPU", note, header, tuple(rows), plot)


FIGURE_UNITS = {"mdape": "median APE %"}


def _goal_target(g: dict) -> str:
    if g.get("over") == "median":
        beats = f", below {g['beats']} on each" if g.get("beats") else ""
        return f"median ≤ {g.get('target_pct')} % over {g.get('groups', '?')}{beats}"
    need = g.get("need")
    if g.get("target_pct") is None and g.get("beats"):
        return f"below {g['beats']} on each of {g.get('groups', '?')}"
    beats = f", below {g['beats']} on each" if g.get("beats") else ""
    of = g.get("groups", "?")
    if isinstance(of, int) and g.get("missing"):  # a declared group without a figure still counts in "of"
        of += len(g["missing"])
    return f"≤ {g.get('target_pct')} % on {need if need is not None else 'every'} of {of}{beats}"


def _reference_text(ref: dict) -> str:
    """A hindsight reference's choice and coverage on one group (``figures`` of its record), or ``""``."""
    if not ref.get("source"):
        return ""
    return (f": {ref['source']} x {str(ref.get('factor')).replace('_', ' ')}, "
            f"{ref.get('covered_rows', 0):,} of {ref.get('rows', 0):,} rows")


def _stratum_figure(group: str, figure, rows) -> str:
    """One group of a goal whose record counts its scored rows: its figure and rows, or why it has no figure."""
    n = f"{rows:,} rows" if isinstance(rows, int) else "rows not counted"
    if figure is not None:
        return f"{group} {figure:.1f} ({n})"
    return f"{group}: no rows" if rows == 0 else f"{group}: no figure ({n})"


def _goal_figures(g: dict) -> str:
    figs = g.get("figures") or {}
    base = g.get("baseline_figures") or {}
    if g.get("over") != "median":
        if not g.get("beats"):
            counts = g.get("rows")
            if not isinstance(counts, dict):
                return ", ".join(f"{k} {v:.1f}" for k, v in figs.items())
            # a goal on a stratum of the rows: each group's scored rows, and a group without any said as such
            return ", ".join(_stratum_figure(k, figs.get(k), counts.get(k)) for k in dict.fromkeys([*counts, *figs]))
        refs = g.get("reference") or {}
        per = ", ".join(f"{k} {v:.1f}" + (f" ({g['beats']} {base[k]:.1f}{_reference_text(refs.get(k) or {})})"
                                           if k in base else "") for k, v in figs.items())
        below = len(figs) - len(g.get("losses") or ())
        return f"below {g['beats']} on {below} of {len(figs)}; " + per
    per = ", ".join(f"{k} {v:.1f}" + (f" ({g['beats']} {base[k]:.1f})" if k in base else "") for k, v in figs.items())
    med = g.get("median")
    lost = ""
    if g.get("beats") and g.get("losses"):  # the groups not beaten: lost (higher) and tied (equal) said apart
        tied = [k for k in g["losses"] if k in base and figs.get(k) == base[k]]
        lost_n = len(g["losses"]) - len(tied)
        lost = (f", does not beat {g['beats']} on {len(g['losses'])} of {len(figs)}"
                f" ({lost_n} lost, {len(tied)} tied)" if tied else
                f", loses to {g['beats']} on {lost_n} of {len(figs)}")
    return (f"median {med:.1f}{lost}; " if isinstance(med, (int, float)) else "") + per


def _scaling_figures(g: dict) -> str:
    """The goal's declared scaling-aware model beside the target: its median over the groups and how many groups
    meet the target (``—`` when none is declared; "not run" when the record has no figures of it)."""
    name = g.get("scaling_model")
    if not name:
        return "—"
    figs = (g.get("per_model") or {}).get(name) or {}
    if not figs:
        return f"{name}: not run"
    if g.get("target_pct") is None and g.get("beats"):
        base = g.get("baseline_figures") or {}
        below = sum(k in base and v < base[k] for k, v in figs.items())
        return f"{name}: median {median(figs.values()):.1f}, below {g['beats']} on {below} of {len(figs)}"
    met = sum(v <= g.get("target_pct", float("inf")) for v in figs.values())
    return f"{name}: median {median(figs.values()):.1f}, {met} of {len(figs)} within {g.get('target_pct')} %"


def goals(doc: dict) -> ExtraTable:
    """The goals the task reports against (``scripts/fewshot_curves.py --goals-out``): target, best, met."""
    units = sorted({FIGURE_UNITS.get(g.get("metric", "mdape"), f"{g.get('metric')}, %")
                    for g in doc.get("goals") or []})
    header = ("goal", "target", "best model", f"its figures ({'; '.join(units) or FIGURE_UNITS['mdape']})",
              "scaling-aware model", "met")
    rows = []
    for g in doc.get("goals") or []:
        verdict = "met" if g.get("met") else ("not met: " + str(g["why"]) if g.get("why") else "not met")
        rows.append((str(g.get("goal")), _goal_target(g), str(g.get("best_model") or "—"), _goal_figures(g) or "—",
                     _scaling_figures(g), verdict))
    on_median = any(g.get("over") == "median" for g in doc.get("goals") or [])
    rule = ("; for a goal on the median over the groups, a model that meets it, then the smallest median"
            if on_median else "")
    beaten = any(g.get("beats") and g.get("over") != "median" for g in doc.get("goals") or [])
    within = "most groups within the target, or below the reference where the goal names one" if beaten else \
        "most groups within the target"
    note = (f"The unseen-GPU goals this benchmark sets itself, each judged on the best model ({within}, then the "
            f"smallest worst figure{rule}). " + str(doc.get("note", "")))
    return ExtraTable("Goals", note, header, tuple(rows))


def _interval(med, ci) -> str:
    if not isinstance(med, (int, float)):
        return "—"
    return f"{med:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def budget(doc: dict) -> ExtraTable:
    """``scripts/budget_curves.py``'s tuning-budget curves: per strategy and budget N, the median over held-out
    GPUs of the score between random search (0) and the optimum (1), with its 95 % bootstrap interval."""
    plan = doc.get("plan") or {}
    budgets = [str(n) for n in plan.get("budgets") or ()]
    strategies = doc.get("strategies") or {}
    header = ("strategy", *(f"N = {n}" for n in budgets))
    curves = {s: c for s, c in strategies.items() if isinstance(c, dict) and "summary" in c}

    def first(s: str) -> float:
        med = ((curves[s]["summary"].get(budgets[0]) or {}).get("median") if budgets else None)
        return -med if isinstance(med, (int, float)) else float("inf")
    order = sorted(curves, key=lambda s: (not ORACLE.is_oracle(s), first(s), s))
    rows = [(s, *(_interval((curves[s]["summary"].get(n) or {}).get("median"),
                            (curves[s]["summary"].get(n) or {}).get("interval")) for n in budgets)) for s in order]
    rows += [(s, *("0 (by construction)" for _ in budgets)) for s, c in sorted(strategies.items()) if s not in curves]
    gpus = plan.get("gpus") or {}
    note = (f"How fast a tuner reaches the optimum on a GPU never seen (scheme `{plan.get('scheme', '?')}`, "
            f"{len(gpus)} GPUs held out in turn; models trained on the other GPUs' rows as on the board): each "
            f"strategy orders every problem's configurations ({', '.join(plan.get('problem_columns') or ())}) and "
            "the tuner measures the first N, keeping the best time t_N. Score: (E_N − t_N) / (E_N − t_opt), with E_N "
            "the exact expected best of N configurations drawn at random without replacement and t_opt the "
            "optimum: random search scores 0, the oracle 1, below 0 is worse than random. Per GPU the mean over its "
            "problems; each cell is the median over the GPUs [95 % bootstrap interval of the median]. Computed by "
            "`scripts/budget_curves.py` (trusted baselines, in process; kgpubench/board/budget.py, docs/METRICS.md).")
    series = tuple((s, tuple((float(n), float(curves[s]["summary"][n]["median"])) for n in budgets
                             if isinstance((curves[s]["summary"].get(n) or {}).get("median"), (int, float))))
                   for s in order)
    plot = ExtraPlot("Tuning-budget curves: median over the held-out GPUs",
                     "Score after N evaluations (median over the held-out GPUs): 1 is the optimum, 0 random search; "
                     "the axis stops at −1, lower points (far worse than random) are in the table.",
                     "evaluations N", "score (random 0, optimum 1)", series, ylim=(-1.0, 1.05))
    return ExtraTable("Tuning-budget curves on an unseen GPU", note, header, tuple(rows), plot)


EXTRAS: dict[str, Callable[[dict], ExtraTable]] = {"neusight-paper-metric": neusight_paper_metric,
                                                   "fewshot": fewshot, "goals": goals, "budget": budget}

STRATEGY_LINES = {
    "clblast-fallback": "CLBlast's own fallback for an untuned device (architecture, else vendor and type, else "
                        "global default; computed by CLBlast with the held-out device among the tuned ones)",
    "nearest-device": "the best configuration of the same vendor's training device nearest by catalogue figures",
    "majority": "the configuration most training devices chose",
}


def tuning_transfer(doc: dict) -> ExtraTable:
    """``python -m kgpubench.tasks.tuning``'s leave-one-device-out scores of the transfer strategies."""
    strategies = doc.get("strategies") or {}
    header = ("strategy", "exact match (micro)", "exact match (per kernel, macro)",
              "exact, shared-architecture entries", "per-parameter agreement (micro)", "what it sees")
    order = sorted(strategies, key=lambda s: (-strategies[s].get("exact_micro", 0.0), s))
    rows = tuple((s, *(f"{strategies[s][k]:.3f}" if isinstance(strategies[s].get(k), (int, float)) else "—"
                       for k in ("exact_micro", "exact_macro", "exact_shared_architecture",
                                 "param_agreement_micro")), STRATEGY_LINES.get(s, "")) for s in order)
    note = (f"Predict the best configuration CLBlast's tuner found for an OpenCL kernel and precision on a device "
            f"never seen, from the other devices (imported CLBlast tuning database; scheme `{doc.get('scheme')}`: "
            f"{doc.get('folds', '?')} folds, one per tuned device, {doc.get('test_entries', '?')} entries). Only the "
            "winning configuration per device is known (no times), so a prediction scores by exact match of the "
            "whole tuple and by the share of parameters it gets right (higher is better). Strategies only, not yet "
            "a model task: `python -m kgpubench.tasks.tuning --data STORE --out FILE` computes the table. "
            + str(doc.get("note", "")))
    return ExtraTable("tuning-transfer", note, header, rows)


# Tables of the whole board that belong to no task: name -> (file under the results folder, its table).
BOARD_TABLES: dict[str, tuple[str, Callable[[dict], ExtraTable]]] = {
    "tuning-transfer": ("tuning-transfer/by-device.json", tuning_transfer),
}


def extra_path(results_root: Path, task_name: str, extra: str) -> Path:
    return Path(results_root) / task_name / f"{extra}.json"


def _read(path: Path | None) -> dict | None:
    try:
        doc = loads_json(path.read_bytes(), str(path)) if path is not None else None
    except (OSError, KgpubenchError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def load_board_tables(results_root: Path | None) -> list[ExtraTable]:
    """The board's own tables (:data:`BOARD_TABLES`) read from ``results_root``; a missing file is a note."""
    out = []
    for name, (rel, build) in BOARD_TABLES.items():
        doc = _read(Path(results_root) / rel) if results_root is not None else None
        out.append(build(doc) if doc is not None else ExtraTable(
            name, f"*Not computed here*: no readable `{rel}` in the results folder (the committed board has it)."))
    return out


def load_extras(task, results_root: Path | None) -> list[ExtraTable]:
    """The task's declared extras read from ``results_root`` (an unreadable or missing file becomes a note)."""
    out = []
    for extra in task.extras:
        doc = _read(extra_path(results_root, task.name, extra) if results_root is not None else None)
        if doc is None:
            out.append(ExtraTable(extra, f"*Not computed here*: no readable `{task.name}/{extra}.json` in the "
                                         "results folder (the committed board has it)."))
            continue
        table = EXTRAS[extra](doc)
        if table.plot is not None:
            table = replace(table, plot=replace(table.plot, file=f"plots/{task.name}--{extra}.svg"))
        out.append(table)
    return out


# ----- sections: declared on the task, rendered by kgpubench.board.render.SECTION_KINDS ------------------------
@dataclass(frozen=True)
class Section:
    """A section of the board that a task declares (``Task.sections``): a heading and a paragraph, then what its
    kind (:attr:`kind`: set by each subclass, a key of :data:`kgpubench.board.render.SECTION_KINDS`; a field, so
    that the task's JSON form names it, :func:`section_from_fields`) computes from the results.

    Sections with ``place == "seeds"`` go under the seed studies' protocols (ordered by the task's seed id),
    those of ``place == "goal"`` under the board's goal."""

    title: str
    note: str
    kind: str = field(default="", init=False)
    place: ClassVar[str] = "seeds"


@dataclass(frozen=True)
class SubsetErrors(Section):
    """Per model, mean % error / max % error on several tasks (the seed's data subsets) under several schemes,
    and the seed paper's max error per subset in a last row.

    ``subsets``: (column label, task name, the paper's max error in %); ``schemes``: (scheme, column label);
    ``empty``: the paragraph when no subset has results."""

    kind: str = field(default="subset-errors", init=False)
    subsets: tuple[tuple[str, str, str], ...] = ()
    schemes: tuple[tuple[str, str], ...] = ()
    paper_label: str = ""
    empty: str = ""


@dataclass(frozen=True)
class ProblemStrategies(Section):
    """The target each strategy's choice gives on every problem of the task under ``scheme`` (a recommendation
    task that records its problems): ``order`` lists the strategies shown first, the others follow by name and
    the oracle last; ``label_columns`` (a subset of the task's problem columns) name a problem in the header."""

    kind: str = field(default="problem-strategies", init=False)
    scheme: str = ""
    order: tuple[str, ...] = ()
    label_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelsBesideBest(Section):
    """The seed study's own models (``models``) beside the best other model (ranked on the first of
    ``schemes``): mean % error / max % error per scheme; ``paper``: the paper's row (label, then one cell per
    scheme)."""

    kind: str = field(default="models-beside-best", init=False)
    models: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ()
    paper: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemeMetrics(Section):
    """One row per model and scheme (``schemes``) with the given metric columns (``columns``: (header, metric))."""

    kind: str = field(default="scheme-metrics", init=False)
    schemes: tuple[str, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class UnseenGpuGoal(Section):
    """The goal on unseen GPUs (``by-gpu``): the best learned model's median regret over the held-out GPUs is at
    most ``regret`` (a fraction) and it beats ``baseline`` on every GPU. ``title`` and ``note`` head the board's
    goal part (the first task declaring a goal says them); each declaring task adds its own verdict."""

    kind: str = field(default="unseen-gpu-goal", init=False)
    place: ClassVar[str] = "goal"
    scheme: str = "by-gpu"
    baseline: str = ""
    regret: float = 0.05
    nothing: str = ""


SECTIONS: tuple[type[Section], ...] = (SubsetErrors, ProblemStrategies, ModelsBesideBest, SchemeMetrics, UnseenGpuGoal)


def section_from_fields(fields: Mapping) -> Section:
    """A section from its fields as :func:`dataclasses.asdict` gives them and JSON carries them (the sandbox
    sends a task to the model's process so): ``kind`` picks the class, lists become tuples."""
    kinds = {c.kind: c for c in SECTIONS}
    if fields.get("kind") not in kinds:
        raise unknown_name("section kind", str(fields.get("kind")), kinds)
    return kinds[fields["kind"]](**{k: lists_to_tuples(v) for k, v in fields.items() if k != "kind"})
