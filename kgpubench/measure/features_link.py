"""The one place where the harness asks :mod:`kgpubench.features` for a case's static features.

Features are static: they depend only on the source, the defines, the target architecture and the trip
counts, never on a run. A collection computes them ahead of time, in the compile workers, from the NVRTC
artefacts of the exact compiled configuration (:func:`artefact_features`: PTX with line info, and the ptxas
report NVRTC prints, so no nvcc or ptxas is needed); the measuring loop only looks them up
(:func:`with_precompiled`). Without that (a backend that does not precompile), :func:`static_features` asks
nvcc per case, or analyses the backend's NVRTC PTX; when neither works the columns stay null and can be filled
later from the shard on any machine with nvcc; a warning says so once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgpubench import features as api
from kgpubench.errors import KgpubenchError, ToolchainError, UnknownNameError
from kgpubench.features.analysis import analyse_entry
from kgpubench.features.ptx import parse_ptx
from kgpubench.features.record import features_from_analysis
from kgpubench.features.source import source_features
from kgpubench.features.toolchain import Resources
from kgpubench.hardware import DeviceInfo
from kgpubench.measure.suite import Case, KernelSource, launch_columns

#: Columns that come from the ptxas report (null without one).
RESOURCE_COLUMNS = ("nreg", "shmem_bytes", "shmem_words", "stack_bytes", "spill_store_bytes", "spill_load_bytes",
                    "blocks_per_sm", "occupancy", "sm_saturation")

_warned: set[str] = set()


def trip_env(case: Case) -> dict[str, float]:
    """Variables of trip-count expressions: the case's sizes and its launch (``nb``, ``nt``, ``grid_x``...)."""
    env: dict[str, float] = {k: float(v) for k, v in case.sizes.items()}
    env.update({k: float(v) for k, v in launch_columns(case.grid, case.block).items()})
    return env


def static_features(case: Case, dev: DeviceInfo,
                    ptx_source: Callable[[KernelSource], str] | None = None) -> dict[str, Any]:
    """Static-feature columns of ``case`` compiled for ``dev``.

    With nvcc: :func:`kgpubench.features.case_features`. Without nvcc (a GPU machine with only the CuPy
    wheels) and with ``ptx_source`` (the backend's NVRTC PTX of a source): the same features from that PTX;
    ``nreg`` then comes from the compiled kernel (the harness fills it). Otherwise ``{}`` and a warning once.
    """
    kernel = case.source.kernel
    try:
        try:
            return dict(api.case_features(case, arch=dev.arch, env=trip_env(case), sm_count=dev.sm_count))
        except ToolchainError as exc:
            if type(exc) is not ToolchainError or ptx_source is None:  # a compile error, or no way around
                raise
            return _from_ptx(api, case, dev, ptx_source(case.source))
    except ToolchainError as exc:
        _warn_once(f"toolchain:{type(exc).__name__}:{kernel}",
                   f"static features of {kernel} skipped (fill them later on a machine with nvcc): {exc}")
        return {}
    except KgpubenchError as exc:  # a suite's trip counts that do not fit its kernel: say so, keep measuring
        _warn_once(f"features:{type(exc).__name__}:{kernel}", f"static features of {kernel} skipped: {exc}")
        return {}


def _from_ptx(api: Any, case: Case, dev: DeviceInfo, ptx: str) -> dict[str, Any]:
    src = case.source
    feats = api.extract_features(Path(src.path), src.kernel, arch=dev.arch, grid=tuple(case.grid),
                                 block=tuple(case.block), sizes=trip_env(case), trip_counts=dict(case.trip_counts),
                                 sm_count=dev.sm_count, dynamic_smem_bytes=int(case.shared_mem_bytes), ptx=ptx)
    return _with_case_sizes(feats.as_columns(), case)


