"""NPB through the harness compiles every distinct assignment's module ahead of time, once, only for rows still
to measure and without static features (the npb table has none); then each assignment only loads its module."""

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_npb_collect import _backend


@pytest.mark.slow
def test_distinct_assignments_precompiled_once_and_not_on_resume(npb, tmp_path):
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, run_suite

    rule = importlib.import_module(npb.__name__ + ".driver").SweepRule(warmup=1, min_runs=2, min_total_ms=0)
    calls = []

    def run(backend):
        backend.capabilities = replace(backend.capabilities, precompile=True)
        backend.precompile = lambda cases=(), *, sources=(), features=True: calls.append((list(cases), features))
        suite = npb.NpbSuite(("S",), benchmarks=["CG"], tpbs=[32, 64], rule=rule)
        return run_suite(suite, backend, writer, CollectOptions(kernels=["kernel_three"]))

    writer = ShardWriter(tmp_path / "npb", "npb")
    backend = _backend(npb)
    s = run(backend)
    assert s.written == 5 and len(calls) == 1
    cases, features = calls[0]
    # Rows: default, max, warp, kernel_three at 32 and at 64; CG's default for kernel_three is 64, so its
    # one-kernel assignment is the default one: 5 cases of 4 distinct modules (the compile cache keys a module
    # by file, defines and options, so the two cases of the default module are one compilation).
    assert features is False and len(cases) == 5
    modules = {(str(c.source.path), c.source.define_options()) for c in cases}
    k3 = sorted(dict(c.source.defines)["CG_THREADS_PER_BLOCK_ON_KERNEL_THREE"] for c in cases)
    assert len(modules) == 4 and k3 == [32, 32, 64, 64, 1024]  # warp, kernel_three=32, default twice, max
    compiled = {d for _name, d in backend.compiled}
    assert len(compiled) == 4  # each module loaded through backend.compile once per assignment
    again = run(_backend(npb))
    assert again.skipped == 5 and len(calls) == 1  # nothing left to measure: nothing to compile
