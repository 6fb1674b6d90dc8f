"""Import MIOpen's find-db (ROCm/MIOpen ``src/kernels/*.fdb.txt.bz2``, MIT) as `convolutions` rows.

**Files.** Every file under the folder (at any depth) whose name holds ``.fdb.txt`` is a find-db and must be named
as MIOpen names its databases (``Handle::GetDbBasename``): ``<target><features><CUs>.<backend>.fdb.txt[.bz2]``,
where ``<target>`` is the ISA target (``gfx`` + major + minor + stepping: ``gfx9xx`` and ``gfx1xxx``, e.g.
``gfx906``, ``gfx90a``, ``gfx942``, ``gfx1030``), ``<features>`` MIOpen's optional db-id features
(``_sramecc`` / ``_nosramecc``, ``_xnack``), ``<CUs>`` the compute-unit count, **decimal after ``_`` when it is at
most 64** (``gfx906_60``) and **lower-case hex glued to the target when it is larger** (``gfx90a6e`` = 110,
``gfx942130`` = 0x130 = 304), and ``<backend>`` ``HIP`` or ``OpenCL``. A name that does not fit (or a decimal
count over 64, a hex one of 64 or less: MIOpen never writes them) is refused in one line. Content is read
through :mod:`kgpubench.foundation.capped` (bzip2 recognised by its magic bytes; the decompressed-size ceiling
applies). Other files (PROVENANCE.md, LICENSE, perf-db ``.db`` files) are ignored.

**The GPU.** ``gpu_name`` is :func:`kgpubench.hardware.amd_product` of (target, CUs); a pair it does not map keeps
the name ``"AMD <target> (<CUs> CUs)"`` (e.g. ``"AMD gfx1030 (36 CUs)"``) with null catalogue figures and one
notice (an :class:`~kgpubench.hardware.UnknownGpuWarning`), never a refusal. Such rows still say what the target
alone gives: ``gpu_vendor`` is ``amd`` (a find-db is AMD's) and ``gpu_architecture`` the target's family
(:func:`kgpubench.hardware.amd_architecture`, from LLVM's and AMD's processor tables: gfx1030 is ``rdna2``), both
``derived`` in ``gpu_specs_source``; a target with no documented family keeps a null architecture. Every row says
how its product was inferred (``gpu_inferred_from``), with ``gpu_arch``, ``gpu_target_features`` and
``gpu_compute_units`` from the file name.

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
divisible by the groups is refused in one line naming the file, line and field. The output size is not checked
against the input, filter, padding, stride and dilation: about 0.2 % of the staged problems do not follow that
relation (e.g. a 4x4 filter on a 1x1 input without padding) and are kept as upstream wrote them.

An ENTRY has one of two formats, told apart by whether its text before the first ``:`` starts with
``miopenConvolution``:

- ``solver-first`` (newer): ``Solver:time_ms,workspace_bytes,algorithm``;
- ``algorithm-first`` (older): ``algorithm:Solver,time_ms,workspace_bytes,kcache algorithm,kcache config`` (the
  last two are MIOpen's kernel-cache key, e.g. ``rocBlas`` and ``<unused>``; not imported).

**Values.** ``time_ms`` must be a number; NaN, infinite or negative times and workspaces that are not whole
numbers from 0 to 2**40 bytes (more memory than any GPU has) are refused in one line (MIOpen's writer never
produces them). **A time of exactly 0 is dropped**, not refused: upstream records ``0.0`` for some GEMM solvers
whose time Find() did not measure (4,032 entries in the staged files, all of two solvers, ``GemmFwd1x1_0_1`` and
``GemmWrw1x1_stride1``, at most one per line: no problem loses every entry), so the entry carries no time; the
count per file is one notice line (an :class:`ImportNotice`).
``solvers_in_problem`` counts every entry of the line, dropped ones included.

**Older 3-D keys.** Some lines (48, all in ``gfx906_64``) hold 3-D problems in an older, undocumented
serialisation: depth after height and width (``C-H-W-D-FHxFWxFD-K-Ho-Wo-Do-N-...``), a 2-D layout label (``NCHW``)
and often a 2-D padding (``0x0``). Their fields cannot be assigned safely, so such lines (17 dash-separated fields,
a three-axis filter and the layout ``NCHW``) are dropped with their entries, counted in the notice; any other key
that fits neither form is refused.

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
import json
import math
import re
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.buildinfo import package_version
from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import read_capped
from kgpubench.hardware import DERIVED, UnknownGpuWarning, amd_architecture, amd_product, gpu_columns
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import MIOPEN, Provenance, notice
from kgpubench.schema import canonical_value, get_table
from kgpubench.schema._core import joined, long_runs, spread_runs
from kgpubench.schema._parallel import parallel_map, start_workers, to_parent
from kgpubench.schema._rowids import (
    coded_fragments,
    group_digests,
    group_limit,
    hashed_groups,
    merged_group,
    row_ids_of_digests,
)
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


# Key forms by token count (after splitting at '-' and 'x'): (spatial dims, layout tokens).
FORMS = {19: (2, 1), 21: (2, 3), 25: (3, 1), 27: (3, 3)}
# An older serialisation of 3-D problems (depth after height and width, filter HxWxD, a 2-D layout label and often
# a 2-D padding): C-H-W-D-FHxFWxFD-K-Ho-Wo-Do-N-pad-stride-dilation-bias-NCHW-... Its field order is not MIOpen's
# documented one and cannot be read safely: such lines are dropped and counted (48 in gfx906_64).
LEGACY_3D_RE = (r"^\d+-\d+-\d+-\d+-\d+x\d+x\d+-\d+-\d+-\d+-\d+-\d+-\d+x\d+(x\d+)?-\d+x\d+x\d+-\d+x\d+x\d+-\d+-NCHW-")
TIME_RE = r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(?i:nan|inf|infinity)$"
SHAPE = ("batch", "in_channels", "in_d", "in_h", "in_w", "out_channels", "out_d", "out_h", "out_w", "filter_d",
         "filter_h", "filter_w", "pad_d", "pad_h", "pad_w", "stride_d", "stride_h", "stride_w", "dilation_d",
         "dilation_h", "dilation_w", "groups")
PROBLEM_COLUMNS = (*SHAPE, "bias", "layout", "dtype", "cast_types", "direction")


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
    text = str(text)
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


def _parse_keys(f: FindDbFile, keys: pa.Array, line_no: np.ndarray) -> dict[str, np.ndarray]:
    """Problem columns (forward terms) of every line's key, checked: tokens by position, then the key rebuilt from
    the parsed fields must equal the line's key (so a misplaced separator or a leading zero is refused)."""
    n = len(keys)
    tok = pc.split_pattern(pc.replace_substring(keys, "x", "-"), "-")
    ntok = _np(pc.list_value_length(tok)).astype(np.int64)
    flat = pc.list_flatten(tok)
    starts = _np(tok.offsets)[:-1].astype(np.int64)
    form_of = np.full(n, -1, dtype=np.int64)
    for code, count in enumerate(FORMS):
        form_of[ntok == count] = code
    if (form_of < 0).any():
        i = _first(form_of < 0)
        raise _diagnose_key(f, int(line_no[i]), keys[i].as_py())
    raw: dict[str, np.ndarray] = {name: np.full(n, -1, dtype=np.int64) for name in _group_names(3)[:-5]}
    layout_text = np.empty(n, dtype=object)
    dtype_tok = np.empty(n, dtype=object)
    dir_tok = np.empty(n, dtype=object)
    for code, (dims, n_layouts) in enumerate(FORMS.values()):
        rows = np.flatnonzero(form_of == code)
        if not len(rows):
            continue
        base = starts[rows]
        names = _group_names(dims)[:-5]
        texts = []
        for p, name in enumerate(names):
            t = flat.take(pa.array(base + p))
            try:
                raw[name][rows] = _np(pc.cast(t, pa.int64()))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                bad = ~_np(pc.fill_null(pc.match_substring_regex(t, r"^\d{1,15}$"), False))
                i = int(rows[_first(bad)])
                raise _diagnose_key(f, int(line_no[i]), keys[i].as_py()) from None
            texts.append(t)
        layouts = [flat.take(pa.array(base + len(names) + k)) for k in range(n_layouts)]
        joined_layout = layouts[0] if n_layouts == 1 else pc.binary_join_element_wise(*layouts, "-")
        layout_text[rows] = _np(joined_layout)
        dtype_tok[rows] = _np(flat.take(pa.array(base + len(names) + n_layouts)))
        dir_tok[rows] = _np(flat.take(pa.array(base + len(names) + n_layouts + 1)))
        # rebuild the key: separators 'x' inside a multi-axis field, '-' between fields
        pieces: list = []
        p = 0
        for field in KEY_FIELDS[dims]:
            axes = dims if field.endswith(("_hw", "_dhw")) else 1
            for a in range(axes):
                pieces += [texts[p], "x" if a < axes - 1 else "-"]
                p += 1
        rebuilt = pc.binary_join_element_wise(*pieces, joined_layout, "-", pa.array(dtype_tok[rows], pa.string()),
                                              "-", pa.array(dir_tok[rows], pa.string()), "")
        same = _np(pc.equal(rebuilt, keys.take(pa.array(rows))))
        if not same.all():
            i = int(rows[_first(~same)])
            raise _diagnose_key(f, int(line_no[i]), keys[i].as_py())
    dims = np.where((form_of == 2) | (form_of == 3), 3, 2).astype(np.int32)
    # direction (with groups and casts), data types, layouts: few distinct values, parsed once each
    direction, groups, casts = _directions(f, dir_tok, line_no)
    backward = direction != "F"
    cols: dict[str, np.ndarray] = {"direction": direction, "groups": groups, "cast_types": casts}
    for name, triple in (("dtype", _triples(f, dtype_tok, "dtype", dims, line_no)),
                         ("layout", _triples(f, layout_text, "layout", dims, line_no))):
        first, weights, last = triple
        x, y = np.where(backward, last, first), np.where(backward, first, last)
        same = (x == weights) & (weights == y)
        cols[name] = np.where(same, x, x.astype(object) + "/" + weights + "/" + y)
        cols[f"_{name}_xwy"] = (x, weights, y)
    # forward terms: the key's in/out are x/y for F and dy/x for B and W
    for axis in ("c", "d", "h", "w"):
        kin, kout = raw[f"key_in_{axis}"], raw[f"key_out_{axis}"]
        name = "channels" if axis == "c" else axis
        cols[f"in_{name}"] = np.where(backward, kout, kin)
        cols[f"out_{name}"] = np.where(backward, kin, kout)
    for base_name in ("filter", "pad", "stride", "dilation"):
        for axis in "dhw":
            cols[f"{base_name}_{axis}"] = raw[f"{base_name}_{axis}"]
    cols["batch"], cols["bias"], cols["spatial_dims"] = raw["batch"], raw["bias"], dims
    is3 = dims == 3
    for name in SHAPE:
        values = cols[name]
        low = 0 if name.startswith("pad_") else 1
        bad = (values < low) & ~(~is3 & name.endswith("_d"))
        if bad.any():
            i = _first(bad)
            raise _fail(f, int(line_no[i]), name, str(values[i]), f"a whole number >= {low}")
    bad = ~np.isin(cols["bias"], (0, 1))
    if bad.any():
        i = _first(bad)
        raise _fail(f, int(line_no[i]), "bias", str(cols["bias"][i]), "0 or 1")
    bad = cols["in_channels"] % cols["groups"] != 0
    if bad.any():
        i = _first(bad)
        raise _fail(f, int(line_no[i]), "groups", str(cols["groups"][i]),
                    f"a divisor of the input channels ({cols['in_channels'][i]})")
    return cols


