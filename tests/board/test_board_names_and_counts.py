"""The board rendered from the shipped results (README and every site page, no plot drawn): it names each seed
study by author and year with its full reference, never as "seed 000", and each table's caption gives the task's
problems and its test folds, with the reason where a hash scheme has fewer folds than nominal."""

from __future__ import annotations

import html
import re

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.counts import problem_counts
from kgpubench.board.render import render_markdown, served_studies
from kgpubench.board.site import site_pages
from kgpubench.board.site.pages import SEEDS, task_page_name
from kgpubench.resources import default_data_dir
from kgpubench.sources import SEED_STUDIES
from kgpubench.store.store import Store
from kgpubench.tasks import get_task, list_tasks, problem_keys, select
from kgpubench.tasks.splits import SCHEMES, hash_bucket

AUTOTUNE = "autotune-config"


@pytest.fixture(scope="module")
def shipped_board():
    """``(README text, {page name: html}, scored results)`` of the committed results, with the problems counted on
    the packaged data (what ``kgpubench leaderboard render`` writes)."""
    if not lb.results_dir().is_dir():
        pytest.skip("no committed leaderboard/results in this checkout")
    entries = lb.load_results(lb.results_dir())
    tasks = list_tasks()
    results = [e.record for e in entries if e.record.status == "ok"]
    counts = problem_counts([t for t in tasks if t.name in {r.task for r in results}])
    pages, _ = site_pages(entries, tasks, counts=counts)
    return render_markdown(entries, tasks, counts=counts), pages, results


def _section(readme: str, task: str, scheme: str) -> str:
    start = readme.index(f"### {task} — `{scheme}`")
    return readme[start:readme.index("| rank |", start)]


def test_no_bare_seed_id_on_the_board(shipped_board):
    readme, pages, _ = shipped_board
    for name, text in [("README.md", readme), *pages.items()]:
        found = re.search(r".{40}seed (study )?00\d.{40}", html.unescape(text), re.I)
        assert found is None, f"{name}: {found.group(0)!r}"


def test_every_served_study_is_named_and_referenced_in_full(shipped_board):
    readme, pages, _ = shipped_board
    studies = served_studies(list_tasks())
    assert [s.id for s in studies] == ["000", "001", "002", "003"]
    references = readme[readme.index("\n## References\n"):]
    seeds = html.unescape(pages[SEEDS])
    for s in studies:
        for text in (references, seeds):
            assert s.title in text and (s.title_en or s.title) in text and ", ".join(s.authors) in text
            assert s.link is None or s.link in text
            assert s.year is None or str(s.year) in text
    assert "https://scj.kashanu.ac.ir/article_114553.html" in references  # 000: the journal's page, no DOI known
    assert SEED_STUDIES["001"].link is None  # no venue, year or link is stated anywhere: none is printed
    # each task names its study by its short form, on the README and on its page (linked to the references)
    for task in list_tasks():
        if task.seed == "-":
            continue
        short = SEED_STUDIES[task.seed].short
        assert f"Seed study: {short} ([References](#references))." in readme
        assert f'<a href="{SEEDS}#references">{html.escape(short)}</a>' in pages[task_page_name(task.name)]
    assert "Riahi et al. 2024 (paper)" in readme and "Wang and Chen 2013 (paper)" in readme
    assert "### Scheer et al. — threads per block of NPB kernels" in readme
    assert "Scheer et al.'s Profiling, Exhausting" in readme  # the ranking rule


def _problems_and_empty_buckets(task_name: str, scheme: str) -> tuple[int, list[str]]:
    """Counted here by hand on the packaged data: distinct problems and the hash buckets none of them falls in."""
    task = get_task(task_name)
    rows = select(task, Store(default_data_dir()).read(task.config)).rows
    keys = set(problem_keys(task, rows))
    n = SCHEMES[scheme].n_folds
    drawn = {hash_bucket(str(k), scheme, n) for k in keys}
    return len(keys), [str(b) for b in range(n) if b not in drawn]


