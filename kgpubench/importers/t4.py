"""T4 results files (the auto-tuning community's results format, schema 1.0.0): read and write.

A T4 results file is ``{"schema_version": "1.0.0", "results": [...]}``; each result has ``configuration``
(object), ``times`` (object: ``compilation_time``, ``runtimes``, ``framework``, ``search_algorithm``,
``validation``), ``invalidity`` (one of timeout, compile, runtime, correctness, constraints, correct),
``correctness`` (number) -- those four required -- and optionally ``timestamp``, ``objectives`` (array) and
``measurements`` (objects with ``name``, ``value`` and ``unit``). The format names neither the GPU nor the kernel
nor the problem size: kgpubench writes them under a top-level ``metadata`` object (``device_name``,
``kernel_name``, ``problem_size``), which the schema allows, and reads them from there or from options.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.importers.common import (
    ImportFormatError,
    LoadedFile,
    Provenance,
    TimingBatch,
    base_row,
    check_times,
    collected_at,
    is_number,
    join_params,
    number_or_none,
    problem_size_text,
    resolve_gpu,
    run_id_for,
    split_params,
)
from kgpubench.schema.autotune import FAILURES

FORMAT = "t4"
T4_SCHEMA_VERSION = "1.0.0"
INVALIDITY = ("timeout", "compile", "runtime", "correctness", "constraints", "correct")
REQUIRED = ("configuration", "times", "invalidity", "correctness")
T4_STATUS = {"correct": "ok", "compile": "compile_error", "runtime": "launch_error", "timeout": "launch_error",
             "correctness": "verification_failed", "constraints": "infeasible"}
STATUS_T4 = {"ok": "correct", "compile_error": "compile", "launch_error": "runtime",
             "verification_failed": "correctness", "infeasible": "constraints"}
# T4 `times` keys (and Kernel Tuner's spelling `compilation`) -> autotune columns.
TIME_KEYS = {"compilation_time": "compile_time_ms", "compilation": "compile_time_ms",
             "benchmark": "benchmark_time_ms", "framework": "framework_time_ms",
             "search_algorithm": "strategy_time_ms", "validation": "verification_time_ms"}
WRITE_TIME_KEYS = {"compile_time_ms": "compilation_time", "benchmark_time_ms": "benchmark",
                   "framework_time_ms": "framework", "strategy_time_ms": "search_algorithm",
                   "verification_time_ms": "validation"}
# Measurement name -> (column, unit); written by export, read back by import.
STATS = {"time_ms_median": "ms", "time_ms_min": "ms", "time_ms_mean": "ms", "time_ms_std": "ms", "repeats": "",
         "time_cv": ""}
MEASURED = {"GFLOP/s": ("gflops_reported", "GFLOP/s"), "GB/s": ("gbs_reported", "GB/s"),
            "power_w_avg": ("power_w_avg", "W"), "energy_j": ("energy_j", "J"),
            "power_window_ms": ("power_window_ms", "ms"), "power_samples": ("power_samples", ""),
            "power_idle_w": ("power_idle_w", "W")}
INT_COLUMNS = {"repeats", "power_samples"}
# Measurement identity in exported files: each result's string measurement `run_id`, and per run (metadata
# RUNS_KEY: run_id -> facts) the provenance columns its rows share, restored on re-import of imported rows.
RUN_ID = "run_id"
RUNS_KEY = "kgpubench_runs"
RUN_FIELDS = ("source", "source_file", "source_format", "source_commit", "source_doi", "source_license",
              "objective", "search_space_size")


def is_t4_results(data: Any) -> bool:
    """Whether parsed JSON looks like a T4 results file (a ``results`` array)."""
    return isinstance(data, dict) and isinstance(data.get("results"), list)


def rows_from_t4(loaded: LoadedFile, prov: Provenance, *, gpu: str | None = None, kernel: str | None = None,
                 problem_size: str | None = None) -> list[dict[str, Any]]:
    """`autotune` rows (dicts, without ``row_id``) for every result of a loaded T4 results file.

    ``gpu``, ``kernel`` and ``problem_size`` override (or stand in for) the file's ``metadata``.

    Raises
    ------
    ImportFormatError
        A result missing a required key, an invalidity outside the schema's enum, a successful result with
        neither runtimes nor kgpubench's statistics, or no kernel/problem size anywhere.
    """
    data, path = loaded.data, loaded.path
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    unit = str(meta.get("timeunit", "milliseconds")).lower()
    if not unit.startswith(("mil", "ms")):
        raise ImportFormatError(f"{path}: metadata.timeunit is {unit!r}; kgpubench reads T4 times in milliseconds.")
    kernel = kernel or meta.get("kernel_name")
    size = problem_size or meta.get("problem_size")
    if not kernel or size in (None, ""):
        raise ImportFormatError(
            f"{path}: a T4 results file does not say which kernel and problem size it measured (no "
            "metadata.kernel_name / metadata.problem_size); pass --kernel NAME and --problem-size SIZE.")
    gpu_cols = resolve_gpu(meta.get("device_name"), gpu, path)
    shared = base_row(prov, loaded, run_id_for("t4", loaded.sha256), gpu_cols, FORMAT)
    shared.update(kernel=str(kernel), problem_size=problem_size_text(size), search_space_size=len(data["results"]))
    runs = meta.get(RUNS_KEY) if isinstance(meta.get(RUNS_KEY), dict) else {}
    batch = TimingBatch()
    rows = [_restore_identity(_row(shared, i, r, prov, path, batch), r, runs) for i, r in enumerate(data["results"])]
    batch.fill()
    return rows


def _restore_identity(row: dict[str, Any], result: Mapping[str, Any], runs: Mapping[str, Any]) -> dict[str, Any]:
    """Give a row exported by kgpubench back its measurement identity: its ``run_id`` (so merging it again
    is a no-op) and, for imported rows, the provenance of its run (source, upstream file, licence...)."""
    run_id = next((m.get("value") for m in result.get("measurements") or []
                   if isinstance(m, dict) and m.get("name") == RUN_ID), None)
    if not isinstance(run_id, str):
        return row
    row["run_id"] = run_id
    facts = runs.get(run_id)
    if isinstance(facts, dict) and str(facts.get("source", "")).startswith("imported:"):
        row.update({k: facts[k] for k in RUN_FIELDS if k in facts})
    return row


def _row(shared: dict, i: int, result: Any, prov: Provenance, path: Path, batch: TimingBatch) -> dict[str, Any]:
    where = f"results[{i}]"
    if not isinstance(result, dict) or any(k not in result for k in REQUIRED):
        have = sorted(result) if isinstance(result, dict) else type(result).__name__
        raise ImportFormatError(f"{path}: {where} must have {', '.join(REQUIRED)} (T4 results schema); has {have}.")
    invalidity = result["invalidity"]
    if invalidity not in INVALIDITY:
        raise ImportFormatError(f"{path}: {where} has invalidity {invalidity!r}; the T4 schema allows "
                                f"{', '.join(INVALIDITY)}.")
    if not isinstance(result["configuration"], dict) or not isinstance(result["times"], dict):
        raise ImportFormatError(f"{path}: {where}: configuration and times must be objects.")
    params, params_text = split_params(result["configuration"], f"{path}: {where}: ")
    objectives = result.get("objectives") or []
    row = dict(shared, params=params, params_text=params_text, status=T4_STATUS[invalidity],
               failure=None if invalidity == "correct" else invalidity,
               objective=str(objectives[0]) if objectives else None,
               collected_at=collected_at(result.get("timestamp"), prov, path, where))
    for key, col in TIME_KEYS.items():
        if key in result["times"]:
            row[col] = number_or_none(result["times"][key])
    measured = {m.get("name"): m.get("value") for m in result.get("measurements") or [] if isinstance(m, dict)}
    for name, (col, _unit) in MEASURED.items():
        if is_number(measured.get(name)):
            row[col] = int(measured[name]) if col in INT_COLUMNS else float(measured[name])
    if invalidity != "correct" and measured.get("failure") in FAILURES:
        row["failure"] = measured["failure"]
    if row["status"] == "ok":
        if is_number(measured.get("time")):
            row["time_ms_reported"] = float(measured["time"])
        if all(is_number(measured.get(s)) for s in STATS if s != "time_cv"):
            row.update({s: (int(measured[s]) if s in INT_COLUMNS else float(measured[s]))
                        for s in STATS if is_number(measured.get(s))})
        else:
            batch.add(row, check_times(result["times"].get("runtimes"), path, where))
    return row


def t4_result(row: Mapping[str, Any], configuration: Mapping[str, Any]) -> dict[str, Any]:
    """One T4 result object for a kgpubench row (any config) and its tunable ``configuration``.

    Times: the tuner phase times that the row has; ``runtimes`` is empty because kgpubench keeps the repeat
    statistics, not every repeat: those travel as ``measurements`` (``time_ms_median`` ... ``repeats``), next to
    ``time`` (the objective: the source's reported time, else the mean, as Kernel Tuner defines it). A source
    failure marker that is not a T4 invalidity (e.g. ``CompilationFailedConfig``) travels as the string
    measurement ``failure``, so a re-import restores it; the row's ``run_id`` travels as the string
    measurement ``run_id`` (its run's provenance in the document's ``metadata``, see :func:`run_facts`).
    """
    times: dict[str, Any] = {WRITE_TIME_KEYS[c]: row[c] for c in WRITE_TIME_KEYS if row.get(c) is not None}
    times["runtimes"] = []
    status = row["status"]
    failure = row.get("failure")
    invalidity = failure if failure in INVALIDITY else STATUS_T4[status]
    measurements = []
    if status == "ok":
        time = row.get("time_ms_reported") if row.get("time_ms_reported") is not None else row.get("time_ms_mean")
        if time is not None:
            measurements.append({"name": "time", "value": time, "unit": "ms"})
    for name, unit in STATS.items():
        if row.get(name) is not None:
            measurements.append({"name": name, "value": row[name], "unit": unit})
    for name, (col, unit) in MEASURED.items():
        if row.get(col) is not None:
            measurements.append({"name": name, "value": row[col], "unit": unit})
    if failure and failure not in INVALIDITY:  # keep the source's own marker (e.g. CompilationFailedConfig)
        measurements.append({"name": "failure", "value": failure, "unit": ""})
    if row.get("run_id"):
        measurements.append({"name": RUN_ID, "value": row["run_id"], "unit": ""})
    out = {"timestamp": _iso(row.get("collected_at")), "configuration": dict(configuration), "times": times,
           "invalidity": invalidity, "correctness": 0 if status == "verification_failed" else 1,
           "measurements": measurements, "objectives": ["time"]}
    if out["timestamp"] is None:
        del out["timestamp"]
    return out


def run_facts(rows: list[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """run_id -> the :data:`RUN_FIELDS` its rows share (a field whose value differs within a run is left out)."""
    facts: dict[str, dict[str, Any]] = {}
    mixed: dict[str, set[str]] = {}
    for row in rows:
        run = row.get("run_id")
        if not run:
            continue
        have = facts.setdefault(run, {k: row[k] for k in RUN_FIELDS if k in row})
        for k in RUN_FIELDS:
            if k in have and have[k] != row.get(k):
                mixed.setdefault(run, set()).add(k)
    return {run: {k: v for k, v in f.items() if k not in mixed.get(run, ())} for run, f in sorted(facts.items())}


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.isoformat()
    return str(value)


def t4_document(results: list[dict], *, device_name: str, kernel_name: str, problem_size: str,
                extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A whole T4 results document with kgpubench's ``metadata`` block."""
    meta = {"timeunit": "milliseconds", "device_name": device_name, "kernel_name": kernel_name,
            "problem_size": problem_size, **(extra or {})}
    return {"schema_version": T4_SCHEMA_VERSION, "metadata": meta, "results": results}


def write_t4(path: Path | str, document: Mapping[str, Any], *, overwrite: bool = True) -> Path:
    """Write a T4 document as JSON (atomically; keys in a stable order; an existing file kept unless
    ``overwrite``)."""
    path = Path(path)
    atomic_write_bytes(path, (json.dumps(document, indent=1, allow_nan=False) + "\n").encode(), overwrite=overwrite)
    return path


def configuration_of_autotune(row: Mapping[str, Any]) -> dict[str, Any]:
    """The tunable configuration of an `autotune` row (``params`` and ``params_text`` joined)."""
    return join_params(row.get("params"), row.get("params_text"))
