"""What each baseline sees (kgpubench.board.baselines): one line per model file of baselines/, in agreement with the
file's own docstring where that says what it sees, and shown on the board (README, the site's overview and each
task page) for every baseline that has a result there."""

from __future__ import annotations

import ast
import html
import re

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.baselines import MAX_CHARS, SEES, baseline_name, seen_rows, sees
from kgpubench.board.render import SEES_ANCHOR, SEES_HEADING, page_blocks, render_markdown, sees_blocks
from kgpubench.board.site import site_pages
from kgpubench.board.site.pages import INDEX, task_page_name
from kgpubench.results.result import BoardEntry, Skipped, read_record
from kgpubench.tasks import get_task, list_tasks

# Baselines whose docstring says what they see -> phrases that docstring and the board's line both carry.
DOC_TERMS = {
    **dict.fromkeys(("elm", "knn", "mlp"),
                    ("the task's features", "launch, binary, inputs, GPU figures", "no profiler counters")),
    # the tree ensembles also run on rodinia-time-counters, which adds the launch's prof_* counters
    **dict.fromkeys(("lgbm", "random_forest", "regression_tree", "xgb"),
                    ("the task's features", "launch, binary, inputs, GPU figures", "prof_*")),
    "config_consensus": ("the problem", "configuration", "training gpus' times of that problem"),
    "config_blend": ("the problem (kernel, problem size)", "configuration", "catalogue figures",
                     "training gpus' times"),
    "kernel_scaling": ("launch", "architecture", "catalogue figures"),
    "launch_transfer": ("the launch", "architecture and catalogue figures", "training GPUs' times of the same launch"),
    "median": ("nothing but the training target",),
    "nearest_gpu": ("kernel", "launch_index", "gpu_architecture", "catalogue figures"),
    "neusight_wave": ("the operator, its shape and nominal work, and the GPU's catalogue figures (SMs, peak fp32, "
                      "bandwidth, ...)",),
    "operator_roofline": ("the operator's nominal flops and bytes and the GPU's peak fp32 and memory bandwidth",),
    "operator_pairs": ("the operator, its shape and nominal work", "the GPUs' catalogue figures",
                       "training GPUs' times of the same shape"),
    "operator_transfer": ("the operator, its shape and nominal work", "the GPUs' catalogue figures"),
    "program_transfer": ("the program's identity (set, level, file, compile mode)", "the GPU figures"),
    "roofline_util": ("roofline", "GPU figures", "prof_*"),
    "tensor_roofline": ("nominal flops and bytes", "tensor peak", "bandwidth"),
    "roofline_transfer": ("every non-GPU feature", "nominal work", "tensor peak"),
    "roofline_gbdt": ("the task's features", "nominal work", "tensor peak", "ln t_roof"),
    "solver_consensus": ("the problem's id", "solver", "training GPUs' times of that problem"),
    "gemm_waves": ("m, n, k", "compute dtype", "nominal bytes", "tensor peak", "bandwidth"),
}


def _docstring(name: str) -> str:
    """The module docstring of ``baselines/<name>.py``, whitespace runs as one space (read, not imported)."""
    path = next(p for p in lb.baseline_files() if p.stem == name)
    return " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split())


def test_every_baseline_file_has_one_line_and_every_line_a_file():
    files = [p.stem for p in lb.baseline_files()]
    assert len(files) == len(set(files)) >= 26  # one file per baseline; 26 when the lines were written
    assert sorted(SEES) == sorted(files)
    assert sees("lgbm") == SEES["lgbm"] and sees("oracle") is None and sees("my_submission") is None


@pytest.mark.parametrize("name", sorted(SEES))
def test_each_line_is_one_short_sentence(name):
    line = SEES[name]
    assert "\n" not in line and "|" not in line and line == line.strip() and line[0].isupper(), line
    assert 20 <= len(line) <= MAX_CHARS == 110, (len(line), line)