def test_autotune_captions_give_its_19_problems_and_why_random10_has_9_folds(shipped_board):
    readme, pages, results = shipped_board
    problems, empty = _problems_and_empty_buckets(AUTOTUNE, "random10")
    assert problems == 19 and empty == ["1"]
    note = ("19 problems (gpu_name, kernel, problem_size), each in one test fold. Test folds: 9 of 10: `random10` "
            "hashes each problem into one of 10 buckets, one bucket a test fold, and bucket 1 drew none of them.")
    assert note in _section(readme, AUTOTUNE, "random10")
    page = html.unescape(re.sub(r"<[^>]+>", "", pages[task_page_name(AUTOTUNE)]))
    assert note.replace("`", "") in page  # the backticks are <code> there
    recorded = {len(r.folds) for r in results if r.task == AUTOTUNE and r.scheme == "random10"}
    assert recorded == {9}
    by_gpu = _section(readme, AUTOTUNE, "by-gpu")
    assert "19 problems (gpu_name, kernel, problem_size), each in one test fold. Test folds: 8." in by_gpu


def test_every_table_caption_states_its_folds_and_the_problems_where_the_task_has_them(shipped_board):
    readme, _, results = shipped_board
    tables = {(r.task, r.scheme) for r in results if r.folds}
    assert tables
    for task_name, scheme in tables:
        caption = _section(readme, task_name, scheme)
        assert "Test folds: " in caption
        if get_task(task_name).problem_columns:
            assert re.search(r"\d+ (test )?problems", caption), (task_name, scheme)
    npb = _section(readme, "npb-tpb", "random10")
    problems, empty = _problems_and_empty_buckets("npb-tpb", "random10")
    assert f"{problems} problems (gpu_name, benchmark, npb_class, variant), each in one test fold" in npb
    if empty:  # a bucket no problem hashed into is named
        assert f"Test folds: {10 - len(empty)} of 10" in npb and f"{', '.join(empty[:-1])} and {empty[-1]} drew" in npb
    else:  # since the H200 rows (22 problems) every bucket holds one
        assert "Test folds: 10.\n" in npb and "drew" not in npb


def _per_gpu_table(readme: str, task: str) -> list[list[str]]:
    """The rows of the per-GPU table under ``task``'s by-gpu score table (after its note)."""
    start = readme.index(f"### {task} — `by-gpu`")
    end = readme.find("\n### ", start + 1)
    section = readme[start:end if end > 0 else None]
    if "Per held-out GPU:" not in section:
        return []
    table = section[section.index("Per held-out GPU:"):].split("\n\n")[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()
            if not line.startswith("|---")]


def test_every_leave_one_gpu_out_mean_has_its_per_gpu_breakdown_beside_it(shipped_board):
    readme, _, results = shipped_board
    checked = 0
    for task in list_tasks():
        recs = [r for r in results if r.task == task.name and r.scheme == "by-gpu" and r.model != "oracle"]
        gpus = sorted({g for r in recs for g in r.folds})
        rows = _per_gpu_table(readme, task.name) if recs else []
        if len(gpus) < 2:
            assert rows == [], task.name
            continue
        header, body = rows[0], rows[1:]
        assert [r[0] for r in body] == gpus, task.name
        for r in recs:
            col = next((i for i, h in enumerate(header) if h.split(" ")[0] == r.model), None)
            assert col is not None, (task.name, r.model)
            for row in body:
                fold = r.folds.get(row[0])
                want = "—" if fold is None else f"{fold.score(task.primary_metric):.4g}"
                assert row[col] == want, (task.name, r.model, row[0])
        checked += 1
    assert checked >= 7  # autotune, programs, operators, rodinia x2, npb-tpb, stencil-tile, kernel-power...
    assert _per_gpu_table(readme, "kernel-time") == []  # regular rows of one GPU: the scheme is skipped


def test_a_scheme_of_one_gpu_gets_no_per_gpu_table():
    from kgpubench.board.render import per_gpu_blocks
    from kgpubench.results.result import BoardEntry, read_record

    task = get_task("kernel-power")
    one = {"task": task.name, "scheme": "by-gpu", "model": "xgb", "model_file": "baselines/xgb.py",
           "aggregate": {"male": {"mean": 0.1}}, "folds": {"GPU A": {"scores": {"male": 0.1}}}}
    two = {**one, "folds": {"GPU A": {"scores": {"male": 0.1}}, "GPU B": {"scores": {"male": 0.3}}}}
    assert per_gpu_blocks(task, [BoardEntry(read_record(one))]) == []
    blocks = per_gpu_blocks(task, [BoardEntry(read_record(two))])
    assert blocks[1].rows == (("held-out GPU", "xgb"), ("GPU A", "0.1"), ("GPU B", "0.3"))
