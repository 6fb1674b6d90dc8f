"""NeuSight's paper metric: traced nodes -> operator calls (hand-checked), per-class summed errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kgpubench.errors import ImportFormatError
from kgpubench.tasks.paper_metric import _node_call, class_errors, trace_calls

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "neusight"


def test_nodes_map_to_neusight_shapes():
    addmm = "<built-in method addmm of type object at 0x7ff281cd3d60>"
    assert _node_call("call_function", addmm, [[3840], [4096, 1280], [1280, 3840]], [4096, 3840]) == {
        "operator": "linear", "dim_b": 1, "dim_m": 4096, "dim_n": 1280, "dim_k": 3840}
    matmul = "<built-in method matmul of type object at 0x7ff281cd3d60>"
    assert _node_call("call_function", matmul, [[4, 20, 1024, 64], [4, 20, 64, 1024]], [4, 20, 1024, 1024]) == {
        "operator": "bmm", "dim_b": 80, "dim_m": 1024, "dim_n": 64, "dim_k": 1024}  # N is the reduction dim
    assert _node_call("call_module", "lm_head", [[4, 1024, 1280]], [4, 1024, 50257]) == {
        "operator": "linear", "dim_b": 1, "dim_m": 4096, "dim_n": 1280, "dim_k": 50257}
    assert _node_call("call_module", "transformer.h.0.ln_1", [[4, 1024, 1280]], [4, 1024, 1280]) == {
        "operator": "layernorm", "dim_b": 4096, "dim_h": 1280}
    assert _node_call("call_function", "<function softmax at 0x7ff2120d5160>", [[4, 20, 1024, 1024]],
                      [4, 20, 1024, 1024]) == {"operator": "softmax", "dim_b": 81920, "dim_h": 1024}
    add = "<built-in function add>"
    assert _node_call("call_function", add, [[4, 1024, 1280], [1, 1024, 1280]], [4, 1024, 1280])["operator"] == "add"
    mul = "<built-in function mul>"
    assert _node_call("call_function", mul, [[4, 1024, 5120]], [4, 1024, 5120])["operator"] == "mulu"
    assert _node_call("call_function", add, [[1]], [1]) is None  # bookkeeping on sizes
    dropout = "transformer.h.0.attn.attn_dropout"
    assert _node_call("call_module", dropout, [[4, 20, 1024, 1024]], [4, 20, 1024, 1024]) is None
    assert _node_call("call_module", "transformer.wte", [[4, 1024]], [4, 1024, 1280]) is None


def test_class_errors_sum_per_workload_then_average():
    calls = pd.DataFrame({"workload": ["a", "a", "b", "b"], "operator_class": ["bmm", "bmm", "bmm", "softmax"],
                          "time_ms": [1.0, 3.0, 2.0, 5.0]})
    errs = class_errors(calls, [2.0, 2.5, 3.0, 5.0])
    # a: |4.5 - 4| / 4 = 12.5 %; b: |3 - 2| / 2 = 50 % -> bmm 31.25 %; softmax: 0 % on one workload
    assert errs["bmm"] == {"error_pct": pytest.approx(31.25), "workloads": 2}
    assert errs["softmax"] == {"error_pct": 0.0, "workloads": 1}


def test_a_trace_without_latency_column_or_with_a_negative_one_is_refused(tmp_path):
    folder = tmp_path / "label" / "NVIDIA_L4"
    folder.mkdir(parents=True)
    (folder / "gpt2-inf-8-1.csv").write_text("op,target,input_shapes,output_shape,latency\n"
                                             "call_function,x,[],(1,),0.1\n")
    with pytest.raises(ImportFormatError, match=r"row 0 \(line 1\), column 'fw_latency'"):
        trace_calls(tmp_path)
    (folder / "gpt2-inf-8-1.csv").write_text("op,target,input_shapes,output_shape,latency,fw_latency\n"
                                             "call_function,x,[],(1,),0.1,-2\n")
    with pytest.raises(ImportFormatError, match=r"row 1 \(line 2\), column 'fw_latency'"):
        trace_calls(tmp_path)
    with pytest.raises(ImportFormatError, match="no inference layer traces"):
        trace_calls(tmp_path / "nothing")


@pytest.mark.skipif(not (STAGED / "label").is_dir(), reason="../shared/external/neusight is not beside this checkout")
def test_staged_unseen_gpu_traces():
    calls = trace_calls(STAGED)
    assert calls["workload"].nunique() == 17
    one = calls[calls.workload == "NVIDIA_L4/gpt2_large-inf-1024-4"]
    # one GPT-2 layer: 4 addmm + lm_head (FC), 2 matmul (BMM), 1 softmax, 3 LayerNorm (ln_1, ln_2, ln_f)
    assert one.groupby("operator_class").size().to_dict() == {
        "bmm": 2, "elementwise": 12, "layernorm": 3, "linear": 5, "softmax": 1}
    assert one.loc[one.operator == "softmax", "time_ms"].iloc[0] == pytest.approx(2.970829, rel=1e-6)
