"""The board's plots as SVG (matplotlib): predicted vs measured on log-log axes, the cumulative distribution of
regrets, per-GPU bars, and lines over a log axis (an extra table's curves). Each function takes plain data (see
:mod:`kgpubench.board.site.data`) and writes one file; the output is byte-identical for the same data (fixed hash
salt, no date). Each has a ``*_figure`` twin that builds the figure without saving it (for the tests).

Colours: a model has one colour on every plot of the site (:func:`colour_map`, built once per render from the
labels each plot shows, passed to each function as ``colors``; it depends on the model's name and its plot-mates
only, so a change to one task's models seldom recolours other tasks' plots); legends sit below the axes, outside
them, so they never cover a bar, a line or a point.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from kgpubench.foundation.files import atomic_write_bytes

CREATOR = "kgpubench leaderboard"
COLORS = ("#0b5cad", "#d1242f", "#1a7f37", "#8250df", "#bc4c00", "#57606a")
# Colours a label may get, strongest first: matplotlib's tab10 less its grey (grey is the reference lines'), then
# tab20's lighter shades and tab20b, for a site whose plots together need more.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
           "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252", "#bd9e39", "#ad494a",
           "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd")


STRONG = 9  # PALETTE's first colours (tab10 less its grey): a label starts among these


def _preferred(label: str) -> tuple[str, ...]:
    """The colours ``label`` tries, in order: a strong one chosen by a hash of the name (the same in every render,
    whatever else the site shows), the other strong ones after it, then the rest of :data:`PALETTE`."""
    start = int(hashlib.sha256(label.encode()).hexdigest(), 16) % STRONG
    return PALETTE[start:STRONG] + PALETTE[:start] + PALETTE[STRONG:]


def colour_map(groups: Sequence[Sequence[str]]) -> dict[str, str]:
    """One colour per label over all ``groups`` (the labels of each plot), the same wherever the label appears, and
    different labels of one plot never share one.

    Each label takes the first colour of its own order (:func:`_preferred`: where a hash of its name puts it
    among the strong colours) that no plot-mate earlier in name order took; beyond the palette the colours
    repeat (a plot would then need more than its length of labels). So a label's colour depends on its name and
    on the colours of the plot-mates before it in name order, nothing else: a model added to, or dropped from,
    one task's plots recolours only labels that share a plot with a recoloured one (the old greedy colouring,
    most plot-mates first, could recolour the whole site). Deterministic: the same groups give the same map."""
    mates: dict[str, set[str]] = {}
    for group in groups:
        for label in group:
            mates.setdefault(label, set()).update(g for g in group if g != label)
    out: dict[str, str] = {}
    for label in sorted(mates):
        taken = {out[m] for m in mates[label] if m in out}
        order = _preferred(label)
        out[label] = next((c for c in order if c not in taken), order[len(taken) % len(order)])
    return out


def _colour(colors: Mapping[str, str] | None, label: str, i: int) -> str:
    return (colors or {}).get(label) or COLORS[i % len(COLORS)]


def _legend_below(fig, ax, n: int) -> None:
    """The axes' legend below them, outside the axes (needs the figure's constrained layout): it covers no data."""
    if ax.get_legend_handles_labels()[0]:
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", fontsize=8, frameon=False,
                   ncol=min(max(1, n), 3))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    import matplotlib

    plt = _pyplot()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kgpubench", "path.simplify": True}):
        fig.savefig(buf, format="svg", metadata={"Creator": CREATOR, "Date": None, "Description": CREATOR})
    plt.close(fig)
    atomic_write_bytes(Path(path), buf.getvalue().encode())


def predicted_vs_measured(samples: Sequence[Sequence[float]], path: Path, **kw) -> None:
    """Scatter of (measured, predicted) on log-log axes with the line of perfect prediction and the factor-2
    band (:func:`predicted_vs_measured_figure`)."""
    _save(predicted_vs_measured_figure(samples, **kw), path)


def predicted_vs_measured_figure(samples: Sequence[Sequence[float]], *, title: str, quantity: str, model: str = "",
                                 colors: Mapping[str, str] | None = None):
    """The figure of :func:`predicted_vs_measured`; the points in ``model``'s colour of ``colors``."""
    plt = _pyplot()
    pts = np.asarray(samples, dtype=float).reshape(-1, 2)
    pts = pts[np.isfinite(pts).all(axis=1) & (pts[:, 0] > 0)]
    measured, predicted = pts[:, 0], np.maximum(pts[:, 1], pts[:, 0].min() / 100 if len(pts) else 1e-12)
    fig, ax = plt.subplots(figsize=(4.6, 4.6), layout="constrained")
    ax.scatter(measured, predicted, s=7, alpha=0.55, color=_colour(colors, model, 0), linewidths=0)
    lo = float(min(measured.min(), predicted.min())) if len(pts) else 1e-3
    hi = float(max(measured.max(), predicted.max())) if len(pts) else 1.0
    line = np.array([lo, hi])
    ax.plot(line, line, color="black", linewidth=0.8, label="perfect")
    ax.plot(line, 2 * line, color="grey", linewidth=0.6, linestyle="--", label="factor 2")
    ax.plot(line, line / 2, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"measured {quantity}")
    ax.set_ylabel(f"predicted {quantity}")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="major", linewidth=0.3, alpha=0.6)
    _legend_below(fig, ax, 2)
    return fig


