"""A board site rendered once for the site tests: the committed results of five tasks (a recommendation task
with leave-one-GPU-out, a measurement-strategy task, a regression task on two GPUs, one with a skipped scheme,
a task with no result), plus a failed result, with the plotted samples cut to 120 points so drawing is quick."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.tasks import get_task

TASKS = ("autotune-config", "npb-tpb", "kernel-power", "kernel-time", "stencil-tile")
NO_RESULT = "stencil-tile"  # its committed results are left out (since the H200 rows it has some)
ROOT = Path(__file__).parents[2]


def site_results(folder: Path) -> list[dict]:
    """The committed results of :data:`TASKS`, copied under ``folder/results`` (so the provenance links
    resolve), samples trimmed, with one failed kernel-power result added."""
    src = ROOT / "leaderboard" / "results"
    for task in TASKS:
        if (src / task).is_dir():
            shutil.copytree(src / task, folder / "results" / task)
    results = [r for r in lb.load_results(folder / "results") if r["task"] in TASKS]
    results = [r for r in results if r["task"] != NO_RESULT]  # its page: a task with nothing scored
    for r in results:
        if r.get("samples"):
            r["samples"] = r["samples"][:: max(1, len(r["samples"]) // 120)][:120]
    ok = next(r for r in results if r["task"] == "kernel-power" and r["scheme"] == "random10"
              and r.get("status", "ok") == "ok")
    failed = copy.deepcopy(ok)
    failed.update(model="broken_model", status="failed", message="fold 3: predict returned 5 NaN values")
    for key in ("folds", "aggregate", "samples", "_path"):
        failed.pop(key, None)
    return [*results, failed]


@pytest.fixture(scope="session")
def rendered_site(tmp_path_factory) -> tuple[Path, list[dict]]:
    from kgpubench.board.site import write_site

    folder = tmp_path_factory.mktemp("site")
    results = site_results(folder)
    write_site(results, folder, [get_task(t) for t in TASKS])
    return folder, results
