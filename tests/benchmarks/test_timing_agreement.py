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
