"""Scores for the benchmark's tasks: pure functions of arrays, each with its formula (docs/METRICS.md explains
why each is there).

Notation: ``y`` measured values, ``p`` predictions, ``n`` their count. Percentages are in percent.
Recommendation metrics take the measured times of one problem's candidates and the model's predicted
times (or scores: only their order matters) for the same candidates. Regrets take ``noise``, the standard
error of each measured time (:func:`kgpubench.tasks.scoring.time_noise`): a pick whose time is within
:data:`NOISE_Z` combined standard errors of the best counts as optimal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kgpubench.errors import MetricInputError
from kgpubench.registry import Registry


def _pair(y, p) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.float64).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    if y.size == 0 or y.size != p.size:
        raise MetricInputError(f"metric needs two non-empty arrays of one length; got {y.size} and {p.size} values.")
    if not np.all(np.isfinite(p)):
        raise MetricInputError(f"predictions hold {int(np.sum(~np.isfinite(p)))} NaN/inf value(s); "
                               "a model must predict a finite number for every row.")
    return y, p


def _positive(y: np.ndarray, what: str) -> None:
    if np.any(y <= 0):
        raise MetricInputError(f"{what} needs positive measured values; got min {y.min()!r}.")


def ape(y, p) -> np.ndarray:
    """Absolute percentage errors: ``100 * |p_i - y_i| / |y_i|``."""
    y, p = _pair(y, p)
    _positive(np.abs(y), "APE")
    return 100.0 * np.abs(p - y) / np.abs(y)


def mape(y, p) -> float:
    """Mean absolute percentage error: ``MAPE = (100 / n) * sum_i |p_i - y_i| / |y_i|``."""
    return float(np.mean(ape(y, p)))


def mdape(y, p) -> float:
    """Median absolute percentage error: ``median_i 100 * |p_i - y_i| / |y_i|``."""
    return float(np.median(ape(y, p)))


def p90_ape(y, p) -> float:
    """90th percentile of the absolute percentage errors: ``percentile_90(100 * |p_i - y_i| / |y_i|)`` (linear
    interpolation between order statistics)."""
    return float(np.percentile(ape(y, p), 90.0))


def male(y, p) -> float:
    """Mean absolute log error: ``(1/n) sum_i |ln p_i - ln y_i|`` (natural log; ``exp(male)`` is the typical
    factor between prediction and measurement). Predictions are clipped below at ``1e-12``."""
    y, p = _pair(y, p)
    _positive(y, "male")
    return float(np.mean(np.abs(np.log(np.maximum(p, 1e-12)) - np.log(y))))


def max_ape(y, p) -> float:
    """Maximum absolute percentage error: ``max_i 100 * |p_i - y_i| / |y_i|`` (seed 000's headline)."""
    return float(np.max(ape(y, p)))


def rmse_log(y, p) -> float:
    """Root mean squared error of natural-log values: ``sqrt((1/n) sum_i (ln p_i - ln y_i)^2)``.

    Predictions are clipped below at ``1e-12`` so a non-positive prediction is a large, finite error.
    """
    y, p = _pair(y, p)
    _positive(y, "rmse_log")
    return float(np.sqrt(np.mean((np.log(np.maximum(p, 1e-12)) - np.log(y)) ** 2)))


def rmse(y, p) -> float:
    """Root mean squared error: ``sqrt((1/n) sum_i (p_i - y_i)^2)``."""
    y, p = _pair(y, p)
    return float(np.sqrt(np.mean((p - y) ** 2)))


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based; ties share the mean of their positions)."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(x.size, dtype=np.float64)
    xs = x[order]
    i = 0
    while i < x.size:
        j = i
        while j + 1 < x.size and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(y, p) -> float:
    """Spearman's rank correlation: Pearson's r of the average ranks of ``y`` and ``p``.

    ``rho = sum_i (R_i - mean R)(S_i - mean S) / sqrt(sum_i (R_i - mean R)^2 * sum_i (S_i - mean S)^2)``
    with ``R = rank(y)``, ``S = rank(p)``; 0 when either side is constant.
    """
    y, p = _pair(y, p)
    r, s = _ranks(y) - 0.0, _ranks(p) - 0.0
    r -= r.mean()
    s -= s.mean()
    den = np.sqrt(np.sum(r * r) * np.sum(s * s))
    return float(np.sum(r * s) / den) if den > 0 else 0.0


