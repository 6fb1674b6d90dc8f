"""The roofline bound of one call from its nominal work and its GPU's catalogue figures, and the GPU similarity that
the transfer baselines use: shared by the baselines of the operator tasks (`gemm-latency`, `attention-latency`,
`conv-time`, `conv-solver`) and by `kgpubench predict`.

``t_roof = max(flops / peak, bytes_min / bandwidth)`` in ms, with ``peak`` the GPU's dense tensor peak for the
call's compute dtype (``peak_tensor_tflops``) where the row has a cited one, else its fp32 peak; a row without
a bandwidth or a peak gets NaN (callers fill it). Pure functions of a feature frame: no file, no state.

:func:`ideal_single_factor_transfer` is a hindsight reference, not a model: it moves a workload's time from a
training GPU to a test GPU by the ratio of one catalogue figure, choosing the source GPU and the figure with the
test GPU's labels (the best any single-factor transfer could do), for a goal to be measured against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgpubench.tasks.metrics import mdape

# The catalogue figures the transfer baselines compare GPUs by (in standardised log space).
GPU_FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
               "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
# Columns that describe the GPU rather than the work (never part of a workload key).
GPU_COLUMNS = (*GPU_FIGURES, "gpu_vendor", "gpu_architecture", "peak_tensor_tflops")


def _column(X: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def peak_flops(X: pd.DataFrame) -> np.ndarray:
    """FLOP/s of every row: the tensor peak of its compute dtype where cited, else the fp32 peak (NaN: neither)."""
    tensor = _column(X, "peak_tensor_tflops") * 1e12
    fp32 = _column(X, "gpu_peak_fp32_gflops") * 1e9
    return np.where(np.isfinite(tensor) & (tensor > 0), tensor, np.where(fp32 > 0, fp32, np.nan))


def roofline_ms(X: pd.DataFrame) -> np.ndarray:
    """``max(flops / peak, bytes_min / bandwidth)`` in ms for every row (NaN where a figure is missing)."""
    bandwidth = _column(X, "gpu_memory_bandwidth_gbs") * 1e9
    bandwidth = np.where(bandwidth > 0, bandwidth, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = np.maximum(_column(X, "flops") / peak_flops(X), _column(X, "bytes_min") / bandwidth) * 1e3
    return np.where(bound > 0, bound, np.nan)


def filled_roofline_ms(X: pd.DataFrame, fallback: float | None = None) -> tuple[np.ndarray, float]:
    """:func:`roofline_ms` with missing bounds replaced by ``fallback`` (default: the median bound of ``X``, 1 ms
    when it has none); returns the bounds and the fallback used."""
    bound = roofline_ms(X)
    if fallback is None:
        finite = bound[np.isfinite(bound)]
        fallback = float(np.median(finite)) if finite.size else 1.0
    return np.where(np.isfinite(bound), bound, fallback), fallback


def workload_keys(X: pd.DataFrame, leave_out: tuple[str, ...] = ()) -> np.ndarray:
    """One string per row naming its workload: every column that is not a GPU column (``gpu_*`` or
    :data:`GPU_COLUMNS`) nor in ``leave_out``, so two rows with the same key are the same call measured on different
    GPUs."""
    cols = [c for c in X.columns if c not in GPU_COLUMNS and not c.startswith("gpu_") and c not in leave_out]
    return joined_text(X, cols)


def joined_text(X: pd.DataFrame, columns) -> np.ndarray:
    """One string per row: the values of ``columns`` as text joined by ``|`` (a missing value as the empty text);
    the same values give the same text in any frame (column-wise, not row by row)."""
    key = np.full(len(X), "", dtype=object)
    for i, col in enumerate(columns):
        text = X[col].astype(object).where(X[col].notna(), "").astype(str).to_numpy(dtype=object)
        key = text if i == 0 else key + "|" + text
    return key


def gpu_matrix(X: pd.DataFrame) -> np.ndarray:
    """Log catalogue figures of every row (missing figures as 0 in log space), for GPU distances."""
    cols = [c for c in GPU_FIGURES if c in X.columns]
    values = X[cols].to_numpy(dtype=float) if cols else np.zeros((len(X), 0))
    return np.log(np.maximum(np.nan_to_num(values, nan=1.0), 1e-9))


# ----- the ideal single-factor transfer (a hindsight reference) -------------------------------------------------
# The catalogue figures a time is moved between two GPUs by, one at a time (time proportional to 1 / figure): the
# row's dense tensor peak for its compute dtype (peak_tensor_tflops, kgpubench.hardware.tensor_peak_tflops), the
# memory bandwidth, the fp32 peak, and SM count x boost clock.
SINGLE_FACTORS = ("tensor_peak", "memory_bandwidth", "fp32_peak", "sm_count_x_clock")


def single_factor_figures(X: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each of :data:`SINGLE_FACTORS` for every row of ``X`` (NaN where the row lacks it or it is not positive)."""
    with np.errstate(invalid="ignore"):
        figs = {"tensor_peak": _column(X, "peak_tensor_tflops"),
                "memory_bandwidth": _column(X, "gpu_memory_bandwidth_gbs"),
                "fp32_peak": _column(X, "gpu_peak_fp32_gflops"),
                "sm_count_x_clock": _column(X, "gpu_sm_count") * _column(X, "gpu_clock_sm_mhz")}
        return {name: np.where(v > 0, v, np.nan) for name, v in figs.items()}


