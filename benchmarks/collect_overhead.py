"""Collection throughput on a GPU: harness overhead, and the projected wall time of the full sweep per suite.

For each suite it collects a sample of the full sweep into a temporary shard with the real harness:
``--problems`` problems evenly spaced in sweep order (a problem is what configurations share: kernel and sizes;
grid, dtype and order for the stencil; benchmark and class for NPB, whose application is set up once per
problem), and ``--per-problem`` configurations
evenly spaced within each. Per-configuration wall times come from the progress callback (host clock); the
ahead-of-time compile of the sample is timed apart. Then, per suite:

- overhead ratio: wall time over measured kernel time (timed launches plus power windows), target <= 1.5;
- seconds per configuration (the configurations after the first of their problem) and the setup of a
  problem (what its first configuration takes beyond that: inputs, CPU reference, device copies);
- compile seconds per variant: a cold compile of up to ``4 x cores`` variants spread over all suites, into a
  temporary cache, over all cores;
- projected full sweep = variants x compile + configurations x per configuration + problems x setup;

and the projected total (target: 30 minutes on one H100 host).

Needs an NVIDIA GPU and CuPy; without them it prints one line and exits 2. The logic runs on the fake backend
in ``tests/benchmarks/test_collect_overhead.py``.

    PYTHONPATH=. python benchmarks/collect_overhead.py [--suite regular ...] [--problems 4] [--per-problem 6]
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUITES = ("regular", "power", "stencil", "npb")
TARGET_RATIO = 1.5
TARGET_MINUTES = 30.0


# -- sampling --------------------------------------------------------------------------------------------------
def spread(n: int, k: int) -> list[int]:
    """Up to ``k`` indices of ``range(n)`` evenly spaced, first and last included."""
    if n <= 0 or k <= 0:
        return []
    k = min(k, n)
    if k == 1:
        return [0]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def problem_key(suite: str, case: Any) -> Hashable:
    """What configurations of a suite share (inputs, references, fields)."""
    k = case.key
    if suite == "stencil":
        return (k["grid_nx"], k["grid_ny"], k["grid_nz"], k["dtype"], k["space_order"])
    if suite == "npb":  # one application (device setup) per benchmark and class
        return (k["benchmark"], k["npb_class"])
    return (k.get("kernel", case.source.kernel), k.get("variant"), tuple(sorted(dict(case.sizes).items())))


def group(items: Sequence[Any], key: Callable[[Any], Hashable]) -> dict[Hashable, list[Any]]:
    """Items by key, keys and items in their first order."""
    out: dict[Hashable, list[Any]] = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out


def sample(groups: dict[Hashable, list[Any]], problems: int, per_problem: int) -> list[list[Any]]:
    """``problems`` groups evenly spaced, and ``per_problem`` items evenly spaced in each."""
    keys = list(groups)
    return [[groups[keys[i]][j] for j in spread(len(groups[keys[i]]), per_problem)]
            for i in spread(len(keys), problems)]


def variant_ident(source: Any) -> tuple:
    """One compilation (what the compile cache keys, less the text and the target)."""
    return (str(source.path), source.define_options(), tuple(source.options))


# -- projection ------------------------------------------------------------------------------------------------
@dataclass
class SuiteSample:
    """A suite's full-sweep counts and what its sample measured (seconds)."""

    name: str
    configs: int
    problems: int
    variants: int
    walls: list[list[float]] = field(default_factory=list)  # per sampled configuration, grouped by problem
    measured_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Projection:
    per_config_s: float
    setup_s: float
    compile_s: float
    configs_s: float
    problems_s: float
    overhead_ratio: float | None

    @property
    def total_s(self) -> float:
        return self.compile_s + self.configs_s + self.problems_s


