"""Kernel Tuner cache files (plain or gzipped JSON) to `autotune` rows.

A cache holds ``device_name``, ``kernel_name``, ``problem_size``, ``tune_params_keys``, ``tune_params``,
optionally ``objective``, and ``cache``: "v1,v2,..." -> a record with the parameter values, ``time`` (ms, the
mean of ``times``) or a failure marker string, ``times`` (the repeats), the tuner's phase times and sometimes
``timestamp``, ``GFLOP/s`` or ``GB/s``.
"""

from __future__ import annotations

import json
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import KgpubenchError
from kgpubench.importers.common import (
    EXACT_INT,
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
    timing_stats,
)
from kgpubench.schema import get_table

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
    return _rows(loaded, prov, _shared(loaded, prov, gpu))


def columns_from_cache(loaded: LoadedFile, prov: Provenance, *,
                       gpu: str | None = None) -> tuple[dict, int, dict] | list[dict[str, Any]]:
    """The rows of :func:`rows_from_cache` as columns: ``(columns, num_rows, constants)`` for
    :meth:`~kgpubench.schema.Table.from_columns` (the fast path of :func:`kgpubench.importers.import_table`).

    A cache whose records are all of the common shape (objects with every tunable parameter, each parameter
    either always a finite number or never one, a time that is a number with a list of repeats or a failure
    marker) is read column-wise; any other cache is returned as :func:`rows_from_cache`'s rows (whose reading
    raises the errors). Both give the same table.
    """
    shared = _shared(loaded, prov, gpu)
    try:
        columns = _columns(loaded, prov, get_table("autotune"))
    except KgpubenchError:
        columns = None  # the row path names the problem
    if columns is None:
        return _rows(loaded, prov, shared)
    return columns, len(loaded.data["cache"]), shared


def _shared(loaded: LoadedFile, prov: Provenance, gpu: str | None) -> dict[str, Any]:
    """The columns every row of the file shares (checks the top-level shape; resolves the GPU once)."""
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
    return shared


def _rows(loaded: LoadedFile, prov: Provenance, shared: dict[str, Any]) -> list[dict[str, Any]]:
    keys = list(loaded.data["tune_params_keys"])
    batch = TimingBatch()
    rows = []
    for cache_key, record in loaded.data["cache"].items():
        rows.append(_row(shared, keys, cache_key, record, prov, loaded.path, batch))
    batch.fill()
    return rows


def _columns(loaded: LoadedFile, prov: Provenance, table) -> dict[str, Any] | None:
    """The per-row columns of a cache of the common shape (see :func:`table_from_cache`), else None."""
    data, path = loaded.data, loaded.path
    cache = data["cache"]
    keys, records = data["tune_params_keys"], list(cache.values())
    n = len(records)
    if not n or not isinstance(keys, list) or any(type(k) is not str for k in keys) \
            or any(type(r) is not dict for r in records):
        return None
    numeric, text = [], []
    for name in sorted(set(keys)):
        try:
            values = [r[name] for r in records]
        except KeyError:
            return None
        kinds = set(map(type, values))
        if int in kinds and any(type(v) is int and abs(v) > EXACT_INT for v in values):
            return None  # a parameter a float64 cannot hold exactly: the row path refuses it, naming it
        if kinds <= {float, int}:
            try:
                arr = np.asarray(values, dtype=np.float64)
            except OverflowError:
                return None
            if not np.isfinite(arr).all():
                return None
            numeric.append((name, arr))
        elif not kinds & {float, int} and not any(issubclass(k, (float, int)) and k is not bool for k in kinds):
            text.append((name, [json.dumps(v, sort_keys=True) for v in values]))
        else:
            return None
    columns: dict[str, Any] = {
        "params": _pairs([name for name, _ in numeric], [arr for _, arr in numeric], n, table.column("params")),
        "params_text": _pairs([name for name, _ in text], [vals for _, vals in text], n,
                              table.column("params_text")),
        "collected_at": [collected_at(r.get("timestamp"), prov, path, k) for k, r in cache.items()],
        "gflops_reported": _numbers([r.get("GFLOP/s") for r in records]),
        "gbs_reported": _numbers([r.get("GB/s") for r in records]),
    }
    for src, dst in PHASES.items():
        columns[dst] = _numbers([r.get(src) for r in records])
    status, failure, reported, ok, times = [], [], [], [], []
    for i, (cache_key, record) in enumerate(cache.items()):
        time = record.get("time")
        if isinstance(time, str):
            status.append(kt_status(time, path, cache_key))
            failure.append(time)
            reported.append(None)
        elif is_number(time):
            status.append("ok")
            failure.append(None)
            reported.append(float(time))
            ok.append(i)
            times.append(record.get("times"))
        else:
            return None
    columns.update(status=status, failure=failure, time_ms_reported=reported)
    # The repeats checked in bulk (what check_times asks of each list): non-empty lists of JSON numbers whose
    # statistics are finite (an inf or nan repeat makes the mean or the minimum so); anything else: row path.
    if not all(type(t) is list and t for t in times) or not set(map(type, chain.from_iterable(times))) <= {float, int}:
        return None
    try:
        stats = timing_stats(times)
    except OverflowError:  # an int too large for a float
        return None
    if not (np.isfinite(stats["time_ms_mean"]).all() and np.isfinite(stats["time_ms_min"]).all()):
        return None
    ok_rows = np.zeros(n, dtype=bool)
    ok_rows[ok] = True
    for name, values in stats.items():
        full = np.zeros(n, dtype=values.dtype)
        full[ok_rows] = values
        missing = ~ok_rows
        if name == "time_cv":
            missing = missing | ~(np.zeros(n) < _spread(stats["time_ms_mean"], ok_rows))
        columns[name] = pa.array(full, mask=missing).cast(table.column(name).arrow_type)
    return columns


def _numbers(values: list) -> pa.Array | list:
    """:func:`number_or_none` of every value, as a float64 array when the values are JSON's floats, small ints
    and nulls (anything else value by value)."""
    if set(map(type, values)) <= {float, int, type(None)}:
        try:
            arr = pa.array(values, pa.float64())
        except (pa.ArrowException, OverflowError):
            arr = None  # an int a float64 cannot hold exactly
        if arr is not None:
            return pc.if_else(pc.fill_null(pc.is_finite(arr), False), arr, pa.scalar(None, pa.float64()))
    return [number_or_none(v) for v in values]


def _spread(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values`` (one per selected row) spread over every row, nan elsewhere."""
    full = np.full(len(rows), np.nan)
    full[rows] = values
    return full


def _pairs(names: list[str], values: list, n: int, column) -> pa.Array:
    """A (name, value) list column whose every row holds ``names`` in order with that row's values."""
    struct_type = column.arrow_type.value_type
    p = len(names)
    if p:
        flat_names = pa.array(names * n, pa.string())
        if isinstance(values[0], np.ndarray):
            flat_values = pa.array(np.column_stack(values).reshape(-1), struct_type.field("value").type)
        else:
            flat_values = pa.array([v for row in zip(*values) for v in row], struct_type.field("value").type)
    else:
        flat_names, flat_values = pa.array([], pa.string()), pa.array([], struct_type.field("value").type)
    items = pa.StructArray.from_arrays([flat_names, flat_values], fields=list(struct_type))
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * p, pa.int32())
    return pa.ListArray.from_arrays(offsets, items, type=column.arrow_type)


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
