"""Stale results: a result made from other task rows than the store holds now (data merged since) is marked on
the board (README and site) with a one-line legend, scored predictions included; fresh results are not."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest
from task_fixtures import npb_table

from kgpubench.board import leaderboard as lb
from kgpubench.board.render import STALE_LEGEND, STALE_MARK, render_markdown
from kgpubench.board.site import render_all
from kgpubench.board.site.pages import task_page_name
from kgpubench.models.submission import score_predictions
from kgpubench.resources import default_data_dir
from kgpubench.results.result import BoardEntry, Result, Skipped
from kgpubench.store import store as store_module
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.tasks import get_task
from kgpubench.tasks.data import current_rows_sha256, task_data

pytestmark = pytest.mark.slow  # runs two baselines on the shipped npb-tpb data and merges into a copy of the store

TASK, SCHEME = "npb-tpb", "random10"
MEDIAN = [p for p in lb.baseline_files() if p.stem == "median"]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """Median and the oracle on the shipped npb-tpb data, plus scored predictions (kind ``predictions``) of
    the median of every test fold, all in one results folder."""
    root = tmp_path_factory.mktemp("stale")
    out = root / "board" / "results"
    lb.run(out_dir=out, models=MEDIAN, tasks=[TASK], render=False)
    data = task_data(TASK, SCHEME)
    ids, folds = data.rows["row_id"].to_pylist(), [str(f) for f in data.folds]
    test = [(r, f) for r, f in zip(ids, folds) if f in data.fold_names]
    pred = pa.table({"row_id": [r for r, _ in test], "fold": [f for _, f in test],
                     "prediction": [float(sorted(data.y)[len(data.y) // 2])] * len(test)})
    path = root / "mine.csv"
    pa_csv.write_csv(pred, path)
    res = score_predictions(path, TASK, SCHEME)
    (out / TASK / SCHEME / "mine.json").write_text(res.to_json())
    return out


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    """A copy of the shipped store with rows of two more NPB problems merged into it. Staleness reads the manifest
    and the rows, never the store's generated README and croissant.json: the merge writes the old README back and
    an empty croissant.json instead of regenerating both from every config (16 s of card figures)."""
    root = tmp_path_factory.mktemp("merged")
    shutil.copytree(default_data_dir(), root / "data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store_module, "store_readme", lambda store, body: body)
        mp.setattr(store_module, "render", lambda store: "{}")
        Store(root / "data").merge([write_shard(npb_table(), root / "npb.parquet")], today="2026-01-01")
    return root / "data"


def test_fresh_results_on_the_shipped_data_are_not_stale(fresh, tmp_path):
    records = lb.load_results(fresh, mark_stale=True)
    assert {e.record.kind for e in records if isinstance(e.record, Result)} == {"model", "reference", "predictions"}
    assert [e.stale for e in records] == [False] * len(records)
    text = render_markdown(records)
    assert STALE_MARK not in text and STALE_LEGEND not in text
    assert "| mine |" in text  # the scored predictions are on the board


def test_results_made_before_a_merge_are_marked_stale_on_the_board(fresh, merged, tmp_path):
    task = get_task(TASK)
    assert current_rows_sha256(task, merged) != current_rows_sha256(task, None)
    records = lb.load_results(fresh, data_dir=merged, mark_stale=True)
    scored = [e.record for e in records if e.record.status == "ok"]
    assert {r.model for r in scored} == {"median", "oracle", "mine"}
    assert all(e.stale for e in records)  # both schemes (by-gpu scores H100 and H200 since dataset 0.7.0)
    board = tmp_path / "board"
    render_all(records, board, results_dir=fresh)
    readme = (board / "README.md").read_text()
    assert f"| median {STALE_MARK} |" in readme
    assert f"| mine {STALE_MARK} |" in readme  # the prediction-only result stays, marked
    assert readme.count(f"| median {STALE_MARK} |") == 3  # random10, by-gpu and the per-GPU table's header
    assert readme.count(STALE_LEGEND) == 2  # one legend per scheme shown (random10, by-gpu)
    page = (board / task_page_name(TASK)).read_text()
    assert f"median {STALE_MARK}" in page and f"mine {STALE_MARK}" in page
    assert "re-run it with <code>kgpubench leaderboard run</code>" in page


def test_the_committed_results_are_not_stale_on_the_shipped_data_and_are_after_a_merge(merged, tmp_path):
    results = tmp_path / "results"
    for task in (TASK, "program-time"):  # two tasks of two configs, as committed
        shutil.copytree(lb.results_dir() / task, results / task)
    now = lb.load_results(results, mark_stale=True)
    assert now and not any(e.stale for e in now)
    after = lb.load_results(results, data_dir=merged, mark_stale=True)
    stale = {e.path for e in after if e.stale}
    assert {p.relative_to(results).parts[0] for p in stale} == {TASK}  # npb's rows changed; program-time's did not
    assert stale == {e.path for e in after if e.record.task == TASK}  # every one, skip status too
    committed = [e for e in now if e.record.task == TASK and e.record.status == "ok"]
    assert len([e for e in after if e.record.task == TASK and e.record.status == "ok"]) == len(committed) >= 20
    assert [e.path for e in after] == sorted(results.glob("*/*/*.json"))  # each entry names the file it was read from


def test_a_skipped_scheme_made_from_other_rows_says_so():
    """A skip status is marked too: the rows merged since may make the scheme evaluable (more GPUs)."""
    task = get_task("kernel-time")
    skipped = Skipped(task=task.name, scheme="by-gpu", reason="every row has one GPU (NVIDIA H100 80GB HBM3), so "
                      "leave-one-GPU-out has no training fold")
    text = render_markdown([BoardEntry(skipped, stale=True)], [task])
    assert f"*Skipped* {STALE_MARK}: every row has one GPU" in text and STALE_LEGEND in text
    fresh_text = render_markdown([BoardEntry(skipped, stale=False)], [task])
    assert f"*Skipped* {STALE_MARK}" not in fresh_text and STALE_LEGEND not in fresh_text
    assert "*Skipped*: every row has one GPU" in fresh_text
