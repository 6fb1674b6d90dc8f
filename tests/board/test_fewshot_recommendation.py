"""Few-shot curves of a recommendation task (kgpubench.board.fewshot on autotune-config): a revealed row is one
configuration measured on the held-out GPU; the GPU is scored on all its rows (whole problems) at every k; its
unrevealed rows never reach training; the revealed rows are the same for every model; k = 0 is the board's
leave-one-GPU-out protocol; the board table and plot; the committed curves cover every GPU and k."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import numpy as np
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import fewshot as F
from kgpubench.board.fewshot import fewshot_curve, kept_metrics, plan_folds, plan_record
from kgpubench.errors import OptionError
from kgpubench.models.evaluation import load_model_module, model_factory, run_folds
from kgpubench.resources import source_checkout
from kgpubench.tasks import get_task, goals_of, list_tasks
from kgpubench.tasks.data import task_data
from kgpubench.tasks.extras import fewshot, load_extras
from kgpubench.tasks.goals import IDEAL_TRANSFER

KS = (0, 2, 5)
BW = "gpu_memory_bandwidth_gbs"
BX, TILE = "param.block_size_x", "param.tile"
ROOT = source_checkout()


class Recorder:
    """Predicts the mean training time of the rows with the test row's GPU (by bandwidth), kernel and
    configuration, else of all rows with its block size; records every training frame it is given."""

    seen: list = []

    @staticmethod
    def keys(X):
        return list(zip(X[BW].to_numpy(), X["kernel"].to_numpy(), X[BX].to_numpy(), X[TILE].to_numpy()))

    def fit(self, X, y):
        type(self).seen.append(X.copy())
        keys = self.keys(X)
        self.means = {k: float(np.mean(y[[kk == k for kk in keys]])) for k in set(keys)}
        self.by_bx = {b: float(np.mean(y[X[BX].to_numpy() == b])) for b in set(X[BX])}
        return self

    def predict(self, X):
        return np.array([self.means.get(k, self.by_bx.get(k[2], 0.0)) for k in self.keys(X)])


class Other(Recorder):
    seen: list = []


def _data():
    return task_data("autotune-config", "by-gpu", table=autotune_table())


def _reveal_order(ids: list[str], gpus: list[str], gpu: str) -> list[str]:
    mine = [r for r, g in zip(ids, gpus) if g == gpu]
    return sorted(mine, key=lambda r: hashlib.sha256(f"autotune-config-fewshot\x1f{r}".encode()).digest()[:8])


def test_the_unrevealed_rows_never_reach_training_and_the_whole_gpu_is_scored():
    data = _data()
    plans, skipped = plan_folds(data, KS, min_test_rows=4, max_test_rows=3)  # the test cap does not apply
    ids = data.rows["row_id"].to_pylist()
    gpus = data.rows["gpu_name"].to_pylist()
    assert skipped == {} and [p.fold for p in plans] == ["GPU A", "GPU B", "GPU C"]
    for p in plans:
        held = {r for r, g in zip(ids, gpus) if g == p.fold}
        assert len(held) == 24 and {ids[i] for i in p.test} == held  # whole problems, at every k
        order = _reveal_order(ids, gpus, p.fold)  # by hand
        for k in KS:
            train_ids = {ids[i] for i in p.train(k)}
            assert train_ids & held == set(order[:k])  # only the k revealed rows, the first in the hashed order
            assert train_ids - held == {r for r, g in zip(ids, gpus) if g != p.fold}  # every other GPU's row
    rec = plan_record(data, plans, {}, KS, max_train_rows=None, max_test_rows=3)
    assert rec["test_rule"]["whole_problems"] is True and rec["test_rule"]["max_test_rows"] is None
    assert "stay candidates" in rec["test_rule"]["scored"]
    # the model sees the same: k rows of the held-out GPU in fit(), all 24 of its rows in predict()
    Recorder.seen.clear()
    curve = fewshot_curve(data, lambda task, seed: Recorder(), plans[:1], KS, model_name="rec")
    assert [int(np.sum(f[BW] == 320.0)) for f in Recorder.seen] == list(KS) and len(Recorder.seen[0]) == 48
    assert [curve[str(k)]["folds"]["GPU A"]["n_test"] for k in KS] == [24, 24, 24]
    assert [curve[str(k)]["folds"]["GPU A"]["n_revealed"] for k in KS] == list(KS)


def test_the_revealed_rows_are_the_same_for_every_model():
    data = _data()
    plans, _ = plan_folds(data, KS, min_test_rows=4)
    Recorder.seen.clear()
    Other.seen.clear()
    fewshot_curve(data, lambda task, seed: Recorder(), plans, (5,), model_name="a")
    fewshot_curve(data, lambda task, seed: Other(), plans, (5,), model_name="b")
    for fa, fb, p in zip(Recorder.seen, Other.seen, plans):
        bw = float(data.X[BW].iloc[p.test[0]])
        assert fa[fa[BW] == bw].equals(fb[fb[BW] == bw]) and int(np.sum(fa[BW] == bw)) == 5
    again, _ = plan_folds(_data(), KS, min_test_rows=4)
    ids = data.rows["row_id"].to_pylist()
    gpus = data.rows["gpu_name"].to_pylist()
    rec = plan_record(data, again, {}, KS, max_train_rows=None, max_test_rows=None)
    for gpu, g in rec["gpus"].items():
        by_hand = hashlib.sha256("\x1f".join(_reveal_order(ids, gpus, gpu)[:5]).encode()).hexdigest()
        assert g["revealed_sha256"] == by_hand


@pytest.mark.parametrize("baseline", ["transfer", "median"])
def test_k0_is_the_boards_leave_one_gpu_out_protocol(baseline):
    data = _data()
    path = ROOT / "baselines" / f"{baseline}.py"
    factory = model_factory(load_model_module(path), path)
    board, _ = run_folds(data, factory, model_name=baseline)
    plans, _ = plan_folds(data, (0, 5), min_test_rows=4)
    curve = fewshot_curve(data, factory, plans, (0, 5), model_name=baseline)
    task = get_task("autotune-config")
    assert kept_metrics(task) == ("top1_regret", "top5_regret", "kendall_tau")
    for gpu, fold in curve["0"]["folds"].items():
        assert (fold["n_train"], fold["n_test"]) == (board[gpu]["n_train"], board[gpu]["n_test"]) == (48, 24)
        assert fold["scores"] == {m: board[gpu]["scores"][m] for m in kept_metrics(task)}
    # the same training rows, not only the same counts: the recorder sees the same frames
    Recorder.seen.clear()
    run_folds(data, lambda task, seed: Recorder(), model_name="rec")
    Other.seen.clear()
    fewshot_curve(data, lambda task, seed: Other(), plans, (0,), model_name="rec")
    assert len(Recorder.seen) == len(Other.seen) == 3
    assert all(a.equals(b) for a, b in zip(Recorder.seen, Other.seen))


def test_the_regret_at_k_rows_by_hand():
    # Recorder knows a held-out GPU's configuration once its row is revealed, else predicts the other rows' mean
    # time of its block size. The fixture's best configuration of every problem is (block size 64, tile 2).
    data = _data()
    plans, _ = plan_folds(data, (0, 24), min_test_rows=0)
    curve = fewshot_curve(data, lambda task, seed: Recorder(), plans, (0, 24), model_name="rec")
    # k = 0: block size 64 has the smallest mean; its three tiles tie and the first row (tile 1) is chosen, whose
    # time is 1.2 times the best (tile 2): regret 0.2 on every problem of every GPU.
    assert curve["0"]["median"]["top1_regret"] == pytest.approx(0.2)
    assert all(f["scores"]["top1_regret"] == pytest.approx(0.2) for f in curve["0"]["folds"].values())
    # k = 24: every configuration of the GPU revealed, so the prediction is its measured time: regret 0.
    assert all(f["scores"]["top1_regret"] == 0.0 for f in curve["24"]["folds"].values())
    assert curve["24"]["folds"]["GPU B"]["scores"]["kendall_tau"] == pytest.approx(1.0)


def test_the_board_table_and_plot_of_a_recommendation_curve():
    doc = {"metric": "top1_regret", "metrics": ["top1_regret", "kendall_tau"],
           "plan": {"scheme": "by-gpu", "train_rule": {"cap": None},
                    "test_rule": {"scored": "every row of the held-out GPU, whole problems", "max_test_rows": None,
                                  "whole_problems": True}, "skipped": {}},
           "models": {"xgb": {"0": {"median": {"top1_regret": 0.2, "kendall_tau": 0.61234}, "folds": {"A": {}}},
                              "100": {"median": {"top1_regret": 0.05, "kendall_tau": None}, "folds": {"A": {}}}}}}
    table = fewshot(doc)
    assert table.header == ("model", "k (revealed rows)", "top1_regret (median over GPUs [95 % interval])",
                            "kendall_tau (median over GPUs [95 % interval])", "GPUs")
    assert table.rows == (("xgb", "0", "0.2", "0.612", "1"), ("xgb", "100", "0.05", "—", "1"))
    assert "whole problems, the same rows at every k;" in table.note and "never a revealed one" not in table.note
    assert "has no few-shot curve: holding one GPU out leaves at most one" in table.note
    assert table.plot.series == (("xgb", ((0.0, 0.2), (100.0, 0.05))),) and table.plot.xscale == "symlog"


def test_the_site_draws_the_fewshot_curve(tmp_path):
    from kgpubench.board.site import write_site
    from kgpubench.board.site.check import check_site, parse_page

    task = get_task("rodinia-time-counters")
    doc = {"metric": "male", "plan": {"scheme": "by-gpu", "train_rule": {"cap": 10000},
                                      "test_rule": {"scored": "the rest", "max_test_rows": 1000}},
           "models": {"lgbm": {k: {"median": {"male": v, "mdape": 10.0}, "folds": {"A": {}}}
                               for k, v in (("0", 0.4), ("5", 0.3), ("100", 0.1))}}}
    path = tmp_path / "results" / task.name / "fewshot.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    tables = load_extras(task, tmp_path / "results")
    plot = tables[0].plot
    assert plot.file == "plots/rodinia-time-counters--fewshot.svg"
    assert tables[0].header[2:4] == ("male (median over GPUs [95 % interval])",
                                     "median APE % (median over GPUs [95 % interval])")  # an older file
    board = tmp_path / "board"
    write_site([], board, [task], {task.name: tables})
    assert (board / plot.file).read_text().lstrip().startswith(("<?xml", "<svg"))
    assert (plot.file, plot.title) in parse_page((board / "task-rodinia-time-counters.html").read_text()).images
    assert check_site(board, min_tables={}) == []


def test_the_script_refuses_a_baseline_that_does_not_declare_the_task(tmp_path):
    spec = importlib.util.spec_from_file_location("fewshot_curves", ROOT / "scripts" / "fewshot_curves.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    make_store(tmp_path / "store", autotune_table())
    with pytest.raises(OptionError, match="baseline 'nearest_gpu' does not run on task 'autotune-config'"):
        script.main(["--data", str(tmp_path / "store"), "--task", "autotune-config", "--models", "nearest_gpu"])
    out = tmp_path / "fewshot.json"
    assert script.main(["--data", str(tmp_path / "store"), "--task", "autotune-config", "--models", "median",
                        "--ks", "0,2", "--max-train-rows", "0", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["metrics"] == ["top1_regret", "top5_regret", "kendall_tau"]
    assert doc["plan"]["train_rule"]["cap"] is None and doc["plan"]["test_rule"]["whole_problems"] is True
    assert {g: f["n_test"] for g, f in doc["models"]["median"]["2"]["folds"].items()} == dict.fromkeys(
        ("GPU A", "GPU B", "GPU C"), 24)


def _script():
    spec = importlib.util.spec_from_file_location("fewshot_curves", ROOT / "scripts" / "fewshot_curves.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


@pytest.fixture(scope="module")
def autotune_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("fewshot-add") / "store"
    make_store(path, autotune_table())
    return path


@pytest.mark.slow  # runs the script three times on a small store (seconds)
def test_add_puts_a_model_beside_the_file_s_curves_without_recomputing_them(tmp_path, autotune_store, monkeypatch):
    script = _script()
    out = tmp_path / "fewshot.json"
    base = ["--data", str(autotune_store), "--task", "autotune-config", "--ks", "0,2", "--max-train-rows", "0",
            "--min-test-rows", "4", "--out", str(out)]
    assert script.main([*base, "--models", "median"]) == 0
    before = json.loads(out.read_text())
    ran = []
    real = script.fewshot_curve
    monkeypatch.setattr(script, "fewshot_curve", lambda *a, model_name, **kw: ran.append(model_name) or real(
        *a, model_name=model_name, **kw))
    assert script.main([*base, "--models", "transfer", "--add"]) == 0
    after = json.loads(out.read_text())
    assert ran == ["transfer"]  # median's curve is not recomputed
    assert sorted(after["models"]) == ["median", "transfer"] and sorted(after["wall_s"]) == ["median", "transfer"]
    assert after["models"]["median"] == before["models"]["median"] and after["plan"] == before["plan"]
    assert after["wall_s"]["median"] == before["wall_s"]["median"]
    # the added curve is the one a run of both models at once computes
    both = tmp_path / "both.json"
    assert script.main([*base[:-1], str(both), "--models", "median,transfer"]) == 0
    assert json.loads(both.read_text())["models"] == after["models"]


@pytest.mark.slow  # plans the folds five times on a small store (seconds)
def test_add_refuses_another_plan_a_model_already_there_and_a_missing_file(tmp_path, autotune_store, capsys):
    script = _script()
    out = tmp_path / "fewshot.json"
    base = ["--data", str(autotune_store), "--task", "autotune-config", "--max-train-rows", "0",
            "--min-test-rows", "4", "--out", str(out)]
    assert script.main([*base, "--ks", "0,2", "--models", "median"]) == 0
    kept = out.read_bytes()
    with pytest.raises(OptionError, match=r"computed on another plan.*plan\.ks: file \[0, 2\], this run \[0, 1\]"):
        script.main([*base, "--ks", "0,1", "--models", "transfer", "--add"])
    with pytest.raises(OptionError, match=r"already has the curve of median; drop it from --models"):
        script.main([*base, "--ks", "0,2", "--models", "median", "--add"])
    # a hand-edited revealed row (another revealing order) is another plan too, named by its key
    doc = json.loads(kept)
    gpu = sorted(doc["plan"]["gpus"])[0]
    doc["plan"]["gpus"][gpu]["revealed_sha256"] = "0" * 64
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    with pytest.raises(OptionError, match=rf"plan\.gpus\.{gpu}\.revealed_sha256: file \"0000"):
        script.main([*base[:-1], str(edited), "--ks", "0,2", "--models", "transfer", "--add"])
    assert out.read_bytes() == kept  # nothing written on a refusal
    with pytest.raises(OptionError, match=r"missing\.json does not exist; run without --add"):
        script.main([*base[:-1], str(tmp_path / "missing.json"), "--ks", "0,2", "--models", "transfer", "--add"])
    # the command line: one line on stderr, the error's exit status, no traceback
    capsys.readouterr()
    assert script.cli([*base, "--ks", "0,2", "--models", "median", "--add"]) == OptionError.exit_code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fewshot_curves.py: error: --add: ") and "Traceback" not in err
    assert script.cli(["--data", str(autotune_store), "--task", "autotune-config", "--add"]) == 1
    assert "--add needs --out" in capsys.readouterr().err


# ----- the committed curves ------------------------------------------------------------------------------------------
FEWSHOT_TASKS = [t.name for t in list_tasks() if "fewshot" in t.extras]


def _json(path):
    if not path.is_file():
        pytest.skip(f"no committed {path.relative_to(ROOT)} in this checkout")
    return json.loads(path.read_text())


@pytest.mark.parametrize("task_name", FEWSHOT_TASKS)
def test_the_committed_curves_cover_every_gpu_and_k(task_name):
    results = ROOT / "leaderboard" / "results" / task_name
    doc = _json(results / "fewshot.json")
    board = _json(next(iter(sorted((results / "by-gpu").glob("*.json")))))
    gpus = sorted(board["folds"])
    assert len(gpus) >= 2 and sorted(doc["plan"]["gpus"]) == gpus and doc["plan"]["skipped"] == {}
    ks = list(F.KS)
    assert doc["plan"]["ks"] == ks and doc["models"]  # the fine grid (issue 41, item 6)
    # the baseline a goal must beat has its curve beside the others (conv-solver's transfer was once missing); the
    # hindsight reference is not a model and has none
    beaten = {g.beats for g in goals_of(task_name) if g.beats and g.beats != IDEAL_TRANSFER}
    assert beaten <= set(doc["models"]), sorted(doc["models"])
    assert doc["plan"]["dataset"]["rows_sha256"] == board["dataset"]["rows_sha256"]  # the board's rows
    for name, curve in doc["models"].items():
        assert sorted(curve, key=int) == [str(k) for k in ks], name
        for k, rec in curve.items():
            assert sorted(rec["folds"]) == gpus, (name, k)
            assert all(f["n_revealed"] == int(k) for f in rec["folds"].values()), (name, k)
            assert rec["median"][doc["metric"]] is not None, (name, k)


def test_the_committed_autotune_curve_starts_at_the_board():
    results = ROOT / "leaderboard" / "results" / "autotune-config"
    doc = _json(results / "fewshot.json")
    assert doc["plan"]["train_rule"]["cap"] is None and doc["plan"]["test_rule"]["whole_problems"] is True
    for name, curve in doc["models"].items():
        board = _json(results / "by-gpu" / f"{name}.json")
        for gpu, fold in curve["0"]["folds"].items():
            assert (fold["n_train"], fold["n_test"]) == (board["folds"][gpu]["n_train"], board["folds"][gpu]["n_test"])
            assert fold["scores"]["top1_regret"] == pytest.approx(board["folds"][gpu]["scores"]["top1_regret"],
                                                                  rel=1e-5), (name, gpu)
        for k in [k for k in curve if k != "0"]:  # the revealed rows join training; the scored rows stay the GPU's
            assert all(f["n_train"] == board["folds"][g]["n_train"] + int(k) and
                       f["n_test"] == board["folds"][g]["n_test"] for g, f in curve[k]["folds"].items())


def test_the_plot_axis_stops_above_the_readable_lines_when_one_lies_far_above():
    from kgpubench.tasks.extras import fewshot_ylim

    far = (("median", ((0.0, 4.2), (100.0, 4.2))), ("xgb", ((0.0, 0.2), (20.0, 0.42))), ("t", ((0.0, 0.2),)))
    assert fewshot_ylim(far) == (0.0, pytest.approx(0.63))
    assert fewshot_ylim((("a", ((0.0, 1.0),)), ("b", ((0.0, 0.4),)))) == ()  # 1.0 <= 3 x 0.4: matplotlib's axis
    doc = {"metric": "male", "plan": {}, "models": {
        m: {"0": {"median": {"male": v}, "folds": {}}, "5": {"median": {"male": v / 2}, "folds": {}}}
        for m, v in (("median", 4.0), ("lgbm", 0.4))}}
    plot = fewshot(doc).plot
    assert plot.ylim == (0.0, pytest.approx(0.6))
    assert "The axis stops at 0.6: median (above it) in the table." in plot.caption
