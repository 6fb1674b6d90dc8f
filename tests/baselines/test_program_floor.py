"""baselines/program_floor.py: recovers a floor + work / bandwidth structure on an unseen GPU, never fits on the
held-out GPU's rows (inner selection included), is deterministic, and falls back as documented."""

import numpy as np
import pandas as pd
import pytest
from task_fixtures import programs_table

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module, model_factory, run_folds
from kgpubench.tasks.data import task_data

PATH = next(p for p in baseline_files() if p.stem == "program_floor")
MOD = load_model_module(PATH)
FLOOR_MS = 0.02
# (bandwidth GB/s, peak fp32 GFLOP/s, SMs): peak fp32 grows with bandwidth, as across real GPU generations
HW = {"A": (300.0, 8000.0, 40), "B": (600.0, 14000.0, 60), "C": (900.0, 20000.0, 80),
      "D": (1500.0, 30000.0, 100), "E": (2000.0, 40000.0, 110), "F": (3000.0, 60000.0, 130)}


def _row(g, problem, mode):
    bw, fp32, sms = HW[g]
    return {"problem_set": "v0.1", "level": 1.0, "problem": problem, "compile_mode": mode, "gpu_vendor": "nvidia",
            "gpu_architecture": "new" if g in "EF" else "old", "gpu_sm_count": float(sms),
            "gpu_memory_bandwidth_gbs": bw, "gpu_peak_fp32_gflops": fp32, "gpu_l2_bytes": 4e6 * sms}


def synthetic(gpus=tuple(HW)):
    """Programs whose time is a launch floor plus work over bandwidth: 0.02 ms + w * 1000 / bandwidth, with w from
    0.001 to 300 ms at 1000 GB/s, under two compile modes (the second 20 % faster above the floor)."""
    rows, y = [], []
    for i, w in enumerate(np.geomspace(1e-3, 300.0, 40)):
        for mode, factor in (("eager", 1.0), ("inductor-default", 0.8)):
            for g in gpus:
                rows.append(_row(g, f"{i}_P.py", mode))
                y.append(FLOOR_MS + factor * w * 1000.0 / HW[g][0])
    return pd.DataFrame(rows), np.array(y)


def test_recovers_floor_plus_scaled_work_on_an_unseen_gpu():
    X, y = synthetic()
    test = (X["gpu_memory_bandwidth_gbs"] == 900.0).to_numpy()  # C: inside the training GPUs' range
    model = MOD.make_model(None, 0).fit(X[~test].reset_index(drop=True), y[~test])
    pred = model.predict(X[test].reset_index(drop=True))
    ape = np.abs(pred / y[test] - 1)
    assert np.median(ape) < 0.02 and ape.max() < 0.06
    truth = y[test]
    # both ends of the structure: floor-bound programs stay on the floor, large ones scale with bandwidth
    assert np.all(np.abs(pred[truth < 1.5 * FLOOR_MS] / truth[truth < 1.5 * FLOOR_MS] - 1) < 0.05)
    assert np.all(np.abs(pred[truth > 10.0] / truth[truth > 10.0] - 1) < 0.03)
    # the size-dependent sensitivity to (ln bandwidth, ln fp32): near 0 just above the floor, about -1 in all on
    # large programs (fp32 grows as bandwidth^0.86 here, so the two share the slope)
    slope = (MOD.hat_basis(np.log([0.021, 100.0])) @ model.beta_).sum(axis=1)
    assert abs(slope[0]) < 0.2 and -1.1 < slope[1] < -0.8


def test_the_simple_transfer_misses_what_the_floor_model_gets():
    """The nearest-GPU transfer scaled by sqrt(bandwidth x fp32) ratios over-scales the floor-bound programs."""
    X, y = synthetic()
    test = (X["gpu_memory_bandwidth_gbs"] == 900.0).to_numpy()
    transfer = load_model_module(next(p for p in baseline_files() if p.stem == "program_transfer"))
    pred = transfer.make_model(None, 0).fit(X[~test].reset_index(drop=True), y[~test]).predict(
        X[test].reset_index(drop=True))
    small = y[test] < 1.5 * FLOOR_MS
    assert np.median(np.abs(pred[small] / y[test][small] - 1)) > 0.1