def regret_cdf(series: Mapping[str, Sequence[float]], path: Path, **kw) -> None:
    """Empirical cumulative distribution of regrets (in %) per model: how many problems (or folds) lose at
    most x % against the best choice. Steps; a curve further up and left is better (:func:`regret_cdf_figure`)."""
    _save(regret_cdf_figure(series, **kw), path)


def regret_cdf_figure(series: Mapping[str, Sequence[float]], *, title: str, unit: str,
                      colors: Mapping[str, str] | None = None):
    """The figure of :func:`regret_cdf`; each model in its colour of ``colors``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 4.4), layout="constrained")
    top = 1.0
    for i, (model, values) in enumerate(series.items()):
        v = np.sort(np.asarray(values, dtype=float) * 100.0)
        if v.size == 0:
            continue
        top = max(top, float(v.max()))
        frac = np.arange(1, v.size + 1) / v.size
        ax.step(np.concatenate([[0.0], v]), np.concatenate([[0.0], frac]), where="post",
                color=_colour(colors, model, i), linewidth=1.3, label=model, zorder=3 + len(series) - i)  # best on top
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(-0.15, top * 1.5)  # a model whose every regret is 0 is a vertical line at 0: keep it off the spine
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("regret (% slower than the best choice)")
    ax.set_ylabel(f"share of {unit}")
    ax.set_title(title, fontsize=9)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    _legend_below(fig, ax, len(series))
    return fig


def per_gpu_bars(values: Mapping[str, Mapping[str, float]], path: Path, **kw) -> None:
    """Grouped horizontal bars: one group per GPU, one bar per model (``values[model][gpu]``;
    :func:`per_gpu_bars_figure`)."""
    _save(per_gpu_bars_figure(values, **kw), path)


def per_gpu_bars_figure(values: Mapping[str, Mapping[str, float]], *, title: str, metric: str,
                        colors: Mapping[str, str] | None = None):
    """The figure of :func:`per_gpu_bars`; each model in its colour of ``colors``."""
    plt = _pyplot()
    models = list(values)
    gpus = sorted({g for m in models for g in values[m]})
    height = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(gpus) * max(1, len(models)) ** 0.5 + 1.9), layout="constrained")
    y = np.arange(len(gpus))
    for i, model in enumerate(models):
        vals = [values[model].get(g, np.nan) for g in gpus]
        ax.barh(y + i * height, vals, height=height, color=_colour(colors, model, i), label=model)
    ax.set_yticks(y + height * (len(models) - 1) / 2)
    ax.set_yticklabels(gpus, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(metric)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", linewidth=0.3, alpha=0.6)
    _legend_below(fig, ax, len(models))
    return fig


def curves(series: Sequence[tuple[str, Sequence[Sequence[float]]]], path: Path, **kw) -> None:
    """One line with markers per (label, ((x, y), ...)) over a log x axis (:func:`curves_figure`)."""
    _save(curves_figure(series, **kw), path)


def curves_figure(series: Sequence[tuple[str, Sequence[Sequence[float]]]], *, title: str, xlabel: str,
                  ylabel: str, ylim: Sequence[float] = (), xscale: str = "log",
                  colors: Mapping[str, str] | None = None):
    """The figure of :func:`curves`: ``xscale="symlog"`` is linear below 1, for an x that holds 0; dotted
    reference lines at y = 0 and 1; ``ylim``: (bottom, top) of the y axis (points outside are cut off); the
    legend below the axes; each label in its colour of ``colors``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 4.4), layout="constrained")
    xs = sorted({float(x) for _, points in series for x, _ in points}) or [1.0]
    for ref in (0.0, 1.0):
        ax.axhline(ref, color="#57606a", linewidth=0.6, linestyle=":")
    for i, (label, points) in enumerate(series):
        if not points:
            continue
        x, y = zip(*points)
        ax.plot(x, y, marker="o", markersize=3, linewidth=1.2, color=_colour(colors, label, i),
                linestyle="-" if colors or i < len(COLORS) else "--", label=label)
    if ylim:
        ax.set_ylim(*ylim)
    if xscale == "symlog":
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(min(xs) - 0.3, max(xs) * 1.25)
    else:
        ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{x:g}" for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    _legend_below(fig, ax, len(series))
    return fig
