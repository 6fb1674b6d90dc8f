"""How far ``leaderboard verify`` lets a re-run move a committed score, relative: the metric's declared tolerance
(:attr:`kgpubench.tasks.metrics.Metric.rel_tol`, :data:`REL_TOL` for a score without a declaration), widened for a
model whose scores are measured to move more across machines (:data:`MODEL_TOLERANCES`). docs/METRICS.md lists
both and the measurements behind each model's.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgpubench.tasks.metrics import METRICS

# Default relative tolerance of a score that has no metric declaration (``measurements``) and the absolute floor.
REL_TOL = 1e-4
ABS_TOL = 1e-6


@dataclass(frozen=True)
class ModelTolerance:
    """A model's own relative tolerance for ``verify``: every score of its results may move by ``rel_tol``
    (or by its metric's tolerance, if larger).

    ``model_file``: the file as results name it (``baselines/wavelet_nn.py``); ``spread``: the largest relative
    difference of one fold's score measured between two re-runs (machines, BLAS kernels, NumPy SIMD paths, thread
    counts); ``rel_tol`` is at least twice it; ``reason``: why the model's scores move.
    """

    model_file: str
    rel_tol: float
    spread: float
    reason: str


MODEL_TOLERANCES: dict[str, ModelTolerance] = {t.model_file: t for t in (
    ModelTolerance(
        "baselines/wavelet_nn.py", rel_tol=2.5e-3, spread=1.2e-3,
        reason="scipy's least_squares stops after 100 evaluations, so the last-bit differences of OpenBLAS's "
               "CPU-specific kernels and of NumPy's SIMD cos/exp/tanh end in other weights; measured on "
               "kernel-power/random10 (docs/METRICS.md)"),
)}


def tolerance(metric: str, model_file: str | None = None) -> float:
    """Relative tolerance of ``metric`` for ``verify``: the metric's (:data:`REL_TOL` when it declares none), or
    the model's (:data:`MODEL_TOLERANCES`, by the result's ``model_file``) when that is larger."""
    base = METRICS[metric].rel_tol if metric in METRICS else REL_TOL
    model = MODEL_TOLERANCES.get(model_file) if isinstance(model_file, str) else None
    return max(base, model.rel_tol) if model else base


__all__ = ["ABS_TOL", "MODEL_TOLERANCES", "REL_TOL", "ModelTolerance", "tolerance"]
