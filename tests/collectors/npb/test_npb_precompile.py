"""The NPB sweep compiles every distinct assignment's module ahead of time, once, and only for rows still to
measure; then each assignment only loads its module."""

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_npb_sweep import _backend


def test_distinct_assignments_precompiled_once_and_not_on_resume(npb, tmp_path):
    from kgpubench.measure.output import ShardWriter

    sweep = importlib.import_module(npb.__name__ + ".sweep")
    rule = importlib.import_module(npb.__name__ + ".driver").SweepRule(warmup=1, min_runs=2, min_total_ms=0)
    calls = []

    def run(backend):
        backend.precompile = lambda cases=(), *, sources=(), features=True: calls.append((list(sources), features))
        return sweep.collect_npb(backend, writer, benchmarks=["CG"], classes=["S"], tpbs=[32, 64],
                                 kernels=["kernel_three"], rule=rule)

    writer = ShardWriter(tmp_path / "npb", "npb")
    backend = _backend(npb)
    s = run(backend)
    assert s.written == 5 and len(calls) == 1
    sources, features = calls[0]
    # Rows: default, max, warp, kernel_three at 32 and at 64; CG's default for kernel_three is 64, so its
    # one-kernel assignment is the default one: 4 distinct modules.
    assert features is False and len(sources) == 4
    k3 = sorted(src.defines["CG_THREADS_PER_BLOCK_ON_KERNEL_THREE"] for src in sources)
    assert k3 == [32, 32, 64, 1024]  # warp, kernel_three=32, default, max
    compiled = {d for _name, d in backend.compiled}
    assert len(compiled) == 4  # each module loaded through backend.compile once per assignment
    again = run(_backend(npb))
    assert again.skipped == 5 and len(calls) == 1  # nothing left to measure: nothing to compile
