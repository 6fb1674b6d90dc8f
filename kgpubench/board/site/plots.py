"""The board's plots as SVG (matplotlib): predicted vs measured on log-log axes, the cumulative distribution of
regrets, per-GPU bars, and lines over a log axis (an extra table's curves). Each function takes plain data (see
:mod:`kgpubench.board.site.data`) and writes one file; the output is byte-identical for the same data (fixed hash
salt, no date).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from kgpubench.store.shards import atomic_write_bytes

CREATOR = "kgpubench leaderboard"
COLORS = ("#0b5cad", "#d1242f", "#1a7f37", "#8250df", "#bc4c00", "#57606a")


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


def predicted_vs_measured(samples: Sequence[Sequence[float]], path: Path, *, title: str, quantity: str) -> None:
    """Scatter of (measured, predicted) on log-log axes with the line of perfect prediction and the factor-2
    band."""
    plt = _pyplot()
    pts = np.asarray(samples, dtype=float).reshape(-1, 2)
    pts = pts[np.isfinite(pts).all(axis=1) & (pts[:, 0] > 0)]
    measured, predicted = pts[:, 0], np.maximum(pts[:, 1], pts[:, 0].min() / 100 if len(pts) else 1e-12)
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.scatter(measured, predicted, s=7, alpha=0.55, color=COLORS[0], linewidths=0)
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
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    ax.grid(True, which="major", linewidth=0.3, alpha=0.6)
    fig.tight_layout()
    _save(fig, path)


def regret_cdf(series: Mapping[str, Sequence[float]], path: Path, *, title: str, unit: str) -> None:
    """Empirical cumulative distribution of regrets (in %) per model: how many problems (or folds) lose at
    most x % against the best choice. Steps; a curve further up and left is better."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    top = 1.0
    for i, (model, values) in enumerate(series.items()):
        v = np.sort(np.asarray(values, dtype=float) * 100.0)
        if v.size == 0:
            continue
        top = max(top, float(v.max()))
        frac = np.arange(1, v.size + 1) / v.size
        ax.step(np.concatenate([[0.0], v]), np.concatenate([[0.0], frac]), where="post",
                color=COLORS[i % len(COLORS)], linewidth=1.3, label=model, zorder=3 + len(series) - i)  # best on top
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(-0.15, top * 1.5)  # a model whose every regret is 0 is a vertical line at 0: keep it off the spine
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("regret (% slower than the best choice)")
    ax.set_ylabel(f"share of {unit}")
    ax.set_title(title, fontsize=9)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    fig.tight_layout()
    _save(fig, path)


def per_gpu_bars(values: Mapping[str, Mapping[str, float]], path: Path, *, title: str, metric: str) -> None:
    """Grouped horizontal bars: one group per GPU, one bar per model (``values[model][gpu]``)."""
    plt = _pyplot()
    models = list(values)
    gpus = sorted({g for m in models for g in values[m]})
    height = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(gpus) * max(1, len(models)) ** 0.5 + 1.4))
    y = np.arange(len(gpus))
    for i, model in enumerate(models):
        vals = [values[model].get(g, np.nan) for g in gpus]
        ax.barh(y + i * height, vals, height=height, color=COLORS[i % len(COLORS)], label=model)
    ax.set_yticks(y + height * (len(models) - 1) / 2)
    ax.set_yticklabels(gpus, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(metric)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", linewidth=0.3, alpha=0.6)
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    fig.tight_layout()
    _save(fig, path)


def curves(series: Sequence[tuple[str, Sequence[Sequence[float]]]], path: Path, *, title: str, xlabel: str,
           ylabel: str, ylim: Sequence[float] = (), xscale: str = "log", legend: str = "lower right") -> None:
    """One line with markers per (label, ((x, y), ...)) over a log x axis (``xscale="symlog"``: linear below 1,
    for an x that holds 0), dotted reference lines at y = 0 and 1; ``ylim``: (bottom, top) of the y axis (points
    outside are cut off); ``legend``: its location."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    xs = sorted({float(x) for _, points in series for x, _ in points}) or [1.0]
    for ref in (0.0, 1.0):
        ax.axhline(ref, color="#57606a", linewidth=0.6, linestyle=":")
    for i, (label, points) in enumerate(series):
        if not points:
            continue
        x, y = zip(*points)
        ax.plot(x, y, marker="o", markersize=3, linewidth=1.2, color=COLORS[i % len(COLORS)],
                linestyle="-" if i < len(COLORS) else "--", label=label)
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
    ax.legend(fontsize=7, loc=legend, frameon=False, ncol=2)
    fig.tight_layout()
    _save(fig, path)
