"""GPU and provenance columns of measured rows, and run ids.

The GPU hardware columns come from the device query; where ``kgpubench.hardware`` (the curated spec table)
knows the GPU, its figures fill what the query does not give. Nothing is guessed: unknown stays null.
"""

from __future__ import annotations

import datetime as _dt
import secrets
from typing import Any

from kgpubench.measure.backend import DeviceInfo

# Compute capability major(.minor) -> architecture family.
_ARCH = {"3": "kepler", "5": "maxwell", "6": "pascal", "7.0": "volta", "7.2": "volta", "7.5": "turing",
         "8.0": "ampere", "8.6": "ampere", "8.7": "ampere", "8.9": "ada", "9": "hopper", "10": "blackwell",
         "11": "blackwell", "12": "blackwell"}
# FP32 cores per SM by compute capability (CUDA C programming guide, arithmetic-instruction throughput table).
_CORES_PER_SM = {"5": 128, "6.0": 64, "6.1": 128, "6.2": 128, "7": 64, "8.0": 64, "8.6": 128, "8.7": 128,
                 "8.9": 128, "9": 128, "10": 128, "12": 128}


def _by_cc(table: dict[str, Any], cc: str) -> Any:
    return table.get(cc, table.get(cc.split(".")[0]))


def architecture(cc: str) -> str:
    """Architecture family for a compute capability (``"9.0"`` -> ``"hopper"``), ``"unknown"`` if new."""
    return _by_cc(_ARCH, cc) or "unknown"


def new_run_id(now: _dt.datetime | None = None) -> str:
    """A run id: UTC time and 6 random hex digits (``20250101T120000Z-1a2b3c``)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


_PROCESS_RUNS: dict[tuple[int, str | None], str] = {}


def process_run_id(uuid_hash: str | None) -> str:
    """This process's run id on the device ``uuid_hash``: new for every process and every device, so rows of
    a resumed collection (another process, maybe another board) never share a run id with the first part."""
    import os

    key = (os.getpid(), uuid_hash)
    if key not in _PROCESS_RUNS:
        _PROCESS_RUNS[key] = new_run_id()
    return _PROCESS_RUNS[key]


def gpu_columns(dev: DeviceInfo) -> dict[str, Any]:
    """The ``gpu_*`` columns for ``dev``: device query first, then the curated table for the rest."""
    cores_per_sm = _by_cc(_CORES_PER_SM, dev.compute_capability)
    cores = cores_per_sm * dev.sm_count if cores_per_sm else None
    bandwidth = None
    if dev.clock_mem_mhz and dev.memory_bus_width_bits:
        # Double data rate: two transfers per memory clock.
        bandwidth = 2 * dev.clock_mem_mhz * 1e6 * dev.memory_bus_width_bits / 8 / 1e9
    peak = 2 * cores * dev.clock_sm_mhz / 1000.0 if cores and dev.clock_sm_mhz else None
    cols = {
        "gpu_name": dev.name,
        "gpu_vendor": "nvidia",
        "gpu_architecture": _by_cc(_ARCH, dev.compute_capability),
        "gpu_compute_capability": dev.compute_capability,
        "gpu_sm_count": dev.sm_count,
        "gpu_cores": cores,
        "gpu_memory_bytes": dev.memory_bytes,
        "gpu_memory_bandwidth_gbs": bandwidth,
        "gpu_l2_bytes": dev.l2_bytes,
        "gpu_smem_per_sm_bytes": dev.smem_per_sm_bytes,
        "gpu_clock_sm_mhz": dev.clock_sm_mhz,
        "gpu_clock_mem_mhz": dev.clock_mem_mhz,
        "gpu_peak_fp32_gflops": peak,
    }
    for k, v in _curated(dev.name).items():
        if cols.get(k) is None and v is not None:
            cols[k] = v
    cols["gpu_architecture"] = cols["gpu_architecture"] or "unknown"
    return cols


def _curated(name: str) -> dict[str, Any]:
    """Columns from the curated table (:func:`kgpubench.hardware.find_gpu`) for ``name``, ``{}`` if unknown."""
    try:
        from kgpubench.hardware import find_gpu
    except ImportError:
        return {}
    spec = find_gpu(name)
    return {k: v for k, v in spec.columns().items() if k.startswith("gpu_")} if spec is not None else {}


def provenance_columns(dev: DeviceInfo, *, row_source: str, run_id: str, collector_version: str,
                       now: _dt.datetime | None = None) -> dict[str, Any]:
    """``source``, versions, ``gpu_uuid_hash``, ``run_id`` and ``collected_at`` for one row."""
    from kgpubench.buildinfo import package_version, project_commit

    return {
        "source": row_source,
        "run_id": run_id,
        "collected_at": now or _dt.datetime.now(_dt.timezone.utc),
        "kgpubench_version": package_version(),
        "kgpubench_commit": project_commit(),
        "collector_version": collector_version,
        "toolchain_version": dev.toolchain_version,
        "driver_version": dev.driver_version,
        "cuda_version": dev.cuda_version,
        "cupy_version": dev.cupy_version,
        "gpu_uuid_hash": dev.uuid_hash,
    }
