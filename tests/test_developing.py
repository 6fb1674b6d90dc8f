"""docs/DEVELOPING.md's "how to add" recipes, each done here step by step (the suite recipe is walked through in
tests/measure/test_contracts.py). If a recipe changes, this file changes with it."""

from __future__ import annotations

import dataclasses
import datetime
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board.baselines import BaselineFile, On
from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import read_capped
from kgpubench.importers import api as importers
from kgpubench.importers.api import folder_to_shard
from kgpubench.importers.common import (
    TimingBatch,
    arrow_column,
    base_row,
    check_times,
    collected_at,
    import_gpu_columns,
    problem_size_text,
    resolve_gpu,
    run_id_for,
    split_params,
)
from kgpubench.models.evaluation import evaluate, run_folds
from kgpubench.models.submission import check_factory, declared_tasks
from kgpubench.schema import TABLES, Column, Table
from kgpubench.schema.common import common_head, provenance_columns
from kgpubench.sources import KNOWN_SOURCES, Provenance
from kgpubench.store.shards import read_shard
from kgpubench.store.store import Store
from kgpubench.store.validation import validate_table
from kgpubench.tasks import Task, TaskRegistry, metrics
from kgpubench.tasks.data import task_data
from kgpubench.tasks.definitions import GPU_FEATURES
from kgpubench.tasks.scoring import score_fold


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("dev") / "store", autotune_table())


def _median_male_by_fold(data) -> dict[str, float]:
    """By hand: the median model's mean |ln p - ln y| on every fold (p = median of the other folds' targets)."""
    out = {}
    for fold in data.fold_names:
        test = data.folds == fold
        out[fold] = float(np.mean(np.abs(np.log(np.median(data.y[~test])) - np.log(data.y[test]))))
    return out


def test_add_a_task(store):
    # 1. Declare it (kgpubench/tasks/definitions.py, ALL_TASKS): config, target, allowed features, metrics...
    task = Task(name="autotune-time", config="autotune", target="time_ms_median", kind="regression", seed="-",
                features=("kernel", "problem_size", "params", *GPU_FEATURES), metrics=("male", "mdape"),
                schemes=("random10", "by-gpu"), description="Predict the time of one auto-tuning configuration.")
    # 2. Registration runs the leakage guard and checks the declared scorer and oracle.
    assert TaskRegistry().register(task.name, task) is task
    with pytest.raises(Exception, match="label leakage"):
        TaskRegistry().register(task.name, dataclasses.replace(task, features=(*task.features, "time_ms_reported")))
    # 3. It selects rows, makes folds and scores like every other task.
    data = task_data(task, "by-gpu", store.path)
    assert data.rows.num_rows == 72 and data.fold_names == ["GPU A", "GPU B", "GPU C"]
    folds, _ = run_folds(data, lambda task, seed: _Median(), model_name="median")
    assert {f: r["scores"]["male"] for f, r in folds.items()} == pytest.approx(_median_male_by_fold(data))


