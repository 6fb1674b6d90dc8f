"""Helpers for tests: valid rows of any config, built from the schema; conformance checks of a suite
(:func:`check_suite`), a backend (:func:`check_backend`) and a model file (:func:`check_model`).

Rows made here are marked ``source = "imported:test"`` so they validate (the logic under test needs valid
rows) while staying recognisable; never merge them into a real store.
"""

from __future__ import annotations

import datetime as _dt
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import ContractError
from kgpubench.hardware import DeviceInfo
from kgpubench.measure.runner import case_row_base
from kgpubench.measure.suite import Case, KernelSource, SuiteBase, as_suite
from kgpubench.models.model_checks import CheckOutcome, refusal, run_model_checks
from kgpubench.schema import TABLES, get_table, row_id_of

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
    "programs": {"problem_set": "v0.1", "level": 1, "problem": "1_Square_matrix_multiplication_.py", "problem_id": 1,
                 "compile_mode": "eager", "setup": "T4_modal", "timed_unit": "forward-pass", "time_ms_max": 1.2},
    "tunings": {"kernel": "Xaxpy", "precision": "Single", "kind": "device", "tuned_on_device": True,
                "device_type": "GPU", "vendor": "NVIDIA", "device": "Test GPU",
                "params": [{"name": "VW", "value": 4.0}]},
    "operators": {"operator": "bmm", "operator_class": "bmm", "shape_set": "train", "occurrence": 0, "dim_b": 2,
                  "dim_m": 64, "dim_n": 32, "dim_k": 16, "dtype": "float32", "framework": "pytorch",
                  "flops": 2.0 * 2 * 64 * 32 * 16, "time_ms": 1.0, "calls_timed": 25, "calls_kept": 5,
                  "time_statistic": "mean-of-5-fastest-of-25", "timed_unit": "operator-call"},
    "profiles": {"application": "hotspot", "kernel": "calculate_temp", "input_size_1": 64, "input_size_2": 256,
                 "launch_index": 0, "grid_x": 6, "grid_y": 6, "grid_z": 1, "block_x": 16, "block_y": 16,
                 "block_z": 1, "registers_per_thread": 36, "static_smem_bytes": 3072, "time_ms": 0.01,
                 "timed_unit": "kernel-launch", "repeats": 1},
    "convolutions": {"gpu_arch": "gfx90a", "gpu_compute_units": 110, "gpu_inferred_from": "inferred from gfx90a with "
                     "110 CUs", "backend": "HIP", "direction": "F", "spatial_dims": 2, "batch": 8, "in_channels": 64,
                     "in_h": 56, "in_w": 56, "out_channels": 128, "out_h": 56, "out_w": 56, "filter_h": 3,
                     "filter_w": 3, "pad_h": 1, "pad_w": 1, "stride_h": 1, "stride_w": 1, "dilation_h": 1,
                     "dilation_w": 1, "groups": 1, "bias": 0, "layout": "NCHW", "dtype": "FP32",
                     "solver": "GemmFwdRest", "algorithm": "miopenConvolutionFwdAlgoGEMM",
                     "problem_id": "0123456789abcdef", "solvers_in_problem": 1, "workspace_bytes": 0, "time_ms": 1.0,
                     "time_statistic": "miopen-find", "entry_format": "solver-first"},
    "llm_operators": {"operator": "gemm", "framework": "trtllm", "framework_version": "1.3.0rc20",
                      "kernel_source": "torch_flow", "system": "h200_sxm", "dtype": "bfloat16", "compute_dtype": "bf16",
                      "m": 1024, "n": 4096, "k": 4096, "occurrence": 0, "flops": 2.0 * 1024 * 4096 * 4096,
                      "bytes_min": 2.0 * (1024 * 4096 * 2 + 4096 * 4096), "time_ms": 0.05,
                      "time_statistic": "mean-per-call-cuda-graph", "source_format": "aiconfigurator-parquet"},
}


