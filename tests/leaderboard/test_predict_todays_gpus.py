"""`kgpubench predict` on the new tasks answers for today's GPUs (issue 39): B200, GB200 and RTX PRO 6000 on the
LLM-operator tasks, MI300X on the convolution tasks, on the shipped data and the committed board. The cheap
tensor_roofline baseline predicts (``--model``), so each answer trains in seconds."""

from __future__ import annotations

import math

import pytest

from kgpubench.board.predict import predict

pytestmark = pytest.mark.slow

GEMM = {"framework": "trtllm", "kernel_source": "torch_flow", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}
CONV = {"problem_id": "0000000000000000", "direction": "F", "spatial_dims": 2, "batch": 16, "in_channels": 64,
        "in_d": None, "in_h": 56, "in_w": 56, "out_channels": 64, "out_d": None, "out_h": 56, "out_w": 56,
        "filter_d": None, "filter_h": 3, "filter_w": 3, "pad_d": None, "pad_h": 1, "pad_w": 1, "stride_d": None,
        "stride_h": 1, "stride_w": 1, "dilation_d": None, "dilation_h": 1, "dilation_w": 1, "groups": 1, "bias": 0,
        "layout": "NCHW", "dtype": "FP32", "solver": "ConvBinWinogradRxSf2x3", "algorithm":
        "miopenConvolutionFwdAlgoWinograd", "workspace_bytes": 0,
        "flops": 2 * 16 * 64 * 64 * 56 * 56 * 9, "bytes_min": 4 * (16 * 64 * 56 * 56 * 2 + 64 * 64 * 9)}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("gpu,name", [("B200", "NVIDIA B200"), ("GB200", "NVIDIA GB200"),
                                      ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition")])
def test_gemm_latency_answers_for_blackwell(gpu, name):
    answer = predict("gemm-latency", gpu, GEMM, model="tensor_roofline")
    assert answer.gpu == name and answer.gpu_in_data and answer.gpu_rows_in_data > 10_000
    assert math.isfinite(answer.prediction) and answer.prediction > 0
    assert any(n.startswith("flops = 1.374e+11, computed from the dtype and shape") for n in answer.notes)


def test_a_prediction_moves_with_the_gpu():
    b200 = predict("gemm-latency", "B200", GEMM, model="tensor_roofline").prediction
    h100 = predict("gemm-latency", "H100 SXM", GEMM, model="tensor_roofline").prediction
    assert b200 != h100  # different figures, different answers


@pytest.mark.parametrize("task", ["conv-time", "conv-solver"])
def test_the_convolution_tasks_answer_for_mi300x(task):
    answer = predict(task, "MI300X", CONV, model="tensor_roofline")
    assert answer.gpu == "AMD Instinct MI300X" and answer.gpu_in_data
    assert math.isfinite(answer.prediction) and answer.prediction > 0