def project(s: SuiteSample, compile_s_per_variant: float) -> Projection:
    """The full sweep from the sample: variants x compile + configurations x per config + problems x setup."""
    rest = [w for ws in s.walls for w in ws[1:]]
    firsts = [ws[0] for ws in s.walls if ws]
    per_config = statistics.fmean(rest) if rest else (statistics.fmean(firsts) if firsts else 0.0)
    setup = statistics.fmean(max(0.0, f - per_config) for f in firsts) if rest and firsts else 0.0
    wall = sum(sum(ws) for ws in s.walls)
    return Projection(per_config_s=per_config, setup_s=setup, compile_s=s.variants * compile_s_per_variant,
                      configs_s=s.configs * per_config, problems_s=s.problems * setup,
                      overhead_ratio=wall / s.measured_s if s.measured_s > 0 else None)


def report(samples: Sequence[SuiteSample], compile_s_per_variant: float) -> list[str]:
    """The printed lines: one per suite and the total."""
    lines, total = [], 0.0
    for s in samples:
        p = project(s, compile_s_per_variant)
        total += p.total_s
        n = sum(len(ws) for ws in s.walls)
        ratio = (f"{p.overhead_ratio:.2f} (target <= {TARGET_RATIO})" if p.overhead_ratio is not None
                 else "n/a (no kernel time measured)")
        statuses = ", ".join(f"{k}={v}" for k, v in sorted(s.statuses.items()))
        lines.append(
            f"{s.name}: sample of {n} configurations in {len(s.walls)} problems ({statuses}); overhead ratio "
            f"{ratio}; {p.per_config_s:.3f} s per configuration, {p.setup_s:.2f} s setup per problem; full sweep "
            f"{s.configs} configurations, {s.problems} problems, {s.variants} variants -> projected "
            f"{p.total_s / 60:.1f} min (compile {p.compile_s / 60:.1f} + configurations {p.configs_s / 60:.1f} + "
            f"problem setup {p.problems_s / 60:.1f})")
    lines.append(f"projected full sweep, all suites above: {total / 60:.1f} min (target <= {TARGET_MINUTES:.0f} min)")
    return lines


# -- measuring -------------------------------------------------------------------------------------------------
class _Subset:
    """The suite with a fixed case list (same name, table, version, L2 policy, prepare or measure, cache release)."""

    def __init__(self, suite: Any, cases: Sequence[Any]) -> None:
        self._suite, self._cases = suite, list(cases)
        self.name, self.table, self.collector_version = suite.name, suite.table, suite.collector_version
        self.l2_policy = getattr(suite, "l2_policy", "warm")
        self.measures_itself = bool(getattr(suite, "measures_itself", False))

    def measure(self, *args: Any) -> Any:
        return self._suite.measure(*args)

    def kernels(self) -> list[str]:
        return list(self._suite.kernels())

    def cases(self, *, quick: bool = False, kernels: Any = None, device: Any = None) -> list[Any]:
        return list(self._cases)

    def prepare(self, *args: Any) -> Any:
        return self._suite.prepare(*args)

    def drop_caches(self) -> None:
        drop = getattr(self._suite, "drop_caches", None)
        if drop is not None:
            drop()


class _Marks:
    """Host times of the progress callbacks, less the time spent in ``backend.precompile``."""

    def __init__(self, backend: Any, clock: Callable[[], float]) -> None:
        self.clock, self.compile_s, self.marks = clock, 0.0, [clock()]
        if backend.capabilities.precompile:
            pre = backend.precompile

            def timed(*args: Any, **kwargs: Any) -> Any:
                t0 = clock()
                try:
                    return pre(*args, **kwargs)
                finally:
                    self.compile_s += clock() - t0
            backend.precompile = timed

    def progress(self, done: int, total: int, label: str) -> None:
        self.marks.append(self.clock())

    def walls(self) -> list[float]:
        out = [b - a for a, b in zip(self.marks, self.marks[1:])]
        if out:
            out[0] = max(0.0, out[0] - self.compile_s)
        return out


def full_cases(suite: Any, device: Any) -> list[Any]:
    """Every configuration of the full sweep (``device`` passed to suites whose grids depend on it)."""
    kwargs: dict[str, Any] = {"quick": False}
    if "device" in inspect.signature(suite.cases).parameters:
        kwargs["device"] = device
    return list(suite.cases(**kwargs))


