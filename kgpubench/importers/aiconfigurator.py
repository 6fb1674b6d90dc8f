"""Import NVIDIA AIConfigurator's per-operator database (ai-dynamo/aiconfigurator, Apache-2.0) as `llm_operators`
rows.

Input: the database folder as published (``aic-core/src/aiconfigurator_core/systems/data``), the repository's root,
or a folder holding it as ``data/``. Its layout, which is all this importer relies on (no list of systems,
frameworks or versions), is::

    <system>/gemm/<framework>/<version>/gemm_perf.parquet
    <system>/attention/<framework>/<version>/context_attention_perf.parquet
    <system>/attention/<framework>/<version>/generation_attention_perf.parquet
    <system>/<family>/<framework>/<version>/collection_meta.yaml   (optional: `provenance: collected|legacy`)

Other tables of the database (moe, mla, communication, ...) are not imported; the count of such files is said in
one notice. A new system, framework or version folder imports as it is: its GPU is the file's ``device`` column
(the name the driver reported), resolved through the GPU catalogue (:func:`kgpubench.hardware.gpu_columns`; a name
the catalogue does not know keeps null figures and gets one warning line).

Quirks of the upstream files, each handled on purpose:

- Column order and string types (``string`` or ``large_string``) differ between files; columns are read by name.
- Older attention tables have no ``window_size`` column: their rows get a null ``window_size`` (full attention).
- A few older tables measured a point twice (A100 vLLM context attention: 408 repeats); every measurement is kept,
  numbered by ``occurrence``.
- The ``version`` column is the framework version; the folder name may round it (B60's ``0.20.0`` folder holds
  ``0.20.1.dev3+...``). The file's value is kept.
- ``framework`` is upper- or mixed-case upstream (``TRTLLM``, ``SGLang``, ``VLLM``); it is stored lower-cased and
  must equal the framework folder's name.

Nominal work (inputs, from the shape and dtype alone; element sizes in bytes: bf16 2, fp8 1, fp4 0.5, int8 1,
int4 0.5; outputs in bf16):

=====================  ===========================================  ===================================================
operator               flops                                        bytes_min
=====================  ===========================================  ===================================================
gemm                   2 m n k                                      m k a + k n b + 2 m n (a, b: A and B element sizes)
context_attention      4 B H S L D, L = S (min(S, W) with window)   B S H D q + 2 B Hkv L D kv + 2 B S H D
generation_attention   4 B H 1 L D, L = step + 1 (min with window)  B H D q + 2 B Hkv L D kv + 2 B H D
=====================  ===========================================  ===================================================

with B batch, S the input sequence length (``isl``), H heads, Hkv KV heads, D head dimension, q the query and kv the
KV-cache element size. No causal halving: a nominal figure for a roofline, not the kernels' work.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kgpubench.buildinfo import package_version
from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import read_capped
from kgpubench.hardware import tensor_peak_tflops
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import AICONFIGURATOR, Provenance, arrow_column, import_gpu_columns, notice
from kgpubench.schema import arrow_row_id_array, get_table
from kgpubench.schema._core import joined, long_runs, repeated, spread_runs
from kgpubench.schema._parallel import parallel_map, start_workers, to_parent

CONFIG = "llm_operators"
TIME_STATISTIC = "mean-per-call-cuda-graph"
SOURCE_FORMAT = "aiconfigurator-parquet"
# Upstream table file -> (operator, family folder).
TABLE_FILES = {"gemm_perf.parquet": ("gemm", "gemm"),
               "context_attention_perf.parquet": ("context_attention", "attention"),
               "generation_attention_perf.parquet": ("generation_attention", "attention")}
TEXT = ("framework", "version", "device", "op_name", "kernel_source")
GEMM_INTS = ("m", "n", "k")
ATTENTION_INTS = ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "beam_width", "step")
# Upstream column -> our column, where the names differ.
RENAME = {"num_key_value_heads": "num_kv_heads", "version": "framework_version", "latency": "time_ms"}
# Upstream dtype -> (compute dtype, bytes per element of A / the query, of B / the KV cache).
GEMM_DTYPES = {"bfloat16": ("bf16", 2.0, 2.0), "fp8": ("fp8", 1.0, 1.0), "fp8_block": ("fp8", 1.0, 1.0),
               "nvfp4": ("fp4", 0.5, 0.5), "int8_wo": ("bf16", 2.0, 1.0), "int4_wo": ("bf16", 2.0, 0.5),
               "sq": ("int8", 1.0, 1.0)}
ATTENTION_DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0)}
OUT_BYTES = 2.0  # results are written in bf16
# What tells two rows of one file apart (the file fixes the GPU, framework and operator).
KEY_WITHIN_FILE = ("framework_version", "kernel_source", "dtype", "kv_cache_dtype", "m", "n", "k", "batch_size", "isl",
                   "num_heads", "num_kv_heads", "head_dim", "window_size", "beam_width", "step")
SHAPE = ("operator", "dtype", "kv_cache_dtype", "m", "n", "k", "batch_size", "isl", "num_heads", "num_kv_heads",
         "head_dim", "window_size", "beam_width", "step")
PACKAGED_SHARE = 16


@dataclass(frozen=True)
class TableFile:
    """One upstream operator table: its path, the name rows record it by, and what its folders say."""

    path: Path
    source_file: str
    system: str
    framework: str
    operator: str
    upstream_provenance: str | None


def data_root(root: Path | str) -> Path:
    """The database folder under ``root`` (itself, its ``data/``, or the repository's ``systems/data``)."""
    root = Path(root)
    if not root.is_dir():
        raise ImportFormatError(f"{root}: not a folder; pass AIConfigurator's systems/data folder (or the staged "
                                "folder holding it as data/).")
    for sub in ("data", "aic-core/src/aiconfigurator_core/systems/data", "src/aiconfigurator_core/systems/data",
                "systems/data"):
        if (root / sub).is_dir():
            return root / sub
    return root


def _meta_provenance(folder: Path) -> str | None:
    """``provenance`` of ``folder/collection_meta.yaml`` (None without one); a sidecar that is not the upstream
    YAML mapping, or names another provenance, is one error."""
    path = folder / "collection_meta.yaml"
    if not path.is_file():
        return None
    import yaml  # a dependency of the package; imported here, as the only reader of YAML

    raw = read_capped(path)
    try:
        # libyaml's loader when PyYAML has it (the same values as safe_load, without its pure-Python parser)
        meta = yaml.load(raw.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        why = " ".join(str(exc).split())[:120]
        raise ImportFormatError(f"{path}: not readable YAML ({why}); fetch the file again.") from None
    value = meta.get("provenance") if isinstance(meta, dict) else None
    if value is None:
        return None
    if value not in ("collected", "legacy"):
        raise ImportFormatError(f"{path}: provenance {str(value)[:40]!r}; expected `collected` or `legacy` (the "
                                "upstream sidecar's values).")
    return value


def table_files(root: Path | str) -> tuple[list[TableFile], int]:
    """The operator tables under ``root`` sorted by path, and how many other ``*_perf.parquet`` tables (not
    imported) the layout holds.

    Raises
    ------
    ImportFormatError
        When ``root`` is not a folder or holds no table in the layout.
    """
    data = data_root(root)
    found: list[TableFile] = []
    others = 0
    for path in sorted(data.glob("*/*/*/*/*.parquet")):
        if path.is_symlink() or not path.is_file():
            continue
        version_dir = path.parent
        framework_dir = version_dir.parent
        family_dir = framework_dir.parent
        system_dir = family_dir.parent
        spec = TABLE_FILES.get(path.name)
        if spec is None or family_dir.name != spec[1]:
            others += path.name.endswith("_perf.parquet")
            continue
        found.append(TableFile(path, path.relative_to(data).as_posix(), system_dir.name, framework_dir.name.lower(),
                               spec[0], _meta_provenance(version_dir)))
    if not found:
        raise ImportFormatError(
            f"{root}: holds none of AIConfigurator's operator tables (<system>/gemm/<framework>/<version>/"
            "gemm_perf.parquet, <system>/attention/<framework>/<version>/{context,generation}_attention_perf."
            "parquet); pass the database folder (aic-core/src/aiconfigurator_core/systems/data).")
    return found, others


def _where(tf: TableFile, index: int, column: str) -> str:
    return f"{tf.path}: row {index + 1}, column {column!r}"


def _read(tf: TableFile) -> tuple[pa.Table, str]:
    raw = read_capped(tf.path)
    try:
        table = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError, ValueError) as exc:
        why = " ".join(str(exc).split())[:140]
        raise ImportFormatError(f"{tf.path}: not a readable parquet file ({why}); fetch the file again.") from None
    return table, hashlib.sha256(raw).hexdigest()


def _required(table: pa.Table, tf: TableFile, names: tuple[str, ...]) -> None:
    missing = [c for c in names if c not in table.column_names]
    if missing:
        raise ImportFormatError(
            f"{tf.path}: column {missing[0]!r} is missing (columns: {', '.join(table.column_names[:16])}); expected "
            f"AIConfigurator's {tf.path.name} table, not a table of another schema.")


def _text(table: pa.Table, tf: TableFile, column: str) -> tuple[np.ndarray, np.ndarray, list]:
    """(value per row as an object array, code per row, value per code: None last) of a text column, each distinct
    value checked once (the first bad one in row order is named); the values are the distinct texts gathered by
    code (no Python string made per row)."""
    col = table[column]
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise ImportFormatError(f"{_where(tf, 0, column)}: type {col.type}; expected text.")
    encoded = col.combine_chunks().dictionary_encode()
    uniq = encoded.dictionary.to_pylist() + [None]
    codes = pc.fill_null(encoded.indices, len(uniq) - 1).to_numpy(zero_copy_only=False).astype(np.int64)
    bad = [j for j, u in enumerate(uniq[:-1]) if not u.strip() or not u.isprintable() or u != u.strip()
           or len(u) > 200] + ([len(uniq) - 1] if encoded.null_count else [])
    if bad:  # the row of each bad value's first appearance (found only on an error), the earliest named
        i, j = min((int(np.flatnonzero(codes == j)[0]), j) for j in bad)
        raise ImportFormatError(f"{_where(tf, i, column)}: {repr(uniq[j])[:50]}; expected one line of printable "
                                "text (at most 200 characters). Fix the file or fetch it again.")
    return _objects(uniq)[codes], codes, uniq


def _objects(values: list) -> np.ndarray:
    """``values`` as a one-dimensional object array (never split into a 2-D array of characters or items)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _ints(table: pa.Table, tf: TableFile, column: str, minimum: int) -> np.ndarray:
    col = table[column]
    if not pa.types.is_integer(col.type):
        raise ImportFormatError(f"{_where(tf, 0, column)}: type {col.type}; expected whole numbers.")
    if col.null_count:
        i = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise ImportFormatError(f"{_where(tf, i, column)}: null; every row must give it.")
    values = col.to_numpy().astype(np.int64)
    bad = values < minimum
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ImportFormatError(f"{_where(tf, i, column)}: {int(values[i])}; expected a whole number >= {minimum}.")
    return values


def _latency(table: pa.Table, tf: TableFile) -> np.ndarray:
    col = table["latency"]
    if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
        raise ImportFormatError(f"{_where(tf, 0, 'latency')}: type {col.type}; expected milliseconds as numbers.")
    values = col.to_numpy(zero_copy_only=False).astype(np.float64)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ImportFormatError(f"{_where(tf, i, 'latency')}: {float(values[i])!r} ms; a time must be a finite "
                                "number > 0. Fix the file or fetch it again.")
    return values


def _checked_values(coded: tuple[np.ndarray, np.ndarray, list], tf: TableFile, column: str, allowed) -> None:
    """Every value of a text column (:func:`_text`'s value per row, code per row, value per code) is one of
    ``allowed``: each distinct value checked once, the first row of a bad one named."""
    values, codes, uniq = coded
    bad_codes = [j for j, u in enumerate(uniq) if u is not None and u not in allowed]
    if bad_codes:
        i = int(np.flatnonzero(np.isin(codes, bad_codes))[0])
        raise ImportFormatError(f"{_where(tf, i, column)}: {str(values[i])[:40]!r} is not a dtype kgpubench knows "
                                f"(one of {', '.join(allowed)}); nothing was imported.")


def _file_columns(tf: TableFile) -> dict[str, np.ndarray]:
    """The checked, standardised columns of one table file (our names; ``_device`` the raw device name)."""
    table, digest = _read(tf)
    n = table.num_rows
    ints = GEMM_INTS if tf.operator == "gemm" else ATTENTION_INTS
    dtype_col = "gemm_dtype" if tf.operator == "gemm" else "attn_dtype"
    extra = () if tf.operator == "gemm" else ("kv_cache_dtype",)
    _required(table, tf, (*TEXT, dtype_col, *extra, *ints, "latency"))
    out: dict[str, np.ndarray] = {}
    coded = {c: _text(table, tf, c) for c in (*TEXT, dtype_col, *extra)}
    text = {c: v for c, (v, _, _) in coded.items()}
    wrong_op = text["op_name"] != tf.operator
    if wrong_op.any():
        i = int(np.flatnonzero(wrong_op)[0])
        raise ImportFormatError(f"{_where(tf, i, 'op_name')}: {text['op_name'][i]!r} in a {tf.path.name} file; "
                                f"expected {tf.operator!r}.")
    # every row's lower-cased framework must be the folder's: checked on each distinct value (the value per code)
    codes = coded["framework"][1]
    lowered = _objects([None if v is None else str(v).lower() for v in coded["framework"][2]])
    wrong_fw = lowered[codes] != tf.framework
    if wrong_fw.any():
        i = int(np.flatnonzero(wrong_fw)[0])
        raise ImportFormatError(f"{_where(tf, i, 'framework')}: {text['framework'][i]!r} in the {tf.framework!r} "
                                "folder; a table's rows belong to the framework its folder names.")
    out["framework_version"] = text["version"]
    out["kernel_source"] = text["kernel_source"]
    out["_device"] = text["device"]
    dtype = text[dtype_col]
    if tf.operator == "gemm":
        _checked_values(coded[dtype_col], tf, dtype_col, GEMM_DTYPES)
        out["kv_cache_dtype"] = _objects([None])[np.zeros(n, dtype=np.intp)]
    else:
        _checked_values(coded[dtype_col], tf, dtype_col, ATTENTION_DTYPES)
        _checked_values(coded["kv_cache_dtype"], tf, "kv_cache_dtype", ATTENTION_DTYPES)
        out["kv_cache_dtype"] = text["kv_cache_dtype"]
    out["dtype"] = dtype
    for col in (*GEMM_INTS, *ATTENTION_INTS, "window_size"):
        name = RENAME.get(col, col)
        if col in ints:
            out[name] = _ints(table, tf, col, 0 if col == "step" else 1).astype(np.float64)
        elif col == "window_size" and tf.operator != "gemm" and col in table.column_names:
            out[name] = _ints(table, tf, col, 0).astype(np.float64)
        else:
            out[name] = np.full(n, np.nan)
    out["time_ms"] = _latency(table, tf)
    # text codes stand for the texts in the key (one code per distinct text of this file)
    key_codes = {"framework_version": coded["version"][1], "kernel_source": coded["kernel_source"][1],
                 "dtype": coded[dtype_col][1],
                 "kv_cache_dtype": coded["kv_cache_dtype"][1] if extra else np.zeros(n, dtype=np.int64)}
    out["occurrence"] = _occurrence({c: key_codes.get(c, out.get(c)) for c in KEY_WITHIN_FILE}, n)
    # the text columns as (value per code, code per row): arrow columns are gathered from them at the end
    out["_texts"] = {name: (coded[col][2], coded[col][1]) for name, col in (
        ("framework_version", "version"), ("kernel_source", "kernel_source"), ("dtype", dtype_col), *(
            (("kv_cache_dtype", "kv_cache_dtype"),) if extra else ()))}
    if not extra:  # a GEMM's KV-cache dtype: null on every row
        out["_texts"]["kv_cache_dtype"] = ([None], np.zeros(n, dtype=np.int64))
    # the columns every row of the file shares: one value per file, spread over the rows at the end
    out["_file_values"] = {"framework": tf.framework, "run_id": f"aiconfigurator-{digest[:16]}",
                           "source_file": tf.source_file, "system": tf.system, "operator": tf.operator,
                           "upstream_provenance": tf.upstream_provenance}
    return out


def _occurrence(cols: dict[str, np.ndarray], n: int) -> np.ndarray:
    """0 for the first row of each key in one file, 1, 2, ... for its repeats (in file order)."""
    # a column with one value in the whole file (NaN throughout: a dimension of another operator) tells no rows
    # apart: left out of the search, which gives the same repeats with fewer columns
    varying = [c for c in KEY_WITHIN_FILE if n and not _constant(cols[c])] or list(KEY_WITHIN_FILE[:1])
    frame = pd.DataFrame({c: cols[c] for c in varying})
    repeated = frame.duplicated(keep=False).to_numpy()
    occurrence = np.zeros(n, dtype=np.int64)
    if repeated.any():
        sub = frame[repeated]
        occurrence[repeated] = sub.groupby(varying, dropna=False, sort=False).cumcount().to_numpy()
    return occurrence


def _constant(values: np.ndarray) -> bool:
    """Whether every value of a numeric column equals the first (NaN counting as equal to NaN)."""
    first = values[0]
    if values.dtype.kind == "f" and np.isnan(first):
        return bool(np.isnan(values).all())
    return bool((values == first).all())


def nominal_work(operator: np.ndarray, dtype: np.ndarray, kv_dtype: np.ndarray,
                 d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(compute dtype, flops, bytes_min) of every row (the module docstring's table); ``d`` maps our dimension
    columns to float arrays (NaN where a column does not apply)."""
    coded = [pd.factorize(np.asarray(v, dtype=object), use_na_sentinel=False) for v in (operator, dtype, kv_dtype)]
    return _coded_nominal_work(*[(list(uniq), codes) for codes, uniq in coded], d)


def _coded_nominal_work(operator: tuple[list, np.ndarray], dtype: tuple[list, np.ndarray],
                        kv_dtype: tuple[list, np.ndarray], d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`nominal_work` with the operator, dtype and KV-cache dtype each given as (value per code, code per
    row): each distinct value is looked up once and gathered by code (no comparison of every row's text)."""
    (op_uniq, op_codes), (dt_uniq, dt_codes), (kv_uniq, kv_codes) = operator, dtype, kv_dtype
    gemm = np.asarray([u == "gemm" for u in op_uniq], dtype=bool)[op_codes]
    context = np.asarray([u == "context_attention" for u in op_uniq], dtype=bool)[op_codes]
    gemm_spec = [GEMM_DTYPES.get(u, (None, 0.0, 0.0)) for u in dt_uniq]
    attention_spec = [ATTENTION_DTYPES.get(u, (None, 0.0)) for u in dt_uniq]
    compute = np.where(gemm, _objects([g[0] for g in gemm_spec])[dt_codes],
                       _objects([a[0] for a in attention_spec])[dt_codes])
    a_bytes = np.where(gemm, np.asarray([g[1] for g in gemm_spec], dtype=np.float64)[dt_codes], 0.0)
    b_bytes = np.where(gemm, np.asarray([g[2] for g in gemm_spec], dtype=np.float64)[dt_codes], 0.0)
    q_bytes = np.where(gemm, 0.0, np.asarray([a[1] for a in attention_spec], dtype=np.float64)[dt_codes])
    kv_sizes = np.asarray([ATTENTION_DTYPES.get(u, (None, 0.0))[1] for u in kv_uniq], dtype=np.float64)
    kv_bytes = np.where(gemm, 0.0, kv_sizes[kv_codes])
    m, nn, k = (np.asarray(d[c], dtype=np.float64) for c in ("m", "n", "k"))
    B, S, H, Hkv, D = (np.asarray(d[c], dtype=np.float64) for c in ("batch_size", "isl", "num_heads",
                                                                     "num_kv_heads", "head_dim"))
    step = np.asarray(d["step"], dtype=np.float64)
    window = np.nan_to_num(np.asarray(d["window_size"], dtype=np.float64), nan=0.0)
    with np.errstate(invalid="ignore"):
        attended = np.where(context, S, step + 1)
        attended = np.where(window > 0, np.minimum(attended, window), attended)
        flops = np.where(gemm, 2 * m * nn * k, 4 * B * H * S * attended * D)
        nbytes = np.where(gemm, m * k * a_bytes + k * nn * b_bytes + OUT_BYTES * m * nn,
                          B * S * H * D * q_bytes + 2 * B * Hkv * attended * D * kv_bytes + OUT_BYTES * B * S * H * D)
    return compute, flops, nbytes


def nominal_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    """``compute_dtype``, ``flops`` and ``bytes_min`` of one call given as column values (``operator``, default
    ``gemm``; ``dtype``, ``kv_cache_dtype`` and the shape columns), by :func:`nominal_work`; empty when the values
    lack the dtype or a shape column the operator needs, or name a dtype kgpubench does not know."""
    operator = str(values.get("operator") or "gemm")
    dtype, kv = values.get("dtype"), values.get("kv_cache_dtype")
    dims = ("m", "n", "k") if operator == "gemm" else ("batch_size", "isl", "num_heads", "num_kv_heads", "head_dim",
                                                       "step")
    known = GEMM_DTYPES if operator == "gemm" else ATTENTION_DTYPES
    if dtype not in known or (operator != "gemm" and kv not in ATTENTION_DTYPES):
        return {}
    d: dict[str, np.ndarray] = {}
    for col in (*GEMM_INTS, "batch_size", "isl", "num_heads", "num_kv_heads", "head_dim", "step", "window_size"):
        value = values.get(col)
        try:
            d[col] = np.asarray([float(value) if value is not None else np.nan])
        except (TypeError, ValueError):
            return {}
    if any(not np.isfinite(d[c][0]) for c in dims):
        return {}
    compute, flops, nbytes = nominal_work(np.asarray([operator], dtype=object), np.asarray([dtype], dtype=object),
                                          np.asarray([kv], dtype=object), d)
    return {"compute_dtype": compute[0], "flops": float(flops[0]), "bytes_min": float(nbytes[0])}


# Per-row columns a worker builds for each file (arrow arrays of the schema's types); the parent adds the columns
# every row of a file or of a GPU shares, and the constants.
_ROW_TEXTS = ("framework_version", "kernel_source", "dtype", "kv_cache_dtype", "compute_dtype")


@dataclass(frozen=True)
class _FilePart:
    """What a worker sends back for one table file: its rows' columns (``row_id`` and the file's own values
    included, the GPU columns and the constants not) as an arrow table, and its distinct device names (in order of
    first appearance) with each row's code."""

    rows: pa.Table
    devices: list[str]
    device_codes: np.ndarray


# The compute dtypes a row can have (nominal_work's), each with a tensor peak per GPU.
COMPUTE_DTYPES = tuple(sorted({g[0] for g in GEMM_DTYPES.values()} | {a[0] for a in ATTENTION_DTYPES.values()}))
# A GPU as a worker needs it: (gpu_name, the tensor peak per compute dtype, None where no cited figure exists).
GpuFigures = tuple[str, dict[str, float | None]]


def _gpu_figures(device: str) -> GpuFigures:
    """The ``gpu_name`` and tensor peaks of the device called ``device``, by :func:`import_gpu_columns` without its
    notice or warning (the importing process says each GPU's line once, in order: :func:`import_aiconfigurator`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        name = import_gpu_columns(device)["gpu_name"]
    peaks = {}
    for dtype in COMPUTE_DTYPES:
        found = tensor_peak_tflops(name, dtype)
        peaks[dtype] = found[0] if found else None
    return name, peaks


def _named_devices(tf: TableFile) -> list[str]:
    """The device names a table file's footer names (its ``device`` column's smallest and largest value in each
    row group): what the file most likely holds, read without its rows. A hint only: empty when the footer says
    nothing usable (a bad file is named by the file's own checks), and a worker resolves any device it lacks."""
    try:
        meta = pq.read_metadata(tf.path)
        index = meta.schema.to_arrow_schema().get_field_index("device")
        if index < 0:
            return []
        found = []
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(index).statistics
            if stats is not None and stats.has_min_max:
                found += [stats.min, stats.max]
    except (pa.ArrowException, OSError, ValueError, KeyError, IndexError):
        return []
    return [v for v in found if isinstance(v, str) and v.strip() == v and v and v.isprintable() and len(v) <= 200]


def _known_gpus(files: list[TableFile]) -> dict[str, GpuFigures]:
    """The figures of each device the files' footers name (:func:`_named_devices`), resolved here once, so that
    the worker processes need not load the GPU catalogue (about 0.6 s of CPU each)."""
    names = dict.fromkeys(name for tf in files for name in _named_devices(tf))
    return {name: _gpu_figures(name) for name in names}


def _file_part(item: tuple[TableFile, int | None, dict[str, GpuFigures]]) -> _FilePart:
    """One table file read, checked, parsed and derived (nominal work, the GPU's peak, ``occurrence``, the row
    ids), with ``share``: only the rows of :func:`packaged_selection`'s problems, and ``gpus``: the figures of the
    devices resolved beforehand (:func:`_known_gpus`; any other device of the file is resolved here). Runs in a
    worker process with ``jobs`` above 1; every value depends on the file alone."""
    tf, share, gpus = item
    decl = get_table(CONFIG)
    cols = _file_columns(tf)
    file_values = cols.pop("_file_values")
    texts = cols.pop("_texts")
    n = len(cols["time_ms"])
    if share:
        cols["operator"] = _objects([tf.operator])[np.zeros(n, dtype=np.intp)]
        keep = _in_selection(cols, share)
        del cols["operator"]
        cols = {name: values[keep] for name, values in cols.items()}
        texts = {name: (uniq, codes[keep]) for name, (uniq, codes) in texts.items()}
        n = int(keep.sum())
    device_codes, devices = pd.factorize(cols.pop("_device"))
    devices = [str(d) for d in devices]
    figures = [gpus[d] if d in gpus else _gpu_figures(d) for d in devices]
    gpu_names = [name for name, _ in figures]
    compute, cols["flops"], cols["bytes_min"] = _coded_nominal_work(
        ([tf.operator], np.zeros(n, dtype=np.int64)), texts["dtype"], texts["kv_cache_dtype"], cols)
    c_codes, c_uniq = pd.factorize(compute, use_na_sentinel=False)
    texts["compute_dtype"] = (list(c_uniq), c_codes)
    # The GPU's tensor peak for the row's compute dtype (null where no cited figure exists).
    pair_codes, pair_uniq = pd.factorize(device_codes.astype(np.int64) * len(c_uniq) + c_codes)
    peaks = []
    for pair in pair_uniq.tolist():
        found = figures[pair // len(c_uniq)][1].get(c_uniq[pair % len(c_uniq)])
        peaks.append(np.nan if found is None else found)
    cols["peak_tensor_tflops"] = np.asarray(peaks, dtype=np.float64)[pair_codes]
    arrays: dict[str, pa.Array | pa.ChunkedArray] = {}
    for c in decl.columns:
        if c.name in texts:  # each distinct text converted once, gathered by code
            uniq, codes = texts[c.name]
            arrays[c.name] = pc.take(pa.array(uniq, pa.string(), from_pandas=True), pa.array(codes))
        elif c.name in cols:
            arrays[c.name] = arrow_column(c, cols[c.name])
        elif c.name in file_values:  # the file's own values (its name, run id, folders) on each of its rows
            arrays[c.name] = repeated(pa.array([file_values[c.name]], c.arrow_type), n)
    keys = dict(arrays)
    keys["gpu_name"] = pc.take(pa.array(gpu_names, pa.string()), pa.array(device_codes))
    key_table = pa.table({k: keys[k] for k in decl.key_columns})
    arrays["row_id"] = arrow_row_id_array(decl, key_table)
    return _FilePart(to_parent(pa.table(arrays)), devices, device_codes)


def import_aiconfigurator(root: Path | str, prov: Provenance = AICONFIGURATOR, *, share: int | None = None,
                          jobs: int = 1) -> pa.Table:
    """Every GEMM and attention row under ``root`` as an `llm_operators` arrow table (``row_id`` computed), files in
    path order and rows in file order; with ``share``, only the rows of :func:`packaged_selection`'s problems.

    ``jobs`` above 1 reads, checks and derives the files in that many worker processes, a file each
    (:func:`kgpubench.schema._parallel.parallel_map`: the same table, warnings and first error); this process
    only joins the files' rows and adds the columns a file's or a GPU's rows share. Like any use of worker
    processes started by ``forkserver``, a script that passes ``jobs`` above 1 must call it under
    ``if __name__ == "__main__":`` (the workers import the script's module; see :mod:`kgpubench.schema._parallel`).

    Raises
    ------
    ImportFormatError
        On any bad input (one line naming the file, row and column); nothing is returned.
    """
    decl = get_table(CONFIG)
    files, others = table_files(root)
    start_workers(_file_part, jobs if len(files) > 1 else 1)  # its server starts while the GPUs are resolved
    if others:
        notice(f"{root}: {others} other AIConfigurator table(s) (moe, mla, communication, ...) are not imported; "
               "kgpubench imports the GEMM and attention tables.")
    gpus = _known_gpus(files) if jobs > 1 else {}
    parts = parallel_map(_file_part, [(tf, share, gpus) for tf in files], jobs=jobs,
                         costs=[tf.path.stat().st_size for tf in files])
    rows = [p.rows for p in parts]
    n = sum(t.num_rows for t in rows)
    # each GPU resolved here once, in order of first appearance (its notice or warning said once)
    gpu_of: dict[str, dict[str, Any]] = {}
    for p in parts:
        for dev in p.devices:
            if dev not in gpu_of:
                gpu_of[dev] = import_gpu_columns(dev)
    by_name = {g["gpu_name"]: g for g in gpu_of.values()}
    g_index = {name: i for i, name in enumerate(by_name)}
    # each row's GPU code: its file's device codes mapped to the GPU each device resolved to
    g_codes = np.concatenate([np.asarray([g_index[gpu_of[d]["gpu_name"]] for d in p.devices], dtype=np.int64)[
        p.device_codes] for p in parts])
    # GPU columns: one small table per distinct GPU, repeated by code.
    gpu_table = decl.from_rows(list(by_name.values()), fill_row_id=False).select(
        [c.name for c in decl.columns if c.name.startswith("gpu_")])
    arrays = dict(_spread(gpu_table, g_codes))
    const = {
        "status": "ok", "time_statistic": TIME_STATISTIC, "source_format": SOURCE_FORMAT, "source": prov.source,
        "collected_at": prov.undated, "kgpubench_version": package_version(), "source_commit": prov.commit,
        "source_doi": prov.doi, "source_license": prov.license,
    }
    for c in decl.columns:
        if c.name in rows[0].column_names and c.name != "row_id":
            arrays[c.name] = joined(rows, c.name, c.arrow_type)
    table = decl.from_columns(arrays, n, constants=const, fill_row_id=False)
    index = decl.column_names.index("row_id")
    ids = joined(rows, "row_id", pa.string())
    return table.set_column(index, decl.arrow_schema().field(index), ids)


def _spread(small: pa.Table, codes: np.ndarray) -> dict[str, pa.Array | pa.ChunkedArray]:
    """Row ``codes[i]`` of ``small`` for every i, column by column (``Table.take``'s values), by
    :func:`~kgpubench.schema._core.spread_runs` when the codes come in long runs (rows of one GPU together, as files
    are). Otherwise a list column (``gpu_specs_source``: a dozen structs per row) is rebuilt from its lists'
    offsets and one take of their elements, which arrow's take of lists does slowly."""
    index = pa.array(codes)
    runs = long_runs(codes)  # the same runs for every column
    out = {}
    for name in small.column_names:
        col = small[name].combine_chunks()
        if runs is not None:
            out[name] = spread_runs(col, *runs)
            continue
        if not pa.types.is_list(col.type):
            out[name] = col.take(index)
            continue
        offsets = col.offsets.to_numpy().astype(np.int64)
        starts, lengths = offsets[:-1][codes], np.diff(offsets)[codes]
        ends = np.cumsum(lengths)
        first = np.repeat(starts - (ends - lengths), lengths)  # element j of row i is element first + j
        elements = col.values.take(pa.array(first + np.arange(ends[-1] if len(ends) else 0)))
        new_offsets = pa.array(np.concatenate([[0], ends]).astype(np.int32))
        mask = col.is_null().take(index) if col.null_count else None
        out[name] = pa.ListArray.from_arrays(new_offsets, elements, type=col.type, mask=mask)
    return out


def _in_selection(cols: dict[str, np.ndarray], share: int) -> np.ndarray:
    """Whether each row's problem (its :data:`SHAPE` columns) falls in hash bucket 0 of ``share``."""
    frame = pd.DataFrame({c: cols[c] for c in SHAPE})
    codes, uniq = pd.factorize(pd.MultiIndex.from_frame(frame))
    keep = np.fromiter((_bucket(problem, share) == 0 for problem in uniq), dtype=bool, count=len(uniq))
    return keep[codes]


def _bucket(problem: tuple, share: int) -> int:
    text = "\x1f".join("" if v is None or (isinstance(v, float) and np.isnan(v)) else
                       str(int(v)) if isinstance(v, (float, np.floating)) else str(v) for v in problem)
    return int.from_bytes(hashlib.sha256(f"packaged\x1f{text}".encode()).digest()[:8], "big") % share


def packaged_selection(root: Path | str, *, jobs: int = 1) -> pa.Table:
    """The rows the packaged data hold (a declared selection, documented in the card): every row whose problem —
    the operator, dtype, KV-cache dtype and shape, the same on every GPU and framework — falls in hash bucket 0 of
    :data:`PACKAGED_SHARE`, so a kept problem keeps all its GPUs, frameworks and kernel sources together."""
    return import_aiconfigurator(root, share=PACKAGED_SHARE, jobs=jobs)


def import_to_shard(root: Path | str, out: Path | str, *, force: bool = False,
                    packaged: bool = False, jobs: int = 1) -> tuple[Path, pa.Table]:
    """Import ``root`` (see :func:`import_aiconfigurator`; ``jobs`` worker processes) and write one validated
    `llm_operators` shard at ``out`` (``packaged``: only :func:`packaged_selection`). Nothing is written on bad
    input or a schema violation; an existing ``out`` is refused unless ``force``."""
    build = partial(packaged_selection if packaged else import_aiconfigurator, jobs=jobs)
    return folder_to_shard(build, CONFIG, root, out, force=force, where=f"{root} (rows in file order)")
