"""Export kgpubench rows with tunable parameters as T4 results files (read through ``load_dataset``, hence in
the tasks layer; the T4 reader and its names are :mod:`kgpubench.importers.t4`'s).

Each config says what its kernel, problem size and tunable configuration are:

- ``autotune``: kernel ``kernel``, size ``problem_size``, configuration ``params`` + ``params_text``;
- ``stencil``: kernel ``wave3d-<variant>-<dtype>-so<order>``, size ``<nx>x<ny>x<nz>``, configuration
  tile_b1, tile_b2, tile_b3, block_size;
- ``npb``: kernel ``<benchmark>.<kernel>.<variant>``, size ``npb_class``, configuration ``tpb`` (run rows:
  ``tpb_<kernel>`` for every kernel of the run's assignment);
- ``kernels``: kernel ``<suite>.<program>.<kernel>[.<variant>]``, size ``size_params`` as ``n=v,...``,
  configuration block_x/y/z and grid_x/y/z.

One file per (GPU, kernel, problem size), named ``<config>__<gpu>__<kernel>__<size>.json``. Each result keeps
its row's ``run_id`` and the metadata its run's provenance, so importing the files again and merging them
into the store they came from adds nothing (the same row id and run id: the same measurement). Names that
would collide once made file-safe (``a b`` and ``a_b``; ``A`` and ``a`` on a case-insensitive disk) or run too
long get ``__<hash>`` of the exact GPU, kernel and size, so no file ever stands for two groups. Existing files
are never overwritten unless ``force`` is given.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import NoRowsError, OutputExistsError, unknown_name
from kgpubench.foundation.files import refuse_stdout
from kgpubench.importers.common import ImportFormatError, join_params
from kgpubench.importers.t4 import (
    RUNS_KEY,
    configuration_of_autotune,
    run_facts,
    t4_document,
    t4_result,
    write_t4,
)
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks.loading import load_dataset

Mapper = Callable[[Mapping[str, Any]], tuple[str, str, dict[str, Any]]]


def _autotune(r: Mapping[str, Any]) -> tuple[str, str, dict]:
    return r["kernel"], r["problem_size"], configuration_of_autotune(r)


def _stencil(r: Mapping[str, Any]) -> tuple[str, str, dict]:
    kernel = f"wave3d-{r['variant']}-{r['dtype']}-so{r['space_order']}"
    size = f"{r['grid_nx']}x{r['grid_ny']}x{r['grid_nz']}"
    return kernel, size, {k: r[k] for k in ("block_size", "tile_b1", "tile_b2", "tile_b3")}


def _npb(r: Mapping[str, Any]) -> tuple[str, str, dict]:
    name = f"{r['benchmark']}.{r['kernel']}.{r['variant']}"
    if r.get("row_kind") == "run":  # a whole run: its configuration is every kernel's threads per block
        assignment = join_params(r.get("tpb_assignment"), None)
        return name, str(r["npb_class"]), {f"tpb_{k}": v for k, v in assignment.items()}
    return name, str(r["npb_class"]), {"tpb": r["tpb"]}


def _kernels(r: Mapping[str, Any]) -> tuple[str, str, dict]:
    kernel = f"{r['suite']}.{r['program']}.{r['kernel']}" + (f".{r['variant']}" if r.get("variant") else "")
    sizes = sorted(r.get("size_params") or [], key=lambda p: p["name"])
    size = ",".join(f"{p['name']}={_num(p['value'])}" for p in sizes) or "-"
    return kernel, size, {k: r[k] for k in ("block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z")}


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


MAPPERS: dict[str, Mapper] = {"autotune": _autotune, "stencil": _stencil, "npb": _npb, "kernels": _kernels}


def parse_where(table: pa.Table, clauses: Iterable[str]) -> pa.Table:
    """Rows of ``table`` matching every ``column=value`` / ``column!=value`` clause (values typed by column)."""
    for clause in clauses:
        m = re.fullmatch(r"\s*([A-Za-z_][\w]*)\s*(!=|=)\s*(.*?)\s*", clause)
        if not m:
            raise ImportFormatError(f"--where {clause!r}: expected COLUMN=VALUE or COLUMN!=VALUE "
                                    "(e.g. --where gpu_name='NVIDIA H100 PCIe').")
        name, op, text = m.groups()
        if name not in table.column_names:
            raise unknown_name("column", name, table.column_names)
        col = table[name]
        try:
            value = pa.scalar(text).cast(col.type) if not pa.types.is_string(col.type) else pa.scalar(text)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise ImportFormatError(f"--where {clause!r}: {text!r} is not a value of column {name!r} "
                                    f"({col.type}).") from None
        mask = pc.equal(col, value) if op == "=" else pc.not_equal(col, value)
        table = table.filter(pc.fill_null(mask, False))
    return table


def export_t4_table(table: pa.Table, config: str, out_dir: Path | str,
                    extra_meta: Mapping[str, Any] | None = None, *, force: bool = False) -> list[Path]:
    """Write the rows of ``table`` (rows of ``config``) as T4 results files in ``out_dir``; returns the paths.

    All or nothing: when a file cannot be written, the files this call created are removed. Without ``force``
    no existing file is replaced (:class:`~kgpubench.errors.OutputExistsError` names the first, before any
    file is written).
    """
    try:
        mapper = MAPPERS[config]
    except KeyError:
        raise unknown_name("config with tunable parameters", config, MAPPERS) from None
    groups: dict[tuple[str, str, str], list[dict]] = {}
    group_rows: dict[tuple[str, str, str], list[dict]] = {}
    for row in table.to_pylist():
        kernel, size, configuration = mapper(row)
        groups.setdefault((row["gpu_name"], kernel, size), []).append(t4_result(row, configuration))
        group_rows.setdefault((row["gpu_name"], kernel, size), []).append(row)
    refuse_stdout(out_dir, "a folder of T4 results files")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"--out {out}: is a file; give a folder for the T4 results files.")
    names = file_names(config, groups)
    targets = [(out / names[key], key) for key in sorted(groups)]
    existing = [p for p, _ in targets if p.exists() or p.is_symlink()]
    if existing and not force:
        raise OutputExistsError(f"{existing[0]}: already exists ({len(existing)} of the {len(targets)} files to "
                                "write do); pass --force to overwrite them, or choose another --out folder.")
    paths: list[Path] = []
    try:
        for path, (gpu, kernel, size) in targets:
            runs = run_facts(group_rows[(gpu, kernel, size)])
            doc = t4_document(groups[(gpu, kernel, size)], device_name=gpu, kernel_name=kernel, problem_size=size,
                              extra={"kgpubench_config": config, RUNS_KEY: runs, **(extra_meta or {})})
            paths.append(write_t4(path, doc, overwrite=force))
    except BaseException:
        for path in paths:
            if path not in existing:
                path.unlink(missing_ok=True)
        raise
    return paths


def file_names(config: str, keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """A distinct file name per (GPU, kernel, problem size), also on case-insensitive file systems."""
    keys = sorted(set(keys))
    base = {k: f"{config}__{_slug(k[0])}__{_slug(k[1])}__{_slug(k[2])}" for k in keys}
    clash: dict[str, int] = {}
    for name in base.values():
        clash[name.lower()] = clash.get(name.lower(), 0) + 1
    names = {}
    for key, name in base.items():
        if clash[name.lower()] > 1 or len(name) > 200:
            digest = hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:10]
            name = f"{name[:180]}__{digest}"
        names[key] = name + ".json"
    if len({n.lower() for n in names.values()}) != len(names):  # pragma: no cover - a 40-bit hash collision
        raise OutputExistsError("export file names collide even with their hash suffix; export with --where "
                                "to split the rows.")
    return names


def export_t4(config: str, out_dir: Path | str, *, where: Iterable[str] = (),
              data_dir: Path | str | None = None, force: bool = False) -> list[Path]:
    """Export a config of a store (default: the packaged data) as T4 results files.

    Parameters
    ----------
    config : str
        ``autotune``, ``stencil``, ``npb`` or ``kernels``.
    out_dir : path
        Folder for the files (created).
    where : iterable of str
        ``COLUMN=VALUE`` / ``COLUMN!=VALUE`` filters, all of which must hold.
    data_dir : path, optional
        Store folder.
    force : bool
        Overwrite files of the same names in ``out_dir`` (default: refuse, before writing any).

    Returns
    -------
    list of Path
        The files written, one per (GPU, kernel, problem size).
    """
    refuse_stdout(out_dir, "a folder of T4 results files")
    if config not in MAPPERS:
        raise unknown_name("config with tunable parameters", config, MAPPERS)
    table = parse_where(load_dataset(config, format="arrow", data_dir=data_dir), where)
    if table.num_rows == 0:
        raise NoRowsError(f"config {config!r} has no rows{' matching ' + ' and '.join(where) if where else ''}; "
                              "nothing to export (check `kgpubench info` and the --where clauses).")
    version = Store(data_dir or default_data_dir()).version
    return export_t4_table(table, config, out_dir, extra_meta={"kgpubench_dataset_version": version}, force=force)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=,+-]+", "_", str(text)).strip("_") or "_"
