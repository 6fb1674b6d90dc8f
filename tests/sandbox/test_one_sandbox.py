"""One of each in the sandbox: the prediction check, the model-file reader, the limits and the predictions hash,
and every caller (sandbox, in-process runs, ``kgpubench score``, the leaderboard and Ray paths) goes through it."""

from __future__ import annotations

import hashlib
import os
import textwrap
import traceback

import numpy as np
import pandas as pd
import pytest
from sandbox_helpers import needs_isolation

from kgpubench.board.leaderboard import baseline_files
from kgpubench.errors import DataFileNotFoundError, LimitsError, SandboxError, SubmissionError
from kgpubench.models import evaluation, submission
from kgpubench.models.evaluation import evaluate, fit_predict, load_model_module
from kgpubench.models.submission import check_factory, declared_tasks, score_predictions
from kgpubench.sandbox import process
from kgpubench.sandbox.checks import checked_predictions, not_numbers
from kgpubench.sandbox.limits import THREAD_ENV, Limits
from kgpubench.sandbox.model_file import MAX_MODEL_BYTES, module_from_source, parse_model_file, read_model_file
from kgpubench.sandbox.session import ModelSession, PredictionsDigest, predictions_sha256
from kgpubench.tasks import get_task
from kgpubench.tasks.data import task_data

MEDIAN = next(p for p in baseline_files() if p.stem == "median")


# ----- the prediction check ---------------------------------------------------------------------------------
def test_a_nan_is_refused_naming_its_row():
    with pytest.raises(SandboxError) as err:
        checked_predictions(np.array([1.0, 2.0, np.nan, 4.0, np.inf]), 5, "m.py")
    assert str(err.value) == ("m.py: refused, predict() returned 2 NaN/inf value(s) (first at row 2); every test row "
                              "needs a finite prediction.")
    assert err.value.kind == "invalid-output" and isinstance(err.value, SubmissionError)


def test_a_wrong_length_is_refused_with_the_expected_shape():
    with pytest.raises(SandboxError) as err:
        checked_predictions(np.ones(4), 5, "m.py")
    assert str(err.value) == ("m.py: refused, predict() returned shape (4,), expected (5,): one value per test row "
                              "(use .ravel() on a column vector).")


def test_rows_can_be_named_and_the_values_introduced_otherwise():
    with pytest.raises(SandboxError) as err:
        checked_predictions(np.array([0.5, np.nan]), 2, "p.csv", said="fold GPU A has", row_names=["r7", "r9"])
    assert str(err.value) == ("p.csv: refused, fold GPU A has 1 NaN/inf value(s) (first at row r9); every test row "
                              "needs a finite prediction.")


@pytest.mark.parametrize("pred, why", [
    (["a", "b"], "predict() returned list of <U1, not numbers"),
    ([None, 1.0], "predict() returned list holding ['NoneType', 'float'], not numbers"),
    (np.array([True, False]), "predict() returned ndarray of bool, not numbers"),
    (np.arange(2, dtype=np.uint8), None),
    (np.arange(2.0), None),
])
def test_not_numbers_is_what_the_child_sends_back(pred, why):
    assert not_numbers(pred, np.asarray(pred)) == why


def test_in_process_runs_refuse_what_the_sandbox_refuses():
    task = get_task("autotune-config")
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})

    class Model:
        def __init__(self, out):
            self.out = out

        def fit(self, X, y):
            return self

        def predict(self, X):
            return self.out

    for out, message in [
        ([1.0, float("nan"), 2.0], "m: refused, predict() returned 1 NaN/inf value(s) (first at row 1); every test "
                                   "row needs a finite prediction."),
        (np.ones((3, 1)), "m: refused, predict() returned shape (3, 1), expected (3,): one value per test row (use "
                          ".ravel() on a column vector)."),
        (["x", "y", "z"], "m: refused, predict() returned list of <U1, not numbers; expected a 1-D array of 3 "
                          "numbers."),
    ]:
        with pytest.raises(SandboxError) as err:
            fit_predict(lambda task, seed, out=out: Model(out), task, X, np.ones(3), X, model_name="m")
        assert str(err.value) == message
    got = fit_predict(lambda task, seed: Model([1, 2, 3]), task, X, np.ones(3), X, model_name="m")
    assert got.predictions.dtype == np.float64 and got.predictions.tolist() == [1.0, 2.0, 3.0]


