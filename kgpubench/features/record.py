"""One call for every static feature of a kernel configuration: :func:`extract_features`.

Per-thread counts. ``l``, ``lc``... and the mix, bytes and flops are what one thread executes when every
block of the entry runs once per iteration of its enclosing loops (both sides of a branch count; the
seed's static estimate). Multiply by ``nb * nt`` for the whole grid.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgpubench.errors import DataFileNotFoundError, LaunchConfigError, UnknownNameError
from kgpubench.features import power
from kgpubench.features.analysis import KernelAnalysis, analyse_entry
from kgpubench.features.expr import evaluate
from kgpubench.features.occupancy import occupancy as occupancy_of
from kgpubench.features.occupancy import sm_saturation
from kgpubench.features.ptx import parse_ptx
from kgpubench.features.source import SourceFeatures, source_features
from kgpubench.features.toolchain import (
    DiskCache,
    Resources,
    ToolchainError,
    cache_dir,
    compile_to_ptx,
    find_toolchain,
    ptxas_resources,
)

__all__ = [
    "FORMAT_VERSION",
    "SCHEMA_COLUMNS",
    "KernelFeatures",
    "LaunchConfigError",
    "analyse_kernel",
    "analyse_ptx",
    "case_features",
    "extract_features",
    "features_from_analysis",
    "launch_env",
]

#: Bump when the analysis changes, so that cached analyses are recomputed.
FORMAT_VERSION = 1
#: The seed-000/002 feature columns of the ``kernels`` table, in its order.
SCHEMA_COLUMNS = ("n", "s", "cpx", "nb", "nt", "w", "alpha", "l", "lc", "lmr", "lmw", "lshr", "lshw", "ls", "ldpu",
                  "lsfu", "dpc", "shmem_words", "nreg", "compute_density", "sm_saturation", "source_lines")

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class KernelFeatures:
    """All static features of one kernel configuration (``None``: not available for this input)."""

    kernel: str
    entry: str
    arch: str
    toolchain_version: str | None
    grid: Dim3
    block: Dim3
    n: float | None
    s: float | None
    cpx: float | None
    nb: int
    nt: int
    w: int
    # CUDA source
    alpha: float | None
    source_lines: int | None
    branch_statements: int | None
    # PTX, executed per thread
    l: float  # noqa: E741 - the seed's name for executed instructions
    lc: float
    lmr: float
    lmw: float
    lshr: float
    lshw: float
    ls: float
    ldpu: float
    lsfu: float
    dpc: float
    static_instructions: int
    mix: dict[str, float]
    global_bytes_read: float
    global_bytes_written: float
    flops: float
    flops_fp64: float
    arithmetic_intensity: float | None
    # ptxas
    nreg: int | None
    shmem_bytes: int | None
    shmem_words: int | None
    stack_bytes: int | None
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    # occupancy and power
    blocks_per_sm: int | None
    occupancy: float | None
    occupancy_limiter: str | None
    compute_density: float
    branch_density: float
    sm_saturation: float | None
    loops: tuple[dict, ...] = ()
    trip_counts: dict[str, float] = field(default_factory=dict)
    static_counts: bool = False

    def as_columns(self, *, extra: bool = True) -> dict[str, float | int | None]:
        """Row columns: the ``kernels`` table's feature columns, plus (``extra``) the recommended extras.

        Extras: ``branch_statements``, ``static_instructions``, ``shmem_bytes``, ``stack_bytes``,
        ``spill_store_bytes``, ``spill_load_bytes``, ``blocks_per_sm``, ``occupancy``, ``branch_density``,
        ``global_bytes_read``, ``global_bytes_written``, ``flops``, ``flops_fp64``,
        ``arithmetic_intensity`` and ``mix_<class>`` for every instruction-mix class.
        """
        cols: dict[str, Any] = {name: getattr(self, name) for name in SCHEMA_COLUMNS}
        if extra:
            for name in ("branch_statements", "static_instructions", "shmem_bytes", "stack_bytes",
                         "spill_store_bytes", "spill_load_bytes", "blocks_per_sm", "occupancy", "branch_density",
                         "global_bytes_read", "global_bytes_written", "flops", "flops_fp64", "arithmetic_intensity"):
                cols[name] = getattr(self, name)
            cols.update({f"mix_{k}": v for k, v in self.mix.items()})
        return cols

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-able."""
        d = asdict(self)
        d["grid"], d["block"] = list(self.grid), list(self.block)
        return d


