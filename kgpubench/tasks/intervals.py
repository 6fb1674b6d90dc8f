"""Bootstrap intervals shared by the board's tables (:mod:`kgpubench.board.ranking`, :mod:`kgpubench.board.budget`)
and the tasks' extra tables (:mod:`kgpubench.tasks.extras`): one level, one resample count and one seed, so
every interval on the board is drawn the same way and the same values give the same bounds."""

from __future__ import annotations

import numpy as np

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


def percentile_interval(values, statistic=np.mean, *, resamples: int = RESAMPLES,
                        seed: int = SEED) -> tuple[float, float] | None:
    """The 95 % percentile bootstrap interval of ``statistic`` (``np.mean``, ``np.median``: taken along axis 1 of
    the resamples) over ``values`` (None and non-finite values dropped); None for fewer than two values."""
    vals = np.asarray([float(v) for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if vals.size < 2:
        return None
    rng = np.random.default_rng(seed)
    stats = statistic(vals[rng.integers(0, vals.size, size=(resamples, vals.size))], axis=1)
    tail = (1.0 - LEVEL) / 2
    lo, hi = np.quantile(stats, [tail, 1.0 - tail])
    return float(lo), float(hi)


def median_interval(values, *, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """The 95 % percentile bootstrap interval of the median of ``values`` (None dropped); None for fewer than two."""
    return percentile_interval(values, np.median, resamples=resamples, seed=seed)
