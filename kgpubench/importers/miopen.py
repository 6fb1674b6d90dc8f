"""Import MIOpen's find-db (ROCm/MIOpen ``src/kernels/*.fdb.txt.bz2``, MIT) as `convolutions` rows.

**Files.** Every file under the folder (at any depth) whose name holds ``.fdb.txt`` is a find-db and must be named
as MIOpen names its databases (``Handle::GetDbBasename``): ``<target><features><CUs>.<backend>.fdb.txt[.bz2]``,
where ``<target>`` is the ISA target (``gfx`` + major + minor + stepping: ``gfx9xx`` and ``gfx1xxx``, e.g.
``gfx906``, ``gfx90a``, ``gfx942``, ``gfx1030``), ``<features>`` MIOpen's optional db-id features
(``_sramecc`` / ``_nosramecc``, ``_xnack``), ``<CUs>`` the compute-unit count, **decimal after ``_`` when it is at
most 64** (``gfx906_60``) and **lower-case hex glued to the target when it is larger** (``gfx90a6e`` = 110,
``gfx942130`` = 0x130 = 304), and ``<backend>`` ``HIP`` or ``OpenCL``. A name that does not fit (or a decimal
count over 64, a hex one of 64 or less: MIOpen never writes them) is refused in one line. Content is read
through :mod:`kgpubench.importers.limits` (bzip2 recognised by its magic bytes; the decompressed-size ceiling
applies). Other files (PROVENANCE.md, LICENSE, perf-db ``.db`` files) are ignored.

**The GPU.** ``gpu_name`` is :func:`kgpubench.hardware.amd_product` of (target, CUs); a pair it does not map keeps
the name ``"AMD <target> (<CUs> CUs)"`` (e.g. ``"AMD gfx1030 (36 CUs)"``) with null catalogue figures and one
notice (an :class:`~kgpubench.hardware.UnknownGpuWarning`), never a refusal. Every row says how its product was
inferred (``gpu_inferred_from``), with ``gpu_arch``, ``gpu_target_features`` and ``gpu_compute_units`` from the
file name.

**Lines.** One problem per line, ``KEY=ENTRY;ENTRY;...``. The KEY is MIOpen's ``ProblemDescription::Serialize``,
dash-separated: ``C-[D-]H-W-[FDx]FHxFW-K-[Do-]Ho-Wo-N-[pDx]pHxpW-[sDx]sHxsW-[dDx]dHxdW-bias-LAYOUT-DTYPE-DIR``:
the 2-D form has 12 numeric fields, the 3-D form 14 (with depth); LAYOUT is one token when input, weights and
output share a default layout (NCHW, NCDHW) and three tokens (input-weights-output) otherwise; DTYPE one name
(FP32, FP16, BF16, FP64, INT8, INT32, FP8, BFP8) or three concatenated (input, weights, output); DIR is ``F``,
``B`` or ``W``, optionally followed by ``_g<groups>`` and cast suffixes (``_ci<type>``, ``_cw<type>``,
``_co<type>``). MIOpen writes B and W problems with the tensors swapped (the key's input is dy): rows are stored
in forward terms (``in_*`` = x, ``out_*`` = y; see :mod:`kgpubench.schema.convolutions`). A key that fits neither
form, a size that is not a whole number (or is 0 where at least 1 is needed), a bias other than 0/1, an unknown
layout, data type or direction, a layout whose letters do not match the spatial dimensions, or channels not
divisible by the groups is refused in one line naming the file, line and field.

An ENTRY has one of two formats, told apart by whether its text before the first ``:`` starts with
``miopenConvolution``:

- ``solver-first`` (newer): ``Solver:time_ms,workspace_bytes,algorithm``;
- ``algorithm-first`` (older): ``algorithm:Solver,time_ms,workspace_bytes,kcache algorithm,kcache config`` (the
  last two are MIOpen's kernel-cache key, e.g. ``rocBlas`` and ``<unused>``; not imported).

**Values.** ``time_ms`` must be a number; NaN, infinite or negative times and workspaces that are not whole
numbers from 0 to 2**40 bytes (more memory than any GPU has) are refused in one line (MIOpen's writer never
produces them). **A time of exactly 0 is dropped**, not refused: upstream records ``0.0`` for some GEMM solvers
whose time Find() did not measure (4,032 entries in the staged files, all GEMM solvers, mostly on grouped 1x1
problems), so the entry carries no time; the count per file is one notice line (an :class:`ImportNotice`).
``solvers_in_problem`` counts every entry of the line, dropped ones included.

**Duplicates.** The same solver listed twice for one problem of one file (twice in a line, or in two lines of the
same problem) is one row: the fastest entry is kept (the first among equal times) and the count dropped is a
notice. (The staged files have none.)

**Nominal work**, from the problem alone, in forward terms (C input channels, K output channels, g groups):
``flops = 2 N K (C/g) Do Ho Wo FD FH FW`` (depth factors 1 for 2-D; the same for F, B and W) and
``bytes_min = size(x) N C D H W + size(w) K (C/g) FD FH FW + size(y) N K Do Ho Wo`` with the element sizes of the
tensors' data types (FP64 8, FP32/INT32 4, FP16/BF16 2, INT8/FP8/BFP8 1).

``problem_id`` is :func:`kgpubench.schema.row_id_of` of the problem columns under the name
``convolutions-problem`` (device-independent: the same problem has the same id on every GPU).
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench import __version__
from kgpubench.errors import ImportFormatError
from kgpubench.hardware import UnknownGpuWarning, amd_product, gpu_columns
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import MIOPEN, Provenance
from kgpubench.importers.limits import read_capped
from kgpubench.schema import arrow_row_ids, get_table
from kgpubench.schema.convolutions import MAX_WORKSPACE_BYTES

CONFIG = "convolutions"
PROBLEM_TABLE = "convolutions-problem"
TIME_STATISTIC = "miopen-find"
# ISA target: gfx + major (6-9, or 10-19) + minor digit + stepping (hex digit); then MIOpen's db-id features.
FILE_NAME = re.compile(r"(?P<arch>gfx(?:1[0-9]|[6-9])[0-9][0-9a-f])(?P<features>(?:_(?:no)?sramecc)?(?:_xnack)?)"
                       r"(?:_(?P<dec>[0-9]+)|(?P<hex>[0-9a-f]+))\.(?P<backend>HIP|OpenCL)\.fdb\.txt(?:\.bz2)?")
MAX_DECIMAL_CUS = 64  # MIOpen: `if(num_cu <= 64) ss << '_' << num_cu; else ss << std::hex << num_cu;`
ELEMENT_BYTES = {"FP64": 8, "FP32": 4, "INT32": 4, "FP16": 2, "BF16": 2, "INT8": 1, "FP8": 1, "BFP8": 1}
_DTYPES = "|".join(sorted(ELEMENT_BYTES, key=len, reverse=True))
OLD_PREFIX = "miopenConvolution"
# Key fields in MIOpen's order (the key's in/out are dy/x for B and W), by spatial dimensions.
KEY_FIELDS = {
    2: ("key_in_c", "key_in_h", "key_in_w", "filter_hw", "key_out_c", "key_out_h", "key_out_w", "batch", "pad_hw",
        "stride_hw", "dilation_hw", "bias"),
    3: ("key_in_c", "key_in_d", "key_in_h", "key_in_w", "filter_dhw", "key_out_c", "key_out_d", "key_out_h",
        "key_out_w", "batch", "pad_dhw", "stride_dhw", "dilation_dhw", "bias"),
}


# Named groups of each form's regex, in order (x-joined fields expand to their axes).
def _group_names(dims: int) -> list[str]:
    out = []
    for f in KEY_FIELDS[dims]:
        if f.endswith(("_hw", "_dhw")):
            base = f.rsplit("_", 1)[0]
            out += [f"{base}_{a}" for a in ("dhw"[-dims:])]
        else:
            out.append(f)
    return out + ["layout_text", "dtype_text", "dir", "groups", "casts"]


def _key_regex(dims: int) -> str:
    names = iter(_group_names(dims))
    parts = []
    for f in KEY_FIELDS[dims]:
        axes = dims if f.endswith(("_hw", "_dhw")) else 1
        parts.append("x".join(rf"(?P<{next(names)}>\d{{1,15}})" for _ in range(axes)))
    return ("^" + "-".join(parts) + r"-(?P<layout_text>[A-Za-z]+(?:-[A-Za-z]+-[A-Za-z]+)?)-(?P<dtype_text>[A-Z0-9]+)"
            r"-(?P<dir>[A-Za-z]+)(?:_g(?P<groups>\d{1,15}))?(?P<casts>(?:_c[iwo][A-Z0-9]+)*)$")


KEY_RE = {dims: _key_regex(dims) for dims in (2, 3)}
TIME_RE = r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(?i:nan|inf|infinity)$"
NEW_ENTRY_RE = r"^(?P<solver>[^:,]+):(?P<time>[^,]*),(?P<ws>[^,]*),(?P<algo>[^,]+)$"
OLD_ENTRY_RE = r"^(?P<algo>miopenConvolution[^:,]*):(?P<solver>[^,]+),(?P<time>[^,]*),(?P<ws>[^,]*),[^,]*,[^,]*$"
SHAPE = ("batch", "in_channels", "in_d", "in_h", "in_w", "out_channels", "out_d", "out_h", "out_w", "filter_d",
         "filter_h", "filter_w", "pad_d", "pad_h", "pad_w", "stride_d", "stride_h", "stride_w", "dilation_d",
         "dilation_h", "dilation_w", "groups")
PROBLEM_COLUMNS = (*SHAPE, "bias", "layout", "dtype", "cast_types", "direction")


class ImportNotice(UserWarning):
    """Something the import did on purpose that a user should know (entries dropped, with counts)."""


@dataclass(frozen=True)
class FindDbFile:
    """One find-db file: its path, the name it is recorded by and what its name says."""

    path: Path
    source_file: str
    arch: str
    features: str | None
    compute_units: int
    backend: str

    @property
    def gpu(self) -> tuple[str, str | None, int, str]:
        return self.arch, self.features, self.compute_units, self.backend


def parse_file_name(path: Path) -> tuple[str, str | None, int, str]:
    """(target, features or None, compute units, backend) of a find-db file name (see the module docstring).

    Raises
    ------
    ImportFormatError
        A name that does not follow MIOpen's naming rule.
    """
    m = FILE_NAME.fullmatch(path.name)
    rule = ("expected MIOpen's <target><CUs>.<backend>.fdb.txt[.bz2], e.g. gfx906_60.HIP.fdb.txt.bz2 (CU counts up "
            "to 64 in decimal after '_') or gfx90a6e.HIP.fdb.txt.bz2 (larger ones in lower-case hex glued to the "
            "target); rename the file or move it out of the folder")
    if m is None:
        raise ImportFormatError(f"{path}: not a find-db name; {rule}.")
    if m["dec"] is not None:
        cus = int(m["dec"])
        if not 1 <= cus <= MAX_DECIMAL_CUS:
            raise ImportFormatError(f"{path}: {cus} CUs written in decimal; MIOpen writes counts of 1 to "
                                    f"{MAX_DECIMAL_CUS} in decimal and larger ones in hex; {rule}.")
    else:
        cus = int(m["hex"], 16)
        if cus <= MAX_DECIMAL_CUS:
            raise ImportFormatError(f"{path}: {m['hex']!r} is {cus} CUs in hex; MIOpen writes counts up to "
                                    f"{MAX_DECIMAL_CUS} as _<decimal>; {rule}.")
    return m["arch"], (m["features"].lstrip("_") or None), cus, m["backend"]


def find_db_files(root: Path | str) -> list[FindDbFile]:
    """The find-db files under ``root`` (any depth), sorted by path.

    Raises
    ------
    ImportFormatError
        ``root`` is not a folder, holds none, holds a badly named one, or two files of one GPU and backend.
    """
    root = Path(root)
    if not root.is_dir():
        raise ImportFormatError(f"{root}: not a folder; pass the folder holding MIOpen's find-db files "
                                "(<target><CUs>.<backend>.fdb.txt[.bz2]).")
    found: list[FindDbFile] = []
    seen: dict[tuple, Path] = {}
    for path in sorted(p for p in root.rglob("*") if ".fdb.txt" in p.name and p.is_file()):
        arch, features, cus, backend = parse_file_name(path)
        f = FindDbFile(path, path.relative_to(root).as_posix(), arch, features, cus, backend)
        if f.gpu in seen:
            raise ImportFormatError(f"{path}: a second find-db of {arch} with {cus} CUs ({backend}) beside "
                                    f"{seen[f.gpu]}; keep one of them.")
        seen[f.gpu] = path
        found.append(f)
    if not found:
        raise ImportFormatError(f"{root}: holds no find-db file (<target><CUs>.<backend>.fdb.txt[.bz2], e.g. "
                                "gfx90a6e.HIP.fdb.txt.bz2); pass the folder of MIOpen's src/kernels files.")
    return found


def gpu_name_of(arch: str, compute_units: int) -> tuple[str, str]:
    """(gpu_name, gpu_inferred_from) for a target and CU count: the product :func:`amd_product` maps the pair to,
    else ``"AMD <target> (<CUs> CUs)"``."""
    product = amd_product(arch, compute_units)
    if product is None:
        return (f"AMD {arch} ({compute_units} CUs)",
                f"no single product has {arch} with {compute_units} CUs")
    return product, f"inferred from {arch} with {compute_units} CUs"


def _fail(f: FindDbFile, line: int, field: str, text: str, expected: str) -> ImportFormatError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return ImportFormatError(f"{f.path}: line {line}, field {field}: {shown!r}; expected {expected}. Fix the line or "
                             "fetch the file again.")


def _diagnose_key(f: FindDbFile, line: int, key: str) -> ImportFormatError:
    """The one-line error for a key neither form matches: the first field that does not fit."""
    parts = key.split("-")
    i = len(parts) - 1
    direction = parts[i] if parts else ""
    if not re.fullmatch(r"[FBW](_g\d+)?(_c[iwo][A-Z0-9]+)*", direction):
        return _fail(f, line, "direction", direction, "F, B or W, optionally with _g<groups>")
    if len(parts) < 2 or not re.fullmatch(rf"({_DTYPES})+", parts[-2]):
        return _fail(f, line, "dtype", parts[-2] if len(parts) > 1 else "", "one of " + ", ".join(ELEMENT_BYTES))
    n_layouts = 3 if len(parts) > 4 and parts[-4].isalpha() and parts[-5].isalpha() else 1
    numeric = parts[:len(parts) - 2 - n_layouts]
    dims = 3 if len(numeric) > 1 and numeric[4 if len(numeric) > 4 else 0].count("x") == 2 else 2
    names = KEY_FIELDS[dims]
    if len(numeric) != len(names):
        return _fail(f, line, "key", key, f"{len(KEY_FIELDS[2]) + 3} or {len(KEY_FIELDS[3]) + 3} dash-separated "
                     f"fields (found {len(parts)}): C-H-W-FHxFW-K-Ho-Wo-N-padHxW-strideHxW-dilHxW-bias-layout-"
                     "dtype-direction, or the 3-D form with depths")
    for name, value in zip(names, numeric):
        axes = dims if name.endswith(("_hw", "_dhw")) else 1
        if not re.fullmatch("x".join([r"\d{1,15}"] * axes), value):
            want = "x".join(["<whole number>"] * axes)
            return _fail(f, line, name.removeprefix("key_"), value, want)
    return _fail(f, line, "layout", "-".join(parts[len(numeric):len(parts) - 2]), "NCHW, NCDHW, or three layouts")


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _np(arr) -> np.ndarray:
    return arr.to_numpy(zero_copy_only=False)


def _parse_keys(f: FindDbFile, keys: pa.Array) -> dict[str, np.ndarray]:
    """Problem columns (forward terms) of every line's key, checked."""
    n = len(keys)
    cols: dict[str, np.ndarray] = {}
    parsed = {d: pc.extract_regex(keys, KEY_RE[d]) for d in (2, 3)}
    is2 = _np(parsed[2].is_valid())
    is3 = _np(parsed[3].is_valid())
    if not (is2 | is3).all():
        i = _first(~(is2 | is3))
        raise _diagnose_key(f, i + 1, keys[i].as_py())
    raw: dict[str, np.ndarray] = {}
    for d, mask in ((2, is2), (3, is3)):
        if not mask.any():
            continue
        idx = np.flatnonzero(mask)
        struct = parsed[d].filter(pa.array(mask))
        for j, name in enumerate(_group_names(d)):
            field = pc.struct_field(struct, [j])
            text = name in ("layout_text", "dtype_text", "dir", "casts")
            if text:
                vals = _np(field).astype(object)
            elif name == "groups":
                vals = _np(pc.cast(pc.if_else(pc.equal(field, ""), "1", field), pa.int64()))
            else:
                vals = _np(pc.cast(field, pa.int64()))
            if name not in raw:
                raw[name] = np.full(n, "", dtype=object) if text else np.full(n, -1, dtype=np.int64)
            raw[name][idx] = vals
    for name in _group_names(3):  # 2-D lines only: no depth fields
        raw.setdefault(name, np.full(n, -1, dtype=np.int64))
    dims = np.where(is3, 3, 2).astype(np.int32)
    # direction, data types, layouts: few distinct values, checked once each
    direction = raw["dir"]
    bad = ~np.isin(direction, ("F", "B", "W"))
    if bad.any():
        i = _first(bad)
        raise _fail(f, i + 1, "direction", str(direction[i]), "F, B or W (forward, backward data, backward weights)")
    backward = direction != "F"
    cols["direction"] = direction
    dtypes = _triples(f, raw["dtype_text"], "dtype", rf"({_DTYPES})", dims=None)
    layouts = _triples(f, raw["layout_text"], "layout", r"([A-Za-z]+)", dims=dims)
    for name, triple in (("dtype", dtypes), ("layout", layouts)):
        first, weights, last = triple
        x, y = np.where(backward, last, first), np.where(backward, first, last)
        same = (x == weights) & (weights == y)
        cols[name] = np.where(same, x, x.astype(object) + "/" + weights + "/" + y)
        cols[f"_{name}_xwy"] = (x, weights, y)
    casts = raw["casts"]
    cols["cast_types"] = np.where(casts == "", None, np.char.lstrip(casts.astype(str), "_").astype(object)) \
        if len(casts) else casts
    bad_cast = np.array([c is not None and not re.fullmatch(rf"(c[iwo]({_DTYPES}))(_c[iwo]({_DTYPES}))*", c)
                         for c in cols["cast_types"]], dtype=bool) if (casts != "").any() else np.zeros(n, bool)
    if bad_cast.any():
        i = _first(bad_cast)
        raise _fail(f, i + 1, "cast types", str(casts[i]), "_ci<type>, _cw<type>, _co<type> with MIOpen's type names")
    # forward terms: the key's in/out are x/y for F and dy/x for B and W
    for axis in ("c", "d", "h", "w"):
        kin, kout = raw.get(f"key_in_{axis}"), raw.get(f"key_out_{axis}")
        name = "channels" if axis == "c" else axis
        cols[f"in_{name}"] = np.where(backward, kout, kin)
        cols[f"out_{name}"] = np.where(backward, kin, kout)
    for base in ("filter", "pad", "stride", "dilation"):
        for axis in "dhw":
            cols[f"{base}_{axis}"] = raw[f"{base}_{axis}"]
    cols["batch"], cols["groups"], cols["bias"] = raw["batch"], raw["groups"], raw["bias"]
    cols["spatial_dims"] = dims
    for name in ("in_d", "out_d", "filter_d", "pad_d", "stride_d", "dilation_d"):
        cols[name] = np.where(is3, cols[name], -1)  # -1: null (2-D)
    # values
    for name in SHAPE:
        values = cols[name]
        low = 0 if name.startswith("pad_") else 1
        bad = (values < low) & ~((values == -1) & ~is3 & name.endswith("_d"))
        if bad.any():
            i = _first(bad)
            raise _fail(f, i + 1, name, str(values[i]), f"a whole number >= {low}")
    bad = ~np.isin(cols["bias"], (0, 1))
    if bad.any():
        i = _first(bad)
        raise _fail(f, i + 1, "bias", str(cols["bias"][i]), "0 or 1")
    bad = cols["in_channels"] % cols["groups"] != 0
    if bad.any():
        i = _first(bad)
        raise _fail(f, i + 1, "groups", str(cols["groups"][i]),
                    f"a divisor of the input channels ({cols['in_channels'][i]})")
    return cols


