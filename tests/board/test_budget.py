"""Tuning-budget curves (kgpubench.board.budget): the score by hand and against a brute-force enumeration, the
held-out GPU's rows never reach training, the committed autotune curve covers every GPU, and the board tables
(the budget extra and the autotune goal line, kgpubench.tasks.extras)."""

from __future__ import annotations

import importlib.util
import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from task_fixtures import autotune_table, make_store, programs_table

from kgpubench.board.budget import (
    budget_score,
    curve_from_orders,
    expected_random_best,
    model_curve,
    oracle_curve,
    plan_folds,
    plan_record,
)
from kgpubench.board.fewshot import judge
from kgpubench.board.render import render_markdown
from kgpubench.errors import OptionError
from kgpubench.resources import source_checkout
from kgpubench.tasks import Goal, get_task, goals_of
from kgpubench.tasks._core import problem_keys
from kgpubench.tasks.data import task_data
from kgpubench.tasks.extras import budget, goals, load_extras
from kgpubench.tasks.intervals import median_interval

ROOT = Path(__file__).resolve().parents[2]
BW = "gpu_memory_bandwidth_gbs"


def _brute_expected(times, n):
    """Mean over every n-subset of its minimum (exact rationals)."""
    subsets = list(itertools.combinations([Fraction(t) for t in times], n))
    return sum(min(s) for s in subsets) / len(subsets)


# ----- the score ---------------------------------------------------------------------------------------------------
def test_expected_random_best_by_hand():
    t = [1, 2, 3, 4]
    # best of 1: the mean; of 2: the 6 pairs' minima (1,1,1,2,2,3); of 3: the 4 triples' (1,1,1,2); of 4: 1
    assert expected_random_best(t, 1) == pytest.approx(2.5)
    assert expected_random_best(t, 2) == pytest.approx((1 * 3 + 2 * 2 + 3 * 1) / 6)
    assert expected_random_best(t, 3) == pytest.approx((1 * 3 + 2 * 1) / 4)
    assert expected_random_best(t, 4) == 1.0 and expected_random_best(t, 100) == 1.0
    assert expected_random_best([4, 1, 3, 2], 2) == pytest.approx(10 / 6)  # order does not matter
    with pytest.raises(OptionError, match="at least one time"):
        expected_random_best([], 1)


def test_expected_random_best_against_enumeration():
    rng = np.random.default_rng(0)
    cases = [rng.integers(1, 6, size=n).astype(float) for n in (1, 3, 5, 8)]  # with ties
    cases += [rng.lognormal(size=n) for n in (2, 6, 9)]
    for times in cases:
        for n in range(1, len(times) + 1):
            assert expected_random_best(times, n) == pytest.approx(float(_brute_expected(times, n)), rel=1e-12)


def test_the_score_oracle_worst_random_and_degenerate():
    t = np.array([3.0, 1.0, 4.0, 2.0])
    best_first, worst_first = np.argsort(t), np.argsort(-t)
    assert [budget_score(t, best_first, n) for n in (1, 2, 3)] == [1.0, 1.0, 1.0]
    # worst order: best of 1 = 4, E_1 = 2.5 -> (2.5 - 4) / (2.5 - 1) = -1; best of 2 = 3, E_2 = 5/3 -> -2
    assert budget_score(t, worst_first, 1) == pytest.approx(-1.0)
    assert budget_score(t, worst_first, 2) == pytest.approx((5 / 3 - 3) / (5 / 3 - 1)) == pytest.approx(-2.0)
    # N >= n, or every time equal: nothing to gain, undefined
    assert budget_score(t, worst_first, 4) is None and budget_score(t, best_first, 5) is None
    assert budget_score([2.0, 2.0, 2.0], [2, 1, 0], 1) is None
    # random search scores 0 in expectation: the mean over every order of the score is 0 (it is linear in t_N)
    times = np.array([5.0, 1.5, 2.0, 9.0, 2.0])
    for n in (1, 2, 3, 4):
        scores = [budget_score(times, np.array(p), n) for p in itertools.permutations(range(5))]
        assert np.mean(scores) == pytest.approx(0.0, abs=1e-12)


def test_median_interval_is_fixed_and_brackets_the_median():
    vals = [0.1, 0.5, 0.9, 0.2, 0.7]
    lo, hi = median_interval(vals)
    assert lo <= float(np.median(vals)) <= hi and median_interval(vals) == (lo, hi)
    assert median_interval([0.3]) is None and median_interval([0.3, None]) is None


