"""benchmarks/collect_overhead.py on the fake backend: sampling, the projection arithmetic, the per-case walls
with the compile time taken out, the NPB sample, and the one-line exit without a GPU."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from kgpubench.measure.backends.base import Capabilities
from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.compile_cache import CompileOutput
from kgpubench.measure.suite import Case, KernelSource
from kgpubench.measure.verify import compare, poison

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("collect_overhead", ROOT / "benchmarks" / "collect_overhead.py")
co = importlib.util.module_from_spec(_spec)
sys.modules["collect_overhead"] = co
_spec.loader.exec_module(co)


def test_spread_and_sample():
    assert co.spread(10, 4) == [0, 3, 6, 9] and co.spread(3, 6) == [0, 1, 2]
    assert co.spread(5, 1) == [0] and co.spread(0, 3) == [] and co.spread(7, 2) == [0, 6]
    groups = co.group(["a1", "b1", "a2", "c1", "a3", "b2"], key=lambda s: s[0])
    assert groups == {"a": ["a1", "a2", "a3"], "b": ["b1", "b2"], "c": ["c1"]}
    assert co.sample(groups, problems=2, per_problem=2) == [["a1", "a3"], ["c1"]]


def test_projection_by_hand():
    s = co.SuiteSample("regular", configs=100, problems=10, variants=20, walls=[[3.0, 1.0, 1.0], [5.0, 1.0]],
                       measured_s=5.5, statuses={"ok": 5})
    p = co.project(s, compile_s_per_variant=0.05)
    # per configuration: the non-first walls (1, 1, 1); setup: firsts minus that (2 and 4) -> 3 s
    assert (p.per_config_s, p.setup_s) == (1.0, 3.0)
    assert (p.compile_s, p.configs_s, p.problems_s, p.total_s) == pytest.approx((1.0, 100.0, 30.0, 131.0))
    assert p.overhead_ratio == pytest.approx(11.0 / 5.5)
    line, total = co.report([s], 0.05)
    assert line.startswith("regular: sample of 5 configurations in 2 problems (ok=5); overhead ratio 2.00")
    assert "1.000 s per configuration, 3.00 s setup per problem" in line
    assert "-> projected 2.2 min (compile 0.0 + configurations 1.7 + problem setup 0.5)" in line
    assert total == "projected full sweep, all suites above: 2.2 min (target <= 30 min)"


# -- a tiny suite on the fake backend: three problems (sizes) of three block sizes -----------------------------
class _Prepared:
    def __init__(self, kernel, case, xp, rng):
        n = int(case.sizes["n"])
        self.x = xp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
        self.out = xp.empty(n, dtype=np.float32)
        self.kernel, self.case, self.n = kernel, case, n

    def launch(self):
        self.kernel(self.case.grid, self.case.block, (self.x, self.out, np.int32(self.n)))

    def poison(self):
        poison(self.out)

    def verify(self):
        return compare(self.out, 2 * self.x, name="out")

    def release(self):
        pass


def _double(grid, block, args, shared_mem):
    x, out, n = args
    out[:n] = 2 * x[:n]


class _Suite:
    name, table, collector_version = "regular", "kernels", "0.0.1"

    def kernels(self):
        return ["double"]

    def cases(self, *, quick=False, kernels=None):
        return [Case(key={"suite": "regular", "kernel": "double", "variant": "", "size_params": {"n": n}},
                     columns={"program": "t", "bound": "memory", "n": float(n), "s": float(n), "cpx": float(n)},
                     source=KernelSource(Path("double.cu"), "double"), grid=(-(-n // nt), 1, 1), block=(nt, 1, 1),
                     sizes={"n": n}) for n in (16, 32, 64) for nt in (32, 64, 128)]

    def prepare(self, case, kernel, xp, rng):
        return _Prepared(kernel, case, xp, rng)


class _Precompiling(FakeBackend):
    """The fake backend with a precompile that takes 5 s of the virtual clock (declared as a capability)."""

    def __post_init__(self) -> None:
        self.capabilities = Capabilities(graphs=True, power=self.with_nvml, clocks=self.with_nvml, precompile=True)
        super().__post_init__()

    def precompile(self, cases=(), *, sources=(), features=True):
        self.clock.sleep(5.0)
        return [{} if features else None for _ in cases]


def test_measure_suite_walls_exclude_the_precompile(tmp_path):
    backend = _Precompiling(implementations={"double": _double}, time_ms=0.25, with_nvml=False)
    suite = _Suite()
    clock = lambda: backend.clock.now / 1e9  # noqa: E731
    out = co.measure_suite(suite, backend, suite.cases(), tmp_path, problems=2, per_problem=2, clock=clock)
    assert (out.configs, out.problems, out.variants) == (9, 3, 1)
    assert out.statuses == {"ok": 4} and [len(ws) for ws in out.walls] == [2, 2]
    flat = [w for ws in out.walls for w in ws]
    # Every configuration launches the same number of 0.25 ms kernels: equal walls; the 5 s precompile is out.
    assert flat == pytest.approx([flat[0]] * 4) and 0 < flat[0] < 1.0
    assert out.measured_s > 0 and sum(flat) >= out.measured_s  # warm-up launches are wall but not measured
    p = co.project(out, 0.0)
    assert p.setup_s == 0.0 and p.total_s == pytest.approx(9 * flat[0])


@pytest.mark.slow
def test_npb_sample_runs_through_the_harness_one_problem_per_benchmark_and_class(tmp_path):
    """The NPB sample is taken like every suite's: problems are (benchmark, class), each set up once."""
    import importlib

    from kgpubench.measure.suites import load_suite

    load_suite("npb")
    npb = sys.modules["kgpubench_collectors.npb"]
    sys.path.insert(0, str(ROOT / "tests" / "collectors" / "npb"))
    try:
        from emulated import Emulator
        from test_npb_collect import _adapt
    finally:
        sys.path.pop(0)
    emu = Emulator(importlib.import_module(npb.__name__ + ".ref_mg"),
                   importlib.import_module(npb.__name__ + ".randlc")).kernels()
    backend = _Precompiling(implementations={k: _adapt(f) for k, f in emu.items()}, time_ms=0.5)
    driver = importlib.import_module(npb.__name__ + ".driver")
    suite = npb.NpbSuite(("S",), benchmarks=["CG", "MG"], tpbs=[32, 256, 1024],
                         rule=driver.SweepRule(warmup=0, min_runs=1, min_total_ms=0))
    cases = co.full_cases(suite, backend.device())
    clock = lambda: backend.clock.now / 1e9  # noqa: E731
    out = co.measure_suite(suite, backend, cases, tmp_path, problems=2, per_problem=3, clock=clock)
    # CG: 3 runs + 11 kernels x 3 TPB = 36 rows; MG: 3 + 7 x 3 = 24; one problem each
    assert (out.configs, out.problems) == (60, 2)
    # distinct modules: fewer than rows (a one-kernel row at its kernel's default TPB shares the default module)
    assert out.variants == len({co.variant_ident(c.source) for c in cases}) and 10 < out.variants < 60
    assert out.statuses == {"ok": 6} and [len(ws) for ws in out.walls] == [3, 3]
    # every virtual second after the start is a configuration's wall, except the precompile's 5 s
    walls = [w for ws in out.walls for w in ws]
    assert all(w > 0 for w in walls) and sum(walls) == pytest.approx(clock() - 5.0)
    # a problem's first row sets the application up and times the default assignment's runs and replays
    assert all(ws[0] == max(ws) for ws in out.walls) and 0 < out.measured_s < sum(walls)
    from kgpubench.measure.output import ShardWriter

    rows = ShardWriter(tmp_path / "npb", "npb").rows()
    picked = sorted((r["benchmark"], r["row_kind"], r["kernel"], r["tpb"] or 0) for r in rows)
    # rows 0, 18, 35 of CG's plan and 0, 12, 23 of MG's (three runs first, then kernels in NPB-GPU order x TPB)
    assert picked == [("CG", "kernel", "kernel_eleven", 1024), ("CG", "kernel", "kernel_six", 32),
                      ("CG", "run", "app", 0), ("MG", "kernel", "psinv", 32), ("MG", "kernel", "zero3", 1024),
                      ("MG", "run", "app", 0)]


