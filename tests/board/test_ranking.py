"""The board's one ranking rule (kgpubench.board.ranking): the interval by hand, ties as ties, the oracle and the
strategies that measure the target never ranked or named best, and the README, the site, the overview's best
model and ``evaluate``'s "would rank" agreeing, on a synthetic board and on the committed one."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.counts import SchemeProblems
from kgpubench.board.ranking import (
    RULE,
    best,
    bootstrap_interval,
    cell,
    folds_note,
    number,
    standings,
)
from kgpubench.board.render import board, render_markdown, table_rows
from kgpubench.board.site.pages import _best_line, score_table
from kgpubench.board.summary import board_rank
from kgpubench.results.result import BoardEntry, Result, read_record
from kgpubench.tasks import get_task, list_tasks

TASK = get_task("autotune-config")  # top1_regret, lower is better; first evaluated scheme random10


def _res(model, per_fold, *, kind="model", measurements=None, scheme="random10", problems=0, rows=None,
         median=0.0) -> Result:
    folds = {}
    for i, v in enumerate(per_fold):
        scores = {"top1_regret": v}
        if measurements is not None:
            scores["measurements"] = measurements
        folds[str(i)] = {"scores": scores, "problems": {f"p{i}-{j}": {"chosen": 1.0, "best": 1.0}
                                                        for j in range(problems)}}
    agg = {"top1_regret": {"mean": sum(per_fold) / len(per_fold), "std": 0.0, "median": median, "folds": len(folds)}}
    if measurements is not None:
        agg["measurements"] = {"mean": measurements, "std": 0.0, "median": measurements, "folds": len(folds)}
    return read_record({"task": TASK.name, "scheme": scheme, "model": model, "kind": kind, "status": "ok",
                        "folds": folds, "aggregate": agg, "date": "2026-11-25",
                        "dataset": {"version": "0.1.0", **({} if rows is None else {"rows": rows})},
                        "wall_time_s": 1.0})


def _entries(records: list[Result]) -> list[BoardEntry]:
    """The records as the board holds them (no file, not stale)."""
    return [BoardEntry(r) for r in records]


# ----- the interval by hand -----------------------------------------------------------------------------------
def test_two_folds_give_their_own_values_as_the_interval():
    # resampling two folds gives the mean of (a, a), (a, b), (b, a), (b, b): a and b each a quarter of the
    # time, far more than the 2.5 % tails, so the 95 % interval is exactly [a, b]
    assert bootstrap_interval([0.2, 0.6]) == (0.2, 0.6)
    assert bootstrap_interval([0.6, 0.2]) == (0.2, 0.6)


def test_interval_of_five_folds_brackets_the_mean_and_shrinks_with_more_folds():
    five = [0.1, 0.2, 0.3, 0.4, 0.5]
    lo, hi = bootstrap_interval(five)
    # seed 0, 2,000 resamples of 5 folds: fixed bounds (the resampled means are multiples of 0.02)
    assert (lo, hi) == pytest.approx((0.18, 0.42))
    assert lo < 0.3 < hi and bootstrap_interval(five) == (lo, hi)  # the same every render
    lo20, hi20 = bootstrap_interval(five * 4)  # the same spread over 20 folds: about half as wide
    assert (lo20, hi20) == pytest.approx((0.24, 0.36))
    assert lo < lo20 < 0.3 < hi20 < hi
    assert bootstrap_interval([0.5]) is None and bootstrap_interval([]) is None
    assert bootstrap_interval([0.2, float("nan"), 0.6]) == (0.2, 0.6)  # a missing fold score is left out


def test_a_cell_is_the_mean_with_its_interval():
    assert cell(_res("a", [0.1, 0.2, 0.3, 0.4, 0.5]), "top1_regret") == "0.3 [0.18, 0.42]"
    assert cell(_res("a", [0.25]), "top1_regret") == "0.25"  # one fold: no interval
    assert cell(_res("a", [0.25]), "kendall_tau") == "—"


def test_the_fold_note_says_how_many_folds_and_why_fewer():
    nine = [_res("a", [0.1] * 9, problems=2)]  # folds 0..8: bucket 9 drew nothing
    assert folds_note("random10", nine) == (
        "Test folds: 9 of 10: `random10` hashes each row (each problem, in a task with problems) into one of 10 "
        "buckets, one bucket a test fold, and bucket 9 drew no row or problem of this task; 18 test problems.")
    assert folds_note("random10", [_res("a", [0.1] * 10)]) == "Test folds: 10."
    assert folds_note("by-gpu", [_res("a", [0.1] * 3, scheme="by-gpu")]) == "Test folds: 3."
    seven = [_res("a", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])]  # folds 0..6
    assert "buckets 7, 8 and 9 drew" in folds_note("random10", seven)


def test_the_fold_note_states_the_problems_counted_on_the_store():
    nine = [_res("a", [0.1] * 9, rows=500)]
    cols = ("gpu_name", "kernel", "problem_size")
    counts = SchemeProblems(rows=500, columns=cols, problems=19, per_fold={str(i): 2 + (i == 0) for i in range(9)})
    assert folds_note("random10", nine, counts) == (
        "19 problems (gpu_name, kernel, problem_size), each in one test fold. Test folds: 9 of 10: `random10` hashes "
        "each problem into one of 10 buckets, one bucket a test fold, and bucket 9 drew none of them.")
    one = _res("a", [0.1], scheme="holdout80", rows=500)
    holdout = [replace(one, folds={"holdout": replace(one.folds["0"], name="holdout")})]
    counts = SchemeProblems(rows=500, columns=cols, problems=19, per_fold={"holdout": 8})
    assert folds_note("holdout80", holdout, counts) == (
        "19 problems (gpu_name, kernel, problem_size), 8 of them in the test fold. Test folds: 1 (one split: no "
        "interval).")
    # counted on other rows than the results were scored on: the count is not shown
    other = SchemeProblems(rows=499, columns=cols, problems=19, per_fold={"holdout": 8})
    assert folds_note("holdout80", holdout, other) == "Test folds: 1 (one split: no interval)."


# ----- one synthetic board, every view agreeing --------------------------------------------------------------------
@pytest.fixture
def records():
    return [
        _res("oracle", [0.0, 0.0, 0.0], kind="reference"),
        _res("npb_profiling", [0.0, 0.0, 0.0], measurements=6.0),  # perfect, because it measures the target
        _res("c", [0.2, 0.3, 0.1]),
        _res("b", [0.120004] * 3),  # 0.12 at the 4 digits shown: tied with a
        _res("a", [0.10, 0.12, 0.14]),
        _res("learned", [0.5, 0.5, 0.5], measurements=0.0),  # measured nothing: an ordinary model
    ]


def test_ties_share_a_rank_and_references_stand_apart(records):
    st = standings(TASK, records)
    assert [(s.result.model, s.rank_text) for s in st] == [
        ("oracle", "—"), ("npb_profiling", "—"), ("a", "=1"), ("b", "=1"), ("c", "3"), ("learned", "4")]
    assert [r.model for r in best(TASK, records)] == ["a", "b"]
    # the oracle and a measuring strategy are never best, even alone
    assert best(TASK, [r for r in records if r.model in ("oracle", "npb_profiling")]) == []


def test_readme_site_best_line_and_evaluate_agree(records):
    readme = table_rows(TASK, _entries(records))
    site = score_table(TASK, _entries(records))
    site_rows = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
                 for row in re.findall(r"<tr[^>]*>(.*?)</tr>", site, re.S)]
    site_rows = [r for r in site_rows if r]
    assert [r[:2] for r in readme[1:]] == [r[:2] for r in site_rows] == [
        ["—", "oracle — upper bound (measures the test rows)"], ["—", "npb_profiling (measures the target)"],
        ["=1", "a"], ["=1", "b"], ["3", "c"], ["4", "learned"]]
    col = readme[0].index("top1_regret ↓")
    assert [r[col] for r in readme[1:]] == [r[col] for r in site_rows]  # the same cells, intervals and all
    assert readme[3][col] == "0.12 [0.1, 0.14]" and "±" not in str(readme) + site
    assert _best_line(TASK, {"random10": _entries(records)}) == ("a = b (random10)", "0.12 [0.1, 0.14]")
    # evaluate's "would rank": each model against the rest of the board gets the rank the tables show
    for r in records:
        others = [o for o in records if o is not r]
        expected = {"a": (1, 4), "b": (1, 4), "c": (3, 4), "learned": (4, 4)}.get(r.model)
        assert board_rank(r, others) == expected, r.model


def test_the_rule_is_said_once_in_the_header_text(records):
    text = render_markdown(_entries(records), tasks=[TASK])
    assert text.count(RULE) == 1 and "population std" not in text
    assert "95 % bootstrap interval" in RULE and "ties" in RULE


# ----- the committed board ---------------------------------------------------------------------------------------
def test_the_committed_board_agrees_everywhere():
    if not lb.results_dir().is_dir():
        pytest.skip("no committed leaderboard/results in this checkout")
    results = lb.load_results(lb.results_dir())
    tasks = list_tasks()
    readme = render_markdown(results, tasks=tasks)
    assert "±" not in readme and readme.count(RULE) == 1
    grouped = board(results, tasks)
    checked = 0
    for task in tasks:
        for scheme, entries in grouped[task.name].items():
            recs = [e.record for e in entries]
            st = standings(task, recs)
            if not st:
                continue
            rows = table_rows(task, entries)
            assert [r[0] for r in rows[1:]] == [s.rank_text for s in st]
            section = readme[readme.index(f"### {task.name} — `{scheme}`"):]
            assert folds_note(scheme, recs) in section.split("| rank |")[0]
            for s in st:
                r = s.result
                if r.kind == "reference":
                    assert s.rank is None and "upper bound (measures the test rows)" in rows[st.index(s) + 1][1]
                if s.rank is not None:
                    pool = [o for o in recs if o is not r]
                    got = board_rank(r, pool)
                    assert got is None or got[0] == s.rank, (task.name, scheme, r.model)
                    checked += 1
        top, score = _best_line(task, grouped[task.name])
        schemes = {s: [e.record for e in es] for s, es in grouped[task.name].items()}
        first = next((s for s in task.evaluated_schemes if best(task, schemes.get(s, []))), None)
        if first:
            winners = best(task, schemes[first])
            assert top == " = ".join(w.model for w in winners) + f" ({first})"
            assert score == cell(winners[0], task.primary_metric)
            assert all(w.kind != "reference" and "measures" not in top for w in winners)
    assert checked > 20
    npb = [s for s in standings(get_task("npb-tpb"), [e.record for e in grouped["npb-tpb"].get("random10", [])])
           if s.result.model in ("npb_profiling", "npb_exhausting")]
    assert npb and all(s.rank is None for s in npb)  # they measure the target: shown apart
    assert number(0.12) == "0.12"


def test_the_goal_names_the_same_best_model_as_the_tables():
    from kgpubench.board.render import goal_blocks

    # x: perfect on two GPUs, bad on the third (median 0, mean 0.3); y: 0.15 everywhere (mean 0.15): y ranks first
    x, y = _res("x", [0.0, 0.0, 0.9], scheme="by-gpu"), _res("y", [0.15, 0.15, 0.15], scheme="by-gpu", median=0.15)
    oracle = _res("oracle", [0.0, 0.0, 0.0], kind="reference", scheme="by-gpu")
    assert [r.model for r in best(TASK, [x, y, oracle])] == ["y"]
    headings = [b.text for b in goal_blocks(_entries([x, y, oracle])) if b.kind == "h3"]
    assert headings == ["autotune-config: best model `y`"]
    text = " ".join(b.text for b in goal_blocks(_entries([x, y, oracle])) if b.kind == "p")
    assert ("Median regret over the held-out GPUs not met: 0.15 (15.0%), 5.0 percentage points (pp) above the goal "
            "of 10%" in text)
    assert "it has no transfer result to compare with" in text
    assert "Its mean, which ranks it: 0.15 [0.15, 0.15]." in text
