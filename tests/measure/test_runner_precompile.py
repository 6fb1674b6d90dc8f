"""collect_suite compiles ahead of time: one precompile call for the cases still to measure, whose features the
loop then looks up instead of extracting them per case."""

from __future__ import annotations

import pytest
from measure_fakes import DoubleSuite, double_impl

from kgpubench.measure import features_link
from kgpubench.measure.backends.base import Capabilities
from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, collect_suite
from kgpubench.measure.timing import StopRule

FAST = StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10)


class PrecompilingFake(FakeBackend):
    """The fake backend plus ``precompile``, which records its calls and gives features per block size."""

    def __post_init__(self) -> None:
        self.capabilities = Capabilities(graphs=True, power=self.with_nvml, clocks=self.with_nvml, precompile=True)
        super().__post_init__()
        self.precompile_calls: list[tuple[list[tuple[int, int]], bool]] = []

    def precompile(self, cases, *, sources=(), features=True):
        self.precompile_calls.append(([(c.sizes["n"], c.block[0]) for c in cases], features))
        return [{"alpha": c.block[0] / 1000, "nreg": 7} if features else None for c in cases]


class CachingSuite(DoubleSuite):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.dropped = 0

    def drop_caches(self):
        self.dropped += 1


def _collect(tmp_path, backend, suite, features=None):
    writer = ShardWriter(tmp_path / "shard", "kernels")
    summary = collect_suite(suite, backend, writer, CollectOptions(rule=FAST), features=features)
    writer.close()
    return summary, {(r["n"], r["nt"]): r for r in ShardWriter(tmp_path / "shard", "kernels").rows()}


@pytest.fixture
def no_per_case_features(monkeypatch):
    def fail(*_a, **_k):
        raise AssertionError("static_features was called in the measuring loop")

    monkeypatch.setattr(features_link, "static_features", fail)


def test_one_precompile_and_features_looked_up(tmp_path, no_per_case_features):
    backend = PrecompilingFake(implementations={"double": double_impl})
    suite = CachingSuite()
    summary, rows = _collect(tmp_path, backend, suite)
    assert summary.statuses == {"ok": 4}
    assert backend.precompile_calls == [([(16, 32), (16, 64), (32, 32), (32, 64)], True)]
    assert rows[(32, 64)]["alpha"] == 0.064 and rows[(16, 32)]["alpha"] == 0.032
    assert all(r["nreg"] == 7 for r in rows.values())
    assert suite.dropped == 1


def test_resume_precompiles_only_the_missing_cases(tmp_path, no_per_case_features):
    backend = PrecompilingFake(implementations={"double": double_impl})
    _collect(tmp_path, backend, CachingSuite(sizes=(16,)))
    backend2 = PrecompilingFake(implementations={"double": double_impl})
    summary, rows = _collect(tmp_path, backend2, CachingSuite(sizes=(16, 32)))
    assert summary.skipped == 2 and summary.written == 2 and len(rows) == 4
    assert backend2.precompile_calls == [([(32, 32), (32, 64)], True)]
    backend3 = PrecompilingFake(implementations={"double": double_impl})
    summary, _ = _collect(tmp_path, backend3, CachingSuite(sizes=(16, 32)))
    assert summary.skipped == 4 and backend3.precompile_calls == []  # nothing left: no compile at all


def test_a_given_features_function_is_kept_and_compiling_still_happens_early(tmp_path):
    backend = PrecompilingFake(implementations={"double": double_impl})
    seen = []

    def mine(case, dev):
        seen.append(case.block[0])
        return {"alpha": 0.5}

    _summary, rows = _collect(tmp_path, backend, CachingSuite(), features=mine)
    assert backend.precompile_calls == [([(16, 32), (16, 64), (32, 32), (32, 64)], False)]
    assert sorted(seen) == [32, 32, 64, 64] and all(r["alpha"] == 0.5 for r in rows.values())


def test_backend_without_precompile_keeps_the_per_case_path(tmp_path, monkeypatch):
    calls = []

    def per_case(case, dev, ptx_source=None):
        calls.append(case.block[0])
        return {"alpha": 0.125}

    monkeypatch.setattr(features_link, "static_features", per_case)
    _summary, rows = _collect(tmp_path, FakeBackend(implementations={"double": double_impl}), CachingSuite())
    assert sorted(calls) == [32, 32, 64, 64] and all(r["alpha"] == 0.125 for r in rows.values())


def test_regular_rows_get_features_from_real_nvrtc_artefacts(tmp_path, no_per_case_features):
    """End to end on the CPU: collect_suite -> precompile with the real NVRTC (ctypes) and the disk cache ->
    features computed from the artefacts in the compile step -> rows; no per-case feature extraction."""
    from kgpubench.errors import ToolchainError
    from kgpubench.measure.compile_cache import CompileCache, CtypesNvrtc, FeatureDevice, precompile
    from kgpubench.measure.suites import load_suite

    try:
        nvrtc = CtypesNvrtc.find()
    except ToolchainError as exc:
        pytest.skip(f"no NVRTC library here: {exc}")

    class NvrtcFake(FakeBackend):
        def __post_init__(self) -> None:
            self.capabilities = Capabilities(graphs=True, power=self.with_nvml, clocks=self.with_nvml, precompile=True)
            super().__post_init__()

        def precompile(self, cases, *, sources=(), features=True):
            dev = self.device()
            done = precompile(CompileCache(tmp_path / "cache", compiler=nvrtc), dev.arch, cases, sources,
                              features=FeatureDevice(dev.arch, dev.sm_count) if features else None, jobs=1)
            self.compiled_ahead = done.compiled
            return done.features

    def vector_add(grid, block, args, smem):
        a, b, c, n = args
        c[:n] = a[:n] + b[:n]

    backend = NvrtcFake(implementations={"vector_add": vector_add}, time_ms=0.5)
    writer = ShardWriter(tmp_path / "shard", "kernels")
    summary = collect_suite(load_suite("regular"), backend, writer,
                            CollectOptions(quick=True, kernels=["vector_add"], rule=FAST))
    writer.close()
    rows = ShardWriter(tmp_path / "shard", "kernels").rows()
    assert summary.statuses == {"ok": 4} and backend.compiled_ahead == 1  # one source, no defines
    # vector_add: one global store per element it handles, registers from NVRTC's ptxas report
    assert all(r["lmw"] == 1.0 and r["nreg"] > 0 and r["occupancy"] > 0 and r["l"] > 0 for r in rows)
