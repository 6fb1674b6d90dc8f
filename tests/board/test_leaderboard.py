"""Leaderboard run/verify/render on a fixture store, submission refusals, predictions scoring (CI verify of the
committed results: test_ci_verify.py)."""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board.render import render_markdown
from kgpubench.errors import SchemaValidationError
from kgpubench.models.evaluation import SubmissionError, evaluate
from kgpubench.models.submission import check_factory, score_predictions, submit
from kgpubench.results.result import BoardEntry, read_record
from kgpubench.tasks.data import task_data
from kgpubench.testing import MEAN_MODEL_SOURCE

FAST = [p for p in lb.baseline_files() if p.stem in ("median", "regression_tree")]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("lb") / "store", autotune_table())


@pytest.fixture(scope="module")
def board(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("board") / "results"
    written = lb.run(data_dir=store.path, out_dir=out, models=FAST, tasks=["autotune-config"])
    return out, written


@pytest.mark.slow
def test_run_writes_results_and_renders_the_board(board):
    out, written = board
    assert sorted(p.relative_to(out).as_posix() for p in written) == [
        "autotune-config/by-gpu/median.json", "autotune-config/by-gpu/oracle.json",
        "autotune-config/by-gpu/regression_tree.json", "autotune-config/random10/median.json",
        "autotune-config/random10/oracle.json", "autotune-config/random10/regression_tree.json"]
    res = json.loads((out / "autotune-config/by-gpu/median.json").read_text())
    assert sorted(res["folds"]) == ["GPU A", "GPU B", "GPU C"]
    assert res["folds"]["GPU A"]["n_test"] == 24 and res["folds"]["GPU A"]["n_train"] == 48
    assert res["model_file"] == "baselines/median.py" and len(res["model_sha256"]) == 64
    assert res["dataset"]["version"] == "0.1.0" and res["dataset"]["rows"] == 72
    assert len(res["dataset"]["rows_sha256"]) == 64 and res["status"] == "ok" and res["limits"] == {"threads": 1}
    for key in ("packages", "seed", "wall_time_s", "split_sha256", "aggregate"):
        assert key in res
    oracle = json.loads((out / "autotune-config/by-gpu/oracle.json").read_text())
    assert oracle["kind"] == "reference" and oracle["aggregate"]["top1_regret"]["mean"] == 0.0
    # the split files were written next to the board, and the results carry their hash
    split = out.parent / "splits" / "autotune-config" / "by-gpu.csv"
    from kgpubench.store.store import sha256_file

    assert res["split_sha256"] == sha256_file(split)
    text = (out / "autotune-config/by-gpu/median.json").read_text()
    assert list(json.loads(text)) == sorted(json.loads(text))  # sorted keys
    readme = (out.parent / "README.md").read_text()
    assert "### autotune-config — `by-gpu`" in readme and "*Not evaluated*" in readme
    assert "| — | oracle — upper bound (measures the test rows) |" in readme and "Goal: unseen GPUs" in readme
    site = out.parent
    assert (site / "plots" / "autotune-config--by-gpu--predicted.svg").read_text().startswith("<?xml")
    assert (site / "plots" / "autotune-config--by-gpu--regret.svg").stat().st_size > 1000
    assert '<table class="overview">' in (site / "index.html").read_text()
    page = (site / "task-autotune-config.html").read_text()
    assert page.count('<table class="scores">') == 2 and "regression_tree" in page


def test_tree_beats_the_median_floor_on_top1_regret(board):
    out, _ = board
    med = json.loads((out / "autotune-config/by-gpu/median.json").read_text())
    tree = json.loads((out / "autotune-config/by-gpu/regression_tree.json").read_text())
    assert tree["aggregate"]["top1_regret"]["mean"] < med["aggregate"]["top1_regret"]["mean"]


@pytest.mark.slow
def test_verify_passes_then_lists_every_tampered_score(board, store, tmp_path):
    out, _ = board
    assert lb.verify(root=out, data_dir=store.path, only=["median"]) == 2
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(out, copy)
    path = copy / "autotune-config/by-gpu/median.json"
    res = json.loads(path.read_text())
    res["folds"]["GPU A"]["scores"]["mdape"] *= 1.01
    res["folds"]["GPU B"]["scores"]["top1_regret"] += 0.5
    res["model_sha256"] = "0" * 64
    path.write_text(json.dumps(res))
    with pytest.raises(lb.VerifyError) as err:
        lb.verify(root=copy, data_dir=store.path, only=["median"])
    problems = err.value.problems
    assert len(problems) == 4
    assert any("fold GPU A mdape" in p for p in problems) and any("fold GPU B top1_regret" in p for p in problems)
    assert any("model sha256" in p for p in problems)
    # and against its own predictions (the file beside it), before any rerun
    assert any("fold GPU A: mdape is recorded as" in p for p in problems), problems


def test_rendering_is_pure_and_ranks_by_the_primary_metric():
    def fake(model, regret):
        return BoardEntry(read_record({
            "task": "autotune-config", "scheme": "by-gpu", "model": model, "date": "2026-01-01",
            "dataset": {"version": "1.0.0"}, "folds": {"a": {"scores": {"top1_regret": regret}}},
            "aggregate": {"top1_regret": {"mean": regret, "std": 0.0, "median": regret}}}))
    text = render_markdown([fake("worse", 0.5), fake("better", 0.1)])
    assert text.index("| 1 | better |") < text.index("| 2 | worse |")
    assert text == render_markdown([fake("worse", 0.5), fake("better", 0.1)])


def _write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_submit_refuses_a_module_without_factory(tmp_path):
    path = _write(tmp_path, "nofactory.py", "def build_model(task, seed):\n    return None\n")
    with pytest.raises(SubmissionError, match="no top-level `make_model"):
        check_factory(path)
    with pytest.raises(SubmissionError, match="make_model"):
        submit(path, "autotune-config")


@pytest.mark.slow
def test_submit_refuses_a_model_over_the_time_limit(tmp_path, store):
    path = _write(tmp_path, "slow.py", """
        import time
        def make_model(task, seed):
            time.sleep(60)
        """)
    with pytest.raises(SubmissionError, match="time limit of 3 s"):
        submit(path, "autotune-config", "by-gpu", data_dir=store.path, timeout_s=3, out=tmp_path / "r.json")


def test_submit_runs_a_good_model_in_a_child_process(tmp_path, store):
    path = _write(tmp_path, "mine.py", MEAN_MODEL_SOURCE)  # the training mean, declared for autotune-config
    out = submit(path, "autotune-config", "by-gpu", data_dir=store.path, timeout_s=120, out=tmp_path / "r.json")
    res = json.loads(out.read_text())
    assert res["task"] == "autotune-config" and sorted(res["folds"]) == ["GPU A", "GPU B", "GPU C"]


def test_wrong_prediction_shape_is_a_clear_error(tmp_path, store):
    path = _write(tmp_path, "short.py", """
        def make_model(task, seed):
            class M:
                def fit(self, X, y): return self
                def predict(self, X): return [1.0]
            return M()
        """)
    with pytest.raises(SubmissionError, match=r"shape \(1,\), expected \(24,\)"):
        evaluate(path, "autotune-config", "by-gpu", data_dir=store.path)


def _predictions(store):
    data = task_data("autotune-config", "by-gpu", store.path)
    return pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds), "prediction": data.y})


