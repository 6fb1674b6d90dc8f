"""The timing-agreement benchmark's CPU side: its picks exist in the sweeps, ncu's CSV parses, the target."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("timing_agreement", ROOT / "benchmarks" / "timing_agreement.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_at_least_twelve_picks_over_three_suites_each_one_case(bench):
    from kgpubench.measure.suites import load_suite

    assert len(bench.PICKS) >= 12 and {p.suite for p in bench.PICKS} >= {"regular", "power", "stencil"}
    names = [p.name for p in bench.PICKS]
    assert len(set(names)) == len(names)
    suites = {}
    for pick in bench.PICKS:
        suite = suites.setdefault(pick.suite, load_suite(pick.suite))
        matches = [c for c in suite.cases(quick=False, kernels=[pick.kernel])
                   if all(bench._lookup(c, k) == v for k, v in pick.match.items())]
        assert len(matches) >= 1, pick.name
        assert pick.find(suite) == matches[0]


def test_ncu_csv_parses_base_units_and_thousands(bench):
    text = ('==PROF== Connected to process 1\n'
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","9","python3","h","vadd","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","Command line profiler '
            'metrics","gpu__time_duration.sum","nsecond","1,504"\n'
            '"1","9","python3","h","vadd","1","13","(256, 1, 1)","(16, 1, 1)","0","9.0","Command line profiler '
            'metrics","gpu__time_duration.sum","usecond","2.5"\n')
    assert bench.parse_ncu_csv(text) == [1.504, 2.5]
    assert bench.parse_ncu_csv("no table here") == []


@pytest.mark.parametrize(("ours", "ncu", "ok"), [(10.29, 10.0, True), (10.31, 10.0, False), (1.4, 1.0, True),
                                                 (1.6, 1.0, False), (5.16, 5.0, False), (4.6, 4.9, True)])
def test_target(bench, ours, ncu, ok):
    assert bench.judge(ours, ncu) is ok


def _flushed(timer, passes, name="k"):
    return [{"name": f"{name}{i}", "l2_policy": "flushed", "timer": timer, "ncu_us": 10.0, "pass": p}
            for i, p in enumerate(passes)]


def test_the_cold_timer_with_most_kernels_within_target_is_chosen_and_proven_only_when_it_meets_all(bench):
    import json

    h200 = json.loads((ROOT / "benchmarks/results/h200-2026-11-26/call2_timing_agreement_flush_modes.json")
                      .read_text())["rows"]
    events = [{**r, "timer": "events"} for r in h200 if r.get("flush") == "read" and "ncu_us" in r]
    assert len(events) == 11 and sum(r["pass"] for r in events) == 4  # the H200's read flush, event pairs
    all_pass = bench.choose_cold_timer(events + _flushed("cupti", [True] * 11), ["events", "cupti"])
    assert (all_pass["timer"], all_pass["proven"]) == ("cupti", True)
    assert all_pass["per_timer"] == {"events": {"measured": 11, "passed": 4, "errors": 0},
                                     "cupti": {"measured": 11, "passed": 11, "errors": 0}}
    one_miss = bench.choose_cold_timer(events + _flushed("cupti", [True] * 10 + [False]), ["events", "cupti"])
    assert (one_miss["timer"], one_miss["proven"]) == ("cupti", False)
    tie = bench.choose_cold_timer(events + _flushed("cupti", [True] * 4 + [False] * 7), ["events", "cupti"])
    assert (tie["timer"], tie["proven"]) == ("events", False)


def test_a_timer_is_not_proven_on_too_few_kernels_or_with_errors(bench):
    few = bench.choose_cold_timer(_flushed("cupti", [True] * 4), ["cupti"])
    assert few["timer"] == "cupti" and not few["proven"]
    rows = _flushed("cupti", [True] * 6) + [{"name": "euclid", "timer": "cupti", "error": "LaunchFailed: ..."}]
    assert not bench.choose_cold_timer(rows, ["cupti"])["proven"]
    assert bench.choose_cold_timer(rows[:-1], ["cupti"])["proven"]
    warm = [{**r, "l2_policy": "warm"} for r in _flushed("cupti", [True] * 6)]  # warm picks prove no cold timer
    assert not bench.choose_cold_timer(warm, ["cupti"])["proven"]


def test_cupti_is_only_paired_with_the_read_flush(bench):
    assert bench._variants(["write", "read"], ["events", "cupti"]) == [
        ("write", "events"), ("read", "events"), ("read", "cupti")]
