"""Helpers for tests: valid rows of any config, built from the schema.

Rows made here are marked ``source = "imported:test"`` so they validate (the logic under test needs valid
rows) while staying recognisable; never merge them into a real store.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pyarrow as pa

from kgpubench.schema import get_table

_GPU = {
    "gpu_name": "Test GPU", "gpu_vendor": "nvidia", "gpu_architecture": "hopper", "gpu_compute_capability": "9.0",
    "gpu_sm_count": 132, "gpu_cores": 16896, "gpu_memory_bytes": 80 * 2**30, "gpu_memory_bandwidth_gbs": 3350.0,
    "gpu_l2_bytes": 50 * 2**20, "gpu_smem_per_sm_bytes": 228 * 1024, "gpu_clock_sm_mhz": 1980.0,
    "gpu_clock_mem_mhz": 2619.0, "gpu_peak_fp32_gflops": 66900.0,
}
_KEYS = {
    "kernels": {"suite": "regular", "program": "vector_add", "kernel": "vector_add", "variant": "",
                "size_params": [{"name": "n", "value": 1024.0}], "grid_x": 4, "grid_y": 1, "grid_z": 1,
                "block_x": 256, "block_y": 1, "block_z": 1},
    "npb": {"row_kind": "kernel", "benchmark": "EP", "npb_class": "S", "kernel": "ep", "tpb": 128,
            "variant": "kgpubench", "assignment": "one-kernel"},
    "stencil": {"grid_nx": 64, "grid_ny": 64, "grid_nz": 64, "dtype": "float32", "space_order": 2, "tile_b1": 1,
                "tile_b2": 1, "tile_b3": 1, "variant": "thread-tile", "block_size": 128},
    "autotune": {"kernel": "gemm", "problem_size": "4096x4096", "params": [{"name": "block_size_x", "value": 16.0}]},
}


def valid_row(config: str, **overrides: Any) -> dict:
    """One row of ``config`` that passes validation (before ``overrides`` are applied)."""
    table = get_table(config)
    row: dict[str, Any] = {
        "run_id": "test-run-0001", "status": "ok", **_GPU, **_KEYS[config],
        "time_ms_median": 1.0, "time_ms_min": 0.9, "time_ms_mean": 1.05, "time_ms_std": 0.05, "repeats": 10,
        "time_cv": 0.05, "source": "imported:test",
        "collected_at": _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc), "kgpubench_version": "0.1.0",
        "source_file": "test.json", "source_license": "CC-BY-4.0",
    }
    names = set(table.column_names)
    row = {k: v for k, v in row.items() if k in names}
    row.update(overrides)
    return row


def valid_table(config: str, rows: list[dict] | None = None, **overrides: Any) -> pa.Table:
    """An arrow table of ``config`` made of ``rows`` (default: one :func:`valid_row`), with row ids."""
    return get_table(config).from_rows(rows if rows is not None else [valid_row(config, **overrides)])
