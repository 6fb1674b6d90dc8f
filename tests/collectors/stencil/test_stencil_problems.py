"""The stencil suite draws the fields once per problem (grid, dtype, order) and shares them between the
problem's configurations, computes the plane references once per problem and the small-grid references once
per verification grid, and verifies on the device."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from test_stencil_suite import SUITE, _backend, numpy_kernel

from kgpubench.measure.backends.fake import FakeDeviceArray, fake_device_module

spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")
prepared = importlib.import_module("kgpubench_collectors.stencil.prepare")


def _verify(case, backend, seed=0):
    """What the harness does before timing: prepare, poison, launch, verify; then release."""
    run = SUITE.prepare(case, backend.compile(case.source), np, np.random.default_rng(seed))
    try:
        run.poison()
        run.launch()
        return run.verify()
    finally:
        run.release()


@pytest.fixture
def counts(monkeypatch):
    seen = {"fields": 0, "plane": 0, "small": 0}

    def counted(name, fn):
        def run(*a, **k):
            seen[name] += 1
            return fn(*a, **k)

        return run

    monkeypatch.setattr(prepared, "device_fields", counted("fields", prepared.device_fields))
    monkeypatch.setattr(prepared.reference, "plane_step", counted("plane", prepared.reference.plane_step))
    monkeypatch.setattr(prepared.reference, "run", counted("small", prepared.reference.run))
    SUITE.drop_caches()
    yield seen
    SUITE.drop_caches()


def _case(tile, order=4, dtype="float64", variant="thread-tile", grid=24):
    return cases.make_case(spec.StencilConfig((grid,) * 3, dtype, order, tile, variant, steps=3))


def test_fields_and_references_once_per_problem(counts):
    # Verification grids: (2,1,4) and (1,2,4) share (16,16,18); (1,1,1) has (16,16,16).
    tiles = [(2, 1, 4), (1, 2, 4), (1, 1, 1), (2, 1, 4)]
    outs = [_verify(_case(t, variant=v), _backend())
            for t, v in zip(tiles, ("thread-tile", "thread-tile", "thread-tile", "shared-tile"))]
    assert [ok for ok, _ in outs] == [True] * 4, outs
    assert counts == {"fields": 1, "plane": 3, "small": 2}  # planes i = 2, 12, 21 of the 24^3 grid
    assert _verify(_case((1, 1, 1), order=2), _backend())[0]
    assert counts == {"fields": 2, "plane": 6, "small": 3}  # another order: another problem


def test_configurations_continue_the_shared_time_stepping(counts):
    backend = _backend()
    runs = []
    for tile in ((1, 1, 1), (2, 1, 4)):
        case = _case(tile)
        run = SUITE.prepare(case, backend.compile(case.source), np, np.random.default_rng(len(runs)))
        run.launch()
        runs.append((run.main.step_index, run.main.fields))
        assert run.verify()[0]
        run.release()
    assert runs[0][1] is runs[1][1] and (runs[0][0], runs[1][0]) == (3, 3 + 1 + 3)  # 3 steps, the check step, 3


def test_a_wrong_configuration_fails_and_the_next_one_redraws_and_passes(counts):
    ok = _verify(_case((1, 1, 1)), _backend())
    bad = _verify(_case((2, 1, 4)), _backend(impl=numpy_kernel(skip_last_k=True)))
    after = _verify(_case((1, 2, 4)), _backend())
    assert (ok[0], bad[0], after[0]) == (True, False, True) and "differ" in bad[1]
    assert counts["fields"] == 2  # the failure dropped the possibly damaged fields


def test_fields_freed_after_the_last_planned_configuration(counts):
    quick = list(SUITE.cases(quick=True))  # the plan: 64^3, order 8, float32 then float64 (5 each)
    backend = _backend()
    held = []
    for i, case in enumerate(quick[:5]):
        run = SUITE.prepare(case, backend.compile(case.source), np, np.random.default_rng(i))
        run.launch()
        assert run.verify()[0], run.verify()[1]
        run.release()
        held.append(SUITE._caches.fields.key is not None)
    assert held == [True, True, True, True, False] and counts["fields"] == 1


def test_device_verification_copies_planes_once_per_problem(counts, monkeypatch):
    xp = fake_device_module()
    monkeypatch.setitem(sys.modules, "cupy", xp)
    backend = _backend()
    copies = []
    for tile in ((1, 1, 1), (2, 1, 4)):
        FakeDeviceArray.host_copies.clear()
        case = _case(tile)
        run = SUITE.prepare(case, backend.compile(case.source), xp, np.random.default_rng(0))
        assert type(run.main.buffers[0]) is FakeDeviceArray
        run.launch()
        ok, detail = run.verify()
        assert ok, detail
        copies.append(list(FakeDeviceArray.host_copies))
        run.release()
    # The first configuration copies the plane inputs once for the problem's reference: 3 slabs of 2R+1 planes,
    # 3 previous planes, 3 velocity planes; the second copies nothing.
    assert sorted(copies[0]) == sorted([5 * 24 * 24] * 3 + [24 * 24] * 6) and copies[1] == []