def test_score_refuses_a_nan_naming_the_fold_and_row_id(tmp_path, store):
    data = task_data("autotune-config", "by-gpu", store.path)
    ids = data.rows["row_id"].to_pylist()
    df = pd.DataFrame({"row_id": ids, "fold": list(data.folds), "prediction": data.y})
    first_b = next(i for i, f in enumerate(data.folds) if f == "GPU B")
    df.loc[first_b, "prediction"] = np.nan
    path = tmp_path / "p.parquet"
    df.to_parquet(path)
    with pytest.raises(SubmissionError) as err:
        score_predictions(path, "autotune-config", "by-gpu", data_dir=store.path)
    assert str(err.value) == (f"{path}: refused, fold GPU B has 1 NaN/inf value(s) (first at row {ids[first_b]}); "
                              "every test row needs a finite prediction.")


# ----- the model-file reader --------------------------------------------------------------------------------
def test_a_model_file_over_the_cap_is_refused_by_every_reader(tmp_path):
    big = tmp_path / "big.py"
    with big.open("wb") as fh:
        fh.truncate(MAX_MODEL_BYTES + 1)  # sparse: nothing written
    message = f"{big}: refused, a model file must be under 16 MiB."
    for read in (read_model_file, parse_model_file, check_factory, declared_tasks, load_model_module,
                 lambda p: ModelSession(p, "autotune-config")):
        with pytest.raises(SubmissionError) as err:
            read(big)
        assert str(err.value) == message, read
    at_cap = tmp_path / "ok.py"
    with at_cap.open("wb") as fh:
        fh.truncate(MAX_MODEL_BYTES)
    assert len(read_model_file(at_cap).source) == MAX_MODEL_BYTES == 16 * 2**20


def test_a_missing_model_file_is_named(tmp_path):
    for read in (read_model_file, check_factory, load_model_module, lambda p: ModelSession(p, "autotune-config")):
        with pytest.raises(DataFileNotFoundError) as err:
            read(tmp_path / "gone.py")
        assert str(err.value) == f"{tmp_path / 'gone.py'}: no such model file; pass the path of a .py file."


def test_what_is_hashed_is_what_is_read():
    model = read_model_file(MEDIAN)
    assert model.source == MEDIAN.read_bytes()
    assert model.sha256 == hashlib.sha256(MEDIAN.read_bytes()).hexdigest() == evaluation.file_sha256(MEDIAN)
    assert ModelSession(MEDIAN, "autotune-config").model_sha256 == model.sha256  # not started: reads only


def test_parse_names_the_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\ndef make_model(task, seed)\n")
    with pytest.raises(SubmissionError) as err:
        parse_model_file(bad)
    assert str(err.value) == f"{bad}: not valid Python (line 2: expected ':')."


def test_a_module_runs_from_its_bytes_with_its_lines_in_tracebacks(tmp_path):
    source = textwrap.dedent("""
        # -*- coding: latin-1 -*-
        NAME = "caf\xe9"
        def make_model(task, seed):
            raise ValueError("no")
        """).encode("latin-1")
    module = module_from_source("kgpubench_model_probe", source, "/kgpubench_model/probe.py")
    assert module.NAME == "café" and module.__file__ == "/kgpubench_model/probe.py"
    with pytest.raises(ValueError) as err:
        module.make_model(None, 0)
    shown = "".join(traceback.format_exception(err.value))
    assert 'File "/kgpubench_model/probe.py", line 5, in make_model\n    raise ValueError("no")' in shown
    path = tmp_path / "probe.py"
    path.write_bytes(source)
    assert load_model_module(path).__file__ == str(path)


