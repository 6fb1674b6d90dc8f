"""A package installed beside kgpubench plugs in a task and a metric through entry points: ``kgpubench tasks``
lists the task, ranked by the plugged-in metric, and counts its rows and folds on a store; a hostile plugin (an import
error, an object of the wrong type, a built-in's name) is one line and exit 1, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_helpers import make_plugin
from task_fixtures import autotune_table, make_store

from kgpubench.tasks import list_tasks
from kgpubench.tasks.overview import overview

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]

PLUGIN = """
    import numpy as np

    from kgpubench.tasks import Task
    from kgpubench.tasks.definitions import GPU_FEATURES
    from kgpubench.tasks.metrics import Metric


    def max_log_error(y, p):
        return float(np.max(np.abs(np.log(np.asarray(p, dtype=float) / np.asarray(y, dtype=float)))))


    METRIC = Metric("plug_max_le", max_log_error, False, "row", "maximum absolute log error", "ln units", rel_tol=1e-3)
    TASK = Task(name="autotune-time-plug", config="autotune", target="time_ms_median", kind="regression", seed="-",
                features=("kernel", "problem_size", "params", *GPU_FEATURES), metrics=("plug_max_le", "male"),
                schemes=("random10",), description="The time of one auto-tuning configuration (plugged in).")
"""


def kgpubench(plugin_root: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m kgpubench ARGS`` with the plugin's folder on the import path, as if it were installed."""
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_root), str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "kgpubench", *args], capture_output=True, text=True, env=env,
                          cwd=plugin_root, timeout=300)


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory):
    return tmp_path_factory.mktemp("empty-store")  # no configs: every task counts 0 rows, fast


def test_a_plugged_in_task_and_metric_are_listed_and_usable(tmp_path):
    root = make_plugin(tmp_path / "site", "kgpubench-plug", {"kgpubench_plug": PLUGIN},
                       {"kgpubench.tasks": {"autotune-time-plug": "kgpubench_plug:TASK"},
                        "kgpubench.metrics": {"plug_max_le": "kgpubench_plug:METRIC"}})
    table = autotune_table()
    store = make_store(tmp_path / "store", table)
    done = kgpubench(root, "tasks", "--json", "--data", str(store.path))
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [o["name"] for o in listed] == [*(t.name for t in list_tasks()), "autotune-time-plug"]
    plugged = listed[-1]
    assert (plugged["ranked_by"], plugged["metrics"]) == ("plug_max_le", ["plug_max_le", "male"])
    # counted on a store of autotune rows exactly as the same declaration is in this process
    declared = {}
    exec(textwrap.dedent(PLUGIN), declared)
    assert plugged == json.loads(json.dumps(overview(declared["TASK"], store).to_dict()))
    assert plugged["rows"] == table.num_rows and plugged["schemes"][0]["folds"] > 1


HOSTILE = {
    "import error": ("import no_such_module_anywhere\n", "kgpubench.tasks", "bad-task",
                     "task plugin 'bad-task' (entry point 'bad-task = kgpubench_hostile:X' (group kgpubench.tasks) "
                     "of distribution kgpubench-hostile 0.1) failed to load: ModuleNotFoundError: No module named "
                     "'no_such_module_anywhere'. Fix or uninstall that package."),
    "wrong type": ("X = {'name': 'bad-task'}\n", "kgpubench.tasks", "bad-task",
                   "task plugin 'bad-task' (entry point 'bad-task = kgpubench_hostile:X' (group kgpubench.tasks) of "
                   "distribution kgpubench-hostile 0.1) is refused: a task must be a Task, got a dict for 'bad-task'. "
                   "Fix or uninstall that package."),
    "a built-in's name": (
        "from kgpubench.tasks.metrics import Metric\nX = Metric('mape', len, True, 'row', 'not the MAPE')\n",
        "kgpubench.metrics", "mape",
        "metric 'mape' from entry point 'mape = kgpubench_hostile:X' (group kgpubench.metrics) of distribution "
        "kgpubench-hostile 0.1 is already registered by kgpubench (built in); give one of them another name (or "
        "uninstall the package that plugs it in)."),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_plugin_is_one_line_and_exit_1(tmp_path, empty_store, case):
    source, group, name, message = HOSTILE[case]
    root = make_plugin(tmp_path / "site", "kgpubench-hostile", {"kgpubench_hostile": source},
                       {group: {name: "kgpubench_hostile:X"}})
    done = kgpubench(root, "tasks", "--data", str(empty_store))
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert " ".join(done.stderr.split()).endswith(message), done.stderr
