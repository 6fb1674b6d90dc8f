"""Every metric on a small example computed by hand."""

import math

import numpy as np
import pytest

from kgpubench import metrics as m


def test_mape_and_max_ape():
    y, p = [1.0, 2.0, 4.0], [1.1, 1.5, 4.0]
    # |0.1|/1 = 10 %, |0.5|/2 = 25 %, 0 %  -> mean 35/3, max 25
    assert m.mape(y, p) == pytest.approx(35.0 / 3.0)
    assert m.max_ape(y, p) == pytest.approx(25.0)


def test_rmse_log_and_rmse():
    y, p = [1.0, math.e], [math.e, math.e]
    # ln errors: 1 and 0 -> sqrt(1/2)
    assert m.rmse_log(y, p) == pytest.approx(math.sqrt(0.5))
    assert m.rmse([1.0, 2.0], [2.0, 4.0]) == pytest.approx(math.sqrt((1 + 4) / 2))


def test_spearman_with_a_swap_and_with_ties():
    # ranks y 1,2,3,4 ; p 1,3,2,4 -> d^2 sum = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    assert m.spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    # p = [1,1,2]: average ranks 1.5,1.5,3 vs 1,2,3 -> centred (-.5,-.5,1)·(-1,0,1) = 1.5
    # norms sqrt(1.5) and sqrt(2) -> 1.5/sqrt(3) = 0.8660
    assert m.spearman([1, 2, 3], [1, 1, 2]) == pytest.approx(1.5 / math.sqrt(3.0))


def test_kendall_tau_b_small_and_large_paths_agree_with_hand_value():
    # y 1,2,3,4 ; p 1,3,2,4: pairs 6, one discordant (2,3) -> (5-1)/6
    assert m.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # ties: y 1,2,3 ; p 1,1,2 -> C=2 (1-3, 2-3), D=0, T_p=1 (1-2), T_y=0 -> 2/sqrt(3*2)
    assert m.kendall_tau([1, 2, 3], [1, 1, 2]) == pytest.approx(2 / math.sqrt(6))
    # the O(n log n) path (n > 500) on a reversed pair of blocks: identical to the pairwise formula
    y = np.arange(600, dtype=float)
    p = np.concatenate([np.arange(300, 600), np.arange(300)]).astype(float)
    # discordant pairs: 300*300 of 600*599/2
    n_pairs = 600 * 599 / 2
    assert m.kendall_tau(y, p) == pytest.approx((n_pairs - 2 * 90000) / n_pairs)


def test_topk_regret():
    y = [4.0, 2.0, 3.0, 8.0]
    p = [1.0, 5.0, 2.0, 0.5]  # order by p: idx 3 (8.0), 0 (4.0), 2 (3.0), 1 (2.0)
    assert m.topk_regret(y, p, 1) == pytest.approx(8.0 / 2.0 - 1)
    assert m.topk_regret(y, p, 3) == pytest.approx(3.0 / 2.0 - 1)
    assert m.topk_regret(y, p, 4) == 0.0


def test_choice_metrics():
    base, chosen, best = [2.0, 1.0, 3.0], [1.0, 1.0, 2.0], [1.0, 0.5, 2.0]
    assert m.improvement_coefficient(base, chosen) == pytest.approx((2 + 1 + 1.5) / 3)
    assert m.pct_improved(base, chosen) == pytest.approx(200 / 3)
    assert m.regret(best, chosen) == pytest.approx((0 + 1 + 0) / 3)
    assert m.app_time_ratio([10.0, 4.0], [11.0, 4.0]) == pytest.approx((1.1 + 1.0) / 2)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(m.MetricInputError, match="one length"):
        m.mape([1, 2], [1])
    with pytest.raises(m.MetricInputError, match="NaN"):
        m.mape([1, 2], [1, float("nan")])
    with pytest.raises(m.MetricInputError, match="positive"):
        m.rmse_log([0.0, 1.0], [1.0, 1.0])


def test_every_metric_has_a_formula_docstring():
    for metric in m.METRICS.values():
        fn = getattr(m, metric.name, None) or m.topk_regret
        assert fn.__doc__ and ("=" in fn.__doc__ or "``" in fn.__doc__), metric.name
