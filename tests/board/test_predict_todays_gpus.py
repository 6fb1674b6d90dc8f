"""`kgpubench predict` on the new tasks answers for today's GPUs (issue 39): B200, GB200 and RTX PRO 6000 on the
LLM-operator tasks, MI300X on the convolution tasks, on the shipped data and the committed board. The cheap
tensor_roofline baseline predicts (``--model``), so each answer trains in seconds."""

from __future__ import annotations

import math

import pytest

from kgpubench.board.predict import predict

pytestmark = pytest.mark.slow

GEMM = {"framework": "trtllm", "kernel_source": "torch_flow", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}
def a_shipped_convolution() -> dict:
    """The inputs of the first MI300X row of the packaged `convolutions` (its problem and solver, no GPU figure)."""
    import pyarrow.compute as pc

    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store
    from kgpubench.tasks import get_task

    table = Store(default_data_dir()).read("convolutions")
    row = table.filter(pc.equal(table["gpu_name"], "AMD Instinct MI300X")).slice(0, 1).to_pylist()[0]
    return {c: row[c] for c in get_task("conv-time").features if not c.startswith("gpu_")}


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
    answer = predict(task, "MI300X", a_shipped_convolution(), model="tensor_roofline")
    assert answer.gpu == "AMD Instinct MI300X" and answer.gpu_in_data
    assert math.isfinite(answer.prediction) and answer.prediction > 0
