"""What the model sandbox costs: baselines fitted and scored in-process vs in a sandboxed child.

For each model, runs every fold of one task and scheme on the packaged data twice: with the model imported
into this process (``run_folds`` with ``model_factory``, the pre-sandbox way; trusted code only) and through a
:class:`kgpubench.sandbox.ModelSession` (child process, namespaces, data over a pipe). The in-process run goes
first (it warms the page cache; the child still imports every library itself).
Prints seconds for both, their ratio, and the sandbox's fixed start cost; the scores must be identical.

    python benchmarks/sandbox_overhead.py [--task autotune-config] [--scheme by-gpu] [--models median lgbm]
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from kgpubench import leaderboard
    from kgpubench.evaluation import load_model_module, model_factory, run_folds, task_data
    from kgpubench.sandbox import ModelSession, isolation_support

    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="autotune-config")
    ap.add_argument("--scheme", default="by-gpu")
    ap.add_argument("--models", nargs="+", default=["median", "regression_tree", "lgbm"])
    args = ap.parse_args(argv)
    ok, why = isolation_support()
    print(f"isolation: {'yes' if ok else 'no (' + why + '), sandbox runs unisolated'}")
    data = task_data(args.task, args.scheme)
    files = {p.stem: p for p in leaderboard.baseline_files()}
    print(f"{args.task}/{args.scheme}: {data.rows.num_rows} rows, {len(data.fold_names)} folds")
    print(f"{'model':16s} {'in-process':>11s} {'sandboxed':>10s} {'ratio':>6s} {'start':>6s}  scores")
    worst = 0.0
    for name in args.models:
        path = files[name]
        t0 = time.perf_counter()
        inproc, _ = run_folds(data, model_factory(load_model_module(path), path))
        t1 = time.perf_counter()
        session = ModelSession(path, data.task, trust=not ok)
        session.start()
        t2 = time.perf_counter()
        boxed, _ = run_folds(data, session.factory)
        session.close()
        t3 = time.perf_counter()
        same = {f: r["scores"] for f, r in inproc.items()} == {f: r["scores"] for f, r in boxed.items()}
        ratio = (t3 - t1) / (t1 - t0)
        worst = max(worst, ratio)
        print(f"{name:16s} {t1 - t0:10.2f}s {t3 - t1:9.2f}s {ratio:6.2f} {t2 - t1:5.2f}s  "
              f"{'identical' if same else 'DIFFERENT'}")
        if not same:
            return 1
    print(f"worst ratio sandboxed / in-process: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
