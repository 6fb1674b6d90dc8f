"""Every metric on a small example computed by hand."""

import math

import numpy as np
import pytest

from kgpubench.tasks import metrics as m


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


def test_log_error_and_error_quantiles_by_hand():
    y, p = [1.0, 2.0, 4.0, 10.0], [2.0, 2.0, 1.0, 11.0]
    # |ln 2|, 0, |ln 1/4| = 2 ln 2, ln 1.1
    assert m.male(y, p) == pytest.approx((3 * math.log(2) + math.log(1.1)) / 4)
    # APEs 100, 0, 75, 10 -> sorted 0, 10, 75, 100: median 42.5; 90th pct = 75 + 0.7 * 25
    assert m.mdape(y, p) == pytest.approx(42.5)
    assert m.p90_ape(y, p) == pytest.approx(92.5)


def test_regret_within_measurement_noise_counts_as_optimal():
    y, p = [1.00, 1.03, 2.0], [3.0, 1.0, 2.0]  # the pick is 1.03 against the best 1.00
    assert m.topk_regret(y, p, 1) == pytest.approx(0.03)
    # standard errors 0.01 and 0.01: 2 * sqrt(2) * 0.01 = 0.028 < 0.03, still a regret
    assert m.topk_regret(y, p, 1, noise=[0.01, 0.01, 0.0]) == pytest.approx(0.03)
    # 0.011 each: 2 * sqrt(2) * 0.011 = 0.0311 >= 0.03, within noise
    assert m.topk_regret(y, p, 1, noise=[0.011, 0.011, 0.0]) == 0.0
    best, chosen = [1.0, 2.0], [1.03, 3.0]
    assert m.regret(best, chosen) == pytest.approx((0.03 + 0.5) / 2)
    assert m.regret(best, chosen, noise_best=[0.011, 0.0], noise_chosen=[0.011, 0.0]) == pytest.approx(0.5 / 2)
    assert m.within_noise([1.03], [1.0]).tolist() == [False]


def test_app_time_seconds_and_metric_table():
    assert m.app_time_s([1.0, 2.0], [1.5, 2.5]) == pytest.approx(2.0)
    assert m.METRICS["top1_regret"].noise and not m.METRICS["mape"].noise
    assert all(metric.unit is not None and metric.rel_tol > 0 for metric in m.METRICS.values())
    assert m.METRICS["top1_regret"].fn([1.0, 2.0], [2.0, 1.0], noise=[0.0, 0.0]) == pytest.approx(1.0)
