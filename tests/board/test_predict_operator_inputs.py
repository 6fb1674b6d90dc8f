"""operator-latency's `predict` computes what a NeuSight call's operator and shape give (its class, its nominal
work, and null for the shape columns its operator does not carry) by the rule the importer wrote the rows with."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from kgpubench.board.predict import check_names, with_gpu_features
from kgpubench.errors import OptionError
from kgpubench.hardware import lookup_gpu
from kgpubench.resources import default_data_dir
from kgpubench.schema.operator_work import KEY_DIMS, call_inputs
from kgpubench.store.store import Store
from kgpubench.tasks import as_task
from kgpubench.tasks.data import config_table

TASK = as_task("operator-latency")
LINEAR = {"operator": "linear", "dim_b": 8, "dim_m": 512, "dim_n": 4096, "dim_k": 4096}


@pytest.fixture(scope="module")
def shipped_calls():
    """One shipped row of each operator and up to 40 rows more of each (every 97th), as dicts."""
    table = config_table(Store(default_data_dir()), "operators").select(
        ["operator", "operator_class", *KEY_DIMS, "flops", "bytes_min"])
    rows = []
    for op in pc.unique(table["operator"]).to_pylist():
        part = table.filter(pc.equal(table["operator"], op))
        rows += part.take(np.arange(0, part.num_rows, 97)[:41]).to_pylist()
    return rows


def test_every_shipped_call_is_given_back_its_class_work_and_nulls(shipped_calls):
    assert len({r["operator"] for r in shipped_calls}) == 16 and len(shipped_calls) > 300
    for row in shipped_calls:
        given = {c: row[c] for c in ("operator", *KEY_DIMS) if row[c] is not None}
        got = call_inputs(given)
        assert got["operator_class"] == row["operator_class"], row
        assert {c for c, v in got.items() if v is None} == {c for c in KEY_DIMS if row[c] is None}, row
        assert got["flops"] == pytest.approx(row["flops"], rel=1e-12), row
        assert got["bytes_min"] == pytest.approx(row["bytes_min"], rel=1e-12), row


def test_predict_fills_what_was_left_out_and_says_so():
    values, notes = with_gpu_features(TASK, LINEAR, lookup_gpu("NVIDIA L4"))
    check_names(TASK, values)  # nothing missing any more
    assert values["operator_class"] == "linear"
    assert values["flops"] == 2 * 8 * 512 * 4096 * 4096 + 8 * 512 * 4096
    assert values["bytes_min"] == 4 * (8 * 512 * 4096 + 4096 * 4096 + 4096 + 8 * 512 * 4096)
    assert all(values[c] is None for c in ("dim_h", "in_channels", "padding"))
    assert "operator_class = linear, computed from the operator and shape" in notes
    assert any(n.startswith("dim_h, in_channels, out_channels, kernel_size, input_size, stride, padding = null: "
                            "calls of linear do not carry them") for n in notes)


def test_what_the_caller_gives_is_kept():
    values, notes = with_gpu_features(TASK, {**LINEAR, "flops": 5.0, "dim_h": 3}, lookup_gpu("NVIDIA L4"))
    assert values["flops"] == 5.0 and values["dim_h"] == 3
    assert not any(n.startswith("flops") for n in notes)


@pytest.mark.parametrize(("values", "named"), [
    ({k: v for k, v in LINEAR.items() if k != "dim_k"}, "dim_k"),  # a shape column the operator needs
    ({**LINEAR, "dim_k": "wide"}, "dim_k"),  # not a number: said so, not that flops (left uncomputed) is missing
    ({**LINEAR, "operator": "matmul"}, "operator_class"),  # an operator the table does not know: nothing computed
])
def test_what_cannot_be_computed_is_still_one_line_naming_a_column(values, named):
    filled, _ = with_gpu_features(TASK, values, lookup_gpu("NVIDIA L4"))
    with pytest.raises(OptionError, match=f"^(missing )?column '{named}'"):
        check_names(TASK, filled)
