"""TimingBatch statistics are consistent by construction (issue 30, item 6): for equal or nearly equal repeats
the computed mean and median never fall outside [min, max], so the schema's ordering rules hold."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgpubench.importers import import_table
from kgpubench.importers.common import TimingBatch
from kgpubench.store.validation import validate_table

POSITIVE = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _stats(times: list[float]) -> dict:
    batch, row = TimingBatch(), {}
    batch.add(row, times)
    batch.fill()
    return row


def _near(x: float, steps: list[int]) -> list[float]:
    """``x`` moved by a few ULPs per repeat (nearly equal repeats)."""
    out = []
    for k in steps:
        y = x
        for _ in range(abs(k)):
            y = math.nextafter(y, math.inf if k > 0 else 0.0)
        out.append(y)
    return out


def test_six_equal_repeats_of_a_tenth_keep_mean_at_the_minimum():
    # np.mean of six 0.1 is 0.09999999999999999, one ULP below every repeat: the refused case of issue 30.
    assert float(np.mean([0.1] * 6)) < 0.1
    row = _stats([0.1] * 6)
    assert row["time_ms_mean"] == row["time_ms_min"] == row["time_ms_median"] == 0.1
    assert row["time_ms_std"] >= 0.0 and row["repeats"] == 6


@settings(max_examples=300, deadline=None)
@given(x=POSITIVE, n=st.integers(min_value=1, max_value=64))
def test_equal_repeats_give_equal_statistics(x, n):
    row = _stats([x] * n)
    assert row["time_ms_min"] == x
    assert row["time_ms_mean"] == x  # the exact mean of equal repeats is the repeat
    assert row["time_ms_median"] == x


@settings(max_examples=300, deadline=None)
@given(x=POSITIVE, steps=st.lists(st.integers(min_value=-3, max_value=3), min_size=1, max_size=40))
def test_nearly_equal_repeats_keep_min_le_median_le_max_and_min_le_mean_le_max(x, steps):
    times = _near(x, steps)
    row = _stats(times)
    lo, hi = min(times), max(times)
    assert row["time_ms_min"] == lo
    assert lo <= row["time_ms_median"] <= hi
    assert lo <= row["time_ms_mean"] <= hi


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=POSITIVE, n=st.integers(min_value=1, max_value=32))
def test_a_cache_entry_with_equal_times_is_imported(tmp_path, x, n):
    """The whole path: a Kernel Tuner cache whose `times` are equal validates (it was refused before)."""
    doc = {"device_name": "NVIDIA GeForce RTX 3090", "kernel_name": "k", "problem_size": [64], "tune_params_keys":
           ["block_size_x"], "tune_params": {}, "cache": {"32": {"block_size_x": 32, "time": x, "times": [x] * n}}}
    path = tmp_path / "equal.json"
    path.write_text(json.dumps(doc))
    table = import_table([path])
    assert validate_table(table, "autotune") == []
    assert table["time_ms_mean"][0].as_py() == x
