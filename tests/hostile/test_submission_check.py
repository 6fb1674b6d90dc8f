"""Hostile submission folders, issue 28 item 1: ``submission check`` rejects every folder ``submission run`` rejects,
with the same one-line message, because both go through one function (``check_submission``).

Before, ``check`` only read the folder: predictions with missing or extra rows, unknown folds or NaN, a run whose
task has no data or no training fold, and a result file already in ``--out`` all passed ``check`` and were refused
by ``run``. Each case below builds one bad folder as an attacker would and asserts that ``check`` (the function and
the command) and ``run`` refuse it with the same message, naming the file (and fold, row or column) and the fix.
What only running the model finds (it raises, returns the wrong shape) passes ``check`` and is in its help.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import cli
from task_fixtures import autotune_table, make_store

from kgpubench.board.pull_request import check_submission, run_submission
from kgpubench.errors import (
    DataFileNotFoundError,
    KgpubenchError,
    NoDataError,
    OutputExistsError,
    OutputWriteError,
    SchemaValidationError,
    SubmissionError,
    UnknownNameError,
)
from kgpubench.models import submission as submission_module
from kgpubench.tasks.data import task_data
from kgpubench.testing import MEAN_MODEL_SOURCE

NAME = "attack"
MODEL = MEAN_MODEL_SOURCE
META = f"""\
name: {NAME}
authors: [Ada Example]
description: The mean of the training targets, for every row.
url: https://example.org/code
runs:
  - {{task: autotune-config, scheme: by-gpu}}