# ----- the plan and the curves -------------------------------------------------------------------------------------
def _data():
    return task_data("autotune-config", "by-gpu", table=autotune_table())


class ConfigMean:
    """Predicts the mean training time, relative to its GPU's best, of the test row's configuration."""

    seen: list = []

    def fit(self, X, y):
        key = list(zip(X["kernel"], X["param.block_size_x"], X["param.tile"]))
        gpu = X[BW].to_numpy()
        best = {(g, k[0]): min(v for v, gg, kk in zip(y, gpu, key) if gg == g and kk[0] == k[0])
                for g, k in zip(gpu, key)}
        rel: dict = {}
        for v, g, k in zip(y, gpu, key):
            rel.setdefault(k, []).append(v / best[(g, k[0])])
        self.mean = {k: float(np.mean(v)) for k, v in rel.items()}
        type(self).seen.append(X.copy())
        return self

    def predict(self, X):
        return np.array([self.mean[k] for k in zip(X["kernel"], X["param.block_size_x"], X["param.tile"])])


def test_the_held_out_gpus_rows_never_reach_training():
    data = _data()
    plans = plan_folds(data)
    ids = np.asarray(data.rows["row_id"].to_pylist(), dtype=object)
    gpus = np.asarray(data.rows["gpu_name"].to_pylist(), dtype=object)
    assert [p.fold for p in plans] == ["GPU A", "GPU B", "GPU C"]
    for p in plans:
        held = set(ids[gpus == p.fold])
        assert set(ids[p.test]) == held and len(held) == 24  # every row of the held-out GPU is ordered
        assert not set(ids[p.train]) & held and set(ids[p.train]) | held == set(ids)
    ConfigMean.seen.clear()
    model_curve(data, lambda task, seed: ConfigMean(), plans, (1, 5), model_name="mean")
    for p, fit in zip(plans, ConfigMean.seen):
        assert len(fit) == p.train.size == 48
        assert fit.equals(data.X.iloc[p.train].reset_index(drop=True))  # exactly the training rows, by position
        assert float(data.X[BW].iloc[p.test[0]]) not in set(fit[BW])
    rec = plan_record(data, plans, (1, 5))
    assert {g: (r["train_rows"], r["test_rows"], r["problems"]) for g, r in rec["gpus"].items()} == dict.fromkeys(
        ("GPU A", "GPU B", "GPU C"), (48, 24, 2))


def test_the_curves_by_hand():
    data = _data()
    plans = plan_folds(data)
    # every GPU's times are one profile scaled by its bandwidth: the other GPUs' relative times order it exactly
    learned = model_curve(data, lambda task, seed: ConfigMean(), plans, (1, 5, 12), model_name="mean")
    oracle = oracle_curve(data, plans, (1, 5, 12))
    for curve in (learned, oracle):
        assert {n: s["median"] for n, s in curve["summary"].items()} == {"1": 1.0, "5": 1.0, "12": None}
        assert all(f["problems_scored"] == {"1": 2, "5": 2, "12": 0} for f in curve["folds"].values())
    # the reversed oracle: per problem the worst-first score, by budget_score, averaged over the two problems
    worst = curve_from_orders(data, plans, lambda p: -data.y[p.test], (1, 5))
    keys = problem_keys(data.task, data.rows)
    for p in plans:
        by_hand = []
        for k in sorted(set(keys[p.test])):
            idx = p.test[keys[p.test] == k]
            by_hand.append(budget_score(data.y[idx], np.argsort(-data.y[idx], kind="mergesort"), 1))
        assert worst["folds"][p.fold]["scores"]["1"] == pytest.approx(np.mean(by_hand))
        assert worst["folds"][p.fold]["scores"]["1"] < 0
    assert worst["summary"]["1"]["gpus"] == 3 and worst["summary"]["1"]["interval"] is not None


def test_only_a_leave_one_gpu_out_recommendation_scheme_is_planned():
    with pytest.raises(OptionError, match="leave-one-GPU-out scheme.*'random10'"):
        plan_folds(task_data("autotune-config", "random10", table=autotune_table()))
    with pytest.raises(OptionError, match="recommendation task"):
        plan_folds(task_data("program-time", "by-gpu", table=programs_table()))


