"""Few-shot curves (kgpubench.board.fewshot): no held-out row reaches training, the revealed rows are the same for every
model, a hand-computed score at k rows, the goals' judgement, and the board tables (kgpubench.tasks.extras)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from task_fixtures import programs_table

from kgpubench.board.fewshot import fewshot_curve, judge, plan_folds, plan_record
from kgpubench.errors import OptionError
from kgpubench.tasks.data import task_data
from kgpubench.tasks.extras import fewshot, goals
from kgpubench.tasks.goals import Goal
from kgpubench.tasks.intervals import median_interval
from kgpubench.tasks.metrics import mdape

KS = (0, 2, 4)
BW = "gpu_memory_bandwidth_gbs"


class GpuMean:
    """Predicts the mean training target of the rows with the test row's GPU (by bandwidth), else the mean of all."""

    seen: list = []

    def fit(self, X, y):
        self.means = {b: float(np.mean(y[X[BW].to_numpy() == b])) for b in np.unique(X[BW].to_numpy())}
        self.all = float(np.mean(y))
        type(self).seen.append(X.copy())
        return self

    def predict(self, X):
        return np.array([self.means.get(b, self.all) for b in X[BW].to_numpy()])


class Spy(GpuMean):
    seen: list = []

    def predict(self, X):
        type(self).seen.append(("test", X.copy()))
        return np.full(len(X), self.all)


def _data():
    return task_data("program-time", "by-gpu", table=programs_table())


def test_no_scored_row_is_a_training_row_and_every_scored_row_is_the_held_out_gpus():
    data = _data()
    plans, skipped = plan_folds(data, KS, min_test_rows=4)
    assert skipped == {} and [p.fold for p in plans] == ["GPU A", "GPU B", "GPU C"]
    ids = np.asarray(data.rows["row_id"].to_pylist(), dtype=object)
    gpus = np.asarray(data.rows["gpu_name"].to_pylist(), dtype=object)
    for p in plans:
        assert p.test.size == 12 - max(KS) and set(gpus[p.test]) == {p.fold}
        for k in KS:
            train = p.train(k)
            assert not set(ids[train]) & set(ids[p.test])
            assert int(np.sum(gpus[train] == p.fold)) == k  # only the k revealed rows of the held-out GPU
    # the models see the same: k held-out rows in training, the scored rows in predict
    Spy.seen.clear()
    fewshot_curve(data, lambda task, seed: Spy(), plans[:1], (0, 3), model_name="spy")
    bw_a = 320.0
    fits = [x for x in Spy.seen if not isinstance(x, tuple)]
    tests = [x[1] for x in Spy.seen if isinstance(x, tuple)]
    assert [int(np.sum(f[BW] == bw_a)) for f in fits] == [0, 3] and len(fits[0]) == 24
    assert all(len(t) == 8 and set(t[BW]) == {bw_a} for t in tests)


def test_the_revealed_rows_are_the_same_for_every_model():
    data = _data()
    plans, _ = plan_folds(data, KS, min_test_rows=4)
    GpuMean.seen.clear()
    Spy.seen.clear()
    fewshot_curve(data, lambda task, seed: GpuMean(), plans, (4,), model_name="mean")
    fewshot_curve(data, lambda task, seed: Spy(), plans, (4,), model_name="spy")
    fits_a = GpuMean.seen
    fits_b = [x for x in Spy.seen if not isinstance(x, tuple)]
    for fa, fb, p in zip(fits_a, fits_b, plans):
        bw = float(data.X[BW].iloc[p.test[0]])
        assert fa[fa[BW] == bw].equals(fb[fb[BW] == bw]) and int(np.sum(fa[BW] == bw)) == 4
    # and a new plan (another run, another model) reveals the same rows: the hashes in the record agree
    again, _ = plan_folds(_data(), KS, min_test_rows=4)
    rec1 = plan_record(data, plans, {}, KS, max_train_rows=None, max_test_rows=None)
    rec2 = plan_record(data, again, {}, KS, max_train_rows=None, max_test_rows=None)
    assert rec1["gpus"] == rec2["gpus"] and len({g["revealed_sha256"] for g in rec1["gpus"].values()}) == 3


