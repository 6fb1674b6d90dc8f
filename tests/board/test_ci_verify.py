"""CI verify: `make test` re-runs a representative subset of the committed results of the fast baselines
(:data:`~kgpubench.board.leaderboard.FAST_BASELINES`: the median floor and the oracle reference) on the packaged
data and compares them with :func:`~kgpubench.board.leaderboard.verify`.

The whole set (``kgpubench leaderboard verify --only median --only oracle``, about 50 results) took over two minutes
of the suite on two cores; :data:`VERIFIED` re-runs eight of them. They are chosen so that, together, they hold
every metric that any committed fast result reports (so every metric scope, ``row``/``problem``/``choice``, every
declared tolerance and the default one of an undeclared score such as ``measurements``), both baseline families
(a model file run in the sandbox, ``kind == "model"``, and the reference rows, ``kind == "reference"``), and both
kinds of fold (one holdout fold, many random folds). ``verify`` treats each result the same way whatever its task
(the same job runner, the same :func:`~kgpubench.board.leaderboard.compare`), so a task left out adds no code path;
what a left-out task could still break is its packaged data, and the data is checked row by row elsewhere
(tests/tasks/test_splits.py, tests/store). :func:`test_the_subset_covers_every_metric_and_family` fails when a new
metric or family appears in the committed results without a verified result here.
"""

import shutil

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.results.result import Result
from kgpubench.tasks.metrics import METRICS

# (task, scheme, model): the cheapest committed results that together cover every metric and family.
VERIFIED = (
    ("autotune-config", "random10", "oracle"),  # problem-scope metrics (kendall_tau, top-k regret within noise)
    ("kernel-power", "holdout80", "median"),  # row-scope metrics with rmse, one holdout fold
    ("kernel-power", "holdout80", "oracle"),
    ("kernel-time", "holdout80", "median"),  # spearman
    ("kernel-time", "holdout80", "oracle"),
    ("npb-tpb", "random10", "median"),  # choice-scope metrics and the undeclared `measurements` score
    ("npb-tpb", "random10", "oracle"),
    ("stencil-tile", "by-gpu", "median"),  # the tile metrics (regret, improvement coefficient, share improved)
)

HAVE_RESULTS = lb.results_dir().exists() and any(lb.results_dir().glob("autotune-config/*/median.json"))
pytestmark = pytest.mark.skipif(not HAVE_RESULTS, reason="no committed leaderboard results yet")


def _fast_results() -> dict[tuple[str, str, str], Result]:
    return {(r.task, r.scheme, r.model): r for _, r in lb.read_results()
            if isinstance(r, Result) and r.model in lb.FAST_BASELINES}


def _metrics(results) -> set[str]:
    return {m for r in results for fold in r.folds.values() for m in fold.scores}


@pytest.mark.unit
def test_the_subset_covers_every_metric_and_family():
    every = _fast_results()
    ok = {key: r for key, r in every.items() if r.status == "ok"}
    tasks = {task for task, _, _ in ok}
    # the committed fast set itself: the floor and the reference on the tasks, the two named tasks among them
    assert len(every) >= 2 * len(tasks) and "autotune-config" in tasks and "kernel-time" in tasks
    assert set(VERIFIED) <= set(ok), sorted(set(VERIFIED) - set(ok))
    picked = [ok[key] for key in VERIFIED]
    assert _metrics(picked) == _metrics(ok.values())  # every metric, so every scope and tolerance
    assert {METRICS[m].scope for m in _metrics(picked) if m in METRICS} == {"row", "problem", "choice"}
    assert any(m not in METRICS for m in _metrics(picked))  # a score under the default tolerance
    assert {r.kind for r in picked} == {r.kind for r in ok.values()} == {"model", "reference"}
    assert {r.model for r in picked} == set(lb.FAST_BASELINES)
    assert {len(r.folds) == 1 for r in picked} == {True, False}


@pytest.mark.slow
def test_ci_verify_fast_baselines_on_the_packaged_data(tmp_path):
    """The committed results of :data:`VERIFIED` re-run (two worker processes) to their committed scores."""
    root = tmp_path / "results"
    for task, scheme, model in VERIFIED:
        dest = lb.result_path(root, task, scheme, model)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lb.result_path(lb.results_dir(), task, scheme, model), dest)
    n = lb.verify(root=root, only=list(lb.FAST_BASELINES), workers=2)
    assert n == len(VERIFIED)