# A submission's model file for tests: the training mean everywhere, for autotune-config (a stranger's model: it
# runs in the sandbox like any other).
MEAN_MODEL_SOURCE = """
import numpy as np
TASKS = ("autotune-config",)
def make_model(task, seed):
    class M:
        def fit(self, X, y):
            self.m = float(np.mean(y)); return self
        def predict(self, X):
            return np.full(len(X), self.m)
    return M()
"""


def valid_row(config: str, **overrides: Any) -> dict:
    """One row of ``config`` that passes validation (before ``overrides`` are applied)."""
    table = get_table(config)
    row: dict[str, Any] = {
        "run_id": "test-run-0001", "status": "ok", **_GPU,
        "time_ms_median": 1.0, "time_ms_min": 0.9, "time_ms_mean": 1.05, "time_ms_std": 0.05, "repeats": 10,
        "time_cv": 0.05, "source": "imported:test",
        "collected_at": _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc), "kgpubench_version": "0.1.0",
        "source_file": "test.json", "source_license": "CC-BY-4.0", **_KEYS[config],
    }
    names = set(table.column_names)
    row = {k: v for k, v in row.items() if k in names}
    row.update(overrides)
    return row


def valid_table(config: str, rows: list[dict] | None = None, **overrides: Any) -> pa.Table:
    """An arrow table of ``config`` made of ``rows`` (default: one :func:`valid_row`), with row ids."""
    return get_table(config).from_rows(rows if rows is not None else [valid_row(config, **overrides)])


# ----- conformance checks of the collection contracts (in the way of scikit-learn's check_estimator) ---------
CHECK_KERNEL = 'extern "C" __global__ void kgpubench_check(float* x, int n) {\n' \
               '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] += 1.0f;\n}\n'


def _require(ok: bool, what: str, message: str) -> None:
    if not ok:
        raise ContractError(f"{what}: {message}")


def check_suite(suite: Any, *, quick_only: bool = False) -> dict[str, int]:
    """Check that ``suite`` follows the suite contract (:mod:`kgpubench.measure.suite`); raise
    :class:`~kgpubench.errors.ContractError` naming the first breach.

    Checked: ``name``, ``table`` (a declared table), ``collector_version``; ``kernels()`` (distinct names);
    ``cases()`` quick and full (unless ``quick_only``) are :class:`~kgpubench.measure.suite.Case` lists whose
    sources exist, whose launch shapes are positive and whose row keys are complete and distinct (two cases
    with one row id would be measured once); ``kernels=[k]`` selects some but not more of the quick cases for
    every ``k`` of ``kernels()``; a suite measured case by case defines ``prepare``, one that measures itself
    ``measure``. Needs no GPU. Returns the case counts (``{"quick": n, "full": m}``).
    """
    declared = as_suite(suite)
    what = f"suite {getattr(suite, 'name', type(suite).__name__)!r}"
    for attr in ("name", "table", "collector_version"):
        _require(isinstance(getattr(declared, attr, None), str) and getattr(declared, attr), what,
                 f"`{attr}` must be a non-empty string")
    _require(declared.table in TABLES, what, f"table {declared.table!r} is not a declared table ({sorted(TABLES)})")
    _require(declared.l2_policy in ("warm", "flushed"), what, f"l2_policy {declared.l2_policy!r}; warm or flushed")
    kernels = list(declared.kernels())
    _require(bool(kernels) and all(isinstance(k, str) for k in kernels), what, "kernels() must name its kernels")
    _require(len(set(kernels)) == len(kernels), what, f"kernels() repeats names: {kernels}")
    based = isinstance(suite, SuiteBase)
    if declared.measures_itself:
        _require(type(suite).measure is not SuiteBase.measure if based else callable(getattr(suite, "measure", None)),
                 what, "measures_itself is set but measure(case, backend, how) is not defined")
    else:
        _require(type(suite).prepare is not SuiteBase.prepare if based else callable(getattr(suite, "prepare", None)),
                 what, "a suite measured case by case must define prepare(case, kernel, xp, rng)")
    table = TABLES[declared.table]
    gpu = {k: v for k, v in _GPU.items() if k in table.column_names}
    counts = {}
    for quick in (True,) if quick_only else (True, False):
        cases = list(declared.cases(quick=quick, kernels=None, device=None))
        label = "quick" if quick else "full"
        _require(bool(cases), what, f"cases(quick={quick}) is empty")
        seen: dict[str, str] = {}
        for case in cases:
            _require(isinstance(case, Case), what, f"cases() gave a {type(case).__name__}, not a Case")
            _require(Path(case.source.path).is_file(), what, f"case {case.label()}: no source {case.source.path}")
            _require(all(int(v) >= 1 for v in (*case.grid, *case.block)), what,
                     f"case {case.label()}: grid and block extents must be >= 1")
            base = case_row_base(case, table, gpu)
            missing = [c for c in table.key_columns if c not in base]
            _require(not missing, what, f"case {case.label()} sets no value for key column(s) {missing}")
            rid = row_id_of(table.name, {k: base.get(k) for k in table.key_columns})
            _require(rid not in seen, what, f"cases {seen.get(rid)} and {case.label()} are the same row")
            seen[rid] = case.label()
        counts[label] = len(cases)
    for name in kernels:  # --kernel NAME selects some of the cases, and some of them for every name
        n = len(list(declared.cases(quick=True, kernels=[name], device=None)))
        _require(0 < n <= counts["quick"], what, f"cases(quick=True, kernels=[{name!r}]) gives {n} case(s); expected "
                                                 f"1 to {counts['quick']}")
    return counts