def _include_digest(text: str, base: Path | None, include_dirs: Sequence[str], seen: set[Path]) -> list[str]:
    """Hashes of the files named by ``#include "..."`` (recursively), so header edits change the cache key."""
    out: list[str] = []
    for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, re.MULTILINE):
        for folder in ([base] if base else []) + [Path(d) for d in include_dirs]:
            path = (folder / name).resolve()
            if path.is_file():
                if path not in seen:
                    seen.add(path)
                    content = path.read_text(errors="replace")
                    out.append(name + ":" + hashlib.sha256(content.encode()).hexdigest())
                    out.extend(_include_digest(content, path.parent, include_dirs, seen))
                break
    return out


def _read_source(source: str | Path) -> tuple[str, str, Path | None]:
    if isinstance(source, Path):
        if not source.is_file():
            raise DataFileNotFoundError(f"CUDA source {source} does not exist; expected a .cu file.")
        return source.read_text(), str(source), source.parent
    return str(source), "kernel.cu", None


def analyse_kernel(source: str | Path, kernel: str, *, arch: str = "sm_90",
                   defines: Mapping[str, Any] | None = None, options: Sequence[str] = (),
                   include_dirs: Sequence[str] = (), use_cache: bool = True) -> KernelAnalysis:
    """Compile (or take from the cache) and analyse ``kernel``; the size-independent part of the features.

    Parameters
    ----------
    source : Path or str
        A ``.cu`` file (``Path``) or CUDA source text (``str``).
    kernel : str
        Function name (plain, ``ns::name`` or the mangled PTX entry name).
    arch, defines, options, include_dirs
        ``-arch``, ``-D`` macros, further nvcc options, ``-I`` folders.
    use_cache : bool
        Read and write the disk cache (:func:`kgpubench.features.toolchain.cache_dir`).

    Raises
    ------
    ToolchainError
        No nvcc (message says how to install), or the source does not compile (``CompileError``).
    UnknownNameError
        No entry for ``kernel``; the message lists the entries.
    """
    text, filename, base = _read_source(source)
    defines = {str(k): "" if v is None else str(v) for k, v in (defines or {}).items()}
    toolchain = find_toolchain(arch, need="nvcc")
    key_doc = {"format": FORMAT_VERSION, "source": hashlib.sha256(text.encode()).hexdigest(),
               "includes": _include_digest(text, base, include_dirs, set()), "defines": sorted(defines.items()),
               "options": list(options), "arch": arch, "toolchain": toolchain.version}
    module_key = hashlib.sha256(json.dumps(key_doc, sort_keys=True).encode()).hexdigest()
    kernel_key = hashlib.sha256(f"{module_key}:{kernel}".encode()).hexdigest()
    cache = DiskCache(cache_dir())
    if use_cache and (hit := cache.get("kernel-" + kernel_key)) is not None:
        return KernelAnalysis.from_json(hit)
    compiled = cache.get("module-" + module_key) if use_cache else None
    if compiled is None:
        ptx = compile_to_ptx(text, filename=filename, kernel=kernel, arch=arch, defines=defines,
                             options=tuple(options), include_dirs=tuple(str(d) for d in include_dirs),
                             toolchain=toolchain)
        resources = ptxas_resources(ptx, arch=arch, toolchain=toolchain)
        compiled = {"ptx": ptx, "resources": {k: vars(v) for k, v in resources.items()}}
        if use_cache:
            cache.put("module-" + module_key, compiled)
    entry = parse_ptx(compiled["ptx"]).entry(kernel)
    res = compiled["resources"].get(entry.name)
    analysis = analyse_entry(entry, kernel=kernel, arch=arch, toolchain_version=toolchain.version,
                             resources=Resources(**res) if res else None, source=_source_or_none(text, entry))
    if use_cache:
        cache.put("kernel-" + kernel_key, analysis.to_json())
    return analysis