def _triples(f: FindDbFile, texts: np.ndarray, what: str, token: str, *, dims) -> tuple[np.ndarray, ...]:
    """A key's data type(s) or layout(s) as three arrays (input, weights, output in MIOpen's order)."""
    uniq, codes = np.unique(texts.astype(str), return_inverse=True)
    split = []
    for u in uniq:
        if what == "dtype":
            parts = re.fullmatch(rf"{token}|{token}{token}{token}", u)
            triple = None if parts is None else ((parts[1],) * 3 if parts[1] else (parts[2], parts[3], parts[4]))
        else:
            tokens = u.split("-")
            triple = (tokens[0],) * 3 if len(tokens) == 1 else tuple(tokens)
            if len(tokens) == 1 and tokens[0] not in ("NCHW", "NCDHW"):
                triple = None  # MIOpen writes one token only for its default layouts
            elif not all(re.fullmatch(r"[NCDHW]{4,5}c?", t) and len(set(t.rstrip("c"))) == len(t.rstrip("c"))
                         and set(t.rstrip("c")) >= set("NCHW") for t in triple):
                triple = None
        split.append(triple)
    for j, triple in enumerate(split):
        if triple is None:
            i = _first(codes == j)
            expected = ("one of " + ", ".join(ELEMENT_BYTES) + " (or three concatenated: input, weights, output)"
                        if what == "dtype" else "NCHW, NCDHW, or three layouts of N, C, (D,) H, W each once "
                        "(input-weights-output)")
            raise _fail(f, i + 1, what, uniq[j], expected)
    out = tuple(np.asarray([t[k] for t in split], dtype=object)[codes] for k in range(3))
    if dims is not None:
        letters = np.vectorize(lambda t: len(t.rstrip("c")), otypes=[np.int64])
        for k in range(3):
            bad = letters(out[k]) != dims + 2
            if bad.any():
                i = _first(bad)
                raise _fail(f, i + 1, what, str(texts[i]), f"a layout of {dims} spatial dimensions")
    return out