def check_backend(backend: Any, *, workdir: Path | str | None = None) -> None:
    """Check that ``backend`` follows the backend contract (:class:`kgpubench.measure.backends.base.Backend`); raise
    :class:`~kgpubench.errors.ContractError` naming the first breach.

    Compiles and times a one-line kernel (written to ``workdir``, default a temporary folder): ``device()``
    gives a :class:`~kgpubench.hardware.DeviceInfo` with positive limits; ``free_memory_bytes()`` is
    within the device memory; ``compile`` gives a callable kernel with a thread limit; ``time_launches`` and a
    ``batch`` sampler give one finite, non-negative time per call or sample; ``classify`` maps an unrelated
    exception to None; ``nvml()`` is None or reads a power; ``capabilities`` is a declared
    :class:`~kgpubench.measure.backends.base.Capabilities` whose parts hold (power or clocks need ``nvml()``,
    precompile and ptx their methods, graphs a working graph sampler) and ``clock`` has ``ns()`` and ``sleep()``.
    """

    what = f"backend {getattr(backend, 'name', type(backend).__name__)!r}"
    for attr in ("name", "row_source"):
        _require(isinstance(getattr(backend, attr, None), str) and getattr(backend, attr), what,
                 f"`{attr}` must be a non-empty string")
    _require(all(hasattr(backend.xp, f) for f in ("asarray", "zeros")), what, "xp must be an array module")
    dev = backend.device()
    _require(isinstance(dev, DeviceInfo), what, f"device() gave a {type(dev).__name__}, not a DeviceInfo")
    limits = (dev.sm_count, dev.max_threads_per_block, dev.warp_size, dev.memory_bytes)
    _require(dev.arch.startswith("sm_") and min(limits) > 0, what, f"device() limits are not positive: {dev}")
    free = backend.free_memory_bytes()
    _require(isinstance(free, int) and 0 <= free <= dev.memory_bytes, what,
             f"free_memory_bytes() = {free!r}, not within 0..{dev.memory_bytes}")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = Path(tmp) / "kgpubench_check.cu"
        path.write_text(CHECK_KERNEL)
        kernel = backend.compile(KernelSource(path, "kgpubench_check"))
    _require(callable(kernel) and int(kernel.max_threads_per_block) > 0, what,
             "compile() must give a callable kernel with max_threads_per_block")
    regs = getattr(kernel, "registers", "missing")
    _require(regs is None or (isinstance(regs, int) and regs > 0), what,
             f"the compiled kernel's `registers` must be an int > 0 or None (unknown), not {regs!r}")
    x = backend.xp.zeros(256, dtype="float32")
    calls = []

    def unit() -> None:
        calls.append(1)
        kernel((1, 1, 1), (256, 1, 1), (x, np.int32(256)))

    times = backend.time_launches(unit, 3)
    _require(len(times) == 3 and len(calls) == 3, what, f"time_launches(fn, 3) gave {len(times)} times for "
                                                         f"{len(calls)} calls; expected 3 and 3")
    samples = _samples(backend, unit, "batch", 4)
    for label, values in (("time_launches", times), ("sampler.run", samples)):
        _require(all(isinstance(t, float) and math.isfinite(t) and t >= 0 for t in values), what,
                 f"{label} gave {values}; expected finite non-negative milliseconds")
    _require(len(samples) == 4, what, f"sampler.run(4) gave {len(samples)} samples")
    _require(backend.classify(KeyError("not a CUDA error")) is None, what,
             "classify() must return None for an exception that is not a per-case failure")
    nvml = backend.nvml()
    _require(nvml is None or int(nvml.power_mw()) >= 0, what, "nvml() must be None or read a power")
    _check_capabilities(backend, what, unit, nvml)


