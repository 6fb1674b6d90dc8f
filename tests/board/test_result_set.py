"""The board's results of a task as one ResultSet: the ranked, per-GPU and stale views the README, the site and
``evaluate``'s summary all read, checked on the committed results against their files' own numbers."""

import json
from dataclasses import replace

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.result_set import BY_GPU, ResultSet
from kgpubench.board.summary import board_rank
from kgpubench.tasks import list_tasks
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.reference import ORACLE

pytestmark = pytest.mark.skipif(not lb.results_dir().exists(), reason="no committed results in this checkout")


@pytest.fixture(scope="module")
def entries():
    return lb.load_results()


def test_ranked_follows_the_files_means_and_leaves_the_oracle_out(entries):
    checked = 0
    for task in list_tasks():
        results = ResultSet.of(task, entries)
        assert all(e.record.task == task.name for e in results.entries)
        metric = task.primary_metric
        sign = -1 if METRICS[metric].higher_is_better else 1
        for scheme in task.evaluated_schemes:
            order = results.ranked(scheme)
            paths = {id(e.record): e.path for e in results.of_scheme(scheme)}
            raw = [_raw_of(paths[id(r)]) for r in order]
            assert not any(d.get("kind") == "reference" or ORACLE.is_oracle(d.get("model")) for d in raw)
            measured = [(d.get("aggregate", {}).get("measurements") or {}).get("mean", 0) > 0 for d in raw]
            assert measured == sorted(measured)  # the strategies that measure the target come after the models
            means = [sign * d["aggregate"][metric]["mean"] for d, m in zip(raw, measured) if not m]
            assert means == sorted(means), (task.name, scheme)
            ok = [d for d in map(_raw_of, (e.path for e in results.of_scheme(scheme)))
                  if d.get("status", "ok") == "ok" and d.get("kind") == "model"
                  and (d["aggregate"].get(metric) or {}).get("mean") is not None]
            assert len(order) == len(ok), (task.name, scheme)
            standings = results.standings(scheme)
            assert all(e.record is st.result for st, e in standings)
            assert [st.result for st, _ in standings if st.rank is not None] == order[:len(
                [st for st, _ in standings if st.rank is not None])]
            checked += bool(order)
    assert checked >= 30


def _raw_of(path) -> dict:
    return json.loads(path.read_text())


def test_per_gpu_is_each_ranked_models_fold_scores_from_its_file(entries):
    checked = 0
    for task in list_tasks():
        results = ResultSet.of(task, entries)
        scores = results.per_gpu(BY_GPU)
        order = [r.model for r in results.ranked(BY_GPU)]
        assert list(scores) == [m for m in order if m in scores]
        paths = {e.record.model: e.path for e in results.of_scheme(BY_GPU) if e.record.status == "ok"}
        for model, per in scores.items():
            folds = _raw_of(paths[model])["folds"]
            want = {g: f["scores"][task.primary_metric] for g, f in folds.items()
                    if f["scores"].get(task.primary_metric) is not None}
            assert per == want, (task.name, model)
            checked += len(per)
        assert not any(ORACLE.is_oracle(m) for m in scores)
        if task.gpu_baseline and task.gpu_baseline in order:
            assert task.gpu_baseline in results.per_gpu(BY_GPU, limit=1)
    assert checked > 100


def test_stale_is_what_the_entries_say(entries):
    task = next(t for t in list_tasks() if t.name == "kernel-time")
    results = ResultSet.of(task, entries)
    assert results.stale() == []  # read without comparing to the store: nothing marked
    marked = [replace(e, stale=i % 3 == 0) for i, e in enumerate(results.entries)]
    again = ResultSet.of(task, marked)
    assert again.stale() == [e for e in marked if e.stale] and len(again.stale()) >= 5
    scheme = marked[0].record.scheme
    assert again.stale(scheme) == [e for e in marked if e.stale and e.record.scheme == scheme]


def test_evaluate_ranks_a_board_model_where_the_board_does(entries):
    records = [e.record for e in entries]
    checked = 0
    for task in list_tasks():
        for scheme in task.evaluated_schemes:
            standings = [st for st, _ in ResultSet.of(task, entries).standings(scheme) if st.rank is not None]
            if len(standings) < 2:
                continue
            first, last = standings[0], standings[-1]
            n = len(standings)
            assert board_rank(first.result, records, task) == (first.rank, n), (task.name, scheme)
            assert board_rank(last.result, records, task) == (last.rank, n), (task.name, scheme)
            checked += 1
    assert checked >= 20
