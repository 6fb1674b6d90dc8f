"""Tuning-budget curves of a recommendation task on its unseen-GPU scheme, as a board extra.

For N = 1, 5, 20, 100 evaluations (``--budgets``), each strategy orders every problem's configurations on a held-out
GPU and keeps the best of the first N; the score is ``(E[random best of N] - t_N) / (E[random best of N] - t_opt)``
(random search 0, the optimum 1; :mod:`kgpubench.board.budget`). The strategies are the learned models the board
runs on the scheme (the ``kind: model`` results under ``--results/<task>/<scheme>/``, e.g. ``transfer``, ``lgbm``,
``lgbm_ranker``), each retrained per held-out GPU on the other GPUs' rows exactly as on the board (same file, its
sha256 checked against the committed result, same seed), plus the oracle (1) and random search (0 by construction).
Baselines are our own files run in this process (trusted code, no sandbox), with one thread.

    PYTHONPATH=. python scripts/budget_curves.py --data kgpubench/data --task autotune-config \
        --out leaderboard/results/autotune-config/budget.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from kgpubench.board.budget import BUDGETS, RANDOM, model_curve, oracle_curve, plan_folds, plan_record
from kgpubench.board.leaderboard import baseline_files
from kgpubench.board.moved_tasks import stands_for
from kgpubench.errors import OptionError
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.models.evaluation import load_model_module, model_factory
from kgpubench.sandbox.limits import Limits
from kgpubench.tasks import get_task
from kgpubench.tasks.data import task_data
from kgpubench.tasks.reference import ORACLE


def board_models(results: Path, task: str, scheme: str) -> dict[str, dict]:
    """The learned models of the committed board results of ``task`` under ``scheme``: name -> its result."""
    out = {}
    for path in sorted((results / task / scheme).glob("*.json")):
        doc = json.loads(path.read_text())
        if doc.get("status") == "ok" and doc.get("kind") == "model":
            out[path.stem] = doc
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="store holding the task's config")
    parser.add_argument("--task", required=True)
    parser.add_argument("--scheme", default="by-gpu")
    parser.add_argument("--models", default=None,
                        help="baseline names (default: the learned models of the committed board results)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--results", type=Path, default=Path("leaderboard/results"),
                        help="committed board results (the models, their sha256 and seed are read from them)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    task = get_task(args.task)
    budgets = tuple(int(n) for n in args.budgets.split(","))
    if not budgets or min(budgets) < 1:
        raise OptionError(f"--budgets {args.budgets!r}: expected positive evaluation counts, e.g. 1,5,20,100.")
    committed = board_models(args.results, task.name, args.scheme)
    names = [m for m in args.models.split(",") if m] if args.models is not None else sorted(committed)
    files = {p.stem: p for p in baseline_files()}
    missing = [m for m in names if m not in files]
    if missing:
        raise OptionError(f"--models: no baseline file for {', '.join(missing)} under baselines/.")
    limits = Limits(threads=1)
    data = task_data(task, args.scheme, args.data)
    plans = plan_folds(data)
    doc = {"task": task.name, "scheme": args.scheme, "plan": plan_record(data, plans, budgets),
           "strategies": {}, "models": {}, "wall_s": {}}
    doc["strategies"][ORACLE.name] = oracle_curve(data, plans, budgets)
    doc["strategies"][RANDOM] = {"by_construction": 0.0}
    for m in names:
        sha = hashlib.sha256(files[m].read_bytes()).hexdigest()
        board = committed.get(m, {})
        # the result's sha256 is the file's, or the file's from before its TASKS moved out (board/moved_tasks.py)
        if board and not stands_for(board.get("model_sha256"), files[m]):
            raise OptionError(f"{files[m]}: sha256 {sha[:12]} differs from the committed board result's "
                              f"{str(board.get('model_sha256'))[:12]}; rerun the board first, or pass --models.")
        seed = int(board.get("seed", 0))
        t0 = time.perf_counter()
        factory = model_factory(load_model_module(files[m]), files[m])
        doc["strategies"][m] = model_curve(data, factory, plans, budgets, model_name=m, seed=seed, limits=limits)
        doc["models"][m] = {"file": f"baselines/{files[m].name}", "sha256": sha, "seed": seed}
        doc["wall_s"][m] = round(time.perf_counter() - t0, 1)
        summary = doc["strategies"][m]["summary"]
        print(f"{m}: " + ", ".join(f"N={n} {s['median']:.3f}" if s["median"] is not None else f"N={n} —"
                                   for n, s in summary.items()) + f" ({doc['wall_s'][m]} s)", flush=True)
    if args.out:
        atomic_write_bytes(args.out, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
