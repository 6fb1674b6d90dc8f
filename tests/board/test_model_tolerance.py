"""A model's own verify tolerance (issue 28 item 2): ``wavelet_nn``'s scores move across machines by more than the
metrics' 1e-4 (its least squares stops after 100 evaluations and carries the last-bit differences of BLAS kernels
and NumPy's SIMD paths into other weights), so it declares a tolerance measured from that spread; every other
model keeps its metrics' tolerance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.tolerance import MODEL_TOLERANCES, REL_TOL, tolerance
from kgpubench.errors import VerifyError
from kgpubench.results.result import Result, project_root
from kgpubench.tasks.metrics import METRICS

WAVELET = "baselines/wavelet_nn.py"
COMMITTED = project_root() / "leaderboard/results/kernel-power/random10/wavelet_nn.json"


def _committed(model_file: str = WAVELET) -> dict:
    data = json.loads(COMMITTED.read_text())
    data["model_file"] = model_file
    data["model"] = Path(model_file).stem
    return data


def _with(data: dict, **scores: float) -> Result:
    data = json.loads(json.dumps(data))
    data["folds"]["0"]["scores"].update(scores)
    return Result.from_dict(data)


def _scaled(data: dict, factor: float) -> Result:
    s = data["folds"]["0"]["scores"]
    return _with(data, male=s["male"] * factor, max_ape=s["max_ape"] * factor)


def test_the_declared_tolerance_is_twice_the_measured_spread_and_documented():
    [tol] = MODEL_TOLERANCES.values()
    assert tol.model_file == WAVELET and (project_root() / tol.model_file).is_file()
    assert 2 * tol.spread <= tol.rel_tol < 3 * tol.spread
    doc = (project_root() / "docs/METRICS.md").read_text()
    assert tol.model_file in doc and f"{tol.rel_tol:g}" in doc and f"{tol.spread:g}" in doc
    assert tolerance("male", WAVELET) == tol.rel_tol and tolerance("male") == METRICS["male"].rel_tol
    assert tolerance("measurements", WAVELET) == tol.rel_tol and tolerance("measurements") == REL_TOL
    assert tolerance("male", "baselines/elm.py") == METRICS["male"].rel_tol


# Issue 28: fold 0 of wavelet_nn on kernel-power random10 (dataset 0.6.0) read male 0.156898 and max_ape 68.3026
# here and 0.15694 and 68.3362 on another machine. The data have grown since (0.7.0: H200 rows), so the same
# relative moves are applied to the committed figures of today.
ISSUE_MOVES = {"male": 0.15694 / 0.156898, "max_ape": 68.3362 / 68.3026}


def test_the_issue_s_other_machine_passes_for_wavelet_nn_only():
    """The moves another machine gave (issue 28): beyond 1e-4, within wavelet_nn's measured tolerance."""
    assert all(1e-4 < m - 1 < MODEL_TOLERANCES[WAVELET].rel_tol for m in ISSUE_MOVES.values())
    data = _committed()
    fold = data["folds"]["0"]["scores"]
    other_machine = _with(data, **{k: fold[k] * m for k, m in ISSUE_MOVES.items()})
    assert lb.compare(Result.from_dict(data), other_machine) == []
    elm = _committed("baselines/elm.py")
    moved = {k: elm["folds"]["0"]["scores"][k] * m for k, m in ISSUE_MOVES.items()}
    assert len(lb.compare(Result.from_dict(elm), _with(elm, **moved))) == 2


@pytest.mark.parametrize("model_file, inside, outside", [
    (WAVELET, 0.5 * MODEL_TOLERANCES[WAVELET].rel_tol, 2 * MODEL_TOLERANCES[WAVELET].rel_tol),
    ("baselines/elm.py", 0.5 * METRICS["male"].rel_tol, 3 * METRICS["male"].rel_tol),
])
def test_compare_applies_the_model_s_tolerance_and_others_keep_the_default(model_file, inside, outside):
    data = _committed(model_file)
    committed = Result.from_dict(data)
    assert lb.compare(committed, _scaled(data, 1 + inside)) == []
    problems = lb.compare(committed, _scaled(data, 1 + outside))
    assert len(problems) == 2 and all(" fold 0 " in p for p in problems)
    if model_file != WAVELET:  # what wavelet_nn may move is too much for any other model
        assert len(lb.compare(committed, _scaled(data, 1 + 0.5 * MODEL_TOLERANCES[WAVELET].rel_tol))) == 2
    assert lb.compare(committed, _scaled(data, 1 + inside), rel_tol=0.1 * inside) != []  # --rel-tol overrides


@pytest.mark.parametrize("model_file", [WAVELET, "baselines/elm.py"])
def test_verify_applies_it_to_the_re_run(tmp_path, monkeypatch, model_file):
    """``verify`` end to end, with the re-run replaced by the committed result moved by a factor."""
    root = tmp_path / "results"
    (root / "kernel-power/random10").mkdir(parents=True)
    data = _committed(model_file)
    (root / "kernel-power/random10" / f"{data['model']}.json").write_text(json.dumps(data))
    factor = {}

    def rerun(jobs, **_):
        assert [(j.name, j.task.name, j.scheme) for j in jobs] == [(data["model"], "kernel-power", "random10")]
        return [(jobs[0], _scaled(data, factor["f"]))]

    monkeypatch.setattr(lb, "run_jobs", rerun)
    within = 0.5 * MODEL_TOLERANCES[WAVELET].rel_tol
    factor["f"] = 1 + within
    if model_file == WAVELET:
        assert lb.verify(root=root) == 1
    else:
        with pytest.raises(VerifyError, match="1 result"):
            lb.verify(root=root)
    factor["f"] = 1 + 2 * MODEL_TOLERANCES[WAVELET].rel_tol
    with pytest.raises(VerifyError) as err:
        lb.verify(root=root)
    assert len(err.value.problems) == 2 and "kernel-power/random10/" in err.value.problems[0]
    shutil.rmtree(root)
