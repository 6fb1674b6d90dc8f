"""baselines/transfer.py's configuration key: what a conv-solver row names as its configuration is the solver, not
the problem's shape or the solver's workspace on it, so that the fallback for a problem no training GPU timed
finds the solvers it saw on other problems (worked by hand, then on the shipped rows)."""

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module
from kgpubench.tasks import get_task
from kgpubench.tasks.data import train_subsample, usable_task_data
from kgpubench.tasks.splits import EXCLUDED

HW = {"A": (10.0, 100.0), "B": (20.0, 200.0), "C": (40.0, 400.0)}
# problem -> (its height, each solver's workspace on it): per-row columns that are neither problem nor choice
PROBLEMS = {"p1": (8.0, {"Gemm": 64.0, "Direct": 0.0, "Winograd": 16.0}),
            "p2": (16.0, {"Gemm": 256.0, "Direct": 0.0, "Winograd": 32.0}),
            "p3": (32.0, {"Gemm": 1024.0, "Direct": 0.0, "Winograd": 48.0})}


def _module():
    return load_model_module(next(p for p in baseline_files() if p.stem == "transfer"))


def _frame(gpu, problem, solvers):
    in_h, workspace = PROBLEMS[problem]
    return pd.DataFrame([{"problem_id": problem, "in_h": in_h, "solver": s, "workspace_bytes": workspace.get(s, 8.0),
                          "gpu_sm_count": HW[gpu][0], "gpu_memory_bandwidth_gbs": HW[gpu][1]} for s in solvers])


def test_a_conv_solver_configuration_is_the_solver_and_the_fallback_finds_it():
    solvers = ["Gemm", "Direct", "Winograd"]
    X = pd.concat([_frame("A", "p1", solvers), _frame("A", "p2", solvers), _frame("B", "p1", solvers)],
                  ignore_index=True)
    y = np.array([2.0, 1.0, 4.0,    # A p1: Direct best; Gemm 2x, Winograd 4x
                  1.0, 3.0, 1.5,    # A p2: Gemm best; Direct 3x, Winograd 1.5x
                  4.0, 2.0, 1.0])   # B p1: Winograd best; Gemm 4x, Direct 2x
    model = _module().make_model(get_task("conv-solver"), 0).fit(X, y)
    # p3 was timed by no training GPU: each solver's median relative time over the three training problems
    new = _frame("C", "p3", [*solvers, "Implicit"])
    np.testing.assert_allclose(model.predict(new), [2.0, 2.0, 1.5, _module().UNMEASURED])
    # a problem a training GPU timed: the nearest such GPU's relative times (C is nearer B than A)
    np.testing.assert_allclose(model.predict(_frame("C", "p1", solvers)), [4.0, 2.0, 1.0])


def test_without_the_declared_key_every_solver_of_a_new_problem_scores_alike():
    # the rule before: every column that is neither GPU nor problem, so the height and workspace of p3 made its
    # solvers configurations no training problem had (what the declared key is for)
    X = pd.concat([_frame("A", "p1", ["Gemm", "Direct"]), _frame("A", "p2", ["Gemm", "Direct"])], ignore_index=True)
    y = np.array([2.0, 1.0, 1.0, 3.0])
    task = get_task("conv-solver")
    generic = _module().TransferBest(problem_columns=task.problem_columns).fit(X, y)
    new = _frame("C", "p3", ["Gemm", "Direct"])
    assert set(generic.predict(new)) == {_module().UNMEASURED}
    declared = _module().make_model(task, 0).fit(X, y)
    np.testing.assert_allclose(declared.predict(new), [1.5, 2.0])


def test_the_other_tasks_keep_every_column_but_gpu_and_problem_as_the_configuration():
    # autotune, stencil and NPB name no configuration columns: their rows carry nothing but the configuration
    mod = _module()
    for name in ("autotune-config", "stencil-tile", "npb-tpb"):
        assert mod.make_model(get_task(name), 0).config_columns == (), name
    assert mod.make_model(get_task("conv-solver"), 0).config_columns == ("solver",)


def test_a_declared_configuration_column_the_features_lack_is_one_clear_error():
    X = _frame("A", "p1", ["Gemm", "Direct"]).drop(columns="solver")
    with pytest.raises(ValueError, match=r"configuration column\(s\) \['solver'\] are not among the 5 feature"):
        _module().make_model(get_task("conv-solver"), 0).fit(X, np.array([1.0, 2.0]))


@pytest.mark.slow
def test_on_the_shipped_conv_solver_rows_the_fallback_ranks_the_solvers():
    # MI300X's fold (the smallest test fold) as the board trains it: the task's whole-problem training subsample
    data = usable_task_data("conv-solver", "by-gpu")
    fold = "AMD Instinct MI300X"
    test = np.flatnonzero(data.folds == fold)
    train = train_subsample(data.task, data.rows, np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED)))
    model = _module().make_model(data.task, 0).fit(data.X.iloc[train].reset_index(drop=True), data.y[train])
    X = data.X.iloc[test].reset_index(drop=True)
    scores = pd.Series(model.predict(X))
    hw, problem, _, _ = model._split(X)
    fallback = [idx for idx in scores.groupby(problem).indices.values()
                if model.source(tuple(hw[idx[0]]), problem[idx[0]]) is None]
    ranked = [idx for idx in fallback if scores.iloc[idx].nunique() > 1]
    # hundreds of MI300X problems no training GPU timed (398); the fallback tells the solvers of each apart
    assert len(fallback) > 100 and len(ranked) == len(fallback)