def _directions(f: FindDbFile, tokens: np.ndarray, line_no: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(direction, groups, cast suffix or None) of every line's last key field."""
    uniq, codes = np.unique(tokens.astype(str), return_inverse=True)
    parsed = []
    for j, u in enumerate(uniq):
        m = re.fullmatch(rf"([FBW])(?:_g(\d{{1,15}}))?((?:_c[iwo](?:{_DTYPES}))*)", u)
        if m is None:
            i = _first(codes == j)
            raise _fail(f, int(line_no[i]), "direction", u, "F, B or W (forward, backward data, backward weights), "
                        "optionally with _g<groups> and _ci/_cw/_co<type> suffixes")
        parsed.append((m[1], int(m[2] or 1), m[3].lstrip("_") or None))
    return tuple(np.asarray([p[k] for p in parsed], dtype=object if k != 1 else np.int64)[codes] for k in range(3))


def _triples(f: FindDbFile, texts: np.ndarray, what: str, dims: np.ndarray, line_no: np.ndarray
             ) -> tuple[np.ndarray, ...]:
    """A key's data type(s) or layout(s) as three arrays (input, weights, output in MIOpen's order)."""
    uniq, codes = np.unique(texts.astype(str), return_inverse=True)
    split, letters = [], []
    for u in uniq:
        if what == "dtype":
            m = re.fullmatch(rf"({_DTYPES})|({_DTYPES})({_DTYPES})({_DTYPES})", u)
            triple = None if m is None else ((m[1],) * 3 if m[1] else (m[2], m[3], m[4]))
        else:
            tokens = u.split("-")
            triple = (tokens[0],) * 3 if len(tokens) == 1 else tuple(tokens)
            if len(tokens) == 1 and tokens[0] not in ("NCHW", "NCDHW"):
                triple = None  # MIOpen writes one token only for its default layouts
            elif not all(re.fullmatch(r"[NCDHW]{4,5}c?", t) and len(set(t.rstrip("c"))) == len(t.rstrip("c"))
                         and set(t.rstrip("c")) >= set("NCHW") for t in triple):
                triple = None
        split.append(triple)
        letters.append(0 if triple is None else len(triple[0].rstrip("c")))
    for j, triple in enumerate(split):
        if triple is None:
            i = _first(codes == j)
            expected = ("one of " + ", ".join(ELEMENT_BYTES) + " (or three concatenated: input, weights, output)"
                        if what == "dtype" else "NCHW, NCDHW, or three layouts of N, C, (D,) H, W each once "
                        "(input-weights-output)")
            raise _fail(f, int(line_no[i]), what, uniq[j], expected)
    if what == "layout":
        bad = np.asarray(letters)[codes] != dims + 2
        if bad.any():
            i = _first(bad)
            raise _fail(f, int(line_no[i]), what, str(texts[i]), f"a layout of {int(dims[i])} spatial dimensions")
    return tuple(np.asarray([t[k] for t in split], dtype=object)[codes] for k in range(3))


def _parse_entries(f: FindDbFile, entries: pa.Array, line_of: np.ndarray) -> dict[str, object]:
    """Solver, algorithm, time, workspace and format of every entry (arrays in entry order), checked."""
    old = _np(pc.starts_with(entries, OLD_PREFIX))
    tok = pc.split_pattern(pc.replace_substring(entries, ":", ",", max_replacements=1), ",")
    ntok = _np(pc.list_value_length(tok))
    bad = ntok != np.where(old, 6, 4)
    if bad.any():
        i = _first(bad)
        fmt = ("algorithm:Solver,time_ms,workspace_bytes,kcache algorithm,kcache config" if old[i]
               else "Solver:time_ms,workspace_bytes,algorithm")
        raise _fail(f, int(line_of[i]), "entry", entries[i].as_py(), f"{fmt} (entries separated by ';')")
    flat = pc.list_flatten(tok)
    base = _np(tok.offsets)[:-1].astype(np.int64)

    def field(new: int, older: int) -> pa.Array:
        return flat.take(pa.array(base + np.where(old, older, new)))

    solver, algorithm = field(0, 1), field(3, 0)
    for name, arr in (("solver", solver), ("algorithm", algorithm)):
        empty = _np(pc.equal(pc.utf8_trim_whitespace(arr), ""))
        if empty.any():
            i = _first(empty)
            raise _fail(f, int(line_of[i]), name, entries[i].as_py(), f"a {name} name")
    times_text = field(1, 2)
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
    ws_text = field(2, 3)
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
    return {"solver": solver, "algorithm": algorithm, "time_ms": times, "workspace_bytes": workspace, "old": old}


def _key_text(name: str, keys: list[str], columns: dict, *, open_: bool, close: bool) -> list:
    """The pieces of ``row_id_of``'s JSON text for ``keys`` (sorted), as arrow arrays and separators."""
    pieces: list = []
    if open_:
        pieces.append("[" + json.dumps(name) + ",[")
    for j, key in enumerate(keys):
        frag = columns[key]
        pieces += [("," if j or not open_ else "") + "[" + json.dumps(key) + ",", frag, "]"]
    if close:
        pieces.append("]]")
    return pieces


def _groups(pieces: list, n: int) -> list[tuple[np.ndarray, list[bytes]]]:
    """The texts of ``pieces`` over ``n`` lines (texts the same on every line, and coded columns: (code per line,
    text per code), :func:`~kgpubench.schema._rowids.coded_fragments`) as a few coded groups, a line's text being
    its groups' texts one after the other: adjacent pieces are merged, as the codes of their combinations, while
    those stay few (:func:`~kgpubench.schema._rowids.merged_group`). No text of every line is built (gfx90a68's
    problem and row-head texts, 86 and 102 MB, took 0.7 s to join with arrow)."""
    limit = group_limit(n)
    groups: list = []
    group = (np.zeros(n, dtype=np.int64), [""])
    for piece in pieces:
        group = (group[0], [t + piece for t in group[1]]) if isinstance(piece, str) else merged_group(
            group, *piece, limit, groups)
    groups.append(group)
    return [(c, [t.encode() for t in ts]) for c, ts in groups]


def _one_group(groups: list[tuple[np.ndarray, list[bytes]]]) -> tuple[np.ndarray, list[bytes]]:
    """:func:`_groups`'s groups merged into one, however many combinations that makes."""
    group = groups[0]
    for more in groups[1:]:
        group = merged_group(group, *more, math.inf, [])
    return group


def _problem_and_row_ids(decl, frags: dict[str, tuple[np.ndarray, list[str]] | str], solver: pa.Array,
                         row_line: np.ndarray) -> tuple[pa.Array, bytes]:
    """(problem_id per line, the sha256 digest of each row's key text, concatenated), byte for byte
    :func:`kgpubench.schema.row_id_of`'s: the row text is hashed as the line's part before ``solver`` (hashed
    once per line), then the rest (the solver and the line's part after it)."""
    n = len(frags["batch"][0])  # lines
    problem_text = _key_text(PROBLEM_TABLE, sorted(PROBLEM_COLUMNS), frags, open_=True, close=True)
    problem_id = row_ids_of_digests(group_digests(_groups(problem_text, n)))
    keys = sorted(decl.key_columns)
    cut = keys.index("solver")
    heads = hashed_groups(_groups(_key_text(CONFIG, keys[:cut], frags, open_=True, close=False) + [',["solver",'], n))
    # The rest of a row's text is its solver's text and its line's tail (the key columns after ``solver``: the
    # strides), each of few distinct values: the rest's bytes are built once per distinct (solver, tail) pair.
    enc = solver.dictionary_encode()
    solver_text = [json.dumps(v).encode() for v in enc.dictionary.to_pylist()]
    tail_code, tail_text = _one_group(_groups(["]"] + _key_text(CONFIG, keys[cut + 1:], frags, open_=False,
                                                                 close=True), n))
    pair_codes, pairs = pd.factorize(_np(enc.indices).astype(np.int64) * len(tail_text) + tail_code[row_line])
    rest = [solver_text[p // len(tail_text)] + tail_text[p % len(tail_text)] for p in pairs.tolist()]
    digests = []
    for line, r in zip(row_line.tolist(), map(rest.__getitem__, pair_codes.tolist())):
        h = heads[line].copy()
        h.update(r)
        digests.append(h.digest())
    return problem_id, b"".join(digests)


def _digest_keys(digests: bytes) -> np.ndarray:
    """The first 8 bytes of each 32-byte digest as a big-endian integer: ordered as the row ids' hex texts."""
    return np.frombuffer(digests, dtype=np.uint8).reshape(-1, 32)[:, :8].copy().view(">u8").ravel()


def _column(name: str, values: np.ndarray) -> pa.Array:
    if values.dtype == object:
        return pa.array(values, pa.string(), from_pandas=True)
    if name.endswith("_d"):
        return pa.array(values, pa.int64(), mask=values < 0)
    return pa.array(values, pa.int64())


def _sizes(types: np.ndarray) -> np.ndarray:
    uniq, codes = np.unique(types.astype(str), return_inverse=True)
    return np.asarray([ELEMENT_BYTES[u] for u in uniq], dtype=np.float64)[codes]


def nominal_work(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(flops, bytes_min) per line from its forward-term columns (formulas in the module docstring)."""
    f = {k: cols[k].astype(np.float64) for k in SHAPE}
    d1 = {k: np.where(f[k] < 0, 1.0, f[k]) for k in ("in_d", "out_d", "filter_d")}
    cin_g = f["in_channels"] / f["groups"]
    weights = f["out_channels"] * cin_g * d1["filter_d"] * f["filter_h"] * f["filter_w"]
    y = f["batch"] * f["out_channels"] * d1["out_d"] * f["out_h"] * f["out_w"]
    x = f["batch"] * f["in_channels"] * d1["in_d"] * f["in_h"] * f["in_w"]
    flops = 2 * y * cin_g * d1["filter_d"] * f["filter_h"] * f["filter_w"]
    xs, ws, ys = (_sizes(t) for t in cols["_dtype_xwy"])
    return flops, xs * x + ws * weights + ys * y


def _lines(f: FindDbFile, raw: bytes) -> pa.Array:
    """The file's lines as an arrow string array (no copy of the text), checked to be utf-8."""
    buf = np.frombuffer(raw, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    if len(raw) and raw[-1:] != b"\n":
        ends = np.append(ends, len(raw))
    if not len(ends):
        raise ImportFormatError(f"{f.path}: line 1: the file holds no problem line; expected KEY=ENTRY;ENTRY;... "
                                "lines (fetch the file again).")
    if len(raw) >= 2**31:
        raise ImportFormatError(f"{f.path}: {len(raw):,} bytes of text; a find-db is far smaller (at most 2 GiB "
                                "here).")
    starts = np.concatenate([[0], ends[:-1] + 1])
    # line i is raw[starts[i]:ends[i]]; an arrow string array needs contiguous values: drop the newlines
    keep = np.ones(len(buf), dtype=bool)
    keep[ends[ends < len(buf)]] = False
    data = buf[keep] if (~keep).any() else buf
    offsets = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int32)
    arr = pa.StringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise ImportFormatError(f"{f.path}: line {line}: byte {exc.start} is not utf-8 text; expected MIOpen's "
                                    "find-db as published (fetch the file again).") from None
        raise
    return arr


@dataclass(frozen=True)
class _FileRows:
    """One find-db file's rows as columns (row ids computed, duplicates resolved): what a worker process sends
    back (the columns every row shares travel as one value each)."""

    columns: pa.Table
    num_rows: int
    constants: dict[str, object]
    zero: int  # entries with time 0, dropped
    legacy: tuple[int, int] | None  # lines with the older 3-D key and their entries, dropped
    duplicates: int  # repeated solver entries of one problem, dropped (the fastest kept)


def _file_gpu(f: FindDbFile) -> dict:
    """The GPU columns of a find-db file's rows (one :class:`~kgpubench.hardware.UnknownGpuWarning` when its
    target and CUs name no single product or the product has no catalogue figures). Looked up in the process
    that imports, once per file, so that the worker processes never load the GPU catalogue."""
    gpu_name, inferred = gpu_name_of(f.arch, f.compute_units)
    if amd_product(f.arch, f.compute_units) is None:
        warnings.warn(f"{f.path}: no single AMD product has {f.arch} with {f.compute_units} CUs "
                      "(kgpubench.hardware.AMD_PRODUCTS), so its rows are named "
                      f"{gpu_name!r} with null catalogue figures.", UnknownGpuWarning, stacklevel=2)
        gpu = gpu_columns(gpu_name)
    else:
        gpu = gpu_columns(gpu_name, warn=True)
    gpu.update(_target_identity(f.arch, gpu))
    gpu.update(gpu_arch=f.arch, gpu_target_features=f.features, gpu_compute_units=f.compute_units,
               gpu_inferred_from=inferred)
    return gpu


def _target_identity(arch: str, gpu: dict) -> dict:
    """The vendor (``amd``: a find-db is AMD's by construction) and the architecture family of the ISA target
    (:func:`~kgpubench.hardware.amd_architecture`) where the catalogue's columns ``gpu`` give none, each recorded
    as ``derived`` in ``gpu_specs_source``; a target with no known family keeps a null architecture."""
    derived = {"gpu_vendor": "amd", "gpu_architecture": amd_architecture(arch)}
    filled = {c: v for c, v in derived.items() if v is not None and gpu.get(c) is None}
    if not filled:
        return {}
    sources = [s for s in gpu.get("gpu_specs_source") or [] if s["name"] not in filled]
    sources += [{"name": c, "value": DERIVED} for c in filled]
    return {**filled, "gpu_specs_source": sorted(sources, key=lambda s: s["name"])}


def _file_rows(job: tuple[FindDbFile, Provenance, dict]) -> _FileRows:
    """The rows of one find-db file (row ids computed; of a repeated row id, the fastest row kept); ``job`` holds
    the file, the provenance and the file's GPU columns (:func:`_file_gpu`)."""
    f, prov, gpu = job
    decl = get_table(CONFIG)
    raw = read_capped(f.path)
    digest = hashlib.sha256(raw).hexdigest()
    arr = _lines(f, raw)
    del raw
    kv = pc.split_pattern(arr, "=", max_splits=1)
    has_eq = _np(pc.equal(pc.list_value_length(kv), 2))
    if not has_eq.all():
        i = _first(~has_eq)
        raise _fail(f, i + 1, "line", arr[i].as_py(), "KEY=ENTRY;ENTRY;... (no '=' found)")
    # each line's two parts taken from the flattened list (arrow's list_element: 0.34-0.59 s against 0.02-0.14 s
    # for both on gfx90a68's 192k lines)
    flat, first = pc.list_flatten(kv), pa.array(_np(kv.offsets)[:-1].astype(np.int64))
    keys, values = flat.take(first), flat.take(pc.add(first, 1))
    del flat, first
    del kv, arr
    line_no = np.arange(1, len(keys) + 1)
    legacy = _np(pc.match_substring_regex(keys, LEGACY_3D_RE))
    dropped_legacy = None
    if legacy.any():  # dropped on purpose (module docstring), counted in the notice
        dropped_legacy = (int(legacy.sum()), pc.sum(pc.add(pc.count_substring(
            values.filter(pa.array(legacy)), ";"), 1)).as_py())
        kept = pa.array(~legacy)
        keys, values, line_no = keys.filter(kept), values.filter(kept), line_no[~legacy]
    cols = _parse_keys(f, keys, line_no)
    lists = pc.split_pattern(values, ";")
    per_line = _np(pc.list_value_length(lists)).astype(np.int64)
    entries = pc.list_flatten(lists)
    parent = _np(pc.list_parent_indices(lists)).astype(np.int64)
    del lists, values
    ent = _parse_entries(f, entries, line_no[parent])
    del entries
    keep = ent["time_ms"] > 0
    rows = np.flatnonzero(keep)
    row_line = parent[rows]
    line_cols = {name: _column(name, cols[name]) for name in PROBLEM_COLUMNS}
    line_cols["bias"] = pa.array(cols["bias"], pa.int32())
    # key fragments: line-level columns, and the file's constants
    frags = {name: coded_fragments(a) for name, a in line_cols.items()}
    const_keys = {"gpu_name": gpu["gpu_name"], "gpu_arch": f.arch, "gpu_target_features": f.features,
                  "gpu_compute_units": f.compute_units, "backend": f.backend}
    frags.update({k: json.dumps(canonical_value(v), separators=(",", ":")) for k, v in const_keys.items()})
    problem_id, digests = _problem_and_row_ids(decl, frags, ent["solver"].take(pa.array(rows)), row_line)
    # rows in their final order: by line, and within a line by row id (stable: equal ids keep file order)
    keys = _digest_keys(digests)
    order = np.lexsort((keys, row_line))
    rows, row_line = rows[order], row_line[order]
    row_ids = row_ids_of_digests(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 32)[order].tobytes())
    flops, nbytes = nominal_work(cols)
    line_cols["spatial_dims"] = pa.array(cols["spatial_dims"], pa.int32())
    line_cols["problem_id"] = problem_id
    line_cols["solvers_in_problem"] = pa.array(per_line, pa.int32())
    line_cols["flops"] = pa.array(flops)
    line_cols["bytes_min"] = pa.array(nbytes)
    take_line = pa.array(row_line)
    idx = pa.array(rows)
    columns: dict[str, pa.Array] = {name: a.take(take_line) for name, a in line_cols.items()}
    columns["row_id"] = row_ids
    columns["solver"] = ent["solver"].take(idx)
    columns["algorithm"] = ent["algorithm"].take(idx)
    columns["time_ms"] = pa.array(ent["time_ms"][rows])
    columns["workspace_bytes"] = pa.array(ent["workspace_bytes"][rows])
    columns["entry_format"] = pc.if_else(pa.array(ent["old"][rows]), "algorithm-first", "solver-first")
    columns["source_line"] = pa.array(line_no[row_line])
    constants = {**gpu, "status": "ok", "time_statistic": TIME_STATISTIC, "source_format": "miopen-fdb",
                 "backend": f.backend, "source": prov.source, "collected_at": prov.undated,
                 "kgpubench_version": package_version(), "source_commit": prov.commit, "source_doi": prov.doi,
                 "source_license": prov.license, "source_file": f.source_file, "run_id": f"miopen-{digest[:16]}"}
    table, dupes = pa.table(columns), 0
    ordered = np.sort(keys)  # (np.unique's hash table is 50x slower than this sort on 647k keys, numpy 2.4)
    if (ordered[1:] == ordered[:-1]).any():  # a row id twice (its first 8 digest bytes): the fastest row kept
        table, dupes = _drop_duplicates(table)
    return _FileRows(to_parent(table), table.num_rows, {k: v for k, v in constants.items() if k not in columns},
                     int((~keep).sum()), dropped_legacy, dupes)


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


def _joined(decl, parts: list[_FileRows]) -> pa.Table:
    """The files' rows one after the other: their own columns' chunks (not copied), and each column every row
    of a file shares spread over its rows, files of one value sharing its blocks."""
    sizes = np.asarray([p.num_rows for p in parts], dtype=np.int64)
    n = int(sizes.sum())
    own = parts[0].columns.column_names
    arrays: dict[str, pa.ChunkedArray] = {}
    constants: dict[str, object] = {}
    for c in decl.columns:
        if c.name in own:
            arrays[c.name] = joined([p.columns for p in parts], c.name, c.arrow_type)
        elif c.name in parts[0].constants:
            values = [p.constants[c.name] for p in parts]
            index: dict[str, int] = {}  # equal values (by their repr: lists of dicts included) share one code
            codes = np.asarray([index.setdefault(repr(v), len(index)) for v in values], dtype=np.int64)
            if len(index) == 1:
                constants[c.name] = values[0]
            else:
                uniq = [values[int(np.flatnonzero(codes == j)[0])] for j in range(len(index))]
                arrays[c.name] = _spread_by_file(pa.array(uniq, c.arrow_type), codes, sizes)
    return decl.from_columns(arrays, n, constants=constants, fill_row_id=False)


def _spread_by_file(values: pa.Array, codes: np.ndarray, sizes: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """``values.take`` of each file's code repeated over its rows: run by run
    (:func:`~kgpubench.schema._core.spread_runs`, the runs found among the files instead of among millions of row
    codes), or by arrow's take where the runs are short."""
    runs = long_runs(codes, sizes)
    return values.take(pa.array(np.repeat(codes, sizes))) if runs is None else spread_runs(values, *runs)


def import_miopen(root: Path | str, prov: Provenance = MIOPEN, *, jobs: int = 1) -> pa.Table:
    """Every solver time of every find-db file under ``root`` as a `convolutions` arrow table (``row_id``
    computed), files in path order and rows in file order. ``jobs`` above 1 reads that many files at once in
    worker processes (:func:`kgpubench.schema._parallel.parallel_map`): the same table. A script that passes
    ``jobs`` above 1 calls this under ``if __name__ == "__main__":`` (see :mod:`kgpubench.schema._parallel`).

    Emits one :class:`ImportNotice` for entries dropped on purpose (zero times; duplicates) and one
    :class:`~kgpubench.hardware.UnknownGpuWarning` per GPU without catalogue figures.

    Raises
    ------
    ImportFormatError
        On any bad input (one line naming the file, line and field); nothing is returned.
    """
    files = find_db_files(root)
    start_workers(_file_rows, jobs if len(files) > 1 else 1)  # its server starts while the GPUs are looked up
    decl = get_table(CONFIG)
    counts: dict[str, dict] = {"zero": {}, "legacy": {}}
    dropped_dupes = {}
    gpus = [_file_gpu(f) for f in files]  # here, in file order: the workers need no GPU catalogue
    parts = parallel_map(_file_rows, [(f, prov, gpu) for f, gpu in zip(files, gpus)], jobs=jobs,
                         costs=[f.path.stat().st_size for f in files])
    for f, part in zip(files, parts):
        counts["zero"][f.source_file] = part.zero
        if part.legacy is not None:
            counts["legacy"][f.source_file] = part.legacy
        dropped_dupes[f.source_file] = part.duplicates
    table = _joined(decl, parts)
    # Upstream lists a problem's solvers fastest first: kept in that order, the rows would tell a model that
    # breaks ties by position which solver wins. Within a line, rows go by row id (a hash: no order of time).
    # Each file's rows are in that order already (_file_rows); files go by name.
    names = [f.source_file for f in files]
    if names != sorted(names):
        table = table.sort_by([("source_file", "ascending"), ("source_line", "ascending"), ("row_id", "ascending")])
    zero = {k: v for k, v in counts["zero"].items() if v}
    legacy = counts["legacy"]
    dupes = {k: v for k, v in dropped_dupes.items() if v}
    if zero or dupes or legacy:
        parts = []
        if legacy:
            parts.append(f"{sum(v[0] for v in legacy.values()):,} lines with an older 3-D key (depth after height and "
                         "width, layout NCHW; not MIOpen's documented order) dropped with their "
                         f"{sum(v[1] for v in legacy.values()):,} entries ("
                         + ", ".join(f"{k} {v[0]:,} lines" for k, v in legacy.items()) + ")")
        if zero:
            parts.append(f"{sum(zero.values()):,} solver entries with time 0 (upstream's mark of a solver Find() did "
                         "not time) dropped (" + ", ".join(f"{k} {v:,}" for k, v in zero.items()) + ")")
        if dupes:
            parts.append(f"{sum(dupes.values()):,} repeated solver entries of one problem dropped, the fastest kept ("
                         + ", ".join(f"{k} {v:,}" for k, v in dupes.items()) + ")")
        notice("; ".join(parts) + ".")
    return table


# The packaged data hold one problem in PACKAGED_SHARE (by problem_id), with every GPU and solver of it.
PACKAGED_SHARE = 8


def packaged_selection(root: Path | str, *, jobs: int = 1) -> pa.Table:
    """The rows the packaged data hold (a declared selection, documented in the card): every row whose
    ``problem_id`` (the same problem on every GPU) falls in hash bucket 0 of :data:`PACKAGED_SHARE`, so a kept
    problem keeps all its GPUs and solvers together."""
    table = import_miopen(root, jobs=jobs)
    ids = table["problem_id"].to_numpy(zero_copy_only=False)
    codes, uniq = pd.factorize(ids, use_na_sentinel=False)  # (hashing; np.unique sorts the Python strings)
    keep = np.fromiter((int.from_bytes(hashlib.sha256(f"packaged\x1f{u}".encode()).digest()[:8], "big")
                        % PACKAGED_SHARE == 0 for u in uniq), dtype=bool, count=len(uniq))
    return table.filter(pa.array(keep[codes]))


def import_to_shard(root: Path | str, out: Path | str, *, force: bool = False,
                    packaged: bool = False, jobs: int = 1) -> tuple[Path, pa.Table]:
    """Import ``root`` (see :func:`import_miopen`; ``jobs`` worker processes; ``packaged``: only
    :func:`packaged_selection`) and write one validated `convolutions` shard at ``out``.

    Nothing is written on bad input or a schema violation; an existing ``out`` is refused unless ``force``.
    """
    build = partial(packaged_selection if packaged else import_miopen, jobs=jobs)
    return folder_to_shard(build, CONFIG, root, out, force=force, where=f"{root} (rows in file order)")