def test_the_score_at_k_rows_by_hand():
    data = _data()
    plans, _ = plan_folds(data, KS, min_test_rows=4)
    curve = fewshot_curve(data, lambda task, seed: GpuMean(), plans, KS, model_name="mean")
    # By hand: GPU B's rows in the order sha256("program-time-fewshot" \x1f row_id); the scored rows are those
    # after the first 4; at k=0 the model predicts the mean of GPU A's and C's rows, at k the mean of the first k.
    rows = data.rows.to_pylist()
    b = [r for r in rows if r["gpu_name"] == "GPU B"]
    b.sort(key=lambda r: hashlib.sha256(f"program-time-fewshot\x1f{r['row_id']}".encode()).digest()[:8])
    y_test = np.array([r["time_ms_mean"] for r in b[4:]])
    others = np.mean([r["time_ms_mean"] for r in rows if r["gpu_name"] != "GPU B"])
    assert curve["0"]["folds"]["GPU B"]["scores"]["mdape"] == pytest.approx(mdape(y_test, np.full(8, others)))
    for k in (2, 4):
        guess = np.mean([r["time_ms_mean"] for r in b[:k]])
        rec = curve[str(k)]["folds"]["GPU B"]
        assert rec["scores"]["mdape"] == pytest.approx(mdape(y_test, np.full(8, guess)))
        assert (rec["n_train"], rec["n_revealed"], rec["n_test"]) == (24 + k, k, 8)
    meds = [curve["2"]["folds"][g]["scores"]["male"] for g in ("GPU A", "GPU B", "GPU C")]
    assert curve["2"]["median"]["male"] == pytest.approx(float(np.median(meds)))
    # its 95 % interval: the GPUs resampled (the board's one bootstrap), inside the range of the GPUs' figures
    lo, hi = curve["2"]["interval"]["male"]
    assert [lo, hi] == pytest.approx(list(median_interval(meds)))
    assert min(meds) <= lo <= curve["2"]["median"]["male"] <= hi <= max(meds) and lo < hi
    # a test cap keeps the first rows after the revealed ones, in the same hashed order
    capped, _ = plan_folds(data, KS, min_test_rows=4, max_test_rows=3)
    ids = data.rows["row_id"].to_pylist()
    assert sorted(ids[i] for i in capped[1].test) == sorted(r["row_id"] for r in b[4:7])


def test_small_gpus_are_skipped_and_a_scheme_that_is_not_leave_one_gpu_out_is_refused():
    data = _data()
    plans, skipped = plan_folds(data, (0, 5), min_test_rows=20)
    assert plans == [] and skipped["GPU A"] == "12 rows, fewer than max(k) + 20 = 25"
    with pytest.raises(OptionError, match="leave-one-GPU-out scheme.*'random10'"):
        plan_folds(task_data("program-time", "random10", table=programs_table()), KS)


def test_a_goal_is_judged_on_the_best_model():
    goal = Goal("per-GPU median APE", "by-gpu", 10.0, at_least=2)
    rec = judge(goal, {"a": {"g1": 5.0, "g2": 12.0, "g3": 30.0}, "b": {"g1": 9.0, "g2": 9.5, "g3": 50.0}})
    assert (rec["best_model"], rec["groups_met"], rec["need"], rec["met"]) == ("b", 2, 2, True)
    named = Goal("H100 and L4", "by-gpu", 15.0, groups=("H100", "L4"))
    rec = judge(named, {"a": {"H100": 14.0}})  # L4 missing: not met, whatever the figure
    assert rec["missing"] == ["L4"] and rec["met"] is False


def test_the_board_tables_by_hand():
    doc = {"metric": "male", "plan": {"scheme": "by-gpu", "train_rule": {"cap": 20000},
                                      "test_rule": {"scored": "the rest", "max_test_rows": 1000},
                                      "skipped": {"GPU Z": "3 rows"}},
           "models": {"median": {"0": {"median": {"male": 0.91234, "mdape": 55.5}, "folds": {"A": {}, "B": {}}},
                                 "20": {"median": {"male": 0.5, "mdape": None}, "folds": {"A": {}}}}}}
    table = fewshot(doc)
    assert table.header[2] == "male (median over GPUs [95 % interval])"
    assert table.rows == (("median", "0", "0.912", "55.5", "2"), ("median", "20", "0.5", "—", "1"))  # no scores
    scored = {"A": {"scores": {"male": 0.2}}, "B": {"scores": {"male": 0.4}}, "C": {"scores": {"male": 0.9}},
              "D": {}}  # D: a skipped GPU, no figure
    doc["models"]["median"]["0"]["folds"] = scored
    lo, hi = median_interval([0.2, 0.4, 0.9])
    assert lo <= 0.4 <= hi and (lo, hi) != (0.4, 0.4)
    assert fewshot(doc).rows[0][2] == f"0.912 [{lo:.3g}, {hi:.3g}]"  # the recorded median, the GPUs' interval
    assert "at most 20000" in table.note and "GPU Z (3 rows)" in table.note
    g = goals({"goals": [{"goal": "H100 and L4", "target_pct": 15.0, "need": 2, "groups": 2, "best_model": "lgbm",
                          "figures": {"H100": 14.04, "L4": 16.0}, "met": False}], "note": "n."})
    assert g.rows == (("H100 and L4", "≤ 15.0 % on 2 of 2", "lgbm", "H100 14.0, L4 16.0", "—", "not met"),)


