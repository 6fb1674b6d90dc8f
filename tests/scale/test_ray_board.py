"""``leaderboard run|verify --ray`` on a local Ray: one task per fold, results identical to the serial run's."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from task_fixtures import autotune_table, make_store

from kgpubench import leaderboard as lb

pytestmark = pytest.mark.usefixtures("ray_local")
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


def test_parallel_board_identical_to_serial_and_verifies(store, models, tmp_path):
    from kgpubench.scale.board import RayExecutor, fold_plan

    jobs = lb.plan(models=models, tasks=["autotune-config"])
    by_gpu = next(j for j in jobs if j.scheme == "by-gpu" and j.name == "median")
    assert fold_plan(by_gpu, store.path) == ["GPU A", "GPU B", "GPU C"]  # one Ray task per GPU
    random = next(j for j in jobs if j.scheme == "random10" and j.name == "median")
    random_folds = fold_plan(random, store.path)
    assert len(random_folds) >= 2
    assert fold_plan(next(j for j in jobs if j.name == "oracle"), store.path) is None  # no model: one task
    serial = tmp_path / "serial" / "results"
    lb.run(data_dir=store.path, out_dir=serial, models=models, tasks=["autotune-config"], render=False)
    executor = RayExecutor()
    parallel = tmp_path / "ray" / "results"
    lb.run(data_dir=store.path, out_dir=parallel, models=models, tasks=["autotune-config"], render=False,
           executor=executor)
    a, b = _results(serial), _results(parallel)
    assert sorted(a) == sorted(b) and len(a) == 8  # 3 models + the oracle, 2 schemes
    for name in a:
        assert a[name] == b[name], name  # scores, samples, predictions hash, failure messages
    tree = b["autotune-config/random10/regression_tree.json"]
    assert tree["status"] == "ok" and sorted(tree["folds"]) == sorted(random_folds) and len(tree["predictions_sha256"]) == 64
    failed = b["autotune-config/by-gpu/fails_once.json"]
    assert failed["status"] == "failed" and "this fold is not for me" in failed["message"]
    assert lb.verify(root=parallel, data_dir=store.path, only=["median", "regression_tree"]) == 4
    assert lb.verify(root=serial, data_dir=store.path, only=["median", "regression_tree"], executor=executor) == 4
    executor.shutdown()


def test_join_folds_keeps_the_serial_sample_and_hash():
    import hashlib

    import numpy as np

    from kgpubench.scale.board import join_folds

    preds = [np.array([1.0, 2.0]), np.array([3.5])]
    parts = [{"folds": 2, "predictions": [preds[i]],
              "record": {"folds": {f"f{i}": {"scores": {"m": float(i + 1)}}}, "samples": [[0.0, 1.0]] * 300,
                         "wall_time_s": 1.5, "cpu_time_s": 0.5, "model": "x"}} for i in range(2)]
    out = join_folds(parts)
    assert out["aggregate"]["m"] == {"mean": 1.5, "std": 0.5, "median": 1.5, "folds": 2}
    assert len(out["samples"]) == 400 and out["wall_time_s"] == 3.0 and out["model"] == "x"
    expected = hashlib.sha256(b"0:2:" + np.array([1.0, 2.0]).tobytes() + b"1:1:" + np.array([3.5]).tobytes())
    assert out["predictions_sha256"] == expected.hexdigest()
