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
    assert all_pass["per_timer"] == {"events": {"measured": 11, "passed": 4, "errors": 0, "impossible": 0},
                                     "cupti": {"measured": 11, "passed": 11, "errors": 0, "impossible": 0}}
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


def test_cupti_timers_are_only_paired_with_the_read_flush(bench):
    assert bench._variants(["write", "read"], ["events", "cupti", "cupti-drained"]) == [
        ("write", "events"), ("read", "events"), ("read", "cupti"), ("read", "cupti-drained")]


def _same(longer):
    return {"samples": 100, "cupti_median_us": 9.0, "events_median_us": 11.0, "events_minus_cupti_median_us": 2.0,
            "cupti_longer": longer, "cupti_longer_max_us": 0.3 if longer else 0.0, "flush_gap_median_us": 1.1}


def test_a_cupti_timer_with_a_sample_longer_than_its_own_event_pair_is_not_proven(bench):
    clean = [{**r, "same_samples": _same(0)} for r in _flushed("cupti", [True] * 6)]
    assert bench.choose_cold_timer(clean, ["cupti"]) == {
        "timer": "cupti", "proven": True, "minimum": 5,
        "per_timer": {"cupti": {"measured": 6, "passed": 6, "errors": 0, "impossible": 0}}}
    one_bad = clean[:-1] + [{**clean[-1], "same_samples": _same(3)}]  # within target, yet 3 impossible samples
    got = bench.choose_cold_timer(one_bad, ["cupti"])
    assert not got["proven"] and got["per_timer"]["cupti"]["impossible"] == 3
    # the drained timer competes as a timer of its own
    both = one_bad + [{**r, "timer": "cupti-drained"} for r in clean]
    got = bench.choose_cold_timer(both, ["events", "cupti", "cupti-drained"])
    assert (got["timer"], got["proven"]) == ("cupti", False)  # a tie on passes goes to the earlier timer
    got = bench.choose_cold_timer(both[:5] + both[6:], ["events", "cupti", "cupti-drained"])
    assert (got["timer"], got["proven"]) == ("cupti-drained", True)


def _row(name, timer, ours, ncu):
    return {"name": name, "suite": "regular", "l2_policy": "flushed", "flush": "read", "timer": timer,
            "ours_us": ours, "ncu_us": ncu, "pass": None}


def test_the_empty_kernel_offset_explains_a_constant_shortfall_and_not_an_excess(bench):
    # constructed readings: ncu reads 1.5 us for the empty kernel, cupti's floor 0.6 us, so ncu's interval holds
    # 0.9 us that cupti's span does not; two picks read that much below ncu, one 0.4 us below, one 16 us above
    rows = [{"name": "empty kernel (floor, flush read, timer cupti)", "floor": True, "l2_policy": "flushed",
             "flush": "read", "timer": "cupti", "ours_us": 0.6},
            {"name": "empty kernel (floor, flush read, timer events)", "floor": True, "l2_policy": "flushed",
             "flush": "read", "timer": "events", "ours_us": 3.6},
            {"name": "empty kernel (floor, flush write, timer events)", "floor": True, "l2_policy": "flushed",
             "flush": "write", "timer": "events", "ours_us": 9.9},
            _row("a", "cupti", 1.4, 2.3), _row("b", "cupti", 101.3, 102.2), _row("c", "cupti", 101.8, 102.2),
            _row("d", "cupti", 251.9, 235.9), _row("a", "events", 4.5, 2.3)]
    empty = bench.empty_kernel_offsets([r for r in rows if r["flush"] == "read"], 1.5)
    assert empty["ncu_us"] == 1.5 and empty["floor_us"] == {"cupti": 0.6, "events": 3.6}
    assert empty["offset_us"] == pytest.approx({"cupti": 0.9, "events": -2.1})
    checks = bench.offset_check(rows, empty["offset_us"])
    assert list(checks) == ["cupti"]  # the event pair's offset is no clock's: not checked
    c = checks["cupti"]
    assert [p["name"] for p in c["picks"]] == ["a", "b", "c", "d"]
    assert [p["equals_offset"] for p in c["picks"]] == [True, True, False, False]
    assert [p["pass_with_offset"] for p in c["picks"]] == [True, True, True, False]
    assert (c["measured"], c["short"], c["equal_to_offset"], c["pass_with_offset"]) == (4, 3, 2, 3)
    lines = bench.offset_lines(empty, checks)
    assert lines[0] == ("empty kernel: ncu 1.500 us; cupti floor 0.600 us (ncu - floor +0.900 us); events floor "
                        "3.600 us (ncu - floor -2.100 us)")
    assert lines[1] == ("cupti: ncu - ours equals ncu's empty-kernel offset (+0.900 us, within 0.25 us) on 2 of 4 "
                        "flushed picks (3 read below ncu); with the offset added 3 of 4 would be within target")
    assert bench.offset_check(rows, {}) == {}  # no ncu reading of the empty kernel: nothing to check
    assert bench.offset_lines(bench.empty_kernel_offsets(rows, None), {}) == [
        "empty kernel: no ncu reference (see its error row)"]


