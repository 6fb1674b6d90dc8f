"""The power suite draws inputs and computes launch-independent references once per problem, keeps the inputs
on the device for the problem's block counts, and verifies on the device (only samples and scalars cross)."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from test_power_suite import IMPLS, SUITE, _kernel, small_case

from kgpubench.measure.backends.fake import FakeBackend, FakeDeviceArray, fake_device_module
from kgpubench.measure.runner import measure_case

power = importlib.import_module("kgpubench_collectors.power")
spec = importlib.import_module("kgpubench_collectors.power.spec")
prepare = importlib.import_module("kgpubench_collectors.power.prepare")


@pytest.mark.slow
def test_histogram_bins_reference_once_for_all_block_counts(monkeypatch):
    calls = []
    real = prepare.ref.histogram256

    def counted(words):
        calls.append(words.size)
        return real(words)

    monkeypatch.setattr(prepare.ref, "histogram256", counted)
    pk = _kernel("histogram256")
    cases = [small_case(pk, nb) for nb in (1, 2, 3, 5)]
    SUITE.cases(quick=True)  # a plan that does not hold these small cases: they share one problem
    outs = [measure_case(c, SUITE, FakeBackend(implementations=IMPLS)) for c in cases]
    assert [o.status for o in outs] == ["ok"] * 4
    assert calls == [777]  # SMALL nwords: computed for the first case only
    SUITE.drop_caches()
    assert measure_case(cases[0], SUITE, FakeBackend(implementations=IMPLS)).status == "ok"
    assert calls == [777, 777]  # dropped: the next collection draws the problem again


def test_inputs_drawn_once_per_problem_and_copied_per_case(monkeypatch):
    drawn = []
    real = prepare.BUILDERS["madd"]

    def problem(case, xp, rng):
        drawn.append(case.key["variant"])
        return real.problem(case, xp, rng)

    monkeypatch.setitem(prepare.BUILDERS, "madd", prepare.KernelIO(problem, real.bind))
    backend = FakeBackend(implementations=IMPLS)
    firsts = []
    for variant in ("fp32", "fp64"):
        for nb in (1, 2, 4):
            p = SUITE.prepare(small_case(_kernel("madd", variant), nb), None, np, np.random.default_rng(nb))
            assert p.args[0] is not SUITE._problems.value["a"]  # the case's own copy
            firsts.append(float(p.args[0][0]))
            p.release()
    assert drawn == ["fp32", "fp64"]
    assert len(set(firsts[:3])) == 1 and len(set(firsts[3:])) == 1 and firsts[0] != firsts[3]
    assert backend.launches == []
    SUITE.drop_caches()


@pytest.mark.parametrize("name,variant,sizes,full", [("madd", "fp32", {"side": 512}, 512 * 512),
                                                     ("mtrans", "", {"side": 600}, 600 * 600),
                                                     ("dct8x8", "", {"side": 1024}, 1024 * 1024)])
def test_large_outputs_are_checked_on_the_device(monkeypatch, name, variant, sizes, full):
    xp = fake_device_module()
    monkeypatch.setitem(sys.modules, "cupy", xp)
    FakeDeviceArray.host_copies.clear()
    pk = _kernel(name, variant)
    grid = spec.GridChoice(nb=4, fraction=1.0, blocks_per_sm=1, saturation=1.0)
    case = power.make_case(pk, sizes, pk.blocks[0], grid)
    backend = FakeBackend(implementations=IMPLS)
    p = SUITE.prepare(case, backend.compile(case.source), xp, np.random.default_rng(0))
    p.poison()
    p.launch()
    ok, detail = p.verify()
    assert ok, detail
    out = p.outputs[0]
    out.reshape(-1)[full // 2 + 3] = np.nan  # one element left unwritten
    ok, detail = p.verify()
    assert not ok and f"1 of {full} values not written (poison left); first at {full // 2 + 3}" in detail
    assert FakeDeviceArray.host_copies and max(FakeDeviceArray.host_copies) < full // 2
    p.release()
    SUITE.drop_caches()
