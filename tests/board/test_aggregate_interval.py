"""A result's ``aggregate`` carries each score's 95 % interval, the one the board and ``evaluate``'s summary print;
the committed results carry it too (scripts/backfill_ci95.py) and stay reusable by ``leaderboard run --reuse``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from kgpubench.board.leaderboard import Job, baseline_files, results_dir, reusable_file
from kgpubench.board.ranking import interval
from kgpubench.models.evaluation import aggregate, fold_interval
from kgpubench.resources import default_data_dir
from kgpubench.results.records import Aggregate
from kgpubench.results.result import Result, read_record, round_floats
from kgpubench.sandbox.limits import Limits
from kgpubench.store.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _committed() -> list[tuple[Path, Result]]:
    out = []
    for path in sorted(results_dir().rglob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "task" not in data or "scheme" not in data or "aggregate" not in data:
            continue  # board tables (fewshot.json, goals.json, ...)
        record = read_record(data, where=str(path))
        if isinstance(record, Result) and record.status == "ok":
            out.append((path, record))
    return out


def test_the_interval_of_two_folds_by_hand():
    folds = {"b": {"scores": {"m": 3.0}}, "a": {"scores": {"m": 1.0, "n": None}}}
    agg = aggregate(folds)
    # two folds: the bootstrap means are 1, 2 or 3 (the pair drawn twice, or once each); 2.5 % and 97.5 %
    # quantiles of 2,000 such draws are the extremes 1 and 3
    assert agg["m"] == Aggregate(mean=2.0, std=1.0, median=2.0, folds=2, ci95=(1.0, 3.0))
    assert agg["n"] is None
    assert aggregate({"a": {"scores": {"m": 1.0}}})["m"].ci95 is None  # one fold: no interval


def test_every_committed_result_carries_the_interval_the_board_prints():
    results = _committed()
    assert len(results) > 300
    checked = 0
    for path, result in results:
        for metric, agg in result.aggregate.items():
            if agg is None:
                continue
            ci = interval(result, metric)
            want = None if ci is None else tuple(round_floats([ci[0], ci[1]]))
            assert agg.ci95 == want, (path, metric)
            checked += want is not None
    assert checked > 1000


def test_the_backfill_script_finds_nothing_left_to_do():
    spec = importlib.util.spec_from_file_location("backfill_ci95", ROOT / "scripts" / "backfill_ci95.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0
    data = {"task": "t", "scheme": "s", "folds": {"f0": {"scores": {"m": 1.0}}, "f1": {"scores": {"m": 2.0}}},
            "aggregate": {"m": {"mean": 1.5, "std": 0.5, "median": 1.5, "folds": 2}}}
    assert module.with_intervals(data)["aggregate"]["m"]["ci95"] == fold_interval(data["folds"], "m") == [1.0, 2.0]
    assert module.with_intervals({**data, "status": "failed"}) is None


@pytest.mark.parametrize("scheme", ["by-gpu", "random10"])
def test_committed_results_with_the_interval_are_still_reused(scheme):
    store = Store(default_data_dir())
    task = "npb-tpb"
    jobs = [Job(p, task, scheme) for p in baseline_files()
            if (results_dir() / task / scheme / f"{p.stem}.json").is_file()]
    assert len(jobs) >= 5
    for job in jobs:
        found = reusable_file(results_dir(), job, seed=0, threads=Limits().threads, store=store)
        assert found is not None and b'"ci95"' in found[1], job.name


def test_the_interval_written_at_run_time_is_the_one_the_board_recomputes_from_the_stored_scores():
    """A run's fold scores have more digits than the result file keeps: the interval is drawn from the stored
    (rounded) scores, else a new result's ci95 differed from the board's in the last digit (0.320425 vs 0.320424)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        folds = {f"f{i}": {"scores": {"m": float(rng.uniform(0.1, 0.9))}} for i in range(8)}
        written = round_floats(list(aggregate(folds)["m"].ci95))
        assert written == round_floats(fold_interval(round_floats(folds), "m"))
