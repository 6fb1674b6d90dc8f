"""The `autotune` table: imported public auto-tuning measurements (Kernel Tuner caches, T4)."""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import TIMING_ORDER, common_head, common_tail


def _specific() -> list[Column]:
    return [
        Column("kernel", "string", "Kernel name as tuned.", nullable=False, key=True),
        Column("problem_size", "string", "Problem size, dimensions joined by 'x'.", nullable=False, key=True),
        Column("params", "params", "Tuning parameters of the configuration (name, value) sorted by name.",
               nullable=False, key=True),
        Column("time_ms_reported", "float64", "The `time` the source file reports for the configuration.",
               unit="ms", min=0, min_exclusive=True),
    ]


TABLE = Table(
    name="autotune",
    version="1.0.0",
    description="Brute-forced auto-tuning search spaces measured by others (Kernel Tuner cache files).",
    columns=tuple(common_head() + _specific() + common_tail()),
    ordered=TIMING_ORDER,
    changelog=(("1.0.0", "First declaration."),),
)