def _parse_entries(f: FindDbFile, entries: pa.Array, line_of: np.ndarray) -> dict[str, object]:
    """Solver, algorithm, time, workspace and format of every entry (arrays in entry order), checked."""
    n = len(entries)
    old = _np(pc.starts_with(entries, OLD_PREFIX))
    out_idx, parts = [], []
    for is_old, regex in ((False, NEW_ENTRY_RE), (True, OLD_ENTRY_RE)):
        idx = np.flatnonzero(old == is_old)
        if not len(idx):
            continue
        sub = entries.take(pa.array(idx)) if len(idx) < n else entries
        parsed = pc.extract_regex(sub, regex)
        ok = _np(parsed.is_valid())
        if not ok.all():
            j = _first(~ok)
            text = sub[j].as_py()
            fmt = ("algorithm:Solver,time_ms,workspace_bytes,kcache algorithm,kcache config" if is_old
                   else "Solver:time_ms,workspace_bytes,algorithm")
            raise _fail(f, int(line_of[idx[j]]), "entry", text, f"{fmt} (entries separated by ';')")
        out_idx.append(idx)
        parts.append((is_old, parsed))
    order = np.concatenate(out_idx)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    take = pa.array(inverse)

    def field(name: str) -> pa.Array:
        chunks = [p.field(name) for _, p in parts]
        arr = chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)
        return arr if len(parts) == 1 and len(order) == n and (order == np.arange(n)).all() else arr.take(take)

    times_text = field("time")
    numeric = _np(pc.match_substring_regex(times_text, TIME_RE))
    if not numeric.all():
        i = _first(~numeric)
        raise _fail(f, int(line_of[i]), "time", times_text[i].as_py(), "a time in milliseconds (a number)")
    times = _np(pc.cast(times_text, pa.float64()))
    bad = ~np.isfinite(times) | (times < 0)
    if bad.any():
        i = _first(bad)
        raise _fail(f, int(line_of[i]), "time", times_text[i].as_py(),
                    "a positive time in milliseconds (0 marks an untimed solver and is dropped)")
    ws_text = field("ws")
    whole = _np(pc.match_substring_regex(ws_text, r"^\d{1,15}$"))
    if not whole.all():
        i = _first(~whole)
        raise _fail(f, int(line_of[i]), "workspace", ws_text[i].as_py(), "a whole number of bytes")
    workspace = _np(pc.cast(ws_text, pa.int64()))
    bad = workspace > MAX_WORKSPACE_BYTES
    if bad.any():
        i = _first(bad)
        raise _fail(f, int(line_of[i]), "workspace", ws_text[i].as_py(),
                    f"at most 2**40 bytes ({MAX_WORKSPACE_BYTES:,}: more than any GPU's memory)")
    fmt = np.where(old, "algorithm-first", "solver-first").astype(object)
    return {"solver": field("solver"), "algorithm": field("algo"), "time_ms": times, "workspace_bytes": workspace,
            "entry_format": fmt}