def test_same_samples_line_says_both_medians_the_impossible_count_and_the_flush_gap(bench):
    line = bench.same_samples_line(_same(2))
    assert line == ("    same samples (100): cupti 9.000 us, their event pairs 11.000 us (events - cupti +2.000 us); "
                    "cupti longer than its own event pair: 2 (max +0.300 us); flush end to unit start 1.100 us")
    assert bench.same_samples_line({"samples": 0}) == "    same samples: none recorded"


def test_a_cupti_timer_reads_the_same_samples_by_their_event_pairs_and_lets_go_after(bench, monkeypatch):
    """_time hands the backend a list for the sampler to fill, summarises it per unit, and takes it back."""
    import types

    from kgpubench.measure import runner
    from kgpubench.measure.backends.cupti_clock import PairedSample

    seen = []

    def fake_time_unit(backend, launch, *, l2_policy, divisor):
        seen.append(backend.cold_pairs)
        if backend.cold_pairs is not None:  # what CupySampler.collect appends for every CUPTI round
            backend.cold_pairs.extend([PairedSample(0.010, 0.0125, 0.001), PairedSample(0.012, 0.0118, 0.002),
                                       PairedSample(0.011, 0.0131, 0.003)])
        return types.SimpleNamespace(stats=types.SimpleNamespace(median=0.011 / divisor))

    monkeypatch.setattr(runner, "time_unit", fake_time_unit)
    cupti = types.SimpleNamespace(cold_timer="cupti-drained", cold_pairs=None)
    result, same = bench._time(cupti, lambda: None, "flushed", 2)
    assert isinstance(seen[0], list) and len(seen[0]) == 3  # the very list the summary was made from
    assert cupti.cold_pairs is None  # taken back: later (collection) samplers keep nothing
    assert same["samples"] == 3 and same["cupti_longer"] == 1
    assert same["cupti_median_us"] == pytest.approx(5.5) and same["events_median_us"] == pytest.approx(6.25)
    events = types.SimpleNamespace(cold_timer="events", cold_pairs=None)
    assert bench._time(events, lambda: None, "flushed", 1)[1] is None and seen[-1] is None
    warm = types.SimpleNamespace(cold_timer="cupti", cold_pairs=None)
    assert bench._time(warm, lambda: None, "warm", 1)[1] is None and seen[-1] is None  # no flush, no CUPTI


