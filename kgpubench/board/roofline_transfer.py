"""The roofline transfer: a kernel's time on one GPU carried to another GPU by the ratio of the two GPUs' roofline
bounds for the kernel's work, and its error measured leave-one-GPU-out on a task with many GPUs.

Where a task's data holds too few GPUs to learn how the GPU's figures move times (kernel-time: one GPU),
``kgpubench predict`` answers for another GPU with

    t_target = t_source * roof(target) / roof(source),   roof(g) = max(flops / peak_fp32(g), bytes / bandwidth(g))

(:func:`kgpubench.tasks.roofline.roofline_ms`, the bound the operator baselines use), ``t_source`` being the
model's prediction on the data's GPU nearest to the target, ``flops`` and ``bytes`` the kernel's work
(:data:`WORK_RULES`: per-thread counts of ``kgpubench features`` times the threads launched). The ratio is
physically bounded: a memory-bound kernel moves by the ratio of bandwidths, a compute-bound one by the ratio of
peaks, a kernel that changes side in between by less than either.

How wrong that is on a GPU nobody measured is measured, not assumed (:func:`score`): on :data:`SCORED_ON`
(``rodinia-time``: the same launches profiled on 8 NVIDIA GPUs), every launch measured on a held-out GPU ``B`` is
predicted from its measured time on every other GPU ``A`` (the work from ``A``'s profiler counters: flops executed
and bytes requested by global loads and stores, the counterparts of the static counts), and measured / predicted is
kept, and so is the error of answering with ``A``'s time unchanged (what ignoring the GPU gives), for comparison.
The transfer fits nothing, so every GPU is held out in turn without a training fold. :func:`scored` caches
the distribution (quantiles of measured / predicted over every ordered GPU pair and launch) as JSON under
``$KGPUBENCH_CACHE_DIR/transfer``, keyed by the scored task's store files and this module's source.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kgpubench.errors import OptionError
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.resources import cache_home, default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import as_task
from kgpubench.tasks.data import files_sha256
from kgpubench.tasks.roofline import roofline_ms
from kgpubench.tasks.selection import task_rows

SCORED_ON = "rodinia-time"
# The columns that name one launch of the scored task, measured once per GPU (the same launch on two GPUs).
LAUNCH_KEY = ("application", "kernel", "input_size_1", "input_size_2", "launch_index", "grid_x", "grid_y", "grid_z",
              "block_x", "block_y", "block_z")
FIGURES = ("gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops")
QUANTILES = 1001  # the measured / predicted distribution is kept as this many evenly spaced quantiles
FORMAT = 2


@dataclass(frozen=True)
class WorkRule:
    """How a config's inputs give one launch's work: ``columns`` read, ``work(frame) -> (flops, bytes)``."""

    columns: tuple[str, ...]
    work: Callable[[pd.DataFrame], tuple[np.ndarray, np.ndarray]]
    what: str


def _numbers(X: pd.DataFrame, column: str) -> np.ndarray:
    return pd.to_numeric(X[column], errors="coerce").to_numpy(dtype=float)


def _kernel_work(X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    threads = _numbers(X, "nb") * _numbers(X, "nt")
    flops = _numbers(X, "flops") * threads
    moved = (_numbers(X, "global_bytes_read") + _numbers(X, "global_bytes_written")) * threads
    return flops, moved


def _profile_work(X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    flops = (_numbers(X, "prof_floating_point_operations_single_precision")
             + _numbers(X, "prof_floating_point_operations_double_precision"))
    moved = 4.0 * (_numbers(X, "prof_gld_inst_32bit") + _numbers(X, "prof_gst_inst_32bit"))
    return flops, moved


# Per config: the columns that give a launch's work and how (kernels: the static per-thread counts of `kgpubench
# features` times nb x nt threads; profiles: the profiler's flop counts and 4 bytes per 32-bit global load/store).
WORK_RULES: dict[str, WorkRule] = {
    "kernels": WorkRule(("flops", "global_bytes_read", "global_bytes_written", "nb", "nt"), _kernel_work,
                        "flops and global bytes read + written per thread (kgpubench features) x nb x nt threads"),
    "profiles": WorkRule(("prof_floating_point_operations_single_precision",
                          "prof_floating_point_operations_double_precision", "prof_gld_inst_32bit",
                          "prof_gst_inst_32bit"), _profile_work,
                         "flop counts and 4 B per 32-bit global load and store instruction (nvprof)"),
}


def bound_ms(flops: float, moved: float, figures: Mapping[str, Any]) -> float:
    """The roofline bound (ms) of one launch of ``flops`` and ``moved`` bytes on a GPU of ``figures``."""
    frame = pd.DataFrame({"flops": [flops], "bytes_min": [moved],
                          **{c: [_float(figures.get(c))] for c in FIGURES}})
    return float(roofline_ms(frame)[0])


def limiter(flops: float, moved: float, figures: Mapping[str, Any]) -> str:
    """``memory`` or ``compute``: which side of the roofline bounds the launch on that GPU."""
    compute = flops / (_float(figures.get("gpu_peak_fp32_gflops")) * 1e9)
    memory = moved / (_float(figures.get("gpu_memory_bandwidth_gbs")) * 1e9)
    return "compute" if compute > memory else "memory"


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def work_of(config: str, values: Mapping[str, Any]) -> tuple[float, float]:
    """``(flops, bytes)`` of one input of ``config`` (:data:`WORK_RULES`); one :class:`OptionError` naming the
    columns when a count is missing, not a number or negative, or the launch does no work at all."""
    rule = WORK_RULES[config]
    missing = [c for c in rule.columns if values.get(c) is None or not math.isfinite(_float(values.get(c)))]
    if missing:
        raise OptionError(f"the roofline transfer needs {', '.join(rule.columns)} ({rule.what}); "
                          f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing or not a number: give "
                          "the output of `kgpubench features --json` as --input (it has them), or --set each.")
    flops, moved = (float(v[0]) for v in rule.work(pd.DataFrame({c: [_float(values[c])] for c in rule.columns})))
    if flops < 0 or moved < 0 or flops + moved <= 0:
        raise OptionError(f"the roofline transfer needs a launch that does work: {', '.join(rule.columns)} give "
                          f"{flops:g} flops and {moved:g} bytes.")
    return flops, moved


# ----- the error of the transfer, leave one GPU out --------------------------------------------------------------
@dataclass(frozen=True)
class TransferScore:
    """measured / predicted of the transfer on :data:`SCORED_ON`, over every launch and ordered GPU pair."""

    task: str
    gpus: list[str]
    pairs: int
    quantiles: list[float]
    median_ape: float
    per_gpu_median_ape: dict[str, float]
    store_files: str
    unchanged_median_ape: float  # the same pairs answered with the source GPU's time as it is (GPU ignored)

    def ratio_quantile(self, q: float) -> float:
        """The ``q`` quantile of measured / predicted (interpolated in the kept grid)."""
        grid = np.linspace(0.0, 1.0, len(self.quantiles))
        return float(np.interp(q, grid, self.quantiles))


def score(data_dir: Path | str | None = None, task: str = SCORED_ON) -> TransferScore:
    """The transfer's leave-one-GPU-out error on ``task``'s rows (see the module docstring)."""
    the_task = as_task(task)
    store = Store(data_dir or default_data_dir())
    rule = WORK_RULES[the_task.config]
    rows = task_rows(the_task, store.read(the_task.config))
    cols = ["gpu_name", *LAUNCH_KEY, the_task.target, *FIGURES, *rule.columns]
    df = rows.select(list(dict.fromkeys(cols))).to_pandas()
    flops, moved = rule.work(df)
    df["_bound"] = roofline_ms(pd.DataFrame({"flops": flops, "bytes_min": moved,
                                             **{c: df[c].to_numpy(dtype=float) for c in FIGURES}}))
    df["_key"] = pd.factorize(pd.MultiIndex.from_frame(df[list(LAUNCH_KEY)].astype(str)))[0]
    df = df[np.isfinite(df["_bound"]) & (df[the_task.target] > 0)]
    by_gpu = {g: part.drop_duplicates("_key").set_index("_key") for g, part in df.groupby("gpu_name")}
    gpus = sorted(by_gpu)
    logs, per_gpu, unchanged = [], {}, []
    for target in gpus:
        mine = []
        for source in gpus:
            if source == target:
                continue
            a, b = by_gpu[source], by_gpu[target]
            common = a.index.intersection(b.index)
            predicted = (a.loc[common, the_task.target] * b.loc[common, "_bound"] / a.loc[common, "_bound"]).to_numpy()
            measured = b.loc[common, the_task.target].to_numpy()
            mine.append(np.log(measured / predicted))
            unchanged.append(np.abs(measured / a.loc[common, the_task.target].to_numpy() - 1.0))
        if mine:
            held = np.concatenate(mine)
            per_gpu[target] = float(np.median(np.abs(np.expm1(held))) * 100)
            logs.append(held)
    every = np.concatenate(logs) if logs else np.array([])
    if every.size < 2:
        raise OptionError(f"the roofline transfer cannot be scored on task {task!r}: no launch measured on two GPUs.")
    grid = np.exp(np.quantile(every, np.linspace(0.0, 1.0, QUANTILES)))
    return TransferScore(task, gpus, int(every.size), [float(x) for x in grid],
                         float(np.median(np.abs(np.expm1(every))) * 100), per_gpu,
                         files_sha256(the_task, store), float(np.median(np.concatenate(unchanged)) * 100))


def _source_sha256() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def scored(data_dir: Path | str | None = None, task: str = SCORED_ON) -> tuple[TransferScore, bool]:
    """:func:`score`, read from the cache when the scored task's store files and this module are unchanged;
    with whether it came from the cache. The entry is JSON (read as data, never run)."""
    store = Store(data_dir or default_data_dir())
    files = files_sha256(as_task(task), store)
    key = hashlib.sha256(json.dumps([FORMAT, task, files, _source_sha256()]).encode()).hexdigest()
    path = cache_home("transfer") / f"{task}-{key}.json"
    try:
        saved = json.loads(path.read_text())
        found = TransferScore(**saved)
        if len(found.quantiles) == QUANTILES and found.store_files == files:
            return found, True
    except (OSError, ValueError, TypeError):
        pass
    fresh = score(data_dir, task)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, json.dumps(asdict(fresh)).encode())
    return fresh, False


__all__ = ["FIGURES", "LAUNCH_KEY", "SCORED_ON", "WORK_RULES", "TransferScore", "WorkRule", "bound_ms", "limiter",
           "score", "scored", "work_of"]
