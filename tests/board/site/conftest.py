"""A board site rendered once for the site tests: the committed results of five tasks (a recommendation task
with leave-one-GPU-out, a measurement-strategy task, a regression task on two GPUs, one with a skipped scheme,
a task with no result), plus a failed result, with the plotted samples cut to 120 points so drawing is quick."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.results.result import ABSENT, BoardEntry, Result
from kgpubench.tasks import get_task

TASKS = ("autotune-config", "npb-tpb", "kernel-power", "kernel-time", "stencil-tile")
NO_RESULT = "stencil-tile"  # its committed results are left out (since the H200 rows it has some)
ROOT = Path(__file__).parents[3]


def _trimmed(entry: BoardEntry) -> BoardEntry:
    """``entry`` with its plotted samples cut to at most 120 points."""
    r = entry.record
    if not isinstance(r, Result) or not r.samples:
        return entry
    return replace(entry, record=replace(r, samples=r.samples[:: max(1, len(r.samples) // 120)][:120]))


def site_results(folder: Path) -> list[BoardEntry]:
    """The committed results of :data:`TASKS`, copied under ``folder/results`` (so the provenance links
    resolve), samples trimmed, with one failed kernel-power result added (it has no file)."""
    src = ROOT / "leaderboard" / "results"
    for task in TASKS:
        if (src / task).is_dir():
            shutil.copytree(src / task, folder / "results" / task)
    # NO_RESULT's page: a task with nothing scored
    entries = [_trimmed(e) for e in lb.load_results(folder / "results")
               if e.record.task in TASKS and e.record.task != NO_RESULT]
    ok = next(e.record for e in entries if e.record.task == "kernel-power" and e.record.scheme == "random10"
              and e.record.status == "ok")
    failed = replace(ok, model="broken_model", status="failed", message="fold 3: predict returned 5 NaN values",
                     folds=ABSENT, aggregate=ABSENT, samples=ABSENT)
    return [*entries, BoardEntry(failed)]


@pytest.fixture(scope="session")
def rendered_site(tmp_path_factory) -> tuple[Path, list[BoardEntry]]:
    from kgpubench.board.site import write_site

    folder = tmp_path_factory.mktemp("site")
    results = site_results(folder)
    write_site(results, folder, [get_task(t) for t in TASKS])
    return folder, results
