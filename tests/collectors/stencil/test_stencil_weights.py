"""Finite-difference weights: the spec's table, the two identities, the stability limit."""

from __future__ import annotations

import importlib
import math
from fractions import Fraction as F

import pytest

from kgpubench.errors import KgpubenchError
from kgpubench.measure.suites import load_suite

load_suite("stencil")
weights = importlib.import_module("kgpubench_collectors.stencil.weights")

# Typed from ../shared/SPEC-stencil.md (Fornberg), c_0 then c_1..c_R.
SPEC_TABLE = {
    2: [F(-2), F(1)],
    4: [F(-5, 2), F(4, 3), F(-1, 12)],
    8: [F(-205, 72), F(8, 5), F(-1, 5), F(8, 315), F(-1, 560)],
    16: [F(-1077749, 352800), F(16, 9), F(-14, 45), F(112, 1485), F(-7, 396), F(112, 32175), F(-2, 3861),
         F(16, 315315), F(-1, 411840)],
}


@pytest.mark.parametrize("order", [2, 4, 8, 16])
def test_generated_weights_equal_the_spec_table(order):
    assert list(weights.fd_weights(order)) == SPEC_TABLE[order]


@pytest.mark.parametrize("order", [2, 4, 6, 8, 10, 16, 24])
def test_weights_satisfy_both_identities_exactly(order):
    c = weights.fd_weights(order)
    assert len(c) == order // 2 + 1
    assert c[0] + 2 * sum(c[1:]) == 0
    assert sum(cr * r * r for r, cr in enumerate(c) if r) == 1


def test_order_6_weights_by_hand():
    # Moments: 2(c1 + 4 c2 + 9 c3) = 2, c1 + 16 c2 + 81 c3 = 0, c1 + 64 c2 + 729 c3 = 0
    # -> c3 = 1/90, c2 = -3/20, c1 = 3/2, c0 = -2 (c1 + c2 + c3) = -49/18.
    assert list(weights.fd_weights(6)) == [F(-49, 18), F(3, 2), F(-3, 20), F(1, 90)]


@pytest.mark.parametrize("bad", [0, 3, -2, 2.0, True])
def test_odd_or_non_integer_orders_are_rejected(bad):
    with pytest.raises(KgpubenchError, match="positive even integer"):
        weights.fd_weights(bad)


def test_stable_dt_of_order_2_is_the_classical_limit():
    # Order 2 in 3-D: dt <= h / (v sqrt(3)).
    assert weights.stable_dt(2, (10.0, 20.0, 30.0), 2000.0) == pytest.approx(10.0 / (2000.0 * math.sqrt(3)))
    # Order 4: sum|c| = 5/2 + 2 (4/3 + 1/12) = 16/3 -> sqrt(4 / 16) = 1/2.
    assert weights.stable_dt(4, (5.0, 5.0, 5.0), 1000.0) == pytest.approx(0.5 * 5.0 / 1000.0)