def _source_or_none(text: str, entry) -> SourceFeatures | None:
    try:
        return source_features(text, entry.plain_name)
    except UnknownNameError:
        return None  # e.g. a kernel whose name a macro builds: no source features, PTX ones stay


def analyse_ptx(ptx: str | Path, kernel: str, *, arch: str | None = None,
                source: str | Path | None = None) -> KernelAnalysis:
    """Analyse a given PTX text or file without compiling; ptxas figures only when ptxas is found.

    ``arch`` defaults to the PTX's ``.target``; ``source`` (optional) gives the source features.
    """
    if isinstance(ptx, Path):
        if not ptx.is_file():
            raise DataFileNotFoundError(f"PTX file {ptx} does not exist.")
        ptx = ptx.read_text()
    module = parse_ptx(ptx)
    entry = module.entry(kernel)
    arch = arch or (module.target.split(",")[0].strip() if module.target else "sm_90")
    resources, version = None, None
    try:
        toolchain = find_toolchain(arch, need="ptxas")
        resources = ptxas_resources(ptx, arch=arch, toolchain=toolchain).get(entry.name)
        version = toolchain.version
    except ToolchainError as exc:
        if type(exc) is not ToolchainError:  # a CompileError: the PTX itself is wrong
            raise
    src = None
    if source is not None:
        text = _read_source(source)[0]
        src = _source_or_none(text, entry)
    return analyse_entry(entry, kernel=kernel, arch=arch, toolchain_version=version, resources=resources,
                         source=src)


def _dim3(value: Sequence[int] | int) -> Dim3:
    vals = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    if not 1 <= len(vals) <= 3 or any(v < 1 for v in vals):
        raise LaunchConfigError(f"launch dimension {value!r}: expected 1 to 3 positive integers (e.g. 256 or "
                                "16,16,1).")
    return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]


