"""Run-to-run agreement: measure again, at the end of a collection, configurations it already measured.

Picks ``--count`` (50) ``ok`` protocol-2 rows across the suites of a collection folder (``OUT/<suite>/``
shards; every suite present gets a share proportional to its rows, at least 5 where it has them; the pick is
a hash of the row id and ``--seed``, so it is the same for the same folder), measures those configurations
again into ``--out`` (a new process, so a new ``run_id``), and prints per suite and over all the relative
difference of the medians, ``|new / old - 1|``: its median (target <= 1 %), 90th percentile and maximum.

Needs an NVIDIA GPU and CuPy; without them it prints one line and exits 2.

    PYTHONPATH=. python benchmarks/repeat_check.py --shards WORK/shards --out WORK/repeat [--json R.json]
        [--cold-timer events|cupti]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MIN_PER_SUITE = 5
TARGET = 0.01


def ok_rows(folder: Path) -> list[dict[str, Any]]:
    """The ``ok`` protocol-2 rows with a median time of one shard folder."""
    from kgpubench.store.shards import read_shard

    _config, table = read_shard(folder)
    return [r for r in table.to_pylist() if r.get("status") == "ok" and r.get("time_ms_median")
            and (r.get("measurement_protocol") or 0) >= 2]


def select_repeats(rows_by_suite: Mapping[str, list[dict]], count: int, seed: int = 0) -> dict[str, list[str]]:
    """Row ids to measure again: ``count`` over the suites, proportional to their rows, >= 5 each where possible."""
    total = sum(len(r) for r in rows_by_suite.values())
    if total == 0:
        return {}
    shares = {s: min(len(r), max(MIN_PER_SUITE, round(count * len(r) / total))) for s, r in rows_by_suite.items()}
    while sum(shares.values()) > count and any(v > MIN_PER_SUITE for v in shares.values()):
        biggest = max(shares, key=lambda s: shares[s])
        shares[biggest] -= 1

    def order(row: dict) -> str:
        return hashlib.sha256(f"{seed}:{row['row_id']}".encode()).hexdigest()

    return {s: [r["row_id"] for r in sorted(rows, key=order)[:shares[s]]]
            for s, rows in rows_by_suite.items() if shares[s]}


def compare(old: list[dict], new: list[dict]) -> dict[str, Any]:
    """Median, 90th percentile and maximum of ``|new / old - 1|`` over the rows present in both (by row id).

    A pair timed two ways (``timing_method``: e.g. ``cold`` then ``cupti``) measures the timers, not the run to run
    difference: it is left out and counted as ``other_method``.
    """
    before = {r["row_id"]: r for r in old}
    pairs = [(before[r["row_id"]], r) for r in new
             if r.get("status") == "ok" and r.get("time_ms_median") and r["row_id"] in before]
    same = [(a, b) for a, b in pairs if a.get("timing_method") == b.get("timing_method")]
    diffs = sorted(abs(b["time_ms_median"] / a["time_ms_median"] - 1.0) for a, b in same)
    if not diffs:
        return {"n": 0, "other_method": len(pairs)}
    p90 = diffs[min(len(diffs) - 1, int(round(0.9 * (len(diffs) - 1))))]
    return {"n": len(diffs), "median": statistics.median(diffs), "p90": p90, "max": diffs[-1],
            "other_method": len(pairs) - len(same)}


def run_repeat(backend: Any, shards: Path, out: Path, *, count: int = 50, seed: int = 0,
               suites: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Select, measure again with ``backend`` into ``out`` and compare; ``suites`` maps names to suite objects
    (default: those of ``collectors/`` found as folders of ``shards``)."""
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite
    from kgpubench.measure.suites import load_suite
    from kgpubench.store.shards import is_shard_folder

    folders = {p.name: p for p in sorted(Path(shards).iterdir()) if is_shard_folder(p)}
    if suites is None:
        suites = {name: load_suite(name) for name in folders}
    rows = {name: ok_rows(folders[name]) for name in suites if name in folders}
    chosen = select_repeats(rows, count, seed)
    report: dict[str, Any] = {"suites": {}}
    all_new, all_old = [], []
    for name, ids in chosen.items():
        suite = suites[name]
        writer = ShardWriter(Path(out) / name, suite.table)
        options = CollectOptions(row_ids=frozenset(ids))
        try:
            collect_suite(suite, backend, writer, options)
        finally:
            writer.close()
        new = ShardWriter(Path(out) / name, suite.table).rows()
        old = [r for r in rows[name] if r["row_id"] in set(ids)]
        report["suites"][name] = compare(old, new)
        all_new += new
        all_old += old
    report["all"] = compare(all_old, all_new)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=Path, required=True, help="collection folder with <suite>/ shards")
    parser.add_argument("--out", type=Path, required=True, help="where the repeated rows go")
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cold-timer", default="events", help="timer of flushed samples (events, cupti): the one "
                        "the collection used (a row timed another way is not compared)")
    args = parser.parse_args()
    from kgpubench.measure.backends.cupy_backend import cupy_available

    ok, why = cupy_available()
    if not ok:
        print(f"repeat_check: no GPU here, nothing measured ({why})")
        return 2
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("cupy", cold_timer=args.cold_timer)
    report = run_repeat(backend, args.shards, args.out, count=args.count, seed=args.seed)
    for name, r in [*report["suites"].items(), ("all", report["all"])]:
        if r["n"]:
            print(f"{name:<8} n={r['n']:>3}  median |new/old - 1| {100 * r['median']:.2f} %  p90 "
                  f"{100 * r['p90']:.2f} %  max {100 * r['max']:.2f} %"
                  + (f"  ({r['other_method']} timed another way, left out)" if r["other_method"] else ""))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True))
    return 0 if report["all"].get("n") and report["all"]["median"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