def test_compile_rate_and_sample_of_variants(tmp_path):
    @dataclass(frozen=True)
    class Compiler:
        version: str = "fake 1"

        def __call__(self, text, filename, options):
            return CompileOutput(status=0, ptx="// p\n", cubin=b"\x7fELF", log="")

    src = tmp_path / "k.cu"
    src.write_text("// k\n")
    cases = {"a": [Case(key={}, columns={}, source=KernelSource(src, "k", {"B": b}), grid=(1, 1, 1),
                        block=(32, 1, 1)) for b in range(10) for _ in range(3)]}
    picked = co.compile_sample(cases, 4)
    assert [s.defines["B"] for s in picked] == [0, 3, 6, 9]
    ticks = iter([0.0, 2.0])
    rate, n = co.compile_rate(Compiler(), "sm_90", picked, 1, tmp_path / "cache", clock=lambda: next(ticks))
    assert (rate, n) == (0.5, 4)


def test_without_a_gpu_one_line_and_exit_2(monkeypatch, capsys):
    import kgpubench.measure.backends.cupy_backend as cb

    monkeypatch.setattr(cb, "cupy_available", lambda: (False, "no CuPy in this test"))
    monkeypatch.setattr(sys, "argv", ["collect_overhead.py"])
    assert co.main() == 2
    out = capsys.readouterr().out.splitlines()
    assert out == ["collect_overhead: no GPU here, nothing measured (no CuPy in this test)"]
