"""Static features of stencil cases extract with the declared trip counts (``line:N`` loop names)."""

from __future__ import annotations

import importlib

import pytest

from kgpubench.features import case_features
from kgpubench.measure.features_link import trip_env
from kgpubench.measure.suites import load_suite

load_suite("stencil")
spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")


@pytest.fixture
def features_of(toolchain_for):
    """``features_of(cfg)``: the feature columns of ``cfg`` for sm_90 (skips only when no toolchain does sm_90;
    a compile error fails the test)."""
    toolchain_for("sm_90")

    def get(cfg):
        case = cases.make_case(cfg)
        return case_features(case, arch="sm_90", env=trip_env(case))

    return get


def test_baseline_order_2_counts_by_hand(features_of):
    f = features_of(spec.StencilConfig((64,) * 3, "float64", 2, (1, 1, 1)))
    # One point per thread: 9 field loads (centre, 6 neighbours, u^{n-1}, velocity) + 6 weights
    # (3 centre weights, 1 per axis for r = 1); one store.
    assert f["lmr"] == 15.0
    assert f["lmw"] == 1.0
    assert f["ldpu"] > 0 and f["lshr"] == 0.0 and f["ls"] == 0.0
    assert f["nb"] == -(-62**3 // 128)


def test_thread_tile_stores_one_value_per_point_of_its_tile(features_of):
    f = features_of(spec.StencilConfig((200,) * 3, "float32", 8, (2, 16, 4)))
    # 192 interior points per axis divide evenly: every tile has 2 * 16 * 4 = 128 points.
    assert f["lmw"] == 128.0
    assert f["ldpu"] == 0.0


def test_shared_tile_loads_the_padded_box_once(features_of):
    f = features_of(spec.StencilConfig((64,) * 3, "float32", 8, (4, 4, 8), "shared-tile"))
    # Interior 56 = 14 * 4 = 7 * 8: all tiles full. Padded box 12 * 12 * 16 = 2304 values over 128 threads
    # -> 18 shared stores per thread; 128 points over 128 threads -> 1 global store; one barrier.
    assert f["lshw"] == 18.0
    assert f["lmw"] == 1.0
    assert f["ls"] == 1.0
