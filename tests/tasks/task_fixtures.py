"""Small synthetic tables for the task, split, baseline and leaderboard tests.

Values come from closed-form formulas (not measurements) and rows carry ``source = imported:test`` through
:func:`kgpubench.testing.valid_row`, so they validate for the logic under test but are recognisable.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa

from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.testing import valid_row

GPUS = {
    "GPU A": dict(gpu_sm_count=40, gpu_cores=2560, gpu_memory_bandwidth_gbs=320.0, gpu_peak_fp32_gflops=8100.0,
                  gpu_l2_bytes=4 * 2**20),
    "GPU B": dict(gpu_sm_count=80, gpu_cores=5120, gpu_memory_bandwidth_gbs=900.0, gpu_peak_fp32_gflops=15700.0,
                  gpu_l2_bytes=6 * 2**20),
    "GPU C": dict(gpu_sm_count=108, gpu_cores=6912, gpu_memory_bandwidth_gbs=1555.0,
                  gpu_peak_fp32_gflops=19500.0, gpu_l2_bytes=40 * 2**20),
}


def _timing(t: float) -> dict:
    return dict(time_ms_median=t, time_ms_min=0.99 * t, time_ms_mean=1.01 * t, time_ms_std=0.01 * t, repeats=10)


def autotune_table(gpus=("GPU A", "GPU B", "GPU C")) -> pa.Table:
    rows = []
    for g in gpus:
        hw = GPUS[g]
        for kernel, base in (("gemm", 2.0), ("conv", 0.5)):
            for bx in (16, 32, 64, 128):
                for tile in (1, 2, 4):
                    t = base * 1000.0 / hw["gpu_memory_bandwidth_gbs"] * (1 + 0.3 * abs(math.log2(bx / 64))) \
                        * (1 + 0.2 * abs(tile - 2))
                    params = [{"name": "block_size_x", "value": float(bx)}, {"name": "tile", "value": float(tile)}]
                    rows.append(valid_row("autotune", gpu_name=g, **hw, kernel=kernel, problem_size="1024x1024",
                                          params=params, **_timing(t)))
    return get_table("autotune").from_rows(rows)


def programs_table(gpus=("GPU A", "GPU B", "GPU C")) -> pa.Table:
    """KernelBench-like `programs` rows: 6 programs x 2 modes per GPU, time ~ size / bandwidth (+ a launch floor)."""
    rows = []
    for g in gpus:
        hw = GPUS[g]
        for pid, n in enumerate((64, 128, 256, 512, 1024, 2048), start=1):
            for mode, factor in (("eager", 1.0), ("inductor-default", 0.8)):
                t = 0.02 + factor * n * n * 4 / hw["gpu_memory_bandwidth_gbs"] / 1e3
                rows.append(valid_row("programs", gpu_name=g, **hw, problem=f"{pid}_Prog.py", problem_id=pid,
                                      compile_mode=mode, constants=[{"name": "N", "value": float(n)}],
                                      op_counts=[{"name": "torch.matmul", "value": 1.0}], input_count=2,
                                      input_elements=2 * n * n, source_bytes=700 + pid, time_ms_mean=t,
                                      time_ms_min=t * 0.95, time_ms_max=t * 1.1, time_ms_std=t * 0.01,
                                      time_ms_median=None, time_cv=0.01))
    return get_table("programs").from_rows(rows)


def operators_table(gpus=("GPU A", "GPU B", "GPU C")) -> pa.Table:
    """Operator calls on three GPUs: bmm shapes and elementwise adds, timed by a roofline plus a launch floor."""
    rows = []
    for g in gpus:
        hw = GPUS[g]
        for b, m, n, k in ((1, 64, 64, 64), (4, 128, 256, 64), (8, 512, 512, 512), (16, 1024, 64, 1024),
                           (2, 2048, 1024, 256), (32, 96, 196, 196)):
            flops, nbytes = 2.0 * b * m * n * k, 4.0 * b * (m * n + n * k + m * k)
            t = 0.01 + max(flops / hw["gpu_peak_fp32_gflops"] / 1e6, nbytes / hw["gpu_memory_bandwidth_gbs"] / 1e6)
            rows.append(valid_row("operators", gpu_name=g, **hw, dim_b=b, dim_m=m, dim_n=n, dim_k=k, flops=flops,
                                  bytes_min=nbytes, time_ms=1.5 * t))
        for b, h in ((1024, 1024), (8192, 4096), (65536, 1600), (300, 77)):
            t = 0.008 + 12.0 * b * h / hw["gpu_memory_bandwidth_gbs"] / 1e6
            rows.append(valid_row("operators", gpu_name=g, **hw, operator="add", operator_class="elementwise",
                                  dim_b=b, dim_m=None, dim_n=None, dim_k=None, dim_h=h, flops=float(b * h),
                                  bytes_min=12.0 * b * h, time_ms=1.2 * t))
    return get_table("operators").from_rows(rows)


def kernels_table() -> pa.Table:
    rows = []
    for g in ("GPU A", "GPU B"):
        hw = GPUS[g]
        for kernel, bound, flops in (("vadd", "memory", 1.0), ("mm", "compute", 64.0), ("hotspot", "compute", 16.0)):
            for n in (1024, 2048, 4096, 8192):
                for nt in (64, 128, 256):
                    nb = n // nt
                    lc = flops * 10
                    t = 1e-3 * n * (flops / hw["gpu_peak_fp32_gflops"] * 100 + 8.0 / hw["gpu_memory_bandwidth_gbs"]) \
                        * (1 + 0.1 * abs(math.log2(nt / 128)))
                    rows.append(valid_row(
                        "kernels", gpu_name=g, **hw, suite="regular", program=kernel, kernel=kernel, bound=bound,
                        size_params=[{"name": "n", "value": float(n)}], grid_x=nb, block_x=nt, n=float(n),
                        s=float(n), cpx=float(n), nb=nb, nt=nt, w=nt // 32, alpha=flops / 4, l=lc + 3,
                        lc=lc, lmr=2.0, lmw=1.0, lshr=0.0, lshw=0.0, ls=0.0, ldpu=0.0, lsfu=0.0, dpc=0.3,
                        shmem_words=0, nreg=16, **_timing(t)))
        for kernel, lines in (("dot", 20), ("transpose", 35)):
            for sa in (0.3, 0.6, 0.8, 1.0):
                for cd in (0.5, 1.0, 2.0, 4.0):
                    b0, b1, b2 = (60.0, 30.0, 0.2) if g == "GPU A" else (95.0, 45.0, 0.15)
                    p = b0 * sa + b1 * cd ** b2
                    rows.append(valid_row(
                        "kernels", gpu_name=g, **hw, suite="power", program=kernel, kernel=kernel,
                        size_params=[{"name": "sa", "value": sa}, {"name": "cd", "value": cd}],
                        compute_density=cd, sm_saturation=sa, source_lines=lines, power_w_avg=p, **_timing(1.0)))
    return get_table("kernels").from_rows(rows)


def profiles_table() -> pa.Table:
    """Single profiled launches (`profiles`): two kernels x inputs x launches on the three GPUs, time ~ bytes /
    bandwidth, the first launch of each input 100 times shorter (as heartwall's frame 0)."""
    rows = []
    for g, hw in GPUS.items():
        for kernel, app in (("calculate_temp", "hotspot"), ("lud_diagonal", "lud")):
            for n in (64, 128, 256, 512):
                for launch in range(3):
                    t = n * n * 4e-6 / hw["gpu_memory_bandwidth_gbs"] * (0.01 if launch == 0 else 1.0)
                    rows.append(valid_row("profiles", gpu_name=g, **hw, application=app, kernel=kernel,
                                          input_size_1=n, input_size_2=0, launch_index=launch, grid_x=n // 16,
                                          time_ms=t, prof_achieved_occupancy=0.5))
    return get_table("profiles").from_rows(rows)


def stencil_table() -> pa.Table:
    rows = []
    for g in ("GPU A", "GPU B"):
        hw = GPUS[g]
        for n in (64, 96, 128):
            for dtype in ("float32", "float64"):
                for so in (2, 8):
                    for tile in ((1, 1, 1), (2, 2, 2), (4, 4, 4), (1, 4, 8), (8, 8, 8)):
                        vol = tile[0] * tile[1] * tile[2]
                        best = 8 if n >= 96 else 64
                        t = n ** 3 * so * (2 if dtype == "float64" else 1) / hw["gpu_memory_bandwidth_gbs"] * 1e-4 \
                            * (1 + 0.25 * abs(math.log2(vol / best)))
                        rows.append(valid_row(
                            "stencil", gpu_name=g, **hw, grid_nx=n, grid_ny=n, grid_nz=n, dtype=dtype,
                            space_order=so, tile_b1=tile[0], tile_b2=tile[1], tile_b3=tile[2], **_timing(t)))
    return get_table("stencil").from_rows(rows)


def _assignment(tpb: dict) -> list[dict]:
    return [{"name": k, "value": float(v)} for k, v in sorted(tpb.items())]


def npb_run_row(gpu: str, bench: str, npb_class: str, default: dict, remainder_s: float, **extra) -> dict:
    """The ``default`` run row of a problem: its TPB assignment and its non-kernel remainder."""
    return valid_row("npb", gpu_name=gpu, **GPUS[gpu], row_kind="run", benchmark=bench, npb_class=npb_class,
                     kernel="app", tpb=None, assignment="default", tpb_assignment=_assignment(default),
                     remainder_s=remainder_s, **{**_timing(1.0), **extra})


NPB_FIXTURE_DEFAULTS = {"k1": 64, "k2": 128}


def npb_table(extra=None) -> pa.Table:
    """EP and CG (class B) on GPU A and B: kernels k1, k2 at six TPBs, plus each problem's default run row
    (k1 at 64, k2 at 128; remainder 0.5 s, as the kernel rows')."""
    rows = []
    for g in ("GPU A", "GPU B"):
        hw = GPUS[g]
        for bench in ("EP", "CG"):
            for kernel, calls, best in (("k1", 10, 128), ("k2", 100, 256)):
                for tpb in (32, 64, 128, 256, 512, 1024):
                    t = (1.0 if bench == "EP" else 2.0) * (1 + 0.1 * abs(math.log2(tpb / best)))
                    row = valid_row("npb", gpu_name=g, **hw, benchmark=bench, npb_class="B", kernel=kernel, tpb=tpb,
                                    calls_per_run=calls, remainder_s=0.5, **_timing(t))
                    row.update(extra or {})
                    rows.append(row)
            rows.append(npb_run_row(g, bench, "B", NPB_FIXTURE_DEFAULTS, 0.5))
    return get_table("npb").from_rows(rows)


# A crafted 3-kernel MG problem (mean time per call in ms, calls per run); defaults psinv 1024, resid 512,
# zero3 128 (NPB-GPU's). GPU B: every time x 2. Expected choices are worked out by hand in the tests.
CRAFTED_TIMES = {"psinv": (100, {128: 2.0, 512: 1.5, 1024: 1.8}),
                 "resid": (100, {128: 1.2, 512: 1.0, 1024: 0.9}),
                 "zero3": (10, {128: 0.5, 512: 0.4, 1024: 0.6})}
CRAFTED_DEFAULTS = {"psinv": 1024, "resid": 512, "zero3": 128}
CRAFTED_SCALE = {"GPU A": 1.0, "GPU B": 2.0}


def npb_crafted_table(*, run_rows: bool = True, default_remainder_s: float = 0.2,
                      kernel_remainder_s: float = 0.3) -> pa.Table:
    """The crafted MG class B problem on GPU A and GPU B (times and remainders x ``CRAFTED_SCALE``).

    Kernel rows carry ``kernel_remainder_s`` (their own one-kernel runs), the default run row
    ``default_remainder_s``: a scorer that used the kernel rows' value would be off by their difference.
    """
    rows = []
    for g, scale in CRAFTED_SCALE.items():
        for kernel, (calls, times) in CRAFTED_TIMES.items():
            for tpb, t in times.items():
                t = t * scale
                rows.append(valid_row(
                    "npb", gpu_name=g, **GPUS[g], benchmark="MG", npb_class="B", kernel=kernel, tpb=tpb,
                    calls_per_run=calls, remainder_s=kernel_remainder_s * scale,
                    tpb_assignment=_assignment({**CRAFTED_DEFAULTS, kernel: tpb}), time_ms_median=t,
                    time_ms_min=0.99 * t, time_ms_mean=t, time_ms_std=0.01 * t, repeats=10))
        if run_rows:
            rows.append(npb_run_row(g, "MG", "B", CRAFTED_DEFAULTS, default_remainder_s * scale))
    return get_table("npb").from_rows(rows)


def make_store(path: Path, *tables: pa.Table) -> Store:
    """A store at ``path`` holding ``tables`` (one shard each)."""
    store = Store(path)
    shards = []
    for i, table in enumerate(tables):
        shards.append(write_shard(table, path.parent / f"{path.name}-shard{i}.parquet"))
    store.merge(shards, today="2026-01-01")
    return store


def _packaged(config: str) -> pa.Table:
    from kgpubench.resources import default_data_dir

    return Store(default_data_dir()).read(config)


def llm_operators_table(per_gpu: int = 40) -> pa.Table:
    """Real rows of the packaged `llm_operators`: the first ``per_gpu`` GEMM and ``per_gpu`` attention rows of
    every GPU (every framework and GPU stays, so transfer and next-generation have something to do)."""
    import pyarrow.compute as pc

    table = _packaged("llm_operators")
    parts = []
    for gpu in sorted(set(table["gpu_name"].to_pylist())):
        mine = table.filter(pc.equal(table["gpu_name"], gpu))
        for gemm in (True, False):
            ops = pc.equal(mine["operator"], "gemm")
            parts.append(mine.filter(ops if gemm else pc.invert(ops)).slice(0, per_gpu))
    return pa.concat_tables(parts)


def convolutions_table(problems: int = 30) -> pa.Table:
    """Real rows of the packaged `convolutions`: every row (every GPU and solver) of the ``problems`` problems
    that the most GPUs timed, whole, so conv-solver has choices on every GPU."""
    import pyarrow.compute as pc

    table = _packaged("convolutions")
    ids = table.group_by("problem_id").aggregate([("gpu_name", "count_distinct")]).sort_by(
        [("gpu_name_count_distinct", "descending"), ("problem_id", "ascending")])
    keep = ids["problem_id"].slice(0, problems)
    return table.filter(pc.is_in(table["problem_id"], value_set=keep.combine_chunks()))


# The fixture table of each config, by config name (the baseline tests and the model checks run each baseline on
# its first task's table).
TABLES = {"kernels": kernels_table, "autotune": autotune_table, "stencil": stencil_table, "npb": npb_table,
          "programs": programs_table, "operators": operators_table,
          "profiles": profiles_table, "llm_operators": llm_operators_table, "convolutions": convolutions_table}
