"""The run-to-run repeat's selection, comparison and whole flow on the fake backend."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "measure"))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("repeat_check", ROOT / "benchmarks" / "repeat_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _rows(prefix, n):
    return [{"row_id": f"{prefix}{i:03d}", "time_ms_median": 1.0} for i in range(n)]


def test_selection_is_proportional_with_a_floor_and_stable(bench):
    rows = {"regular": _rows("r", 2000), "power": _rows("p", 700), "stencil": _rows("s", 9000), "npb": _rows("n", 8)}
    pick = bench.select_repeats(rows, 50, seed=0)
    sizes = {k: len(v) for k, v in pick.items()}
    # proportional shares round(50 * n / 11708): regular 9, power 3 -> 5 (floor), stencil 38, npb 0 -> 5;
    # 57 > 50, so the largest share gives back 7: stencil 31
    assert sizes == {"regular": 9, "power": 5, "stencil": 31, "npb": 5} and sum(sizes.values()) == 50
    assert pick == bench.select_repeats(rows, 50, seed=0)  # the same folder gives the same pick
    assert pick != bench.select_repeats(rows, 50, seed=1)
    assert set(pick["npb"]) <= {r["row_id"] for r in rows["npb"]}


def test_compare_by_hand(bench):
    old = [{"row_id": "a", "time_ms_median": 1.0}, {"row_id": "b", "time_ms_median": 2.0},
           {"row_id": "c", "time_ms_median": 4.0}]
    new = [{"row_id": "a", "time_ms_median": 1.01, "status": "ok"}, {"row_id": "b", "time_ms_median": 1.9,
                                                                     "status": "ok"},
           {"row_id": "c", "time_ms_median": 4.0, "status": "ok"}, {"row_id": "z", "time_ms_median": 9.0,
                                                                    "status": "ok"}]
    r = bench.compare(old, new)
    assert r["n"] == 3 and r["median"] == pytest.approx(0.01) and r["max"] == pytest.approx(0.05)
    assert bench.compare(old, []) == {"n": 0, "other_method": 0}


def test_a_row_timed_by_another_timer_is_not_a_repeat(bench):
    old = [{"row_id": "a", "time_ms_median": 0.0045, "timing_method": "cold"},
           {"row_id": "b", "time_ms_median": 0.0100, "timing_method": "cupti"}]
    new = [{"row_id": "a", "time_ms_median": 0.0023, "timing_method": "cupti", "status": "ok"},
           {"row_id": "b", "time_ms_median": 0.0101, "timing_method": "cupti", "status": "ok"}]
    r = bench.compare(old, new)  # a: 2.2 us of event pair, not a run-to-run difference
    assert r["n"] == 1 and r["median"] == pytest.approx(0.01) and r["other_method"] == 1
    assert bench.compare(old[:1], new[:1]) == {"n": 0, "other_method": 1}


def test_whole_flow_on_the_fake_backend(bench, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from measure_fakes import DoubleSuite, double_impl, no_features

    from kgpubench.measure.backends.registry import get_backend
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite

    suite = DoubleSuite(sizes=(16, 32, 64), blocks=(32, 64, 128))
    first = get_backend("fake", implementations={"double": double_impl}, time_ms=2.0)
    writer = ShardWriter(tmp_path / "shards" / "regular", "kernels")
    collect_suite(suite, first, writer, CollectOptions(), features=no_features)
    writer.close()
    # the same 9 configurations, 1 % slower on the second pass
    again = get_backend("fake", implementations={"double": double_impl}, time_ms=2.02)
    report = bench.run_repeat(again, tmp_path / "shards", tmp_path / "repeat", count=5,
                              suites={"regular": suite})
    assert report["suites"]["regular"]["n"] == 5 and report["all"]["median"] == pytest.approx(0.01)
    repeated = pq.read_table(next((tmp_path / "repeat" / "regular").glob("*.parquet")))
    assert repeated.num_rows == 5 and isinstance(repeated, pa.Table)
