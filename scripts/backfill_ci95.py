"""Add each score's 95 % interval (``aggregate[metric]["ci95"]``) to committed results that predate it, computed
from the fold scores already in each result: no model runs, and nothing else in a file changes.

The interval is the one ``kgpubench evaluate``'s summary and the board print
(:func:`kgpubench.models.evaluation.fold_interval`, the bootstrap of :mod:`kgpubench.tasks.intervals`). A result
stays reusable by ``leaderboard run --reuse``: reuse compares the model file, seed, threads, task declaration, task
rows and split, never the aggregate. Only a scored result (status ok) whose file is exactly what
:func:`kgpubench.results.result.result_json` writes is touched; any other file (a failure, a skip status, a board
table) is left as it is. ``--check`` writes nothing and exits 1 when a result lacks an interval or holds another.

    PYTHONPATH=. python scripts/backfill_ci95.py [--results leaderboard/results] [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgpubench.board.leaderboard import results_dir
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.models.evaluation import fold_interval
from kgpubench.results.result import result_json


def with_intervals(data: dict) -> dict | None:
    """``data`` (a result's JSON) with ``ci95`` set on every score of its aggregate, or None when it is no scored
    result."""
    aggregate = data.get("aggregate")
    folds = data.get("folds")
    if data.get("status", "ok") != "ok" or not isinstance(aggregate, dict) or not isinstance(folds, dict):
        return None
    if "task" not in data or "scheme" not in data:
        return None
    out = dict(data)
    out["aggregate"] = {m: ({**v, "ci95": fold_interval(folds, m)} if isinstance(v, dict) else v)
                        for m, v in aggregate.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=None, help="Results folder (default leaderboard/results).")
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if a result lacks its intervals "
                        "or holds other ones.")
    args = parser.parse_args(argv)
    root = args.results or results_dir()
    if not root.is_dir():
        print(f"error: {root}: no such results folder; pass --results DIR.", file=sys.stderr)
        return 1
    changed, kept, skipped = [], 0, 0
    for path in sorted(root.rglob("*.json")):
        text = path.read_text()
        try:
            data = json.loads(text)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(data, dict) or result_json(data) != text:
            skipped += 1  # not a file result_json wrote: leave it alone
            continue
        new = with_intervals(data)
        if new is None:
            skipped += 1
            continue
        new_text = result_json(new)
        if new_text == text:
            kept += 1
            continue
        changed.append(path)
        if not args.check:
            atomic_write_bytes(path, new_text.encode())
    verb = "lack or disagree on" if args.check else "given"
    print(f"{len(changed)} result(s) {verb} their intervals, {kept} already right, {skipped} other file(s) left alone")
    for path in changed if args.check else []:
        print(f"  {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
