"""The results made before the baselines' TASKS lines moved out still stand for the files
(baselines/moved_tasks.json, kgpubench/board/moved_tasks.py): every committed result of a baseline is the current
file's or proven equivalent, an edited file is not, and the record may only put back a pure TASKS assignment."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.moved_tasks import check_moved, read_moved, record_path, restored_sha256, stands_for
from kgpubench.errors import ResultFormatError
from kgpubench.results.result import Result


@pytest.fixture(scope="module")
def baseline_results():
    """(result file, Result, model file) of every committed result made by a bundled baseline."""
    out = []
    for path, record in lb.read_results():
        if isinstance(record, Result) and str(record.model_file).startswith("baselines/"):
            out.append((path, record, lb.project_root() / record.model_file))
    return out


def _sha256s(files):
    """Per baseline: its current file's sha256 and the sha256 of the bytes the record puts back (the file that ran
    before the TASKS line moved out)."""
    moved = read_moved()
    return ({p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
            {p.stem: hashlib.sha256(moved[p.stem].restore(p.read_bytes())).hexdigest() for p in files
             if p.stem in moved})


def test_every_committed_baseline_result_stands_for_its_file(baseline_results):
    files = lb.baseline_files()
    assert {model.stem for _, _, model in baseline_results} == {p.stem for p in files}  # every baseline has some
    stale = [str(path) for path, res, model in baseline_results if not stands_for(res.model_sha256, model)]
    assert stale == []
    # each is the current file's (run again since the move: rodinia-time's on data 0.15.0) or the file before the
    # move, and results still stand through the record alone (238 of 289 when rodinia-time was re-run)
    current, before = _sha256s(files)
    assert not [p for p, res, m in baseline_results
                if res.model_sha256 not in (current[m.stem], before.get(m.stem))]
    through_record = [p for p, res, m in baseline_results if res.model_sha256 == before.get(m.stem)]
    assert through_record and len(baseline_results) >= 289


def test_the_record_puts_back_exactly_the_bytes_that_ran(baseline_results):
    moved = read_moved()
    # an entry per baseline that had a TASKS line to move (37); a baseline added after the move has none, and every
    # result of it is its current file's
    newer = {p.stem for p in lb.baseline_files()} - set(moved)
    assert len(moved) == 37 and set(moved) <= {p.stem for p in lb.baseline_files()}
    current, before = _sha256s(lb.baseline_files())
    ran: dict[str, set[str]] = {}
    for _, res, model in baseline_results:
        ran.setdefault(model.stem, set()).add(res.model_sha256)
    assert all(ran[name] == {current[name]} for name in newer), newer
    for path in lb.baseline_files():
        if path.stem in newer:
            continue
        back = moved[path.stem].restore(path.read_bytes())
        # the bytes put back ran, unless every result of the baseline was made again since the move
        assert before[path.stem] in ran[path.stem] or ran[path.stem] == {current[path.stem]}, path.stem
        assert back.count(b"\nTASKS = (") == 1 and len(back) == len(path.read_bytes()) + len(moved[path.stem].text)
    assert any(before[name] in shas for name, shas in ran.items())


def test_an_edited_baseline_is_not_equivalent(tmp_path, baseline_results):
    _, res, model = next(r for r in baseline_results if r[2].stem == "knn")
    moved = read_moved()
    copy = tmp_path / "knn.py"
    copy.write_bytes(model.read_bytes())
    assert stands_for(res.model_sha256, copy, moved)  # the unchanged bytes: equivalent
    data = model.read_bytes()
    at = data.index(b"n_neighbors=2") + len("n_neighbors=")
    copy.write_bytes(data[:at] + b"3" + data[at + 1:])  # one character changed
    assert not stands_for(res.model_sha256, copy, moved)
    assert restored_sha256(copy.read_bytes(), moved["knn"]) != res.model_sha256
    # outside the bundled folder the record is not consulted at all
    copy.write_bytes(data)
    assert not stands_for(res.model_sha256, copy)


@pytest.mark.parametrize("text, why", [
    ('TASKS = ("a",); import os\n', "not exactly one assignment"),
    ('TASKS = ("a",)\nimport os\n', "not exactly one assignment"),
    ('TASKS = tuple(["a"])\n', "not exactly one assignment"),
    ('OTHER = ("a",)\n', "not exactly one assignment"),
    ('TASKS = ("a", 1)\n', "not exactly one assignment"),
    ('TASKS = ("a",)', "not whole lines"),
])
def test_a_restore_text_that_is_not_a_pure_tasks_assignment_is_refused(tmp_path, text, why):
    record = tmp_path / "moved_tasks.json"
    record.write_text(json.dumps({"moved": {"knn": {"line": 14, "text": text}}}))
    with pytest.raises(ResultFormatError, match=rf"^{record}: baseline 'knn': refused, .*{why}.*TASKS line"):
        read_moved(record)
    assert check_moved("knn", 14, 'TASKS = ("a", "b")\n\n').text == 'TASKS = ("a", "b")\n\n'
    with pytest.raises(ResultFormatError, match="line 0 is not a positive line number"):
        check_moved("knn", 0, 'TASKS = ("a",)\n')


def test_the_committed_record_is_well_formed():
    doc = json.loads(record_path().read_text())
    assert set(doc) == {"about", "moved"} and len(doc["moved"]) == 37


def test_verify_compares_an_equivalent_model_sha256_as_the_same(baseline_results):
    _, res, model = next(r for r in baseline_results if r[2].stem == "median")
    fresh = dataclasses.replace(res, model_sha256=hashlib.sha256(model.read_bytes()).hexdigest())
    assert lb.compare(res, fresh, model_path=model) == []
    assert [p for p in lb.compare(res, fresh) if "model sha256" in p]  # without the file: a difference
    other = dataclasses.replace(fresh, model_sha256="0" * 64)  # the rerun ran other bytes than the file's
    assert [p for p in lb.compare(res, other, model_path=model) if "model sha256" in p]
