"""The one place where the harness asks :mod:`kgpubench.features` for a case's static features.

Features are static: they depend only on the source, the defines, the target architecture and the trip
counts, never on a run. When the features toolchain (nvcc) is missing on the measuring machine, the columns
stay null and can be filled later from the shard on any machine with nvcc; a warning says so once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgpubench.measure.backend import DeviceInfo
from kgpubench.measure.suite import Case, KernelSource, launch_columns

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
    try:
        from kgpubench import features as api
    except ImportError as exc:
        _warn_once("import", f"static features skipped: kgpubench.features does not import ({exc}).")
        return {}
    from kgpubench.errors import KgpubenchError, ToolchainError

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
    out = feats.as_columns()
    for name in ("n", "s", "cpx"):
        if out.get(name) is None and case.columns.get(name) is not None:
            out[name] = case.columns[name]
    return out


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(f"warning: {message}", file=sys.stderr)