def test_fit_never_sees_the_held_out_gpu_and_is_deterministic(monkeypatch):
    """Under leave-one-GPU-out every fit (the outer one and each inner-selection fit) sees only training GPUs."""
    seen: list[set] = []
    real = MOD.ProgramFloor._fit

    def spy(self, X, y, gid, ridge):
        seen.append(set(X["gpu_memory_bandwidth_gbs"]))
        return real(self, X, y, gid, ridge)

    monkeypatch.setattr(MOD.ProgramFloor, "_fit", spy)
    monkeypatch.setattr(MOD, "MIN_INNER_GPUS", 2)  # the fixture's 3 GPUs leave 2 to select on
    data = task_data("program-time", "by-gpu", table=programs_table())
    factory = model_factory(MOD, PATH)
    bw = dict(zip(data.rows["gpu_name"].to_pylist(), data.X["gpu_memory_bandwidth_gbs"]))
    for fold in data.fold_names:
        seen.clear()
        run_folds(data, factory, folds=[fold])
        assert len(seen) == 1 + 2 * 2  # inner selection: 2 training GPUs x 2 ridges, then the outer fit
        assert all(bw[fold] not in s for s in seen), fold
    first = run_folds(data, factory)[0]
    again = run_folds(data, lambda task, seed: MOD.make_model(task, seed + 1))[0]
    assert first == again  # nothing random: the seed changes nothing, twice gives the same digits


def test_inner_selection_uses_only_training_gpus_and_records_its_choice():
    X, y = synthetic()
    test = (X["gpu_memory_bandwidth_gbs"] == 900.0).to_numpy()
    model = MOD.make_model(None, 0).fit(X[~test].reset_index(drop=True), y[~test])
    assert set(model.inner_scores_) == set(MOD.CANDIDATES) and model.chosen_ in MOD.CANDIDATES
    assert model.chosen_ == min(MOD.CANDIDATES, key=lambda c: (model.inner_scores_[c], MOD.CANDIDATES.index(c)))
    fixed = MOD.ProgramFloor(select=False).fit(X[~test].reset_index(drop=True), y[~test])
    assert not hasattr(fixed, "inner_scores_") and fixed.chosen_ == (1.0, (0.5, 0.05, 2.0))


def test_fallbacks_for_an_unseen_mode_and_an_unseen_program():
    X, y = synthetic(gpus=("A", "B", "D"))
    model = MOD.ProgramFloor(select=False, tau=None).fit(X, y)
    row = pd.DataFrame([_row("C", "5_P.py", "cudagraphs")])  # mode no GPU ran: the program's modes' median level
    levels = [model.level_[("v0.1", "1.0", "5_P.py", m)] for m in ("eager", "inductor-default")]
    assert model.level_of(("v0.1", "1.0", "5_P.py", "cudagraphs")) == pytest.approx(np.median(levels))
    assert np.isfinite(model.predict(row)).all()
    other = ("v0.1", "1.0", "99_New.py", "eager")  # unknown program: its set and mode's median level
    eager = [v for k, v in model.level_.items() if k[-1] == "eager"]
    assert model.level_of(other) == pytest.approx(np.median(eager))


def test_a_same_architecture_twin_passes_on_a_programs_quirk():
    """Program 30 runs 1.5x slower on the "new" architecture (E, F) than the structure says: holding F out, the
    architecture-weighted residuals take most of E's quirk; weighted by figures alone, less of it."""
    X, y = synthetic()
    quirk = ((X["problem"] == "30_P.py") & X["gpu_architecture"].eq("new")).to_numpy()
    y = np.where(quirk, 1.5 * y, y)
    test = (X["gpu_memory_bandwidth_gbs"] == 3000.0).to_numpy()
    q = (X["problem"][test] == "30_P.py").to_numpy()
    ratio = {}
    for gap in (0.0, 2.0):
        model = MOD.ProgramFloor(select=False, arch_gap=gap).fit(X[~test].reset_index(drop=True), y[~test])
        ratio[gap] = np.median(model.predict(X[test].reset_index(drop=True))[q] / y[test][q])
    assert abs(ratio[2.0] - 1) < 0.1 and abs(ratio[0.0] - 1) > abs(ratio[2.0] - 1)
