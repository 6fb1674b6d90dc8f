"""Speed of the leaderboard: the task-data path before/after vectorising, and the full board on all rows.

Usage: python benchmarks/leaderboard_walltime.py [--out DIR] [--jobs 2] [--skip-board]

1. Before/after ratios, measured in this run on the packaged auto-tuning rows (150k): problem keys (one JSON
   per row -> one per problem), params expansion (per-row Python -> arrow flatten and scatter), fold
   assignment (one sha256 per row -> one per problem) and the task-rows hash. The "before" functions are the
   per-row code the project used until the vectorised version replaced it, kept here as the reference.
2. The whole board (every baseline, every task with data, all rows, no cap) into a temporary folder (the
   committed results are untouched) with ``--jobs`` worker processes of one thread each: wall time, the CPU
   seconds the models used, and the ratio to the 600 s target. The CPU total / 2 is what 2 idle cores need;
   on a shared machine the wall time also counts other people's work.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

TARGET_S = 600.0


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# ----- the per-row code this replaced (reference only) ----------------------------------------------------------
def problem_keys_before(task, table):
    from kgpubench.schema import canonical_value

    lists = [table[c].to_pylist() for c in task.problem_columns]
    return np.asarray([json.dumps([canonical_value(v) for v in vals], separators=(",", ":"))
                       for vals in zip(*lists)], dtype=object)


def expand_params_before(values: list) -> dict:
    names = sorted({p["name"] for row in values if row for p in row})
    cols = {n: np.full(len(values), np.nan) for n in names}
    for i, row in enumerate(values):
        for p in row or ():
            cols[p["name"]][i] = np.nan if p["value"] is None else float(p["value"])
    return cols


def folds_before(keys, scheme: str = "random10", n: int = 10):
    return np.fromiter((int.from_bytes(hashlib.sha256(f"{scheme}\x1f{k}".encode()).digest()[:8], "big") % n
                        for k in keys), dtype=np.int64, count=len(keys))


def rows_hash_before(task, rows):
    from kgpubench.schema import canonical_value

    h = hashlib.sha256()
    for name in sorted(task.used_columns()):
        h.update(json.dumps([canonical_value(v) for v in rows[name].to_pylist()], default=str).encode())
    return h.hexdigest()


def data_path_ratios() -> list[tuple[str, float, float]]:
    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store
    from kgpubench.tasks import get_task, problem_keys, task_rows
    from kgpubench.tasks._core import _expand_params
    from kgpubench.tasks.data import rows_sha256
    from kgpubench.tasks.splits import assign_folds

    task = get_task("autotune-config")
    rows = task_rows(task, Store(default_data_dir()).read("autotune"))
    keys = problem_keys(task, rows)
    assert (problem_keys_before(task, rows) == keys).all()
    out = [("problem keys", _best(lambda: problem_keys_before(task, rows)), _best(lambda: problem_keys(task, rows)))]
    params = rows["params"].to_pylist()
    new = _expand_params(rows["params"], numeric=True)
    old = expand_params_before(params)
    assert all(np.array_equal(old[k[len("param."):]], v, equal_nan=True) for k, v in new.items())
    out.append(("params expansion", _best(lambda: expand_params_before(params)),
                _best(lambda: _expand_params(rows["params"], numeric=True))))
    assert (folds_before(keys).astype(str) == assign_folds(task, rows, "random10")).all()
    out.append(("fold assignment (keys + hash)", _best(lambda: folds_before(problem_keys_before(task, rows))),
                _best(lambda: assign_folds(task, rows, "random10"))))
    out.append(("task-rows hash", _best(lambda: rows_hash_before(task, rows), 1),
                _best(lambda: rows_sha256(task, rows))))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-board", action="store_true")
    args = ap.parse_args(argv)
    print(f"{'data path (150k autotune rows)':32s} {'before s':>9s} {'after s':>9s} {'speed-up':>9s}")
    for name, before, after in data_path_ratios():
        print(f"{name:32s} {before:9.3f} {after:9.3f} {before / after:8.1f}x")
    if args.skip_board:
        return 0
    from kgpubench.board import leaderboard

    out = args.out or Path(tempfile.mkdtemp(prefix="kgpb-board-")) / "results"
    start = time.perf_counter()
    written = leaderboard.run(out_dir=out, workers=args.jobs, render=True, force=True)
    total = time.perf_counter() - start
    wall: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    for path in written:
        if path.name.startswith("_"):  # a skipped scheme's status, no model ran
            continue
        res = json.loads(path.read_text())
        wall[path.stem] += res.get("wall_time_s", 0.0)
        cpu[path.stem] += res.get("cpu_time_s", 0.0)
    print(f"\n{'model':18s} {'wall s':>8s} {'cpu s':>8s}")
    for model, secs in sorted(wall.items(), key=lambda kv: -cpu[kv[0]]):
        print(f"{model:18s} {secs:8.1f} {cpu[model]:8.1f}")
    cpu_total = sum(cpu.values())
    print(f"{'total':18s} {total:8.1f} {cpu_total:8.1f}  ({len(written)} results, {args.jobs} worker(s))")
    print(f"board wall time / target: {total / TARGET_S:.2f} x the {TARGET_S:.0f} s target; model CPU / 2 cores / "
          f"target: {cpu_total / 2 / TARGET_S:.2f}")
    return 0 if total < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
