"""NeuSight's paper metric for the operator-latency baselines, beside the paper's figures.

Each baseline is trained as on the board's `neusight` scheme (the train fold: Tesla P4, P100, V100, T4 and
A100-PCIE-40GB, with the task's hashed training subsample) on an `operators` store, predicts the operator calls
of the inference layer traces of the unseen GPUs (:func:`kgpubench.tasks.paper_metric.trace_calls`), and is
scored per operator class by :func:`kgpubench.tasks.paper_metric.class_errors`. Baselines are our own files, run
in this process (trusted code, no sandbox).

    PYTHONPATH=. python scripts/neusight_paper_metric.py --data STORE --neusight DIR \
        [--out leaderboard/results/operator-latency/neusight-paper-metric.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

BASELINES = ("median", "operator_roofline", "lgbm", "operator_transfer", "neusight_wave")


def main(argv: list[str] | None = None) -> int:
    from kgpubench.board.leaderboard import baseline_files
    from kgpubench.foundation.files import atomic_write_bytes
    from kgpubench.models.evaluation import load_model_module, model_factory
    from kgpubench.tasks import feature_frame, get_task
    from kgpubench.tasks.data import task_data, train_subsample
    from kgpubench.tasks.extras import CLASS_LABELS, CLASSES, PAPER
    from kgpubench.tasks.paper_metric import calls_with_gpu_columns, class_errors, trace_calls

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="store holding the operators config")
    parser.add_argument("--neusight", type=Path, required=True, help="NeuSight's scripts/asplos folder")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)

    task = get_task("operator-latency")
    data = task_data(task, "neusight", args.data)
    train = train_subsample(task, data.rows, np.flatnonzero(data.folds == "train"))
    calls = calls_with_gpu_columns(trace_calls(args.neusight))
    import pyarrow as pa

    X_calls = feature_frame(task, pa.Table.from_pandas(calls[list(task.features)], preserve_index=False))
    files = {p.stem: p for p in baseline_files()}
    out = {"task": task.name, "scheme": "neusight", "train_rows": int(train.size),
           "workloads": int(calls["workload"].nunique()), "calls": int(len(calls)),
           "measured_ms_per_class": {c: float(calls.loc[calls.operator_class == c, "time_ms"].sum()) for c in CLASSES},
           "paper": PAPER, "models": {}}
    for name in BASELINES:
        factory = model_factory(load_model_module(files[name]), files[name])
        model = factory(task=task, seed=0).fit(data.X.iloc[train].reset_index(drop=True), data.y[train])
        out["models"][name] = class_errors(calls, model.predict(X_calls))
    header = "| model | " + " | ".join(CLASS_LABELS[c] for c in CLASSES) + " |"
    print(header)
    print("|---" * (len(CLASSES) + 1) + "|")
    for name, errs in {**{k: {c: {"error_pct": v} for c, v in p.items()} for k, p in PAPER.items()},
                       **out["models"]}.items():
        print(f"| {name} | " + " | ".join(f"{errs[c]['error_pct']:.1f}" if c in errs else "-" for c in CLASSES) + " |")
    if args.out:
        atomic_write_bytes(args.out, (json.dumps(out, indent=1, sort_keys=True) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