def test_a_line_agrees_with_its_baselines_docstring_where_that_says_what_it_sees():
    saying = {p.stem for p in lb.baseline_files() if re.search(r"\bsees\b", _docstring(p.stem), re.I)}
    assert saying == set(DOC_TERMS)  # a docstring that starts saying what it sees gets its terms here
    for name, terms in DOC_TERMS.items():
        doc, line = _docstring(name).lower(), SEES[name].lower()
        for term in terms:
            assert term.lower() in doc, (name, term, "not in the docstring")
            assert term.lower() in line, (name, term, "not in the board's line")


def test_only_scored_results_of_the_baseline_files_get_a_line():
    task = "rodinia-time"

    def rec(model, **kw):
        return read_record({"task": task, "scheme": "by-gpu", "model": model, "model_file": f"baselines/{model}.py",
                            **kw})

    results = [rec("xgb"), rec("median"), rec("knn", status="failed"),
               Skipped(task=task, scheme="random10", reason="no rows"),  # names no model
               rec("lgbm", model_file="submissions/lgbm.py"),  # a submission named like a baseline
               rec("oracle", model_file="oracle"), rec("not_a_baseline")]
    assert [baseline_name(r) for r in results] == ["xgb", "median", "knn", None, None, None, "not_a_baseline"]
    assert seen_rows(results) == [("median", SEES["median"]), ("xgb", SEES["xgb"])]
    results = [BoardEntry(r) for r in results]  # as the board holds them
    blocks = sees_blocks(results)
    assert [b.kind for b in blocks] == ["h2", "p", "table"] and blocks[0].text == SEES_HEADING
    assert blocks[2].rows == (("baseline", "what it sees"), ("median", SEES["median"]), ("xgb", SEES["xgb"]))
    # results of a task the board does not show: no section, and no link to it
    other = [get_task("kernel-time")]
    assert sees_blocks(results, other) == [] and SEES_HEADING not in render_markdown(results, other)
    assert sees_blocks([]) == [] and all(b.text != SEES_HEADING for b in page_blocks([]))
    assert f"(#{SEES_ANCHOR})" not in render_markdown([])


@pytest.fixture(scope="module")
def shipped():
    """``(README text, {page name: html}, results)`` of the committed results (captions without problem counts:
    the sections checked here do not depend on them)."""
    if not lb.results_dir().is_dir():
        pytest.skip("no committed leaderboard/results in this checkout")
    results = lb.load_results(lb.results_dir())
    pages, _ = site_pages(results, list_tasks())
    return render_markdown(results, list_tasks()), pages, results


def test_the_board_shows_the_line_of_every_baseline_on_it(shipped):
    readme, pages, results = shipped
    on_board = {baseline_name(e.record) for e in results if e.record.status == "ok"} - {None}
    assert {"lgbm", "transfer", "nearest_gpu", "npb_profiling", "median"} <= on_board
    section = readme[readme.index(f"\n## {SEES_HEADING}\n"):readme.index("\n## References\n")]
    rows = re.findall(r"^\| (\w+) \| (.+) \|$", section, re.M)
    assert rows == [("baseline", "what it sees"), *sorted((m, SEES[m]) for m in on_board)]
    assert f"[{SEES_HEADING}](#{SEES_ANCHOR})" in readme.split(f"\n## {list_tasks()[0].name}\n")[0]
    overview = html.unescape(pages[INDEX])
    assert f'<h2 id="{SEES_ANCHOR}">{SEES_HEADING}</h2>' in overview
    for m in on_board:
        assert f"<td>{m}</td><td>{SEES[m]}</td>" in overview
    for task in list_tasks():
        mine = {baseline_name(e.record) for e in results if e.record.task == task.name and e.record.status == "ok"}
        mine.discard(None)
        page = html.unescape(pages[task_page_name(task.name)])
        assert ('<h2 id="sees">' in page) == bool(mine), task.name
        if mine:  # the task's own baselines, each once, and no other
            table = page.split('<h2 id="sees">')[1].split("</table>")[0]
            shown = re.findall(r'<tr><td>(\w+)</td><td class="text">(.+?)</td></tr>', table)
            assert shown == sorted((m, SEES[m]) for m in mine), task.name