def test_the_proof_writes_same_samples_the_empty_kernel_offset_and_the_choice(bench, monkeypatch, tmp_path, capsys):
    """main() end to end with the GPU, CUPTI and ncu replaced by constructed readings (not measurements)."""
    import json
    import types

    from kgpubench.measure.backends import cupy_backend, registry

    device = types.SimpleNamespace(name="Fake GPU")
    monkeypatch.setattr(cupy_backend, "cupy_available", lambda: (True, ""))
    monkeypatch.setattr(bench.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(registry, "get_backend", lambda name, l2_flush, cold_timer: types.SimpleNamespace(
        cold_timer=cold_timer, device=lambda: device))
    picks = [p for p in bench.PICKS if p.suite == "regular"][:6]
    monkeypatch.setattr(bench, "PICKS", tuple(picks))
    monkeypatch.setattr(bench, "_policy", lambda pick: "flushed")
    monkeypatch.setattr(bench, "event_floor_us", lambda b: (3.6, None) if b.cold_timer == "events"
                        else (0.6, _same(0)))
    ref = {p.name: 10.0 + i for i, p in enumerate(picks)}
    ref[bench.EMPTY_NAME] = 1.5

    def ours(pick, b):  # events 2.3 us above ncu; cupti 0.9 below (one impossible sample); drained 0.1 below
        if b.cold_timer == "events":
            return ref[pick.name] + 2.3, "flushed", 1, "k", None
        if b.cold_timer == "cupti":
            return ref[pick.name] - 0.9, "flushed", 1, "k", _same(1 if pick is picks[-1] else 0)
        return ref[pick.name] - 0.1, "flushed", 1, "k", _same(0)

    monkeypatch.setattr(bench, "ours_us", ours)
    monkeypatch.setattr(bench, "ncu_us", lambda name, policy, kernel: ref[name])
    out, choice = tmp_path / "ta.json", tmp_path / "choice.json"
    monkeypatch.setattr(sys, "argv", ["timing_agreement.py", "--json", str(out), "--cold-timers",
                                      "events,cupti,cupti-drained", "--choose", str(choice)])
    assert bench.main() == 1  # the event timer misses every pick
    printed = capsys.readouterr().out
    got = json.loads(out.read_text())
    assert got["empty_kernel"] == {"ncu_us": 1.5, "floor_us": {"events": 3.6, "cupti": 0.6, "cupti-drained": 0.6},
                                   "offset_us": pytest.approx({"events": -2.1, "cupti": 0.9, "cupti-drained": 0.9})}
    assert set(got["offset"]) == {"cupti", "cupti-drained"}
    assert got["offset"]["cupti"]["equal_to_offset"] == 6 and got["offset"]["cupti"]["pass_with_offset"] == 6
    assert [got["offset"]["cupti-drained"][k] for k in ("short", "equal_to_offset", "pass_with_offset")] == [6, 0, 0]
    cupti_rows = [r for r in got["rows"] if r.get("timer") == "cupti" and "ncu_us" in r]
    assert len(cupti_rows) == 6 and all(r["same_samples"]["samples"] == 100 for r in cupti_rows)
    assert not any("same_samples" in r for r in got["rows"] if r.get("timer") == "events")
    assert json.loads(choice.read_text())["per_timer"] == {
        "events": {"measured": 6, "passed": 0, "errors": 0, "impossible": 0},
        "cupti": {"measured": 6, "passed": 0, "errors": 0, "impossible": 1},
        "cupti-drained": {"measured": 6, "passed": 6, "errors": 0, "impossible": 0}}
    assert json.loads(choice.read_text())["timer"] == "cupti-drained" and json.loads(choice.read_text())["proven"]
    assert "cold timer: cupti-drained (proven" in printed
    assert "empty kernel (ncu, --cache-control all)      ncu        1.500 us" in printed
    assert ("cupti: ncu - ours equals ncu's empty-kernel offset (+0.900 us, within 0.25 us) on 6 of 6 flushed "
            "picks (6 read below ncu); with the offset added 6 of 6 would be within target") in printed
    assert printed.count("    same samples (100): ") == 2 * 6 + 2  # every CUPTI row and floor
    assert [t["drained_minus_plain_us"] for t in got["flush_tail"]] == pytest.approx([0.8] * 6)
    assert f"flush tail {picks[0].name}: cupti 9.100 us, cupti-drained 9.900 us (+0.800 us), ncu 10.000 us" in printed


def test_the_flush_tail_sets_the_drained_timer_beside_the_plain_one(bench):
    # constructed readings: the drained timer brings the large kernel down to ncu, not the small one
    rows = [{**_row("big", "cupti", 251.8, 235.9), "same_samples": {**_same(0), "flush_gap_median_us": 1.2}},
            {**_row("big", "cupti-drained", 236.4, 235.9), "same_samples": {**_same(0), "flush_gap_median_us": 16.4}},
            _row("small", "cupti", 1.4, 2.3), _row("small", "cupti-drained", 1.4, 2.3),
            _row("only plain", "cupti", 5.0, 5.5), _row("big", "events", 238.5, 235.9)]
    tail = bench.flush_tail(rows)
    assert [t["name"] for t in tail] == ["big", "small"]  # picks timed by both CUPTI timers
    assert tail[0]["drained_minus_plain_us"] == pytest.approx(-15.4) and tail[0]["flush_gap_us"] == [1.2, 16.4]
    assert tail[1]["drained_minus_plain_us"] == 0.0 and tail[1]["flush_gap_us"] == [None, None]
    assert bench.flush_tail_lines(tail) == [
        "flush tail big: cupti 251.800 us, cupti-drained 236.400 us (-15.400 us), ncu 235.900 us; flush end to unit "
        "start 1.200 -> 16.400 us",
        "flush tail small: cupti 1.400 us, cupti-drained 1.400 us (+0.000 us), ncu 2.300 us; flush end to unit "
        "start - -> - us"]
    assert bench.flush_tail([r for r in rows if r["timer"] != "cupti-drained"]) == []