def kendall_tau(y, p) -> float:
    """Kendall's tau-b between measured and predicted values.

    ``tau_b = (C - D) / sqrt((C + D + T_y) (C + D + T_p))`` over pairs i < j: C concordant, D discordant,
    T_y pairs tied only in y, T_p pairs tied only in p (pairs tied in both count nowhere). 0 when undefined.
    """
    y, p = _pair(y, p)
    if y.size > 500:  # same quantity, O(n log n)
        from scipy.stats import kendalltau

        tau = kendalltau(y, p, variant="b").statistic
        return float(tau) if np.isfinite(tau) else 0.0
    dy = np.sign(y[:, None] - y[None, :])
    dp = np.sign(p[:, None] - p[None, :])
    iu = np.triu_indices(y.size, k=1)
    dy, dp = dy[iu], dp[iu]
    prod = dy * dp
    c, d = np.sum(prod > 0), np.sum(prod < 0)
    ty = np.sum((dy == 0) & (dp != 0))
    tp = np.sum((dp == 0) & (dy != 0))
    den = np.sqrt(float(c + d + ty) * float(c + d + tp))
    return float((c - d) / den) if den > 0 else 0.0


NOISE_Z = 2.0


def within_noise(chosen, best, noise_chosen=None, noise_best=None) -> np.ndarray:
    """``chosen - best <= NOISE_Z * sqrt(s_chosen^2 + s_best^2)``: the chosen time is indistinguishable from
    the best given the standard errors ``s`` of the two measurements (no noise given: exact comparison)."""
    c, b = np.asarray(chosen, dtype=np.float64), np.asarray(best, dtype=np.float64)
    sc = np.zeros_like(c) if noise_chosen is None else np.nan_to_num(np.asarray(noise_chosen, np.float64))
    sb = np.zeros_like(b) if noise_best is None else np.nan_to_num(np.asarray(noise_best, np.float64))
    return c - b <= NOISE_Z * np.sqrt(sc * sc + sb * sb)


def topk_regret(y, p, k: int = 1, noise=None) -> float:
    """Regret of the best of the k candidates ranked fastest by the prediction.

    ``regret_k = min_{i in topk(p)} y_i / min_i y_i - 1``; ties in ``p`` are broken by position (stable sort).
    0 means the true best is among the k picks, or (with ``noise``) that the pick is within measurement
    noise of the best (:func:`within_noise`).
    """
    y, p = _pair(y, p)
    _positive(y, "topk_regret")
    picks = np.argsort(p, kind="mergesort")[:k]
    c = int(picks[np.argmin(y[picks])])
    b = int(np.argmin(y))
    s = None if noise is None else np.asarray(noise, dtype=np.float64).ravel()
    if s is not None and within_noise(y[c], y[b], s[c], s[b]):
        return 0.0
    return float(y[c] / y[b] - 1.0)


def improvement_coefficient(baseline, chosen) -> float:
    """Seed 003's improvement coefficient: ``(1/n) sum_i baseline_i / chosen_i`` over problems."""
    b, c = _pair(baseline, chosen)
    _positive(c, "improvement_coefficient")
    return float(np.mean(b / c))


def pct_improved(baseline, chosen) -> float:
    """Percent of problems where the chosen time beats the baseline: ``100 * #(chosen_i < baseline_i) / n``."""
    b, c = _pair(baseline, chosen)
    return float(100.0 * np.mean(c < b))


def regret(best, chosen, noise_best=None, noise_chosen=None) -> float:
    """Mean regret over problems: ``(1/n) sum_i r_i`` with ``r_i = chosen_i / best_i - 1``, or 0 where the
    chosen time is within measurement noise of the best (:func:`within_noise`)."""
    b, c = _pair(best, chosen)
    _positive(b, "regret")
    r = c / b - 1.0
    return float(np.mean(np.where(within_noise(c, b, noise_chosen, noise_best), 0.0, r)))