def test_the_script_writes_the_curves_and_the_goals_from_the_board_results(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    from task_fixtures import make_store

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("fewshot_curves", root / "scripts" / "fewshot_curves.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    make_store(tmp_path / "store", programs_table())
    board = tmp_path / "results" / "program-time" / "by-gpu"
    board.mkdir(parents=True)
    folds = {"NVIDIA H100 80GB HBM3": 14.0, "NVIDIA H100 PCIe": 9.0, "NVIDIA L4": 15.0, "Tesla T4": 90.0}
    where = {"task": "program-time", "scheme": "by-gpu"}  # a board result names its task and scheme
    (board / "good.json").write_text(json.dumps({**where, "status": "ok", "kind": "model", "folds": {
        g: {"scores": {"mdape": v}} for g, v in folds.items()}}))
    (board / "oracle.json").write_text(json.dumps({**where, "status": "ok", "kind": "reference", "folds": {
        g: {"scores": {"mdape": 0.0}} for g in folds}}))
    out, goals_out = tmp_path / "fewshot.json", tmp_path / "goals.json"
    assert script.main(["--data", str(tmp_path / "store"), "--task", "program-time", "--models", "median",
                        "--ks", "0,2", "--min-test-rows", "4", "--max-test-rows", "5", "--out", str(out),
                        "--goals-out", str(goals_out), "--results", str(tmp_path / "results")]) == 0
    doc = json.loads(out.read_text())
    assert doc["plan"]["gpus"]["GPU A"] == {**doc["plan"]["gpus"]["GPU A"], "held_rows": 12, "other_rows": 24,
                                            "test_rows": 5}
    assert sorted(doc["models"]["median"]) == ["0", "2"] and len(doc["models"]["median"]["2"]["folds"]) == 3
    goal, *sized = json.loads(goals_out.read_text())["goals"]
    assert goal["best_model"] == "good" and goal["met"] is True and "oracle" not in goal["per_model"]
    assert goal["figures"] == {"NVIDIA H100 80GB HBM3": 14.0, "NVIDIA H100 PCIe": 9.0, "NVIDIA L4": 15.0}
    # the small / large program lines are computed from predictions: the synthetic store has none of their GPUs,
    # so no fold is run for them and each says so (every group counted 0, missing, not met)
    assert len(sized) == 2
    for rec in sized:
        assert rec["rows"] == dict.fromkeys(goal["figures"], 0) and rec["figures"] == {} and rec["met"] is False


def test_grouped_median_ape_keeps_the_where_rows_and_groups_them():
    import pyarrow as pa

    from kgpubench.tasks.goals import grouped_mdape

    rows = pa.table({"gpu_name": ["H", "H", "H", "L"], "operator": ["bmm", "bmm", "linear", "bmm"]})
    y = np.array([1.0, 2.0, 4.0, 10.0])
    p = np.array([1.1, 1.0, 5.0, 10.0])  # APE 10 %, 50 %, 25 %, 0 %
    goal = Goal("H100 bmm, linear", "neusight", 15.0, source="predict", groups=("bmm", "linear"),
                group_by="operator", where=(("gpu_name", ("H",)),))
    assert grouped_mdape(rows, y, p, goal) == {"bmm": pytest.approx(30.0), "linear": pytest.approx(25.0)}
    per_gpu = Goal("per GPU", "neusight", 10.0, source="predict")
    assert grouped_mdape(rows, y, p, per_gpu) == {"H": pytest.approx(25.0), "L": 0.0}
