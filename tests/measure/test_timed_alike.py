"""``timed_alike``: the one rule saying whether a row was timed the way a collection times it (which stored rows
skip a configuration, which rows of an output folder stop a resume), over every L2 policy, cold timer and
timing method the schema allows."""

from __future__ import annotations

import itertools

import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.measure.backends.cupy_timing import COLD_TIMERS  # NumPy only: CuPy is imported when used
from kgpubench.measure.timing import COLD_METHODS, METHODS, cold_method, timed_alike
from kgpubench.schema.common import L2_POLICIES, TIMING_METHODS

# For a flushed collection with each cold timer: the row methods timed alike. The three cold labels tell the
# timers apart; stream (a unit too long for the queue), app, and a row without a method are alike under all.
NOT_A_COLD_LABEL = {"graph", "batch", "stream", "app", None}
FLUSHED_ALIKE = {
    "events": NOT_A_COLD_LABEL | {"cold"},
    "cupti": NOT_A_COLD_LABEL | {"cupti"},
    "cupti-drained": NOT_A_COLD_LABEL | {"cupti-drained"},
}
ROW_METHODS = (*TIMING_METHODS, None)
TIMERS = (*COLD_TIMERS, None)  # None: the collection did not say, the event timer's default


def _expected(row_l2, row_method, policy, timer) -> bool:
    if row_l2 != policy:
        return False  # another L2 policy (or none recorded) is never alike
    if policy == "warm":
        return True  # the harness picks the warm method per unit
    return row_method in FLUSHED_ALIKE[timer or "events"]


CASES = list(itertools.product((*L2_POLICIES, None), ROW_METHODS, L2_POLICIES, TIMERS))


@pytest.mark.parametrize("row_l2, row_method, policy, timer", CASES)
def test_every_policy_timer_and_method(row_l2, row_method, policy, timer):
    assert timed_alike(row_l2, row_method, policy, timer) is _expected(row_l2, row_method, policy, timer)


def test_the_table_covers_every_method_and_timer_there_is():
    # a timing method or cold timer added later must be placed in the table above, not fall through
    assert set(FLUSHED_ALIKE) == set(COLD_TIMERS) == set(COLD_METHODS)
    assert set(TIMING_METHODS) == set(METHODS) | {"app"}
    assert NOT_A_COLD_LABEL | set(COLD_METHODS.values()) == set(ROW_METHODS)
    assert len(CASES) == 3 * 8 * 2 * 4


@pytest.mark.parametrize("timer", COLD_TIMERS)
@pytest.mark.parametrize("method", ["stream", "app"])
def test_flushed_stream_and_app_rows_are_alike_under_every_cold_timer(method, timer):
    """What the store rule got wrong before it used this predicate: it held a flushed row only when its method
    was the timer's own cold label, so a stored ``stream`` or ``app`` row was measured again every session while
    the same row in an output folder let the resume go on."""
    assert timed_alike("flushed", method, "flushed", timer)
    assert not timed_alike("warm", method, "flushed", timer)  # the L2 policy still tells them apart


def test_the_cold_labels_tell_the_timers_apart_and_nothing_else_does():
    for timer, label in COLD_METHODS.items():
        assert cold_method(timer) == label
        assert [t for t in COLD_TIMERS if timed_alike("flushed", label, "flushed", t)] == [timer]
    assert cold_method(None) == "cold"


def test_an_unknown_cold_timer_is_refused_when_it_matters():
    with pytest.raises(UnknownNameError, match="unknown cold timer 'nsys'"):
        timed_alike("flushed", "cold", "flushed", "nsys")
    assert timed_alike("warm", "graph", "warm", "nsys")  # a warm collection never asks the cold timer
