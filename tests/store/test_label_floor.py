"""The label floor of the card (kgpubench.store.card_figures.label_floor): how far apart the frameworks' times of
one GEMM are, by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kgpubench.store.card_figures import label_floor


def test_the_floor_takes_each_frameworks_fastest_kernel_and_compares_the_frameworks():
    rows = [
        # GEMM 1 on G: trtllm 1.0 (its faster kernel), sglang 2.0, vllm 4.0 -> max/min 4; pairs |ln 2|, |ln 4|, |ln 2|
        ("G", "fp8", 1, "trtllm", 1.0), ("G", "fp8", 1, "trtllm", 1.5), ("G", "fp8", 1, "sglang", 2.0),
        ("G", "fp8", 1, "vllm", 4.0),
        # GEMM 2 on G: two frameworks, 3.0 and 3.0 -> ratio 1, male 0
        ("G", "fp8", 2, "trtllm", 3.0), ("G", "fp8", 2, "vllm", 3.0),
        # GEMM 3 on G: one framework only -> not compared
        ("G", "fp8", 3, "vllm", 9.0),
    ]
    df = pd.DataFrame([{"gpu_name": g, "dtype": d, "m": m, "n": 64, "k": 64, "framework": f, "time_ms": t}
                       for g, d, m, f, t in rows])
    floor = label_floor(df)
    r = floor.loc[("G", "fp8")]
    assert r["problems"] == 2
    assert r["median_ratio"] == pytest.approx((4.0 + 1.0) / 2)
    male_1 = (math.log(2) + math.log(4) + math.log(2)) / 3
    assert r["male"] == pytest.approx((male_1 + 0.0) / 2)
    assert r["p25_ratio"] == pytest.approx(1.75) and r["p75_ratio"] == pytest.approx(3.25)