class _Median:
    def fit(self, X, y):
        self.m = float(np.median(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.m)


@pytest.mark.slow
@pytest.mark.integration
def test_add_a_baseline(store, tmp_path):
    # 1. A file with make_model(task, seed) returning a scikit-learn estimator (baselines/<name>.py).
    path = tmp_path / "median_dummy.py"
    path.write_text(textwrap.dedent('''
        from sklearn.dummy import DummyRegressor


        def make_model(task, seed):
            return DummyRegressor(strategy="median")
    '''))
    # 2. The checks a submission gets, reading the file without running it.
    check_factory(path)
    assert declared_tasks(path) == ()  # no TASKS in the file: where it runs is declared outside it
    # 3. Its line in RUNS_ON (kgpubench/board/baselines.py) makes it a BaselineFile of the registry, registered here
    # for the block; the board plans it on the board schemes of the tasks its rule selects.
    rule = (On(config="autotune", kind="recommendation"),)
    with lb.BASELINES.added(path.stem, BaselineFile(path, rule)):
        jobs = lb.plan(models=[path], references=False)
    assert [(j.task.name, j.scheme) for j in jobs] == [("autotune-config", "random10"), ("autotune-config", "by-gpu")]
    # 4. Evaluated in the sandbox, it scores what the median scores, computed by hand.
    result = evaluate(path, "autotune-config", "by-gpu", data_dir=store.path, trust=True)
    data = task_data("autotune-config", "by-gpu", store.path)
    assert result.status == "ok" and result.model == "median_dummy"
    assert {f: r.score("male") for f, r in result.folds.items()} == pytest.approx(_median_male_by_fold(data))


def _rows_from_toy(loaded, prov, *, gpu=None):
    """An importer: one parsed file in, `autotune` rows out, built with the shared helpers."""
    data, path = loaded.data, loaded.path
    shared = base_row(prov, loaded, run_id_for("toy", loaded.sha256), resolve_gpu(data.get("device"), gpu, path),
                      "toy-json")
    shared.update(kernel=data["kernel"], problem_size=problem_size_text(data["size"]),
                  search_space_size=len(data["runs"]))
    batch, rows = TimingBatch(), []
    for i, run in enumerate(data["runs"]):
        params, params_text = split_params(run["config"])
        row = dict(shared, params=params, params_text=params_text, status="ok",
                   collected_at=collected_at(run.get("when"), prov, path, str(i)))
        batch.add(row, check_times(run["times"], path, str(i)))
        rows.append(row)
    batch.fill()
    return rows


def test_add_an_importer(tmp_path, monkeypatch):
    # 1. Recognise the format by content and read it into rows (a module in kgpubench/importers/).
    toy = importers.ImportFormat("toy-json", lambda d: isinstance(d, dict) and "toy_runs_version" in d,
                                 _rows_from_toy, "toy", "a toy file (top-level `toy_runs_version`)")
    # 2. Register it in importers.api.FORMATS (a built-in one is declared there; this one for the block) ...
    with importers.FORMATS.added(toy.name, toy):
        # 3. ... and allow its name in the schema's SOURCE_FORMATS (kgpubench/schema/autotune.py; a schema change).
        table = TABLES["autotune"]
        cols = tuple(dataclasses.replace(c, values=(*c.values, "toy-json")) if c.name == "source_format" else c
                     for c in table.columns)
        monkeypatch.setitem(TABLES, "autotune", dataclasses.replace(table, columns=cols))
        path = tmp_path / "toy.json"
        path.write_text(json.dumps({"toy_runs_version": 1, "device": "RTX 2080 Ti", "kernel": "gemm", "size": [64, 64],
                                    "runs": [{"config": {"bx": 16}, "times": [1.0, 3.0, 2.0], "when": "2025-01-02"},
                                             {"config": {"bx": 32}, "times": [0.5, 0.5], "when": "2025-01-02"}]}))
        rows = importers.import_table([path], source="example", license="CC-BY-4.0")
        assert rows["time_ms_median"].to_pylist() == [2.0, 0.5] and rows["repeats"].to_pylist() == [3, 2]
        assert set(rows["source_format"].to_pylist()) == {"toy-json"} and rows["problem_size"][0].as_py() == "64x64"
        assert validate_table(rows, "autotune", file=str(path)) == []


def test_add_a_folder_importer(tmp_path, monkeypatch):
    """The folder-importer recipe: a table of its own, a Provenance, a module reading the upstream folder into columns
    and ``from_columns``, ``folder_to_shard`` writing the validated shard; the store then takes it like any shard."""
    # 1. The table: kgpubench/schema/<table>.py (common head, the source's own key columns, a time, provenance),
    #    registered in TABLES (kgpubench/schema/__init__.py).
    table = Table(name="toy_ops", version="1.0.0", description="toy operator times", changelog=(("1.0.0", "first"),),
                  columns=tuple(common_head() + [
                      Column("op", "string", "operator name", nullable=False, key=True),
                      Column("size", "int64", "problem size", min=1, key=True),
                      Column("time_ms", "float64", "mean time per call", min=0.0)]
                      + provenance_columns()))  # source, collected_at, source_file, source_license, ...
    monkeypatch.setitem(TABLES, table.name, table)
    # 2. Where the rows come from: a Provenance in kgpubench/sources.py (KNOWN_SOURCES: the card cites it).
    prov = Provenance(name="toy", license="MIT", undated=datetime.datetime(2026, 1, 2, tzinfo=datetime.timezone.utc))
    monkeypatch.setitem(KNOWN_SOURCES, prov.name, prov)

    # 3. kgpubench/importers/<source>.py: find the files by the upstream layout, read each through
    #    foundation/capped.py into numpy columns (bad input: one ImportFormatError naming file, row, column), resolve
    #    each device once (import_gpu_columns), and build the table with Table.from_columns.
    def import_toy(root):
        files = sorted(Path(root).glob("*/times.csv"))
        if not files:
            raise ImportFormatError(f"{root}: holds no <gpu>/times.csv; pass the toy folder.")
        cols = {"op": [], "size": [], "time_ms": [], "source_file": [], "_device": []}
        for path in files:
            for i, line in enumerate(read_capped(path).decode().splitlines()[1:]):
                op, size, ms = line.split(",")
                if not size.isdigit():
                    raise ImportFormatError(f"{path}: row {i + 1}, column 'size': {size!r}; expected a whole number.")
                for name, value in zip(("op", "size", "time_ms", "source_file", "_device"),
                                       (op, int(size), float(ms), path.relative_to(root).as_posix(), path.parent.name)):
                    cols[name].append(value)
        gpus = {d: import_gpu_columns(d) for d in dict.fromkeys(cols["_device"])}
        n = len(cols["op"])
        arrays = {c.name: arrow_column(c, np.asarray(cols[c.name])) for c in table.columns if c.name in cols}
        arrays.update({g: [gpus[d].get(g) for d in cols["_device"]] for g in next(iter(gpus.values()))
                       if g in table.column_names})
        return table.from_columns(arrays, n, constants={
            "status": "ok", "run_id": "toy-0001", "source": prov.source, "collected_at": prov.undated,
            "kgpubench_version": "0.1.0", "source_license": prov.license})

    # 4. import_to_shard: folder_to_shard refuses an existing --out, links out of the folder and a folder without the
    #    upstream's LICENSE, then validates and writes (a `kgpubench import <source>` command in cli/importexport.py).
    root = tmp_path / "toy"
    (root / "NVIDIA A100-SXM4-80GB").mkdir(parents=True)
    (root / "NVIDIA A100-SXM4-80GB/times.csv").write_text("op,size,ms\ngemm,64,0.5\ngemm,128,1.5\n")
    (root / "LICENSE").write_text("MIT")
    path, rows = folder_to_shard(import_toy, "toy_ops", root, tmp_path / "toy.parquet")
    assert rows.num_rows == 2 and rows["time_ms"].to_pylist() == [0.5, 1.5]
    assert rows["gpu_memory_bandwidth_gbs"][0].as_py() > 1000  # the catalogue's figure for the A100
    assert read_shard(path)[0] == "toy_ops" and validate_table(rows, "toy_ops", file=str(path)) == []
    (root / "NVIDIA A100-SXM4-80GB/times.csv").write_text("op,size,ms\ngemm,big,0.5\n")
    with pytest.raises(ImportFormatError, match="row 1, column 'size'"):
        folder_to_shard(import_toy, "toy_ops", root, tmp_path / "bad.parquet")
    assert not (tmp_path / "bad.parquet").exists()
    # 5. The store takes the shard like any other (kgpubench merge); the card, README and hostile corpus follow.
    store = Store(tmp_path / "store")
    store.merge([path], today="2026-01-01")
    assert store.read("toy_ops").num_rows == 2


def test_add_a_metric():
    # 1. A pure function of arrays (kgpubench/tasks/metrics.py) and its declaration in METRICS.
    def max_log_error(y, p):
        return float(np.max(np.abs(np.log(np.asarray(p) / np.asarray(y)))))

    metric = metrics.Metric("max_le", max_log_error, False, "row", "maximum absolute log error", "ln units",
                            rel_tol=1e-3)
    with metrics.METRICS.added("max_le", metric):  # (a built-in one is declared in METRICS; this one for the block)
        _score_with_max_le()


def _score_with_max_le():
    # 2. A task names it among its metrics; fold scoring and the board's tolerance pick it up.
    task = Task(name="toy-time", config="autotune", target="time_ms_median", kind="regression", seed="-",
                features=("kernel",), metrics=("male", "max_le"), schemes=("random10",), description="toy")
    rows = autotune_table(gpus=("GPU A",)).slice(0, 3)
    y = np.array([1.0, 2.0, 4.0])
    p = np.array([2.0, 2.0, 1.0])
    scores = score_fold(task, rows, y, p)
    assert scores["max_le"] == pytest.approx(np.log(4.0))  # |ln(1/4)|
    assert scores["male"] == pytest.approx((np.log(2.0) + 0 + np.log(4.0)) / 3)
    assert lb.tolerance("max_le") == 1e-3