def test_the_script_writes_the_curves(tmp_path):
    spec = importlib.util.spec_from_file_location("budget_curves", ROOT / "scripts" / "budget_curves.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    make_store(tmp_path / "store", autotune_table())
    out = tmp_path / "budget.json"
    assert script.main(["--data", str(tmp_path / "store"), "--task", "autotune-config", "--models", "transfer",
                        "--budgets", "1,5", "--results", str(tmp_path / "none"), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["strategies"]) == {"oracle", "random", "transfer"} and doc["strategies"]["random"] == {
        "by_construction": 0.0}
    # transfer orders by the nearest GPU's relative times: the same profile, the optimum first
    assert doc["strategies"]["transfer"]["summary"]["1"]["median"] == 1.0
    assert sorted(doc["strategies"]["transfer"]["folds"]) == ["GPU A", "GPU B", "GPU C"]
    assert doc["models"]["transfer"]["file"] == "baselines/transfer.py" and doc["plan"]["budgets"] == [1, 5]
    # a committed board result of another model file is refused: the curve would not be the board's model
    board = tmp_path / "results" / "autotune-config" / "by-gpu"
    board.mkdir(parents=True)
    (board / "transfer.json").write_text(json.dumps({"status": "ok", "kind": "model", "model_sha256": "0" * 64}))
    with pytest.raises(OptionError, match="differs from the committed board result"):
        script.main(["--data", str(tmp_path / "store"), "--task", "autotune-config", "--budgets", "1",
                     "--results", str(tmp_path / "results")])


# ----- the committed curve and goal on the shipped data --------------------------------------------------------------
def _committed(name: str) -> dict:
    path = source_checkout() / "leaderboard" / "results" / "autotune-config" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"no committed {path.name} in this checkout")
    return json.loads(path.read_text())


def test_the_shipped_autotune_data_gives_a_curve_for_every_gpu():
    doc = _committed("budget")
    board = _committed("by-gpu/lgbm")
    gpus = sorted(board["folds"])
    assert len(gpus) == 8 and sorted(doc["plan"]["gpus"]) == gpus
    assert doc["plan"]["dataset"]["rows_sha256"] == board["dataset"]["rows_sha256"]  # the board's rows
    learned = sorted(p.stem for p in (source_checkout() / "leaderboard" / "results" / "autotune-config" / "by-gpu")
                     .glob("*.json") if json.loads(p.read_text()).get("kind") == "model")
    assert sorted(doc["models"]) == learned and "transfer" in learned
    for name in [*learned, "oracle"]:
        curve = doc["strategies"][name]
        assert sorted(curve["folds"]) == gpus
        for gpu, fold in curve["folds"].items():
            assert fold["n_train"] == board["folds"][gpu]["n_train"]  # trained as on the board
            assert all(fold["scores"][str(n)] is not None for n in doc["plan"]["budgets"]), (name, gpu)
        assert all(s["gpus"] == 8 for s in curve["summary"].values())
    assert all(s["median"] == 1.0 for s in doc["strategies"]["oracle"]["summary"].values())
    table = budget(doc)
    assert table.header == ("strategy", "N = 1", "N = 5", "N = 20", "N = 100")
    assert table.rows[0][0] == "oracle" and table.rows[-1] == ("random", *["0 (by construction)"] * 4)


def test_the_budget_table_by_hand():
    doc = {"plan": {"scheme": "by-gpu", "budgets": [1, 20], "problem_columns": ["kernel"], "gpus": {"A": {}, "B": {}}},
           "strategies": {"random": {"by_construction": 0.0},
                          "oracle": {"summary": {"1": {"median": 1.0, "interval": [1.0, 1.0]},
                                                 "20": {"median": 1.0, "interval": [1.0, 1.0]}}},
                          "knn": {"summary": {"1": {"median": 0.5, "interval": None}, "20": {"median": None}}},
                          "lgbm": {"summary": {"1": {"median": 0.8123, "interval": [0.6, 0.9]},
                                               "20": {"median": -0.25, "interval": [-1.5, 0.5]}}}}}
    table = budget(doc)
    assert table.rows == (("oracle", "1.00 [1.00, 1.00]", "1.00 [1.00, 1.00]"),
                          ("lgbm", "0.81 [0.60, 0.90]", "-0.25 [-1.50, 0.50]"), ("knn", "0.50", "—"),
                          ("random", "0 (by construction)", "0 (by construction)"))
    assert "2 GPUs held out in turn" in table.note


def test_the_autotune_goal_is_judged_on_the_median_and_against_transfer():
    (goal,) = goals_of("autotune-config")
    assert (goal.metric, goal.percent, goal.over, goal.beats, goal.target_pct) == (
        "top1_regret", 100.0, "median", "transfer", 10.0)
    per_model = {"transfer": {"g1": 8.0, "g2": 30.0, "g3": 20.0},
                 "a": {"g1": 1.0, "g2": 2.0, "g3": 40.0},   # median 2, loses to transfer on g3
                 "b": {"g1": 7.0, "g2": 9.0, "g3": 19.0}}   # median 9, beats transfer everywhere: met
    rec = judge(goal, per_model)
    assert (rec["best_model"], rec["median"], rec["met"], rec["losses"]) == ("b", 9.0, True, [])
    del per_model["b"]
    rec = judge(goal, per_model)
    assert (rec["best_model"], rec["median"], rec["met"], rec["losses"]) == ("a", 2.0, False, ["g3"])
    assert rec["baseline_figures"] == per_model["transfer"]
    # an "each" goal keeps its record as before (no median keys)
    each = judge(Goal("each", "by-gpu", 10.0), {"a": {"g1": 5.0}})
    assert "median" not in each and each["met"] is True
    # the task's own goal section states the same target
    from kgpubench.tasks.definitions import UNSEEN_GPU_GOAL

    assert UNSEEN_GPU_GOAL.regret * goal.percent == pytest.approx(goal.target_pct)


def test_the_goal_line_renders_on_the_board(tmp_path):
    doc = _committed("goals")
    (rec,) = doc["goals"]
    assert rec["best_model"] != "transfer" and rec["beats"] == "transfer" and rec["over"] == "median"
    task = get_task("autotune-config")
    assert task.extras == ("budget", "fewshot", "goals")
    for name, d in (("budget", _committed("budget")), ("goals", doc)):
        path = tmp_path / task.name / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(d))
    tables = load_extras(task, tmp_path)
    assert [t.title for t in tables] == ["Tuning-budget curves on an unseen GPU", "fewshot", "Goals"]  # no file
    text = render_markdown([], [task], {task.name: tables})
    line = next(row for row in text.splitlines() if row.startswith(f"| {rec['goal']} |"))
    verdict = "met" if rec["met"] else ("not met: " + rec["why"] if rec.get("why") else "not met")
    assert line.startswith(f"| {rec['goal']} | median ≤ 10.0 % over 8, below transfer on each | {rec['best_model']} | "
                           f"median {rec['median']:.1f}") and line.endswith(f" | {verdict} |")
    if rec["losses"]:
        assert f"median {rec['median']:.1f}, loses to transfer on {len(rec['losses'])} of 8; " in line
    assert "its figures (top1_regret, %)" in text
    assert "| strategy | N = 1 | N = 5 | N = 20 | N = 100 |" in text