@dataclass(frozen=True)
class SingleFactorTransfer:
    """The ideal single-factor transfer to one test GPU: the source GPU and factor it chose, its median APE (percent)
    on the rows it covers (``covered``: their indices into the frame), the GPU's test rows (``rows``), and every
    candidate's median APE (``candidates``: ``(source, factor)`` -> figure). ``source`` is None where no candidate
    covers a row."""

    gpu: str
    source: str | None
    factor: str | None
    mdape: float | None
    covered: np.ndarray
    rows: int
    candidates: dict

    def record(self) -> dict:
        """The JSON a goal record keeps: choice, figure, coverage, and each candidate's figure."""
        return {"source": self.source, "factor": self.factor, "mdape": self.mdape,
                "covered_rows": int(self.covered.size), "rows": self.rows,
                "candidates": {f"{s} / {f}": v for (s, f), v in self.candidates.items()}}


def ideal_single_factor_transfer(X: pd.DataFrame, y: np.ndarray, gpu: np.ndarray, test: np.ndarray,
                                 sources, factors=SINGLE_FACTORS) -> dict[str, SingleFactorTransfer]:
    """The best any single-factor transfer from ``sources`` could do on each test GPU, chosen in hindsight.

    For every test GPU ``g`` (the values of ``gpu`` on the rows where the boolean mask ``test`` is set), every source
    GPU ``s`` of ``sources`` and every factor ``f`` of :data:`SINGLE_FACTORS`: a test row whose workload
    (:func:`workload_keys`: every non-GPU column of ``X``, so the same shape, dtype, framework and kernel source) was
    measured on ``s`` is predicted ``t_s * f_s / f_g`` (the median of ``s``'s times of that workload where it has
    several; ``f_s``, ``f_g`` the two rows' figures). The candidate with the lowest median APE over the rows it
    covers, computed with ``g``'s labels, is kept (ties: the first source, then the first factor, in the order
    given). This uses the test labels to choose: a reference to beat, never a model to offer. A row no candidate
    covers (no same-workload row on the source, or a figure missing) is left out and counted (``covered`` vs
    ``rows``).
    """
    gpu = np.asarray(gpu, dtype=object)
    y = np.asarray(y, dtype=float)
    test = np.asarray(test, dtype=bool)
    key = workload_keys(X)
    figs = single_factor_figures(X)
    per_source = {}  # each source's median time and figures per workload, the same for every test GPU
    for s in sources:
        src = np.flatnonzero(gpu == s)
        per_source[s] = pd.DataFrame({"time": y[src], **{f: figs[f][src] for f in factors}},
                                     index=pd.Index(key[src], name="key")).groupby(level=0).median()
    out = {}
    for g in sorted(set(gpu[test])):
        target = np.flatnonzero(test & (gpu == g))
        best, candidates = None, {}
        for s, per_key in per_source.items():
            at = per_key.index.get_indexer(key[target])
            found = at >= 0
            for f in factors:
                with np.errstate(invalid="ignore", divide="ignore"):
                    pred = np.where(found, per_key["time"].to_numpy()[at] * per_key[f].to_numpy()[at], np.nan) \
                        / figs[f][target]
                ok = np.isfinite(pred) & (pred > 0)
                if not ok.any():
                    continue
                candidates[(str(s), f)] = figure = float(mdape(y[target][ok], pred[ok]))
                if best is None or figure < best[0]:
                    best = (figure, str(s), f, target[ok])
        figure, source, factor, covered = best or (None, None, None, np.zeros(0, dtype=np.int64))
        out[str(g)] = SingleFactorTransfer(str(g), source, factor, figure, covered, int(target.size), candidates)
    return out