def measure_suite(suite: Any, backend: Any, cases: Sequence[Any], folder: Path, problems: int, per_problem: int,
                  clock: Callable[[], float] = time.perf_counter) -> SuiteSample:
    """Collect the sample of ``cases`` (the full sweep) with the harness and return what it measured."""
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite

    groups = group(cases, lambda c: problem_key(suite.name, c))
    picked = sample(groups, problems, per_problem)
    out = SuiteSample(suite.name, len(cases), len(groups), len({variant_ident(c.source) for c in cases}))
    writer = ShardWriter(folder / suite.name, suite.table)
    marks = _Marks(backend, clock)
    summary = collect_suite(_Subset(suite, [c for g in picked for c in g]), backend, writer, CollectOptions(),
                            progress=marks.progress)
    writer.close()
    walls = marks.walls()
    at = 0
    for g in picked:
        out.walls.append(walls[at:at + len(g)])
        at += len(g)
    rows = ShardWriter(folder / suite.name, suite.table).rows()
    windows = sum(r.get("power_window_ms") or 0.0 for r in rows) / 1e3
    out.measured_s = summary.measured_ms / 1e3 + windows
    out.statuses = dict(summary.statuses)
    return out


def compile_rate(compiler: Any, arch: str, sources: Sequence[Any], jobs: int, folder: Path,
                 clock: Callable[[], float] = time.perf_counter) -> tuple[float, int]:
    """Seconds per variant of a cold compile of ``sources`` (distinct variants) over ``jobs`` processes."""
    from kgpubench.measure.compile_cache import CompileCache, precompile

    cache = CompileCache(folder, compiler=compiler)
    t0 = clock()
    done = precompile(cache, arch, sources=sources, jobs=jobs)
    n = done.compiled + len(done.failures)
    return (clock() - t0) / max(1, n), n


def compile_sample(cases_by_suite: dict[str, list[Any]], count: int) -> list[Any]:
    """``count`` distinct variants spread over the suites' full sweeps (sources, one per variant)."""
    seen: dict[tuple, Any] = {}
    for cases in cases_by_suite.values():
        for c in cases:
            seen.setdefault(variant_ident(c.source), c.source)
    sources = list(seen.values())
    return [sources[i] for i in spread(len(sources), count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=SUITES, help="suites to sample (default: all four)")
    parser.add_argument("--problems", type=int, default=4, help="problems sampled per suite (default 4)")
    parser.add_argument("--per-problem", type=int, default=6, help="configurations per sampled problem (default 6)")
    parser.add_argument("--no-large", action="store_true", help="accepted for older callers; no effect")
    args = parser.parse_args()
    from kgpubench.measure.backends.cupy_backend import cupy_available

    ok, why = cupy_available()
    if not ok:
        print(f"collect_overhead: no GPU here, nothing measured ({why})")
        return 2
    from kgpubench.measure.backends.registry import get_backend
    from kgpubench.measure.compile_cache import default_jobs
    from kgpubench.measure.suites import load_suite

    backend = get_backend("cupy")
    dev = backend.device()
    jobs = default_jobs()
    print(f"device: {dev.name}; {jobs} CPU cores for compiling")
    names = args.suite or list(SUITES)
    suites = {name: load_suite(name) for name in names}
    cases = {name: full_cases(s, dev) for name, s in suites.items()}
    with tempfile.TemporaryDirectory() as tmp:
        sources = compile_sample(cases, 4 * jobs)
        rate, n = compile_rate(backend.compile_cache.compiler, dev.arch, sources, jobs, Path(tmp) / "cold")
        print(f"compile: {n} variants cold on {jobs} processes: {rate:.3f} s per variant")
        samples = []
        for name, suite in suites.items():
            samples.append(measure_suite(suite, backend, cases[name], Path(tmp), args.problems, args.per_problem))
            print(report(samples[-1:], rate)[0], flush=True)
    print(report(samples, rate)[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
