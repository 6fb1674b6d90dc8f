"""The roofline module and the baselines of the LLM-operator and convolution tasks, on hand-made frames whose
answers are computed by hand here (kgpubench.tasks.roofline, baselines/tensor_roofline.py, roofline_transfer.py,
gemm_waves.py, solver_consensus.py) and the 'choice' completeness rule."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from kgpubench.tasks import get_task
from kgpubench.tasks.roofline import joined_text, peak_flops, roofline_ms, workload_keys

BASELINES = Path(__file__).resolve().parents[2] / "baselines"


def baseline(name: str):
    spec = importlib.util.spec_from_file_location(f"baseline_{name}", BASELINES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu(name, sms, bw_gbs, fp32_gflops, tensor_tflops):
    return {"gpu_name": name, "gpu_sm_count": sms, "gpu_memory_bandwidth_gbs": bw_gbs,
            "gpu_peak_fp32_gflops": fp32_gflops, "peak_tensor_tflops": tensor_tflops}


A = gpu("A", 100, 1000.0, 10_000.0, 100.0)
B = gpu("B", 200, 2000.0, 20_000.0, float("nan"))  # no cited tensor peak: the fp32 peak stands in


def test_the_roofline_uses_the_tensor_peak_where_cited_else_fp32():
    X = pd.DataFrame([{**A, "flops": 2e12, "bytes_min": 1e9}, {**B, "flops": 2e12, "bytes_min": 1e9},
                      {**A, "flops": 1e6, "bytes_min": 4e9}])
    assert list(peak_flops(X)) == [100e12, 20e12, 100e12]
    # row 0: compute 2e12 / 1e14 = 20 ms > memory 1e9 / 1e12 = 1 ms; row 1: 2e12 / 2e13 = 100 ms;
    # row 2: memory bound, 4e9 / 1e12 = 4 ms
    assert np.allclose(roofline_ms(X), [20.0, 100.0, 4.0])
    X.loc[0, "gpu_memory_bandwidth_gbs"] = np.nan
    assert np.isnan(roofline_ms(X)[0])


def test_workload_keys_leave_out_every_gpu_column_and_read_columnwise():
    X = pd.DataFrame({"m": [1.0, 1.0, 2.0], "dtype": ["fp8", "fp8", None], "gpu_sm_count": [1, 2, 3],
                      "gpu_arch": ["gfx90a", "gfx942", "x"], "peak_tensor_tflops": [1.0, 2.0, 3.0]})
    keys = workload_keys(X)
    assert keys[0] == keys[1] == "1.0|fp8" and keys[2] == "2.0|"
    assert list(joined_text(X, ["dtype"])) == ["fp8", "fp8", ""]


def test_tensor_roofline_fits_one_scale_per_operator_and_dtype():
    rows = [{**A, "flops": 2e12, "bytes_min": 1.0, "compute_dtype": "bf16", "operator": "gemm"},
            {**A, "flops": 4e12, "bytes_min": 1.0, "compute_dtype": "bf16", "operator": "gemm"},
            {**A, "flops": 2e12, "bytes_min": 1.0, "compute_dtype": "fp8", "operator": "gemm"}]
    X = pd.DataFrame(rows)  # rooflines 20, 40, 20 ms
    model = baseline("tensor_roofline").make_model(None, 0).fit(X, [40.0, 80.0, 30.0])
    assert model.scale_ == {"gemm|bf16": pytest.approx(2.0), "gemm|fp8": pytest.approx(1.5)}
    new = pd.DataFrame([{**A, "flops": 1e12, "bytes_min": 1.0, "compute_dtype": "fp4", "operator": "gemm"}])
    assert model.predict(new)[0] == pytest.approx(10.0 * model.overall_)  # an untrained pair: the overall scale
    assert model.overall_ == pytest.approx(2.0)  # median of ratios 2, 2, 1.5


def test_roofline_transfer_takes_the_nearest_gpu_of_the_same_call_scaled_by_the_rooflines():
    near = gpu("near", 110, 1100.0, 11_000.0, 110.0)
    far = gpu("far", 400, 8000.0, 80_000.0, 800.0)
    call = {"flops": 2e12, "bytes_min": 1.0, "compute_dtype": "bf16", "operator": "gemm", "m": 8.0,
            "framework": "trtllm", "kernel_source": "k1"}
    X = pd.DataFrame([{**near, **call}, {**far, **call}])
    model = baseline("roofline_transfer").make_model(None, 0).fit(X, [2e12 / 110e12 * 1e3 * 3, 1.0])
    test = pd.DataFrame([{**A, **call}])  # A is nearest to `near`, whose efficiency is 3
    assert model.predict(test)[0] == pytest.approx(20.0 * 3)
    other_stack = pd.DataFrame([{**A, **call, "framework": "vllm", "kernel_source": "k2"}])
    assert model.predict(other_stack)[0] == pytest.approx(60.0)  # the same shape by another stack, same GPU


def test_gemm_waves_counts_partial_waves_by_hand():
    waves = baseline("gemm_waves")
    X = pd.DataFrame([{**A, "m": 1280.0, "n": 1290.0, "k": 64.0, "bytes_min": 1.0, "compute_dtype": "bf16"}])
    # tiles: ceil(1280/128) x ceil(1290/128) = 10 x 11 = 110 -> 2 waves on 100 SMs; one wave: 2*128*128*64 flops
    # at 1e14 / 100 flop/s per SM = 2.097152e-6 s; two waves = 4.194304e-3 ms
    t = waves.wave_ms(X, {"peak": 1e14})
    assert t[0] == pytest.approx(2 * 2 * 128 * 128 * 64 / 1e12 * 1e3)


def test_solver_consensus_ranks_by_the_median_relative_time_on_the_training_gpus():
    rows = []
    for g, times in (("g1", {"s1": 1.0, "s2": 2.0}), ("g2", {"s1": 3.0, "s2": 1.5}), ("g3", {"s1": 1.0, "s2": 4.0})):
        for solver, t in times.items():
            rows.append({"gpu_sm_count": {"g1": 1, "g2": 2, "g3": 3}[g], "problem_id": "p", "solver": solver,
                         "direction": "F", "dtype": "FP32", "y": t})
    X = pd.DataFrame(rows)
    model = baseline("solver_consensus").make_model(None, 0).fit(X.drop(columns="y"), X["y"])
    # relative times: s1 1, 2, 1 (median 1); s2 2, 1, 4 (median 2)
    test = pd.DataFrame([{"gpu_sm_count": 9, "problem_id": "p", "solver": s, "direction": "F", "dtype": "FP32"}
                         for s in ("s1", "s2", "s9")])
    assert list(model.predict(test)) == [1.0, 2.0, 1e6]


def test_the_choice_rule_drops_problems_with_one_usable_row():
    from kgpubench.tasks.selection import COMPLETENESS

    task = get_task("conv-solver")
    rows = pa.table({"gpu_name": ["a", "a", "a", "b"], "problem_id": ["p", "p", "q", "p"]})
    keep, notes = COMPLETENESS["choice"](task, rows, rows, rows)
    assert list(keep) == [True, True, False, False] and notes == ["2 problem(s) with one usable row: nothing to choose"]