# ----- the limits -------------------------------------------------------------------------------------------
def test_one_limits_type_everywhere():
    assert evaluation.Limits is Limits and submission.Limits is Limits
    limits = Limits(threads=3)
    assert (limits.timeout_s, limits.memory_gb) == (1800.0, 8.0)
    assert limits.env() == dict.fromkeys(THREAD_ENV, "3") and "KGPUBENCH_THREADS" in THREAD_ENV
    assert {k: process.child_env(3)[k] for k in THREAD_ENV} == limits.env()  # the sandbox's child gets the same
    with pytest.raises(LimitsError, match=r"^--threads: got 0; the thread count must be a whole number"):
        Limits(threads=0)


def test_the_child_gets_the_callers_pythonpath_made_absolute(tmp_path, monkeypatch):
    # the child runs in "/", where a relative entry (PYTHONPATH=. from a checkout) would name another folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", "src/lib", "", "/opt/abs"]))
    assert process.child_env(1)["PYTHONPATH"].split(os.pathsep) == [
        str(tmp_path), str(tmp_path / "src" / "lib"), str(tmp_path), "/opt/abs"]
    monkeypatch.delenv("PYTHONPATH")
    assert "PYTHONPATH" not in process.child_env(1)


# ----- the predictions hash and the public entry point ------------------------------------------------------
def test_the_predictions_hash_by_hand():
    folds = [np.array([1.0, 2.5]), np.array([3.0])]
    by_hand = hashlib.sha256(b"0:2:" + np.array([1.0, 2.5], "<f8").tobytes()
                             + b"1:1:" + np.array([3.0], "<f8").tobytes())
    digest = PredictionsDigest()
    for pred in folds:
        digest.update(pred)
    assert digest.hexdigest() == predictions_sha256(folds) == by_hand.hexdigest() and digest.folds == 2


@needs_isolation
def test_evaluate_hands_out_the_predictions_it_hashed(store):
    data = task_data("autotune-config", "by-gpu", store.path)
    preds: list = []
    res = evaluate(MEDIAN, "autotune-config", "by-gpu", data=data, predictions=preds)
    assert [len(p) for p in preds] == [r.n_test for r in res.folds.values()] == [24, 24, 24]
    assert predictions_sha256(preds) == res.predictions_sha256
    one: list = []
    single = evaluate(MEDIAN, "autotune-config", "by-gpu", data=data, folds=["GPU B"], predictions=one)
    assert len(one) == 1 and np.array_equal(one[0], preds[1])  # a fold alone predicts as within the whole run
    assert single.predictions_sha256 == predictions_sha256(one)
    oracle: list = []
    evaluate("oracle", "autotune-config", "by-gpu", data=data, predictions=oracle)
    assert oracle == []  # no model ran


SPY = '''
import numpy as np

TASKS = ("autotune-config",)


class Spy:
    """Predicts 2 for a row whose GPU (its catalogue figures) it saw in training, else 1."""

    def fit(self, X, y):
        self.cols = [c for c in X.columns if c.startswith("gpu_")]
        self.seen = {tuple(map(str, r)) for r in X[self.cols].itertuples(index=False)}
        return self

    def predict(self, X):
        keys = [tuple(map(str, r)) for r in X[self.cols].itertuples(index=False)]
        return np.array([2.0 if k in self.seen else 1.0 for k in keys])


def make_model(task, seed):
    return Spy()
'''


@needs_isolation
def test_no_row_of_the_held_out_gpu_reaches_training(store, tmp_path):
    """Under leave-one-GPU-out the model's fit sees no row of the held-out GPU (so nothing a model tunes inside
    fit, inner folds included, can use it); the same spy sees the test GPU under random10, so it can tell."""
    spy = tmp_path / "spy.py"
    spy.write_text(SPY)
    held_out: list = []
    res = evaluate(spy, "autotune-config", "by-gpu", data=task_data("autotune-config", "by-gpu", store.path),
                   predictions=held_out)
    assert sorted(res.folds) == ["GPU A", "GPU B", "GPU C"] and len(held_out) == 3
    assert all(np.all(p == 1.0) for p in held_out)
    mixed: list = []
    evaluate(spy, "autotune-config", "random10", data=task_data("autotune-config", "random10", store.path),
             predictions=mixed)
    assert any(np.any(p == 2.0) for p in mixed)