"""
PRED = "predictions/autotune-config--by-gpu.parquet"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("check") / "store", autotune_table())


@pytest.fixture(scope="module")
def one_gpu_store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("check1") / "store", autotune_table(gpus=("GPU A",)))


@pytest.fixture(scope="module")
def good_predictions(store) -> pd.DataFrame:
    data = task_data("autotune-config", "by-gpu", store.path)
    return pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds),
                         "prediction": np.asarray(data.y) * 1.1})


def model_folder(root: Path) -> Path:
    path = root / "submissions" / NAME
    path.mkdir(parents=True)
    (path / "submission.yaml").write_text(META)
    (path / "model.py").write_text(textwrap.dedent(MODEL))
    return path


def predictions_folder(root: Path, df: pd.DataFrame) -> Path:
    path = root / "submissions" / NAME
    path.mkdir(parents=True)
    (path / "submission.yaml").write_text(META)
    (path / "predictions").mkdir()
    df.to_parquet(path / PRED)
    return path


def _outside(f: Path) -> Path:
    secret = f.parents[2] / "secret.txt"
    secret.write_text("host secret\n")
    return secret


def _link(f: Path, name: str) -> None:
    target = f / name
    if target.is_dir():
        target.rename(f.parent / "moved")
    else:
        target.unlink()
    target.symlink_to(_outside(f))


def _pred(f: Path, df: pd.DataFrame) -> None:
    df.to_parquet(f / PRED)


def _meta(f: Path, old: str, new: str) -> None:
    text = (f / "submission.yaml").read_text()
    assert old in text
    (f / "submission.yaml").write_text(text.replace(old, new))


def _model(f: Path, text: str) -> None:
    (f / "model.py").write_text(text)


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as fh:
        fh.truncate(size)


# (id, kind of the good folder, how the attacker breaks it, error class, regex, the file the message names)
CASES = [
    # the folder and submission.yaml
    ("no-yaml", "model", lambda f, df: (f / "submission.yaml").unlink(), DataFileNotFoundError, "no submission.yaml",
     None),
    ("folder-is-a-link", "model", lambda f, df: (f.rename(f.parent / "real"), f.symlink_to(f.parent / "real")),
     SchemaValidationError, "is a symbolic link; a submission is a plain folder", "."),
    ("yaml-link-out", "model", lambda f, df: _link(f, "submission.yaml"), SchemaValidationError,
     "is a symbolic link.*copy the file in", "submission.yaml"),
    ("model-link-out", "model", lambda f, df: _link(f, "model.py"), SchemaValidationError, "is a symbolic link",
     "model.py"),
    ("predictions-dir-link-out", "predictions", lambda f, df: _link(f, "predictions"), SchemaValidationError,
     "is a symbolic link", "predictions"),
    ("predictions-file-link-out", "predictions", lambda f, df: _link(f, PRED), SchemaValidationError,
     "is a symbolic link", PRED),
    ("yaml-huge", "model", lambda f, df: (f / "submission.yaml").write_text("#" * 70_000), SchemaValidationError,
     "larger than 65,536 bytes", "submission.yaml"),
    ("yaml-name-a-number", "model", lambda f, df: _meta(f, f"name: {NAME}", "name: 123"), SchemaValidationError,
     "name a int must equal the folder's name", "submission.yaml"),
    ("yaml-authors-a-mapping", "model", lambda f, df: _meta(f, "[Ada Example]", "{a: 1}"), SchemaValidationError,
     "`authors` must be a list", "submission.yaml"),
    ("yaml-runs-text", "model", lambda f, df: _meta(f, "runs:\n  - {task: autotune-config, scheme: by-gpu}",
                                                    "runs: everything"), SchemaValidationError,
     "`runs` must be a list", "submission.yaml"),
    ("unknown-task", "model", lambda f, df: _meta(f, "task: autotune-config", "task: autotune-confg"),
     UnknownNameError, r"runs entry 1: unknown task 'autotune-confg'. Did you mean.*autotune-config",
     "submission.yaml"),
    ("unknown-scheme", "model", lambda f, df: _meta(f, "scheme: by-gpu", "scheme: by-moon"), SchemaValidationError,
     "scheme 'by-moon' is not on the board for autotune-config", "submission.yaml"),
    ("model-and-predictions", "model", lambda f, df: (f / "predictions").mkdir(), SchemaValidationError,
     "not both", "submission.yaml"),
    # model.py, read and not run
    ("model-syntax-error", "model", lambda f, df: _model(f, "def make_model(task, seed):\n    return (\n"),
     SubmissionError, r"not valid Python \(line \d+", "model.py"),
    ("model-no-make-model", "model", lambda f, df: _model(f, "def build(task, seed):\n    return None\n"),
     SubmissionError, "no top-level `make_model", "model.py"),
    ("model-huge", "model", lambda f, df: _sparse(f / "model.py", 17 * 2**20), SubmissionError,
     "must be under 16 MiB", "model.py"),
    ("model-tasks-not-literal", "model", lambda f, df: _model(f, MODEL.replace('TASKS = ("autotune-config",)',
                                                                               "TASKS = tuple(['x'])")),
     SubmissionError, r"TASKS \(line \d+\) must be a literal tuple", "model.py"),
    ("model-tasks-leave-run-out", "model", lambda f, df: _model(f, MODEL.replace("autotune-config", "kernel-time")),
     SchemaValidationError, r"runs name task\(s\) \['autotune-config'\]", "submission.yaml"),
    # predictions made elsewhere
    ("predictions-no-url", "predictions", lambda f, df: _meta(f, "url: https://example.org/code\n", ""),
     SchemaValidationError, "give `url`", "submission.yaml"),
    ("predictions-file-missing", "predictions", lambda f, df: (f / PRED).unlink(), DataFileNotFoundError,
     "no autotune-config--by-gpu.parquet", "predictions"),
    ("predictions-not-parquet", "predictions", lambda f, df: (f / PRED).write_bytes(b"PAR1 not really"),
     SchemaValidationError, "cannot be read as parquet", PRED),
    ("predictions-huge", "predictions", lambda f, df: _sparse(f / PRED, 300 * 2**20), SchemaValidationError,
     "refused, 314,572,800 bytes; a predictions file must be under 256 MiB", PRED),
    ("predictions-column-missing", "predictions", lambda f, df: _pred(f, df.drop(columns="fold")),
     SchemaValidationError, r"lacks column\(s\) \['fold'\]", PRED),
    ("predictions-text", "predictions", lambda f, df: _pred(f, df.assign(prediction="fast")), SchemaValidationError,
     "column prediction holds .* values \\(e.g. 'fast'\\)", PRED),
    ("predictions-duplicate-row", "predictions", lambda f, df: _pred(f, pd.concat([df, df.iloc[:1]])),
     SchemaValidationError, r"1 duplicate \(row_id, fold\) pair", PRED),
    ("predictions-missing-rows", "predictions", lambda f, df: _pred(f, df.iloc[2:]), SchemaValidationError,
     r"fold GPU A: 2 test row\(s\) missing .*load_dataset", PRED),
    ("predictions-extra-row", "predictions", lambda f, df: _pred(
        f, pd.concat([df, df.iloc[:1].assign(row_id="not-a-row")])), SchemaValidationError,
     r"1 row\(s\) not in the fold \(e.g. \['not-a-row'\]\)", PRED),
    ("predictions-unknown-fold", "predictions", lambda f, df: _pred(
        f, pd.concat([df, df.iloc[:1].assign(fold="GPU Z")])), SchemaValidationError,
     r"folds \['GPU Z'\] are not folds of 'by-gpu'", PRED),
    ("predictions-nan", "predictions", lambda f, df: _pred(f, df.assign(prediction=np.where(
        np.arange(len(df)) == 3, np.nan, df["prediction"]))), SubmissionError,
     r"fold .* has 1 NaN/inf value\(s\) \(first at row .*every test row needs a finite prediction", PRED),
    ("predictions-inf-csv", "predictions", lambda f, df: ((f / PRED).unlink(), df.astype({"prediction": str}).assign(
        prediction=["1e999"] + list(df["prediction"].astype(str))[1:]).to_csv(
        f / "predictions/autotune-config--by-gpu.csv", index=False)), SubmissionError,
     r"NaN/inf value\(s\)", "predictions/autotune-config--by-gpu.csv"),
]


def _refusal(fn):
    with pytest.raises(KgpubenchError) as err:
        fn()
    return err.value


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_check_refuses_what_run_refuses_with_the_same_line(case, tmp_path, store, good_predictions, monkeypatch,
                                                           capsys):
    _, kind, attack, error, pattern, names = case
    f = model_folder(tmp_path) if kind == "model" else predictions_folder(tmp_path, good_predictions)
    attack(f, good_predictions)
    out = tmp_path / "ci"
    checked = _refusal(lambda: check_submission(f, out, data_dir=store.path))
    ran = _refusal(lambda: run_submission(f, out, data_dir=store.path, timeout_s=60))
    assert type(checked) is type(ran) and isinstance(checked, error)
    assert str(checked) == str(ran) and "\n" not in str(checked)
    assert __import__("re").search(pattern, str(checked)), str(checked)
    if names:
        assert str(f / names) in str(checked)
    assert not out.exists()  # run wrote nothing
    code, stdout, stderr = cli(monkeypatch, capsys, "submission", "check", f, "--out", out, "--data", store.path)
    assert code != 0 and stdout == ""
    assert " ".join(str(checked).split())[:60] in " ".join(stderr.split())


def test_a_parquet_claiming_too_many_rows_is_refused_before_it_is_read(tmp_path, store, good_predictions,
                                                                       monkeypatch):
    """A small parquet file that expands to more rows than any task has: refused from its footer."""
    monkeypatch.setattr(submission_module, "MAX_PREDICTION_ROWS", 10)
    f = predictions_folder(tmp_path, good_predictions)
    checked = _refusal(lambda: check_submission(f, tmp_path / "ci", data_dir=store.path))
    ran = _refusal(lambda: run_submission(f, tmp_path / "ci", data_dir=store.path))
    assert str(checked) == str(ran) == (f"{f / PRED}: refused, the file claims {len(good_predictions)} rows; a "
                                        "predictions file holds one row per test row (at most 10).")


def test_data_problems_are_found_by_check(tmp_path, one_gpu_store, store):
    """A run whose task has no rows in the store, or whose scheme has no fold with training rows."""
    f = model_folder(tmp_path)
    checked = _refusal(lambda: check_submission(f, tmp_path / "ci", data_dir=one_gpu_store.path))
    ran = _refusal(lambda: run_submission(f, tmp_path / "ci", data_dir=one_gpu_store.path))
    assert isinstance(checked, NoDataError) and str(checked) == str(ran) == (
        f"{f / 'submission.yaml'}: the run autotune-config/by-gpu cannot train a model: every row has one GPU "
        "(GPU A), so leave-one-GPU-out has no training fold; it needs rows of at least two GPUs (folds ['GPU A']); "
        "list another scheme under runs, or score on a store with more data (--data).")
    _model(f, MODEL.replace('TASKS = ("autotune-config",)', ""))
    _meta(f, "task: autotune-config, scheme: by-gpu", "task: kernel-time, scheme: random10")
    checked = _refusal(lambda: check_submission(f, tmp_path / "ci", data_dir=store.path))
    ran = _refusal(lambda: run_submission(f, tmp_path / "ci", data_dir=store.path))
    assert isinstance(checked, NoDataError) and str(checked) == str(ran)
    assert str(checked).startswith(f"{f / 'submission.yaml'}: the run kernel-time/random10 has no data: task "
                                   "'kernel-time': the 'kernels' config of store")
    assert "collect or merge data first" in str(checked)


@pytest.mark.parametrize("out, error, pattern", [
    ("-", OutputWriteError, "'-' means standard output"),
    ("a-file/ci", OutputWriteError, "is not a folder"),
    ("ci", OutputExistsError, "already exists"),
])
def test_the_result_files_are_checked_by_check(tmp_path, store, out, error, pattern):
    f = model_folder(tmp_path)
    (tmp_path / "a-file").write_text("x")
    existing = tmp_path / "ci/autotune-config/by-gpu" / f"{NAME}.json"
    existing.parent.mkdir(parents=True)
    existing.write_text("{}")
    where = out if out == "-" else tmp_path / out
    checked = _refusal(lambda: check_submission(f, where, data_dir=store.path))
    ran = _refusal(lambda: run_submission(f, where, data_dir=store.path))
    assert isinstance(checked, error) and str(checked) == str(ran) and __import__("re").search(pattern, str(checked))
    if out == "ci":
        assert existing.read_text() == "{}"
        assert check_submission(f, where, data_dir=store.path, force=True).submission.name == NAME


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_out_is_found_by_check(tmp_path, store):
    f = model_folder(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        checked = _refusal(lambda: check_submission(f, locked / "ci", data_dir=store.path))
        ran = _refusal(lambda: run_submission(f, locked / "ci", data_dir=store.path))
    finally:
        locked.chmod(0o700)
    assert isinstance(checked, OutputWriteError) and str(checked) == str(ran) and "not writable" in str(checked)


RUN_ONLY = [
    ("import-fails", "import no_such_package_kgpubench\n" + MODEL, "importing the model failed"),
    ("fit-raises", MODEL.replace("self.m = float(np.mean(y)); return self", "raise RuntimeError('boom')"),
     "RuntimeError"),
    ("wrong-shape", MODEL.replace("np.full(len(X), self.m)", "[1.0]"), "shape"),
    ("make-model-not-callable", 'TASKS = ("autotune-config",)\nmake_model = 3\n', "make_model"),
]


@pytest.mark.parametrize("model, pattern", [c[1:] for c in RUN_ONLY], ids=[c[0] for c in RUN_ONLY])
def test_only_running_the_model_finds_these_and_the_help_says_so(tmp_path, store, model, pattern, monkeypatch,
                                                                  capsys):
    f = model_folder(tmp_path)
    _model(f, textwrap.dedent(model))
    assert check_submission(f, tmp_path / "ci", data_dir=store.path).submission.name == NAME
    with pytest.raises(SubmissionError, match=pattern):
        run_submission(f, tmp_path / "ci", data_dir=store.path, timeout_s=120)
    code, stdout, _ = cli(monkeypatch, capsys, "submission", "check", "--help")
    text = " ".join(stdout.split())
    assert code == 0 and "Only running the model finds: an import that fails" in text
    assert "predict returning anything but one finite number per test row" in text


def test_a_good_folder_passes_check_and_run(tmp_path, store, good_predictions, monkeypatch, capsys):
    f = model_folder(tmp_path)
    checked = check_submission(f, tmp_path / "ci", data_dir=store.path)
    assert [(r.task, r.scheme, r.file, r.out) for r in checked.runs] == [
        ("autotune-config", "by-gpu", f / "model.py", tmp_path / "ci/autotune-config/by-gpu/attack.json")]
    code, stdout, _ = cli(monkeypatch, capsys, "submission", "check", f, "--out", tmp_path / "ci", "--data",
                          store.path)
    assert code == 0 and stdout == "attack: model by Ada Example; runs autotune-config/by-gpu\n"
    p = predictions_folder(tmp_path / "p", good_predictions)
    assert run_submission(p, tmp_path / "p/ci", data_dir=store.path) == [tmp_path / "p/ci/autotune-config/by-gpu/"
                                                                         "attack.json"]


@pytest.mark.integration  # the model runs in the sandbox
def test_check_with_model_checks_runs_the_model_contract_in_the_sandbox(tmp_path, store, monkeypatch, capsys):
    """``submission check --model-checks``: the read-only checks, then the model checks per task (a line each); a
    model that keeps what it learnt between fits is refused in one line naming its file, task and check."""
    f = model_folder(tmp_path)
    code, stdout, _ = cli(monkeypatch, capsys, "submission", "check", f, "--out", tmp_path / "ci", "--data",
                          store.path, "--model-checks")
    lines = stdout.splitlines()
    assert code == 0 and lines[0] == "attack: model by Ada Example; runs autotune-config/by-gpu"
    assert [line.split(":")[0] for line in lines[1:]] == ["autotune-config"] * 4
    assert [line.split()[1:3] for line in lines[1:]] == [["pass", c + ":"] for c in
                                                         ("predictions", "seed-determinism", "thread-invariance",
                                                          "refit")]
    _model(f, textwrap.dedent(MODEL).replace("self.m = float(np.mean(y)); return self",
                                             "_KEPT.append(float(np.mean(y))); self.m = float(np.mean(_KEPT)); "
                                             "return self").replace("def make_model", "_KEPT = []\ndef make_model"))
    code, stdout, stderr = cli(monkeypatch, capsys, "submission", "check", f, "--out", tmp_path / "ci", "--data",
                               store.path, "--model-checks")
    text = " ".join(stderr.split())
    assert code == 1 and stdout.splitlines() == lines[:1]
    assert f"{f / 'model.py'}: model.py on autotune-config: fails refit (fitting on them after a fit on other rows" \
        in text
    code, stdout, _ = cli(monkeypatch, capsys, "submission", "check", f, "--out", tmp_path / "ci", "--data",
                          store.path)
    assert code == 0 and stdout.splitlines() == lines[:1]  # without --model-checks nothing runs the model
