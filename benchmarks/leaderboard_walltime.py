"""Wall time of the full leaderboard run on the packaged data, per model; target: < 10 min on 2 cores.

Usage: python benchmarks/leaderboard_walltime.py [--out DIR]   (default: a temporary folder, so the
committed results are untouched). Prints one line per model and the ratio of the total to the 600 s target.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

TARGET_S = 600.0


def main(argv: list[str] | None = None) -> int:
    from kgpubench import leaderboard

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="kgpb-board-")) / "results"
    start = time.perf_counter()
    written = leaderboard.run(out_dir=out, render=True)
    total = time.perf_counter() - start
    per_model: dict[str, float] = defaultdict(float)
    for path in written:
        per_model[path.stem] += json.loads(path.read_text())["wall_time_s"]
    for model, secs in sorted(per_model.items(), key=lambda kv: -kv[1]):
        print(f"{model:18s} {secs:8.1f} s")
    print(f"{'total':18s} {total:8.1f} s  ({len(written)} results; {total / TARGET_S:.2f} x the {TARGET_S:.0f} s "
          "target)")
    return 0 if total < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
