"""Where the CUDA sources are and how a threads-per-block assignment becomes compile-time defines.

Each benchmark is one ``kernels/<bench>.cu`` holding one ``extern "C"`` kernel per NPB-GPU kernel role; the
threads per block of each kernel is a ``#define`` named like NPB-GPU's ``gpu.config`` key
(``CG_THREADS_PER_BLOCK_ON_KERNEL_THREE``...). An assignment maps kernel names to threads per block; a
kernel it does not name stays at the NPB-GPU default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kgpubench.errors import unknown_name
from kgpubench.measure.suite import KernelSource

from .spec import KERNELS, TPB_CHOICES, NpbSpecError, check_benchmark, default_tpb

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
COMPILE_OPTIONS = ("--use_fast_math",)  # as NPB-GPU builds (fast math touches single precision only)


def source_path(benchmark: str) -> Path:
    """The ``.cu`` file of a benchmark."""
    return KERNEL_DIR / f"{check_benchmark(benchmark).lower()}.cu"


def full_assignment(benchmark: str, assignment: Mapping[str, int] | None = None) -> dict[str, int]:
    """``assignment`` completed with the NPB-GPU defaults; unknown kernels or non-power-of-two TPB raise."""
    bench = check_benchmark(benchmark)
    full = default_tpb(bench)
    for name, tpb in (assignment or {}).items():
        if name not in full:
            raise unknown_name(f"{bench} kernel", name, full)
        tpb = int(tpb)
        if tpb < 32 or tpb > 1024 or tpb & (tpb - 1):
            raise NpbSpecError(f"threads per block {tpb} for {bench} kernel {name!r} is not supported; the "
                               f"block reductions need a power of two in {TPB_CHOICES}.")
        full[name] = tpb
    return full


def defines(benchmark: str, assignment: Mapping[str, int] | None = None) -> dict[str, int]:
    """The ``-D KEY=VALUE`` defines of an assignment (every kernel of the benchmark named)."""
    bench = check_benchmark(benchmark)
    full = full_assignment(bench, assignment)
    return {k.config_key: full[k.name] for k in KERNELS[bench]}


def kernel_source(benchmark: str, kernel: str, assignment: Mapping[str, int] | None = None):
    """A harness :class:`~kgpubench.measure.suite.KernelSource` for one kernel under an assignment."""
    bench = check_benchmark(benchmark)
    names = [k.name for k in KERNELS[bench]]
    if kernel not in names:
        raise unknown_name(f"{bench} kernel", kernel, names)
    return KernelSource(path=source_path(bench), kernel=kernel, defines=defines(bench, assignment),
                        options=COMPILE_OPTIONS)
