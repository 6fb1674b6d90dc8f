"""``cpu_time_s`` of a result counts the CPU the sandboxed model used, not only this process's; and the
aggregate's interval is the one ``evaluate``'s summary prints (on two folds of the shipped kernel-time rows)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from kgpubench.board.ranking import interval, number
from kgpubench.board.summary import result_summary
from kgpubench.models.evaluation import evaluate
from kgpubench.sandbox.process import tree_cpu_seconds
from kgpubench.tasks.data import task_data

BURN_S = 0.6  # CPU seconds the model spends in each fit


def test_tree_cpu_seconds_counts_a_process_and_what_it_started():
    code = textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time\\nend = time.process_time() + {BURN_S}\\n"
                                  "while time.process_time() < end: pass\\ntime.sleep(30)"])
        end = time.process_time() + {BURN_S}
        while time.process_time() < end:
            pass
        print(child.pid, flush=True)
        time.sleep(30)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    grandchild = None
    try:
        grandchild = int(proc.stdout.readline())
        deadline = time.monotonic() + 20
        while tree_cpu_seconds(proc.pid) < 2 * BURN_S and time.monotonic() < deadline:
            time.sleep(0.05)  # the grandchild may still be burning
        total = tree_cpu_seconds(proc.pid)
    finally:
        if grandchild is not None:
            os.kill(grandchild, signal.SIGKILL)
        proc.kill()
        proc.wait()
    assert 2 * BURN_S <= total < 2 * BURN_S + 5
    assert tree_cpu_seconds(proc.pid) == 0.0  # gone: nothing to read


def test_cpu_time_counts_the_sandboxed_model_and_the_summary_prints_the_aggregate_interval(tmp_path):
    model = tmp_path / "burner.py"
    model.write_text(textwrap.dedent(f"""
        import time
        import numpy as np

        TASKS = ("kernel-time",)


        class Burner:
            def fit(self, X, y):
                end = time.process_time() + {BURN_S}
                while time.process_time() < end:
                    pass
                self.value = float(np.median(y))
                return self

            def predict(self, X):
                return np.full(len(X), self.value)


        def make_model(task, seed):
            return Burner()
    """))
    data = task_data("kernel-time", "random10")
    before = time.process_time()
    result = evaluate(model, "kernel-time", "random10", data=data, folds=["0", "1"], trust=True)
    mine = time.process_time() - before
    assert sorted(result.folds) == ["0", "1"]
    assert result.cpu_time_s - mine >= 2 * BURN_S * 0.95, (result.cpu_time_s, mine)
    assert result.cpu_time_s < mine + 2 * BURN_S + 30
    summary = result_summary(result)
    stored = result.rounded()  # as the result file reads back: the board recomputes the interval from it
    for metric in ("male", "mdape"):
        ci = stored.aggregate[metric].ci95
        assert ci is not None and tuple(interval(stored, metric)) == ci and ci[0] <= ci[1]
        assert f"[{number(ci[0], 3)}, {number(ci[1], 3)}]" in summary
