"""``leaderboard run|verify --ray`` on a local Ray: one task per fold, results identical to the serial run's."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.results.records import Aggregate

pytestmark = [pytest.mark.usefixtures("ray_local"), pytest.mark.slow]
FAST = [p for p in lb.baseline_files() if p.stem in ("median", "regression_tree")]
# What differs between two runs of the same board by design: how long they took, and when.
RUN_KEYS = {"wall_time_s", "cpu_time_s", "date"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("ray-lb") / "store", autotune_table())


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[Path]:
    """The two fast baselines, and a model that fails on one fold only (by-gpu, the GPU A fold)."""
    bad = tmp_path_factory.mktemp("models") / "fails_once.py"
    bad.write_text(textwrap.dedent('''
        import numpy as np

        class Model:
            def __init__(self, *, seed=0):
                self.seed = seed

            def fit(self, X, y):
                if len(y) == 48 and float(np.max(y)) < 10.0:  # by-gpu, training on GPUs B and C
                    raise ValueError("this fold is not for me")
                self.mean_ = float(np.mean(y))
                return self

            def predict(self, X):
                return np.full(len(X), self.mean_)

        TASKS = ["autotune-config"]

        def make_model(task, seed=0):
            return Model(seed=seed)
        '''))
    return [*FAST, bad]


def _results(out: Path) -> dict[str, dict]:
    return {p.relative_to(out).as_posix(): {k: v for k, v in json.loads(p.read_text()).items() if k not in RUN_KEYS}
            for p in sorted(out.rglob("*.json"))}


@pytest.fixture(scope="module")
def boards(store, models, tmp_path_factory):
    """The same jobs run serially and on Ray (one task per fold), written as ``leaderboard run`` writes them:
    (jobs, serial results, Ray results)."""
    from kgpubench.ray.board import RayExecutor
    from kgpubench.results.result import result_json

    root = tmp_path_factory.mktemp("boards")
    jobs = [j for j in lb.plan(models=models, tasks=["autotune-config"])
            if j.scheme == "by-gpu" or j.name == "regression_tree"]

    def write(out: Path, ran) -> None:
        for job, result in ran:
            path = out / job.task.name / job.scheme / f"{job.name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(result_json(result))

    write(root / "serial", lb.run_jobs(jobs, data_dir=store.path))
    executor = RayExecutor(split_folds=True)  # this machine's 2 CPUs would choose one task per job
    try:
        write(root / "ray", lb.run_jobs(jobs, data_dir=store.path, executor=executor))
    finally:
        executor.shutdown()
    return jobs, root / "serial", root / "ray"


def test_one_ray_task_per_fold(boards, store):
    from kgpubench.ray.board import fold_plan

    jobs, _, _ = boards
    by_gpu = next(j for j in jobs if j.scheme == "by-gpu" and j.name == "median")
    assert fold_plan(by_gpu, store.path) == ["GPU A", "GPU B", "GPU C"]  # one Ray task per GPU
    random = next(j for j in jobs if j.scheme == "random10")
    assert len(fold_plan(random, store.path)) >= 2
    assert fold_plan(next(j for j in jobs if j.name == "oracle"), store.path) is None  # no model: one task


def test_parallel_board_identical_to_serial(boards, store):
    jobs, serial, parallel = boards
    a, b = _results(serial), _results(parallel)
    assert sorted(a) == sorted(b) and len(a) == 5  # by-gpu: 3 models + the oracle; random10: the tree
    for name in a:
        assert a[name] == b[name], name  # scores, samples, predictions hash, failure messages
    from kgpubench.ray.board import fold_plan

    random = next(j for j in jobs if j.scheme == "random10" and j.name == "regression_tree")
    tree = b["autotune-config/random10/regression_tree.json"]
    assert tree["status"] == "ok" and sorted(tree["folds"]) == sorted(fold_plan(random, store.path))
    assert len(tree["predictions_sha256"]) == 64 and len(tree["samples"]) > 0
    failed = b["autotune-config/by-gpu/fails_once.json"]  # one fold failed: rerun as one task, as serial
    assert failed["status"] == "failed" and "this fold is not for me" in failed["message"]


def test_verify_passes_either_way(boards, store):
    from typer.testing import CliRunner

    from kgpubench.cli import app
    from kgpubench.ray.board import FOLD_TASKS_FROM, RayExecutor

    _, serial, parallel = boards
    assert FOLD_TASKS_FROM > 2 and RayExecutor().split_folds is False  # 2 CPUs: one task per job
    assert lb.verify(root=parallel, data_dir=store.path, only=["median"]) == 1  # Ray results, verified serially
    res = CliRunner().invoke(app, ["leaderboard", "verify", "--ray=", "--results", str(serial), "--data",
                                   str(store.path), "--only", "median"])  # serial results, verified on Ray
    # (2 CPUs: one task per job, the other granularity)
    assert res.exit_code == 0 and "verified 1 result(s)" in res.output, res.output


def test_join_folds_keeps_the_serial_sample_and_hash():
    import hashlib

    import numpy as np

    from kgpubench.ray.board import join_folds

    preds = [np.array([1.0, 2.0]), np.array([3.5])]
    from kgpubench.results.result import Result

    parts = [{"folds": 2, "predictions": [preds[i]],
              "record": Result(status="ok", task="t", scheme="s", folds={f"f{i}": {"scores": {"m": float(i + 1)}}},
                               samples=[[0.0, 1.0]] * 300, wall_time_s=1.5, cpu_time_s=0.5, model="x")}
             for i in range(2)]
    out = join_folds(parts)
    # two folds (1 and 2): the bootstrap's 2.5 % and 97.5 % quantiles of the resampled means are 1 and 2
    assert out.aggregate["m"] == Aggregate(mean=1.5, std=0.5, median=1.5, folds=2, ci95=(1.0, 2.0))
    assert len(out.samples) == 400 and out.wall_time_s == 3.0 and out.model == "x"
    expected = hashlib.sha256(b"0:2:" + np.array([1.0, 2.0]).tobytes() + b"1:1:" + np.array([3.5]).tobytes())
    assert out.predictions_sha256 == expected.hexdigest()


def test_the_ray_path_patches_nothing_and_imports_no_private_name():
    """ray/board.py reaches the sandbox and the board through their public names only: importing it leaves
    ``ModelSession.predict`` the class's own, and it takes no ``_name`` from another module."""
    import ast
    import importlib

    from kgpubench.sandbox.session import ModelSession

    own = ModelSession.__dict__["predict"]
    board = importlib.import_module("kgpubench.ray.board")
    assert ModelSession.__dict__["predict"] is own and own.__qualname__ == "ModelSession.predict"
    assert own.__module__ == "kgpubench.sandbox.session"
    tree = ast.parse(Path(board.__file__).read_text())
    private = [f"{node.module}.{a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for a in node.names if a.name.startswith("_") and a.name != "__future__"]
    assert private == []
    assigned = [ast.unparse(t) for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Attribute) and not ast.unparse(t).startswith("self.")]
    assert assigned == []  # no attribute of an imported module or class is set
    assert board.run_fold.__globals__["evaluate"] is importlib.import_module("kgpubench.models.evaluation").evaluate