def artefact_features(artefact: Any, text: str, cases: Sequence[Case], device: Any,
                      ids: Sequence[int]) -> tuple[dict[int, dict[str, Any]], list[tuple[str, str]]]:
    """Static-feature columns of ``cases`` (all of one compiled variant) from its NVRTC artefact.

    ``artefact`` is a :class:`~kgpubench.measure.compile_cache.Artefact` (PTX with line info, and the ptxas
    report NVRTC printed: registers, shared memory, spills); ``text`` the source text (source features);
    ``device`` a :class:`~kgpubench.measure.compile_cache.FeatureDevice`. Each entry is analysed once, then
    every case only weighs the analysis with its trip counts. Returns ``{id: columns}`` for the given ``ids``
    (``{}`` for a case whose features fail, e.g. trip counts that do not fit the kernel) and the warnings
    ``[(once-key, message)]`` for the caller to print once. An entry the ptxas report of the log does not
    name gets its PTX features and null :data:`RESOURCE_COLUMNS`, with a warning that says what the log holds.
    """
    out: dict[int, dict[str, Any]] = {}
    warnings: list[tuple[str, str]] = []
    analyses: dict[str, Any] = {}
    module = resources = None
    for i, case in zip(ids, cases):
        kernel = case.source.kernel
        try:
            if kernel not in analyses:
                if module is None:
                    module, resources = parse_ptx(artefact.ptx_text()), artefact.resources()
                entry = module.entry(kernel)
                found = resources.get(entry.name)
                if found is None:
                    warnings.append((f"resources:{kernel}", _no_report(artefact, kernel, entry.name, resources)))
                analyses[kernel] = analyse_entry(entry, kernel=kernel, arch=device.arch,
                                                 toolchain_version=artefact.compiler, resources=found,
                                                 source=_source_features(text, entry.plain_name))
            feats = features_from_analysis(analyses[kernel], grid=tuple(case.grid), block=tuple(case.block),
                                           sizes=trip_env(case), trip_counts=dict(case.trip_counts),
                                           sm_count=device.sm_count,
                                           dynamic_smem_bytes=int(case.shared_mem_bytes))
            out[i] = _with_case_sizes(feats.as_columns(), case)
        except KgpubenchError as exc:
            out[i] = {}
            warnings.append((f"features:{type(exc).__name__}:{kernel}", f"static features of {kernel} skipped: {exc}"))
    return out, warnings


def _no_report(artefact: Any, kernel: str, entry: str, resources: dict[str, Resources]) -> str:
    """Why ``entry`` has no resource figures: what the ptxas report in the artefact's NVRTC log names instead."""
    lines = [ln.strip() for ln in str(artefact.log).splitlines() if ln.strip()]
    if resources:
        held = f"names only {', '.join(sorted(resources))}"
    elif lines:
        held = f"has no register count ({len(lines)} lines, the first {lines[0][:120]!r})"
    else:
        held = ("is empty (an NVRTC 12.9+ that took the CUBIN from the driver's cache without running ptxas, "
                "compiled without --no-cache; an NVRTC that refused -Xptxas=-v; or a binding that returned no log)")
    return (f"static features of {kernel}: the ptxas report in the log of {artefact.compiler} {held}, not entry "
            f"{entry}; its {', '.join(RESOURCE_COLUMNS)} stay null here (a collection fills nreg from the loaded "
            "kernel; the rest can be filled later on a machine with nvcc).")


def _source_features(text: str, name: str) -> Any:
    try:
        return source_features(text, name)
    except UnknownNameError:
        return None  # e.g. a kernel whose name a macro builds: no source features, PTX ones stay


def _with_case_sizes(out: dict[str, Any], case: Case) -> dict[str, Any]:
    for name in ("n", "s", "cpx"):
        if out.get(name) is None and case.columns.get(name) is not None:
            out[name] = case.columns[name]
    return out


def with_precompiled(backend: Any, cases: Sequence[Case], fallback: Callable[[Case, Any], dict[str, Any]], *,
                     compute: bool) -> Callable[[Case, Any], dict[str, Any]]:
    """Compile ``cases`` ahead of time through ``backend.precompile`` (when the backend has the ``precompile``
    capability) and return a features function that looks each of these cases up (``compute``: the workers
    computed the features) and calls ``fallback(case, device)`` for any other case."""
    if not backend.capabilities.precompile or not cases:
        return fallback
    found = backend.precompile(list(cases), features=compute)
    table = {id(c): f for c, f in zip(cases, found) if f is not None} if compute else {}

    def features(case: Case, dev: Any) -> dict[str, Any]:
        cols = table.get(id(case))
        return dict(cols) if cols is not None else fallback(case, dev)

    return features


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(f"warning: {message}", file=sys.stderr)
