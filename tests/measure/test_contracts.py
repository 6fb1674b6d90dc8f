"""Declared contracts: every built-in suite and the fake backend pass the public conformance checks; a suite
plugged in through the ``kgpubench.suites`` entry points is registered, planned and collected by default."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import textwrap

import pytest

from kgpubench.errors import ContractError
from kgpubench.measure import suites as suites_mod
from kgpubench.measure.backends import get_backend
from kgpubench.measure.fake import FakeBackend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, CollectSummary, _select_cases, run_suite
from kgpubench.measure.suite import SuiteBase, as_suite
from kgpubench.measure.timing import StopRule
from kgpubench.testing import check_backend, check_suite

BUILT_IN = ("regular", "power", "stencil", "npb")


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_suite_passes_check_suite(name):
    suite = suites_mod.load_suite(name)
    assert isinstance(suite, SuiteBase) and as_suite(suite) is suite
    counts = check_suite(suite)
    assert counts["quick"] == len(_select_cases(suite, CollectOptions(quick=True)))
    assert counts["full"] == len(_select_cases(suite, CollectOptions(quick=False)))
    assert suite.runs_itself is (name == "npb")


def test_the_fake_backend_passes_check_backend(tmp_path):
    backend = get_backend("fake")
    check_backend(backend, workdir=tmp_path)
    assert [name for name, *_ in backend.launches] == ["kgpubench_check"] * (3 + 4 * 2)  # 3 timed; 4 samples of 2


@pytest.mark.gpu
def test_the_cupy_backend_passes_check_backend(tmp_path):
    check_backend(get_backend("cupy"), workdir=tmp_path)


def test_check_backend_names_a_broken_part(tmp_path):
    class ShortTimes(FakeBackend):
        def time_launches(self, fn, count):
            return super().time_launches(fn, count)[:-1]

    with pytest.raises(ContractError, match="backend 'fake': time_launches\\(fn, 3\\) gave 2 times for 3 calls"):
        check_backend(ShortTimes(), workdir=tmp_path)

    class Grabby(FakeBackend):
        def classify(self, exc):
            return super().classify(MemoryError())

    with pytest.raises(ContractError, match="classify\\(\\) must return None"):
        check_backend(Grabby(), workdir=tmp_path)


def _toy_module(tmp_path, *, duplicate: bool = False) -> str:
    """A third-party suite module on sys.path, following the protocol only (no SuiteBase)."""
    (tmp_path / "toy.cu").write_text('extern "C" __global__ void toy_add(float* x, int n) {}\n')
    sizes = "(1024, 1024)" if duplicate else "(1024, 4096)"
    (tmp_path / "toy_suite.py").write_text(textwrap.dedent(f'''
        from pathlib import Path
        import numpy as np
        from kgpubench.measure.suite import Case, KernelSource

        class Prepared:
            def __init__(self, kernel, xp, n):
                self.kernel, self.n, self.x = kernel, n, xp.zeros(n, dtype="float32")
            def launch(self):
                self.kernel((self.n // 256, 1, 1), (256, 1, 1), (self.x, np.int32(self.n)))
            def poison(self):
                self.x[:] = np.nan
            def verify(self):
                return bool(np.all(self.x == 1.0)), ""
            def release(self):
                self.x = None

        class ToySuite:
            name = "toy"
            table = "kernels"
            collector_version = "0.1"

            def cases(self, *, quick, kernels=None):
                src = KernelSource(Path({str(tmp_path / "toy.cu")!r}), "toy_add")
                return [Case(key={{"suite": "toy", "kernel": "toy_add", "variant": "",
                                   "size_params": {{"n": n}}}},
                             columns={{"program": "toy", "bound": "memory", "n": float(n)}}, source=src,
                             grid=(n // 256, 1, 1), block=(256, 1, 1), sizes={{"n": n}})
                        for n in {sizes}[: 1 if quick else 2]]

            def prepare(self, case, kernel, xp, rng):
                return Prepared(kernel, xp, case.sizes["n"])

        SUITE = ToySuite()
    '''))
    sys.modules.pop("toy_suite", None)
    return "toy_suite:SUITE"


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    value = _toy_module(tmp_path)
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        if kw.get("group") == suites_mod.ENTRY_POINT_GROUP:
            return [importlib.metadata.EntryPoint(name="toy", value=value, group=suites_mod.ENTRY_POINT_GROUP)]
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return tmp_path


def test_an_entry_point_suite_is_registered_checked_and_planned_by_default(plugged, capsys):
    assert suites_mod.available_suites() == [*BUILT_IN, "toy"]
    toy = suites_mod.load_suite("toy")
    assert type(toy).__name__ == "ToySuite" and not as_suite(toy).runs_itself
    assert check_suite(toy) == {"quick": 1, "full": 2}
    assert as_suite(toy).kernels() == ["toy_add"]  # the default: the kernels of the full plan
    from kgpubench.cli import app

    with pytest.raises(SystemExit) as stop:
        app(["collect", "--dry-run", "--json"])
    assert stop.value.code == 0
    plan = json.loads(capsys.readouterr().out)
    assert sorted(plan) == sorted([*BUILT_IN, "toy"])  # printed with sorted keys
    assert plan["toy"] == {"table": "kernels", "out": "kgpubench-shards/toy", "cases": 2, "kernels": {"toy_add": 2}}


def test_a_plugged_in_suite_runs_through_the_same_harness(plugged, tmp_path):
    def add_one(grid, block, args, smem):
        x, n = args
        x[:n] = 1.0

    backend = get_backend("fake", implementations={"toy_add": add_one}, time_ms=0.25)
    writer = ShardWriter(tmp_path / "out", "kernels")
    options = CollectOptions(quick=False, rule=StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10))
    summary = run_suite(suites_mod.load_suite("toy"), backend, writer, options)
    writer.close()
    rows = list(ShardWriter(tmp_path / "out", "kernels").rows())
    assert summary.statuses == {"ok": 2} and summary.written == 2
    assert sorted(r["n"] for r in rows) == [1024.0, 4096.0] and {r["source"] for r in rows} == {"fake"}
    assert all(r["time_ms_median"] == pytest.approx(0.25) for r in rows)


def test_a_suite_that_runs_itself_is_handed_the_run(tmp_path):
    seen = []

    class Whole(SuiteBase):
        name, table, collector_version, runs_itself = "whole", "npb", "1", True

        def cases(self, *, quick, kernels=None, device=None):
            return []

        def collect_into(self, backend, writer, options, *, progress=None):
            seen.append((backend.name, options.quick))
            return CollectSummary(total=7)

    assert run_suite(Whole(), get_backend("fake"), None, CollectOptions(quick=True)).total == 7
    assert seen == [("fake", True)]


def test_check_suite_refuses_two_cases_of_one_row(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _toy_module(tmp_path, duplicate=True)
    import toy_suite

    with pytest.raises(ContractError, match="suite 'toy': cases toy_add.* and toy_add.* are the same row"):
        check_suite(toy_suite.SUITE)
