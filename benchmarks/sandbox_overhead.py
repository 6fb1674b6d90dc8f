"""What the model sandbox costs: baselines fitted and scored in-process vs in a sandboxed child.

For each model, runs every fold of one task and scheme on the packaged data three times: with the model
imported into this process (``run_folds`` with ``model_factory``, the pre-sandbox way; trusted code only), and
through a :class:`kgpubench.sandbox.session.ModelSession` with a fresh sandboxed child per fold (the default) and with
one child for all folds (``fresh_folds=False``). Prints seconds and ratios to the in-process run (the first
sandboxed run also starts the fork server); the scores must be identical.

    python benchmarks/sandbox_overhead.py [--task autotune-config] [--scheme by-gpu] [--models median lgbm]
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from kgpubench.board import leaderboard
    from kgpubench.models.evaluation import load_model_module, model_factory, run_folds
    from kgpubench.sandbox.session import ModelSession, isolation_support
    from kgpubench.tasks.data import task_data

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
    head = ("model", "in-process", "fresh/fold", "ratio", "one child", "ratio")
    print("{:16s} {:>11s} {:>11s} {:>6s} {:>10s} {:>6s}  scores".format(*head))
    worst = 0.0
    for name in args.models:
        path = files[name]
        t0 = time.perf_counter()
        inproc, _ = run_folds(data, model_factory(load_model_module(path), path))
        t1 = time.perf_counter()
        runs = []
        for fresh in (True, False):
            start = time.perf_counter()
            with ModelSession(path, data.task, trust=not ok, fresh_folds=fresh) as session:
                boxed, _ = run_folds(data, session.factory)
            runs.append((time.perf_counter() - start, boxed))
        same = all({f: r["scores"] for f, r in inproc.items()} == {f: r["scores"] for f, r in b.items()}
                   for _, b in runs)
        ratios = [t / (t1 - t0) for t, _ in runs]
        worst = max(worst, ratios[0])
        print(f"{name:16s} {t1 - t0:10.2f}s {runs[0][0]:10.2f}s {ratios[0]:6.2f} {runs[1][0]:9.2f}s {ratios[1]:6.2f}  "
              f"{'identical' if same else 'DIFFERENT'}")
        if not same:
            return 1
    print(f"worst ratio sandboxed / in-process: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
