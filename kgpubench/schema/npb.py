"""The `npb` table: NAS Parallel Benchmarks on CUDA, per-kernel threads per block (seed 001)."""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import TIMING_ORDER, common_head, common_tail


def _specific() -> list[Column]:
    return [
        Column("benchmark", "string", "NPB benchmark.", nullable=False, values=("EP", "CG", "MG", "FT"), key=True),
        Column("npb_class", "string", "NPB problem class.", nullable=False,
               values=("S", "W", "A", "B", "C", "D", "E"), key=True),
        Column("kernel", "string", "Kernel (NPB-GPU role name).", nullable=False, key=True),
        Column("tpb", "int32", "Threads per block of this kernel.", nullable=False, min=1, max=1024, key=True),
        Column("variant", "string", "Implementation: kgpubench's own kernels or a user's NPB-GPU build.",
               nullable=False, values=("kgpubench", "npb-gpu"), key=True),
        Column("calls_per_run", "int64", "Calls of the kernel in one application run.", min=0),
        Column("app_time_s", "float64", "Whole-application time with this kernel at this TPB, others default.",
               unit="s", min=0, min_exclusive=True),
        Column("verified", "bool", "Whether the run passed the official NPB verification."),
    ]


TABLE = Table(
    name="npb",
    version="1.0.0",
    description="NPB-CUDA kernels (EP, CG, MG, FT): time per call for every threads-per-block choice "
    "(seed 001).",
    columns=tuple(common_head() + _specific() + common_tail()),
    ordered=TIMING_ORDER,
    changelog=(("1.0.0", "First declaration."),),
)