def test_score_accepts_exact_coverage_and_refuses_wrong_rows(tmp_path, store):
    df = _predictions(store)
    good = tmp_path / "good.parquet"
    df.to_parquet(good)
    res = score_predictions(good, "autotune-config", "by-gpu", data_dir=store.path)
    assert res.aggregate["top1_regret"].mean == 0.0 and res.aggregate["male"].mean == 0.0
    bad = tmp_path / "bad.parquet"
    df.drop(index=[0, 1]).to_parquet(bad)
    with pytest.raises(SchemaValidationError, match="fold GPU A: 2 test row\\(s\\) missing"):
        score_predictions(bad, "autotune-config", "by-gpu", data_dir=store.path)
    extra = df.copy()
    extra.loc[0, "fold"] = "GPU Z"
    extra.to_parquet(bad)
    with pytest.raises(SchemaValidationError, match="GPU Z"):
        score_predictions(bad, "autotune-config", "by-gpu", data_dir=store.path)


def test_cli_evaluate_and_unknown_task(tmp_path, store):
    from typer.testing import CliRunner

    from kgpubench.cli import app

    runner = CliRunner()
    out = tmp_path / "r.json"
    r = runner.invoke(app, ["evaluate", str(FAST[0]), "--task", "autotune-config", "--scheme", "by-gpu",
                            "--fold", "GPU B", "--data", str(store.path), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert list(json.loads(out.read_text())["folds"]) == ["GPU B"]
    r = runner.invoke(app, ["evaluate", str(FAST[0]), "--task", "autotune-confg"])
    assert r.exit_code != 0


def test_the_submitting_score_recipe_runs_and_scores(tmp_path):
    """The recipe of leaderboard/SUBMITTING.md, pointed at a fixture store, gives a file `score` accepts."""
    from task_fixtures import kernels_table

    import kgpubench
    from kgpubench.tasks.splits import task_folds

    store = make_store(tmp_path / "store", kernels_table())
    text = (lb.leaderboard_dir() / "SUBMITTING.md").read_text()
    recipe = text.split("A complete recipe")[1].split("```python\n")[1].split("```")[0]
    recipe = recipe.replace('task_folds(task, scheme)', 'task_folds(task, scheme, DATA)').replace(
        'format="pandas")', 'format="pandas", data_dir=DATA)').replace('"predictions.parquet"', 'OUT')
    env = {"DATA": store.path, "OUT": tmp_path / "predictions.parquet", "kgpubench": kgpubench}
    exec(compile(recipe, "SUBMITTING.md", "exec"), env)
    assert task_folds("kernel-power", "random10", store.path)
    res = score_predictions(tmp_path / "predictions.parquet", "kernel-power", "random10", data_dir=store.path)
    assert sorted(res.folds, key=int) == task_folds("kernel-power", "random10", store.path)
    assert res.dataset.rows == 64 and sum(f.n_test for f in res.folds.values()) == 64
    preds = pd.read_parquet(tmp_path / "predictions.parquet")
    truth = kgpubench.load_dataset("kernels", format="pandas", data_dir=store.path).set_index("row_id")["power_w_avg"]
    for fold, rec in res.folds.items():  # the fold's MAPE, by hand from the file and the measured power
        part = preds[preds["fold"] == fold]
        y = truth.loc[part["row_id"]].to_numpy()
        assert rec.score("mape") == pytest.approx(100 * np.mean(np.abs(part["prediction"].to_numpy() - y) / y))
