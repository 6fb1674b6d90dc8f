"""Collection overhead of the harness on a GPU: wall time over the summed measured kernel time.

Runs the regular suite's ``--quick`` cases and, because quick sizes are small, also the largest size of every
kernel (two launches each) into a temporary shard, timing each case on the host (``time.perf_counter``) and
summing the CUDA-event times the harness recorded. Prints

- overhead ratio (wall / measured) over all cases and over cases whose median is above 1 ms (target <= 1.5);
- the median coefficient of variation of the timings (target <= 2 %).

Needs an NVIDIA GPU and CuPy; without them it prints one line and exits 2.

    PYTHONPATH=. python benchmarks/collect_overhead.py [--no-large]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _cases(suite, large: bool) -> list:
    cases = list(suite.cases(quick=True))
    if large:
        for kernel in suite.kernels():
            full = list(suite.cases(quick=False, kernels=[kernel]))
            top = max(c.columns["s"] for c in full)
            biggest = [c for c in full if c.columns["s"] == top and c.threads_per_block in (128, 256)]
            cases += biggest[:2]
    return cases


class _Subset:
    """The suite with a fixed case list (same name, table, version and prepare)."""

    def __init__(self, suite, cases) -> None:
        self._suite, self._cases = suite, cases
        self.name, self.table, self.collector_version = suite.name, suite.table, suite.collector_version

    def kernels(self):
        return self._suite.kernels()

    def cases(self, *, quick=False, kernels=None):
        return list(self._cases)

    def prepare(self, *args):
        return self._suite.prepare(*args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-large", action="store_true", help="only the --quick cases")
    args = parser.parse_args()
    from kgpubench.measure.cupy_backend import cupy_available

    ok, why = cupy_available()
    if not ok:
        print(f"collect_overhead: no GPU here, nothing measured ({why})")
        return 2
    from kgpubench.measure.backend import get_backend
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite
    from kgpubench.measure.suites import load_suite

    suite = load_suite("regular")
    subset = _Subset(suite, _cases(suite, not args.no_large))
    backend = get_backend("cupy")
    marks = [time.perf_counter()]
    with tempfile.TemporaryDirectory() as tmp:
        writer = ShardWriter(Path(tmp) / "regular", "kernels")
        summary = collect_suite(subset, backend, writer, CollectOptions(),
                                progress=lambda done, total, label: marks.append(time.perf_counter()))
        writer.close()
        rows = list(ShardWriter(Path(tmp) / "regular", "kernels").rows())
    walls = [b - a for a, b in itertools.pairwise(marks)]
    # Rows are kept in case order; pair each with its wall time.
    ok_rows = [(r, w) for r, w in zip(rows, walls) if r["status"] == "ok"]
    measured = [r["time_ms_mean"] * r["repeats"] / 1000.0 for r, _ in ok_rows]
    long = [(r, w) for r, w in ok_rows if r["time_ms_median"] > 1.0]
    cvs = [r["time_cv"] for r, _ in ok_rows]
    print(f"device: {backend.device().name}; cases: {summary.written} ({dict(summary.statuses)})")
    print(f"overhead ratio, all ok cases: {sum(w for _, w in ok_rows) / max(sum(measured), 1e-9):.2f} "
          f"(wall {sum(w for _, w in ok_rows):.1f} s / measured {sum(measured):.1f} s)")
    if long:
        lw = sum(w for _, w in long)
        lm = sum(r["time_ms_mean"] * r["repeats"] / 1000.0 for r, _ in long)
        print(f"overhead ratio, {len(long)} cases over 1 ms: {lw / lm:.2f} (target <= 1.5)")
    else:
        print("overhead ratio, cases over 1 ms: none ran over 1 ms")
    print(f"median coefficient of variation: {100 * statistics.median(cvs):.2f} % (target <= 2 %)")
    print(f"whole collection wall time: {summary.wall_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
