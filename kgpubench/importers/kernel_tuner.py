"""Kernel Tuner cache files (plain or gzipped JSON) to `autotune` rows.

A cache holds ``device_name``, ``kernel_name``, ``problem_size``, ``tune_params_keys``, ``tune_params``,
optionally ``objective``, and ``cache``: "v1,v2,..." -> a record with the parameter values, ``time`` (ms, the
mean of ``times``) or a failure marker string, ``times`` (the repeats), the tuner's phase times and sometimes
``timestamp``, ``GFLOP/s`` or ``GB/s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgpubench.importers.common import (
    ImportFormatError,
    LoadedFile,
    Provenance,
    TimingBatch,
    base_row,
    check_times,
    collected_at,
    is_number,
    kt_status,
    number_or_none,
    problem_size_text,
    resolve_gpu,
    run_id_for,
    split_params,
)

FORMAT = "kernel-tuner-cache"
REQUIRED_KEYS = ("kernel_name", "problem_size", "tune_params_keys", "cache")
PHASES = {"compile_time": "compile_time_ms", "benchmark_time": "benchmark_time_ms",
          "verification_time": "verification_time_ms", "framework_time": "framework_time_ms",
          "strategy_time": "strategy_time_ms"}


def is_kernel_tuner_cache(data: Any) -> bool:
    """Whether parsed JSON looks like a Kernel Tuner cache (has ``cache`` and ``tune_params_keys``)."""
    return isinstance(data, dict) and "cache" in data and "tune_params_keys" in data


def rows_from_cache(loaded: LoadedFile, prov: Provenance, *, gpu: str | None = None) -> list[dict[str, Any]]:
    """`autotune` rows (dicts, without ``row_id``) for every configuration of a loaded cache file.

    Parameters
    ----------
    loaded : LoadedFile
        From :func:`kgpubench.importers.common.load_json`.
    prov : Provenance
        Source name, licence, commit, DOI and the fallback date.
    gpu : str, optional
        GPU name overriding the file's ``device_name`` (required when that is empty or unknown).

    Raises
    ------
    ImportFormatError
        A missing top-level key, a record without a parameter value, an unknown failure string (named with
        its configuration key), or a successful record without ``times``.
    """
    data, path = loaded.data, loaded.path
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ImportFormatError(f"{path}: not a Kernel Tuner cache file: missing top-level key(s) {missing}.")
    if not isinstance(data["cache"], dict):
        raise ImportFormatError(f"{path}: `cache` is a {type(data['cache']).__name__}, expected an object.")
    gpu_cols = resolve_gpu(data.get("device_name"), gpu, path)
    shared = base_row(prov, loaded, run_id_for("kt", loaded.sha256), gpu_cols, FORMAT)
    shared.update(kernel=str(data["kernel_name"]), problem_size=problem_size_text(data["problem_size"]),
                  objective=data.get("objective"), search_space_size=len(data["cache"]))
    keys = list(data["tune_params_keys"])
    batch = TimingBatch()
    rows = []
    for cache_key, record in data["cache"].items():
        rows.append(_row(shared, keys, cache_key, record, prov, path, batch))
    batch.fill()
    return rows


def _row(shared: dict, keys: list[str], cache_key: str, record: Any, prov: Provenance, path: Path,
         batch: TimingBatch) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ImportFormatError(f"{path}: configuration {cache_key!r} is a {type(record).__name__}, expected an "
                                "object.")
    try:
        config = {k: record[k] for k in keys}
    except KeyError as exc:
        raise ImportFormatError(f"{path}: configuration {cache_key!r} lacks tunable parameter {exc.args[0]!r} "
                                "named in tune_params_keys.") from None
    params, params_text = split_params(config, f"{path}: configuration {cache_key!r}: ")
    row = dict(shared, params=params, params_text=params_text,
               collected_at=collected_at(record.get("timestamp"), prov, path, cache_key),
               gflops_reported=number_or_none(record.get("GFLOP/s")),
               gbs_reported=number_or_none(record.get("GB/s")))
    for src, dst in PHASES.items():
        row[dst] = number_or_none(record.get(src))
    time = record.get("time")
    if isinstance(time, str):
        row.update(status=kt_status(time, path, cache_key), failure=time)
    elif is_number(time):
        row.update(status="ok", time_ms_reported=float(time))
        batch.add(row, check_times(record.get("times"), path, cache_key))
    else:
        raise ImportFormatError(f"{path}: configuration {cache_key!r} has time {time!r}; expected a number (ms) "
                                "or a failure marker string.")
    return row