def _samples(backend: Any, unit: Any, method: str, n: int) -> list[float]:
    """``n`` samples of ``unit`` (two launches each) by ``method``, the sampler closed and the device synchronised."""
    sampler = backend.sampler(unit, method=method, launches=2)
    try:
        samples = list(sampler.run(n))
    finally:
        sampler.close()
    backend.synchronize()
    return samples


def _check_capabilities(backend: Any, what: str, unit: Any, nvml: Any) -> None:
    """The declared capabilities and host clock hold: each declared optional part is there and works."""
    import math

    from kgpubench.measure.backends.base import Capabilities

    caps = getattr(backend, "capabilities", None)
    _require(isinstance(caps, Capabilities), what, "`capabilities` must be a "
             "kgpubench.measure.backends.base.Capabilities (declare graphs, power, clocks, precompile, ptx)")
    clock = getattr(backend, "clock", None)
    _require(callable(getattr(clock, "ns", None)) and callable(getattr(clock, "sleep", None)), what,
             "`clock` must have ns() and sleep(seconds) (kgpubench.measure.backends.base.HostClock)")
    _require(isinstance(clock.ns(), int), what, "clock.ns() must give an int of nanoseconds")
    for name in ("power", "clocks"):
        _require(not getattr(caps, name) or nvml is not None, what,
                 f"capabilities.{name} is declared but nvml() is None")
    for name in ("precompile", "ptx"):
        _require(not getattr(caps, name) or callable(getattr(backend, name, None)), what,
                 f"capabilities.{name} is declared but the backend has no {name}() method")
    if caps.graphs:
        samples = _samples(backend, unit, "graph", 2)
        _require(len(samples) == 2 and all(math.isfinite(t) and t >= 0 for t in samples), what,
                 f"capabilities.graphs is declared but a graph sampler gave {samples}")


def check_model(model: Path | str, task: Any, *, seed: int = 0, table: pa.Table | None = None,
                data_dir: Path | str | None = None, sandbox: bool = True, trust: bool = False,
                allowed: tuple[str, ...] = ()) -> list[CheckOutcome]:
    """Check that the model file ``model`` (``make_model(task, seed)``) gives reproducible predictions on
    ``task`` (:mod:`kgpubench.models.model_checks`: finite predictions of the right shape, seed determinism, thread
    invariance, refit), on a small sample of the task's rows (of ``table``, a config table, or of the store
    ``data_dir``); raise :class:`~kgpubench.errors.ContractError` naming every failed check but those in
    ``allowed``. ``sandbox=False`` runs the model in this process (trusted code only). Returns the outcomes."""
    outcomes = run_model_checks(model, task, seed=seed, table=table, data_dir=data_dir, sandbox=sandbox, trust=trust)
    why = refusal(model, task, [o for o in outcomes if o.check not in allowed])
    if why:
        raise ContractError(why)
    return outcomes