def test_an_each_goal_table_keeps_its_old_header():
    g = goals({"goals": [{"goal": "x", "target_pct": 15.0, "need": 1, "groups": 1, "best_model": "m",
                          "figures": {"H": 1.0}, "met": True}]})
    assert g.header[3] == "its figures (median APE %)" and "median over the groups" not in g.note


def test_the_site_draws_the_budget_curves_under_the_table(tmp_path):
    from kgpubench.board.site import write_site
    from kgpubench.board.site.check import check_site, parse_page

    task = get_task("autotune-config")
    doc = {"plan": {"scheme": "by-gpu", "budgets": [1, 5, 20], "problem_columns": ["kernel"], "gpus": {"A": {}}},
           "strategies": {"random": {"by_construction": 0.0},
                          "oracle": {"summary": {n: {"median": 1.0, "interval": None} for n in ("1", "5", "20")}},
                          "lgbm": {"summary": {"1": {"median": 0.5}, "5": {"median": None}, "20": {"median": 0.9}}}}}
    path = tmp_path / "results" / task.name / "budget.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    tables = load_extras(task, tmp_path / "results")
    plot = tables[0].plot
    assert plot.file == "plots/autotune-config--budget.svg"
    assert plot.series == (("oracle", ((1.0, 1.0), (5.0, 1.0), (20.0, 1.0))), ("lgbm", ((1.0, 0.5), (20.0, 0.9))))
    board = tmp_path / "board"
    write_site([], board, [task], {task.name: tables})
    assert (board / plot.file).read_text().lstrip().startswith(("<?xml", "<svg"))
    page = parse_page((board / "task-autotune-config.html").read_text())
    assert (plot.file, plot.title) in page.images
    assert check_site(board, min_tables={}) == []