def _problem_ids(cols: dict[str, np.ndarray], n: int) -> pa.Array:
    """``problem_id`` of every line (see the module docstring)."""

    class _Problem:
        name = PROBLEM_TABLE
        key_columns = list(PROBLEM_COLUMNS)

    table = pa.table({c: _column(c, cols[c]) for c in PROBLEM_COLUMNS})
    return pa.array(arrow_row_ids(_Problem(), table), pa.string())


def _column(name: str, values: np.ndarray) -> pa.Array:
    if values.dtype == object:
        return pa.array(values, pa.string(), from_pandas=True)
    if name.endswith("_d"):
        return pa.array(values, pa.int64(), mask=values < 0)
    return pa.array(values, pa.int64())


def nominal_work(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(flops, bytes_min) per line from its forward-term columns (formulas in the module docstring)."""
    f = {k: cols[k].astype(np.float64) for k in SHAPE}
    d1 = {k: np.where(f[k] < 0, 1.0, f[k]) for k in ("in_d", "out_d", "filter_d")}
    cin_g = f["in_channels"] / f["groups"]
    weights = f["out_channels"] * cin_g * d1["filter_d"] * f["filter_h"] * f["filter_w"]
    y = f["batch"] * f["out_channels"] * d1["out_d"] * f["out_h"] * f["out_w"]
    x = f["batch"] * f["in_channels"] * d1["in_d"] * f["in_h"] * f["in_w"]
    flops = 2 * y * cin_g * d1["filter_d"] * f["filter_h"] * f["filter_w"]
    size = np.vectorize(ELEMENT_BYTES.__getitem__, otypes=[np.float64])
    xs, ws, ys = (size(t) for t in cols["_dtype_xwy"])
    return flops, xs * x + ws * weights + ys * y


def _file_table(f: FindDbFile, prov: Provenance, counts: dict[str, dict[str, int]]) -> pa.Table:
    """The rows of one find-db file (row ids computed), before duplicates are resolved."""
    decl = get_table(CONFIG)
    raw = read_capped(f.path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ImportFormatError(f"{f.path}: line {line}: byte {exc.start} is not utf-8 text; expected MIOpen's "
                                "find-db as published (fetch the file again).") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise ImportFormatError(f"{f.path}: line 1: the file holds no problem line; expected KEY=ENTRY;ENTRY;... "
                                "lines (fetch the file again).")
    arr = pa.array(lines, pa.string())
    del lines, text
    kv = pc.split_pattern(arr, "=", max_splits=1)
    has_eq = _np(pc.equal(pc.list_value_length(kv), 2))
    if not has_eq.all():
        i = _first(~has_eq)
        raise _fail(f, i + 1, "line", arr[i].as_py(), "KEY=ENTRY;ENTRY;... (no '=' found)")
    keys, values = pc.list_element(kv, 0), pc.list_element(kv, 1)
    cols = _parse_keys(f, keys)
    n_lines = len(keys)
    lists = pc.split_pattern(values, ";")
    per_line = _np(pc.list_value_length(lists)).astype(np.int64)
    entries = pc.list_flatten(lists)
    parent = _np(pc.list_parent_indices(lists)).astype(np.int64)
    line_of = parent + 1
    ent = _parse_entries(f, entries, line_of)
    keep = ent["time_ms"] > 0
    counts["zero"][f.source_file] = int((~keep).sum())
    problem_id = _problem_ids(cols, n_lines)
    flops, nbytes = nominal_work(cols)
    rows = np.flatnonzero(keep)
    take_line = pa.array(parent[rows])
    n = len(rows)
    gpu_name, inferred = gpu_name_of(f.arch, f.compute_units)
    if amd_product(f.arch, f.compute_units) is None:
        warnings.warn(f"{f.path}: no single AMD product has {f.arch} with {f.compute_units} CUs "
                      "(kgpubench.hardware.AMD_PRODUCTS), so its rows are named "
                      f"{gpu_name!r} with null catalogue figures.", UnknownGpuWarning, stacklevel=2)
        gpu = gpu_columns(gpu_name)
    else:
        gpu = gpu_columns(gpu_name, warn=True)
    gpu.update(gpu_arch=f.arch, gpu_target_features=f.features, gpu_compute_units=f.compute_units,
               gpu_inferred_from=inferred)
    digest = hashlib.sha256(raw).hexdigest()
    del raw
    line_cols = {name: _column(name, cols[name]) for name in (*PROBLEM_COLUMNS,)}
    line_cols["spatial_dims"] = pa.array(cols["spatial_dims"], pa.int32())
    line_cols["bias"] = pa.array(cols["bias"], pa.int32())
    line_cols["problem_id"] = problem_id
    line_cols["solvers_in_problem"] = pa.array(per_line, pa.int32())
    line_cols["flops"] = pa.array(flops)
    line_cols["bytes_min"] = pa.array(nbytes)
    idx = pa.array(rows)
    columns: dict[str, pa.Array] = {name: a.take(take_line) for name, a in line_cols.items()}
    columns["solver"] = ent["solver"].take(idx)
    columns["algorithm"] = ent["algorithm"].take(idx)
    columns["time_ms"] = pa.array(ent["time_ms"][rows])
    columns["workspace_bytes"] = pa.array(ent["workspace_bytes"][rows])
    columns["entry_format"] = pa.array(ent["entry_format"][rows], pa.string())
    columns["source_line"] = pa.array(line_of[rows])
    constants = {**gpu, "status": "ok", "time_statistic": TIME_STATISTIC, "source_format": "miopen-fdb",
                 "backend": f.backend, "source": prov.source, "collected_at": prov.undated,
                 "kgpubench_version": __version__, "source_commit": prov.commit, "source_doi": prov.doi,
                 "source_license": prov.license, "source_file": f.source_file, "run_id": f"miopen-{digest[:16]}"}
    return decl.from_columns(columns, n, constants={k: v for k, v in constants.items() if k not in columns})


def _drop_duplicates(table: pa.Table) -> tuple[pa.Table, int]:
    """One row per row id: the fastest (the first among equal times)."""
    n = table.num_rows
    if pc.count_distinct(table["row_id"]).as_py() == n:
        return table, 0
    order = pc.sort_indices(pa.table({"r": table["row_id"], "t": table["time_ms"], "i": pa.array(np.arange(n))}),
                            sort_keys=[("r", "ascending"), ("t", "ascending"), ("i", "ascending")])
    ids = _np(table["row_id"].combine_chunks().take(order)).astype(object)
    first = np.ones(n, dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    kept = np.sort(_np(order)[first])
    return table.take(pa.array(kept)), int(n - len(kept))


def import_miopen(root: Path | str, prov: Provenance = MIOPEN) -> pa.Table:
    """Every solver time of every find-db file under ``root`` as a `convolutions` arrow table (``row_id``
    computed), files in path order and rows in file order.

    Emits one :class:`ImportNotice` for entries dropped on purpose (zero times; duplicates) and one
    :class:`~kgpubench.hardware.UnknownGpuWarning` per GPU without catalogue figures.

    Raises
    ------
    ImportFormatError
        On any bad input (one line naming the file, line and field); nothing is returned.
    """
    files = find_db_files(root)
    counts: dict[str, dict[str, int]] = {"zero": {}}
    tables, dropped_dupes = [], {}
    for f in files:
        t, d = _drop_duplicates(_file_table(f, prov, counts))
        tables.append(t)
        dropped_dupes[f.source_file] = d
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    zero = {k: v for k, v in counts["zero"].items() if v}
    dupes = {k: v for k, v in dropped_dupes.items() if v}
    if zero or dupes:
        parts = []
        if zero:
            parts.append(f"{sum(zero.values()):,} solver entries with time 0 (upstream's mark of a solver Find() did "
                         "not time) dropped (" + ", ".join(f"{k} {v:,}" for k, v in zero.items()) + ")")
        if dupes:
            parts.append(f"{sum(dupes.values()):,} repeated solver entries of one problem dropped, the fastest kept ("
                         + ", ".join(f"{k} {v:,}" for k, v in dupes.items()) + ")")
        warnings.warn("; ".join(parts) + ".", ImportNotice, stacklevel=2)
    return table


def import_to_shard(root: Path | str, out: Path | str, *, force: bool = False) -> tuple[Path, pa.Table]:
    """Import ``root`` (see :func:`import_miopen`) and write one validated `convolutions` shard at ``out``.

    Nothing is written on bad input or a schema violation; an existing ``out`` is refused unless ``force``.
    """
    return folder_to_shard(import_miopen, CONFIG, root, out, force=force, where=f"{root} (rows in file order)")