def launch_env(grid: Dim3, block: Dim3, sizes: Mapping[str, float] | None = None) -> dict[str, float]:
    """Names usable in trip-count and size expressions: the sizes, ``grid_x``..``block_z``, ``nb``, ``nt``, ``w``."""
    env = {k: float(v) for k, v in (sizes or {}).items()}
    nt = block[0] * block[1] * block[2]
    env.update({"grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2], "block_x": block[0], "block_y": block[1],
                "block_z": block[2], "nb": grid[0] * grid[1] * grid[2], "nt": nt, "w": -(-nt // 32)})
    return env


def extract_features(source: str | Path | None, kernel: str, *, arch: str = "sm_90",
                     defines: Mapping[str, Any] | None = None, grid: Sequence[int] | int = (1, 1, 1),
                     block: Sequence[int] | int = (1, 1, 1), sizes: Mapping[str, float] | None = None,
                     trip_counts: Mapping[str, str | float] | None = None, static_counts: bool = False,
                     n: str | float | None = None, s: str | float | None = None, cpx: str | float | None = None,
                     sm_count: int | None = None, gpu_cc: str | None = None, dynamic_smem_bytes: int = 0,
                     power_factors: Mapping[str, float] | None = None, options: Sequence[str] = (),
                     include_dirs: Sequence[str] = (), ptx: str | Path | None = None,
                     use_cache: bool = True) -> KernelFeatures:
    """Every static feature of ``kernel`` for one configuration.

    Parameters
    ----------
    source : Path, str or None
        The ``.cu`` file (``Path``) or CUDA source text (``str``); may be ``None`` when ``ptx`` is given.
    kernel : str
        Kernel function name (plain or mangled).
    arch : str
        Target, ``sm_70`` ... ``sm_90`` (sm_70 through NVRTC 12 + ptxas 12 where the nvcc is CUDA 13).
    defines : mapping, optional
        ``-D`` macros.
    grid, block : sequence of int
        Launch configuration (1 to 3 dimensions).
    sizes : mapping, optional
        Problem-size variables for the expressions (``{"n": 4096}``).
    trip_counts : mapping, optional
        Loop name -> trip count, a number or an expression of the sizes and ``grid_x``...``block_z``,
        ``nb``, ``nt``, ``w``. Loop names: ``L<k>`` (order of the loop headers in the PTX), the PTX header
        label, or ``line:N`` (source line of the loop's back-edge branch); see :mod:`kgpubench.features.cfg`.
    static_counts : bool
        Loops without a trip count count once instead of raising :class:`TripCountError`.
    n, s, cpx : number or expression, optional
        Seed-000 input size, problem size and complexity (e.g. ``n="n"``, ``s="n**2"``, ``cpx="n**3"``).
    sm_count : int, optional
        SMs of the GPU, for ``sm_saturation`` (``None`` leaves it out).
    gpu_cc : str, optional
        Compute capability for occupancy (default: that of ``arch``).
    dynamic_smem_bytes : int
        Dynamic shared memory per block of the launch.
    power_factors : mapping, optional
        Seed-002 memory-space factors (see :mod:`kgpubench.features.power`).
    options, include_dirs : sequence of str
        Further nvcc options and ``-I`` folders.
    ptx : Path or str, optional
        Analyse this PTX (file or text) instead of compiling ``source``.
    use_cache : bool
        Use the disk cache.

    Returns
    -------
    KernelFeatures
    """
    grid3, block3 = _dim3(grid), _dim3(block)
    env = launch_env(grid3, block3, sizes)
    if ptx is not None:
        analysis = analyse_ptx(ptx, kernel, arch=arch, source=source)
    else:
        if source is None:
            raise LaunchConfigError("extract_features needs a CUDA source or a PTX text (ptx=...); got neither.")
        analysis = analyse_kernel(source, kernel, arch=arch, defines=defines, options=options,
                                  include_dirs=include_dirs, use_cache=use_cache)
    trips = analysis.resolve_trip_counts(trip_counts, env, static_counts=static_counts)
    return _assemble(analysis, trips, env, grid3, block3, n=n, s=s, cpx=cpx, sm_count=sm_count,
                     gpu_cc=gpu_cc or analysis.arch, dynamic_smem_bytes=dynamic_smem_bytes,
                     power_factors=power_factors, static_counts=static_counts)


def features_from_analysis(analysis: KernelAnalysis, *, grid: Sequence[int] | int = (1, 1, 1),
                           block: Sequence[int] | int = (1, 1, 1), sizes: Mapping[str, float] | None = None,
                           trip_counts: Mapping[str, str | float] | None = None, static_counts: bool = False,
                           n: str | float | None = None, s: str | float | None = None,
                           cpx: str | float | None = None, sm_count: int | None = None, gpu_cc: str | None = None,
                           dynamic_smem_bytes: int = 0,
                           power_factors: Mapping[str, float] | None = None) -> KernelFeatures:
    """The features of one configuration from an analysis made earlier (:func:`analyse_kernel`,
    :func:`analyse_ptx` or :func:`~kgpubench.features.analysis.analyse_entry`): what :func:`extract_features`
    does after compiling, for callers that analyse a compiled module once and have many configurations of it.
    Parameters as for :func:`extract_features`.
    """
    grid3, block3 = _dim3(grid), _dim3(block)
    env = launch_env(grid3, block3, sizes)
    trips = analysis.resolve_trip_counts(trip_counts, env, static_counts=static_counts)
    return _assemble(analysis, trips, env, grid3, block3, n=n, s=s, cpx=cpx, sm_count=sm_count,
                     gpu_cc=gpu_cc or analysis.arch, dynamic_smem_bytes=dynamic_smem_bytes,
                     power_factors=power_factors, static_counts=static_counts)


def _assemble(analysis: KernelAnalysis, trips, env, grid3, block3, *, n, s, cpx, sm_count, gpu_cc,
              dynamic_smem_bytes, power_factors, static_counts) -> KernelFeatures:
    ex = analysis.executed(trips)
    mix = {k[4:]: v for k, v in ex.items() if k.startswith("mix_")}
    res, src = analysis.resources, analysis.source
    occ = None
    if res is not None:
        occ = occupancy_of(gpu_cc, threads_per_block=int(env["nt"]), registers_per_thread=res.registers,
                           shared_bytes_per_block=res.shared_bytes, dynamic_shared_bytes=dynamic_smem_bytes)
    moved = ex["global_bytes_read"] + ex["global_bytes_written"]

    def spec(value, name):
        return None if value is None else evaluate(value, env, what=f"{name} of kernel {analysis.kernel}")

    return KernelFeatures(
        kernel=analysis.kernel, entry=analysis.entry, arch=analysis.arch, toolchain_version=analysis.toolchain_version,
        grid=grid3, block=block3, n=spec(n, "n"), s=spec(s, "s"), cpx=spec(cpx, "cpx"), nb=int(env["nb"]),
        nt=int(env["nt"]), w=int(env["w"]), alpha=src.alpha if src else None,
        source_lines=src.source_lines if src else None, branch_statements=src.branch_statements if src else None,
        l=sum(ex[c] for c in ("lc", "lmr", "lmw", "lshr", "lshw", "ls", "ldpu", "lsfu")),
        lc=ex["lc"], lmr=ex["lmr"], lmw=ex["lmw"], lshr=ex["lshr"], lshw=ex["lshw"], ls=ex["ls"], ldpu=ex["ldpu"],
        lsfu=ex["lsfu"], dpc=analysis.dpc, static_instructions=analysis.instructions, mix=mix,
        global_bytes_read=ex["global_bytes_read"], global_bytes_written=ex["global_bytes_written"],
        flops=ex["flops"], flops_fp64=ex["flops_fp64"], arithmetic_intensity=ex["flops"] / moved if moved else None,
        nreg=res.registers if res else None, shmem_bytes=res.shared_bytes if res else None,
        shmem_words=-(-(res.shared_bytes + int(dynamic_smem_bytes)) // 4) if res else None,
        stack_bytes=res.stack_bytes if res else None,
        spill_store_bytes=res.spill_store_bytes if res else None,
        spill_load_bytes=res.spill_load_bytes if res else None,
        blocks_per_sm=occ.blocks_per_sm if occ else None, occupancy=occ.occupancy if occ else None,
        occupancy_limiter=occ.limiter if occ else None,
        compute_density=power.compute_density(mix, power_factors), branch_density=power.branch_density(mix),
        sm_saturation=sm_saturation(int(env["nb"]), sm_count, occ.blocks_per_sm)
        if (sm_count and occ is not None) else None,
        loops=tuple({**vars(lp), "trip_count": trips[lp.id]} for lp in analysis.loops), trip_counts=dict(trips),
        static_counts=static_counts)


def case_features(case: Any, *, arch: str, env: Mapping[str, float] | None = None, sm_count: int | None = None,
                  static_counts: bool = False) -> dict[str, float | int | None]:
    """Feature columns of a harness ``Case`` (``kgpubench.measure.suite.Case``) compiled for ``arch``.

    Uses ``case.source`` (``path``, ``kernel``, ``defines``, ``options``), ``case.grid``, ``case.block``,
    ``case.shared_mem_bytes``, ``case.sizes``, ``case.trip_counts`` and ``n``/``s``/``cpx`` from
    ``case.columns`` when present. Pass ``sm_count`` (the device's) to get ``sm_saturation``.
    """
    cols = getattr(case, "columns", {}) or {}
    src = case.source
    feats = extract_features(Path(src.path), src.kernel, arch=arch, defines=dict(src.defines),
                             options=tuple(src.options), grid=tuple(case.grid), block=tuple(case.block),
                             sizes={**dict(case.sizes), **dict(env or {})}, trip_counts=dict(case.trip_counts),
                             static_counts=static_counts, sm_count=sm_count,
                             dynamic_smem_bytes=int(getattr(case, "shared_mem_bytes", 0) or 0))
    out = feats.as_columns()
    for name in ("n", "s", "cpx"):
        if out.get(name) is None and cols.get(name) is not None:
            out[name] = cols[name]
    return out