def app_time_s(best, chosen) -> float:
    """Mean application time of the chosen assignments (s): ``(1/n) sum_i T_chosen_i`` (seed 001's unit)."""
    _, c = _pair(best, chosen)
    return float(np.mean(c))


def app_time_ratio(best, chosen) -> float:
    """Application-time ratio (seed 001): ``(1/n) sum_i T_chosen_i / T_best_i`` over applications (>= 1)."""
    b, c = _pair(best, chosen)
    _positive(b, "app_time_ratio")
    return float(np.mean(c / b))


SCOPES = ("row", "problem", "choice")


@dataclass(frozen=True)
class Metric:
    """A metric's name, its function, whether higher is better, and how a task computes it.

    ``scope``: ``row`` (over all test rows), ``problem`` (per problem, then the mean over problems), or
    ``choice`` (from the chosen vs baseline/best times per problem). ``noise``: the function takes the
    measured times' standard errors. ``unit``: what a value is in. ``rel_tol``: how far a re-run may move the
    score (``leaderboard verify``, see docs/METRICS.md).
    """

    name: str
    fn: Callable[..., float]
    higher_is_better: bool
    scope: str
    doc: str
    unit: str = ""
    noise: bool = False
    rel_tol: float = 1e-4


_BUILT_IN: tuple[Metric, ...] = (
    Metric("male", male, False, "row", "mean absolute log error", "ln units"),
    Metric("mdape", mdape, False, "row", "median absolute percentage error", "%"),
    Metric("p90_ape", p90_ape, False, "row", "90th percentile absolute percentage error", "%"),
    Metric("mape", mape, False, "row", "mean absolute percentage error", "%"),
    Metric("max_ape", max_ape, False, "row", "maximum absolute percentage error", "%"),
    Metric("rmse_log", rmse_log, False, "row", "RMSE of ln(value)", "ln units"),
    Metric("rmse", rmse, False, "row", "root mean squared error", "target unit"),
    Metric("spearman", spearman, True, "row", "Spearman rank correlation", ""),
    Metric("kendall_tau", kendall_tau, True, "problem", "Kendall tau-b per problem, averaged", ""),
    Metric("top1_regret", lambda y, p, noise=None: topk_regret(y, p, 1, noise), False, "problem",
           "top-1 regret per problem (0 within noise)", "fraction", noise=True),
    Metric("top5_regret", lambda y, p, noise=None: topk_regret(y, p, 5, noise), False, "problem",
           "top-5 regret per problem (0 within noise)", "fraction", noise=True),
    Metric("improvement_coefficient", improvement_coefficient, True, "choice",
           "mean baseline time / chosen time", "ratio"),
    Metric("pct_improved", pct_improved, True, "choice", "% of problems faster than the baseline", "%"),
    Metric("regret", regret, False, "choice", "mean chosen time / best time - 1 (0 within noise)", "fraction",
           noise=True),
    Metric("app_time_ratio", app_time_ratio, False, "choice", "mean application time / best possible", "ratio"),
    Metric("app_time_s", app_time_s, False, "choice", "mean application time of the choice", "s"),
)
# Built-in metrics, then those plugged in through the entry-point group ``kgpubench.metrics`` (kgpubench.registry).
METRICS: Registry[Metric] = Registry("metric", "kgpubench.metrics", Metric,
                                     builtins=lambda: ((m.name, m) for m in _BUILT_IN),
                                     check=lambda name, m: _check_metric(m), name_of=lambda m: m.name)


def _check_metric(metric: Metric) -> None:
    """What registration asks of a metric: a known scope, a callable and a positive tolerance."""
    if metric.scope not in SCOPES or not callable(metric.fn) or not metric.rel_tol > 0:
        raise ValueError(f"metric {metric.name!r}: scope must be one of {', '.join(SCOPES)} (got {metric.scope!r}), "
                         f"fn callable and rel_tol > 0 (got {metric.rel_tol!r})")
