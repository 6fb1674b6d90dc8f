"""Bootstrap intervals shared by the board's tables (:mod:`kgpubench.board.ranking`, :mod:`kgpubench.board.budget`)
and the tasks' extra tables (:mod:`kgpubench.tasks.extras`): one level, one resample count and one seed, so
every interval on the board is drawn the same way and the same values give the same bounds."""

from __future__ import annotations

import numpy as np

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


def median_interval(values, *, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """The 95 % percentile bootstrap interval of the median of ``values`` (None dropped); None for fewer than two."""
    vals = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if vals.size < 2:
        return None
    rng = np.random.default_rng(seed)
    medians = np.median(vals[rng.integers(0, vals.size, size=(resamples, vals.size))], axis=1)
    tail = (1.0 - LEVEL) / 2
    lo, hi = np.quantile(medians, [tail, 1.0 - tail])
    return float(lo), float(hi)
