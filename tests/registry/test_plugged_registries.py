"""The baseline and import-format registries take plugins too: a plugged-in model file is planned on the tasks
it declares (a BaselineFile's rule, else its file's TASKS) after the bundled baselines, a plugged-in format is
tried after the built-in ones, and a baseline entry that is no model file is one error naming its distribution."""

from __future__ import annotations

import sys

import pytest
from plugin_helpers import make_plugin

from kgpubench.board import leaderboard as lb
from kgpubench.board.baselines import MAX_CHARS, BaselineFile, On, baseline_name, seen_rows, sees
from kgpubench.errors import PluginError
from kgpubench.importers import api
from kgpubench.registry import BUILT_IN
from kgpubench.resources import bundled_path
from kgpubench.results.result import read_record
from kgpubench.store.store import sha256_file
from kgpubench.tasks import get_task

MODEL = """
    TASKS = ("kernel-time",)


    def make_model(task, seed):
        raise NotImplementedError
"""
PLUGIN = """
    from pathlib import Path

    from kgpubench.board.baselines import BaselineFile, On
    from kgpubench.importers.api import ImportFormat

    MODEL = Path(__file__).with_name("my_floor.py")
    RULED = BaselineFile(Path(__file__).with_name("my_ruled.py"), (On(config="kernels", target="power_w_avg"),))
    SEEING = BaselineFile(Path(__file__).with_name("my_seeing.py"), (On(config="kernels"),),
                          sees="The launch's grid and block and the GPU's SM count: nothing else")
    NOT_A_MODEL = Path(__file__).with_name("notes.txt")
    FORMAT = ImportFormat("plug-json", lambda data: isinstance(data, dict) and "plug_runs" in data,
                          lambda loaded, prov, *, gpu: [], "plug", "a plug file (top-level `plug_runs`)")
"""


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    def install(entry_points):
        root = make_plugin(tmp_path / "site", "kgpubench-plugged",
                           {"plugged_mod": PLUGIN, "my_floor": MODEL, "my_ruled": MODEL,
                            "my_seeing": MODEL}, entry_points)
        monkeypatch.syspath_prepend(str(root))
        for registry in (lb.BASELINES, api.FORMATS):
            registry.reload()
        return root

    yield install
    sys.modules.pop("plugged_mod", None)
    for registry in (lb.BASELINES, api.FORMATS):  # after monkeypatch's undo: read without the plugin again
        registry.reload()


def test_a_plugged_in_model_file_is_listed_after_the_bundled_ones_and_planned(plugged):
    root = plugged({"kgpubench.baselines": {"my_floor": "plugged_mod:MODEL"},
                    "kgpubench.importers": {"plug-json": "plugged_mod:FORMAT"}})
    files = lb.baseline_files()
    bundled = sorted(p for p in bundled_path("baselines").glob("*.py") if not p.name.startswith("_"))
    assert files == [*bundled, root / "my_floor.py"]
    assert lb.BASELINES.origin("median") == BUILT_IN and "kgpubench-plugged 0.1" in lb.BASELINES.origin("my_floor")
    jobs = lb.plan(only=["my_floor"])
    assert [(j.name, j.task.name, j.scheme) for j in jobs] == [
        ("my_floor", "kernel-time", s) for s in get_task("kernel-time").evaluated_schemes]
    assert list(api.FORMATS) == ["kernel-tuner-cache", "t4", "plug-json"]


def test_a_plugged_in_baseline_declares_its_tasks_by_a_rule(plugged):
    # its file says TASKS = ("kernel-time",); the rule it is registered with decides (the board never reads TASKS)
    root = plugged({"kgpubench.baselines": {"my_ruled": "plugged_mod:RULED"}})
    assert lb.baseline_files()[-1] == root / "my_ruled.py"
    assert {(j.name, j.task.name) for j in lb.plan(only=["my_ruled"])} == {("my_ruled", "kernel-power")}
    # the same file given as a path outside the registry (a submission) is planned on its TASKS
    assert {j.task.name for j in lb.plan(models=[root / "my_floor.py"], references=False)} == {"kernel-time"}


def test_a_baseline_entry_that_is_no_model_file_names_its_distribution(plugged):
    plugged({"kgpubench.baselines": {"notes": "plugged_mod:NOT_A_MODEL"}})
    with pytest.raises(PluginError, match=r"baseline plugin 'notes' \(entry point 'notes = plugged_mod:NOT_A_MODEL' "
                                          r"\(group kgpubench.baselines\) of distribution kgpubench-plugged 0.1\) is "
                                          r"refused: baseline 'notes': .*notes.txt is no model file"):
        lb.baseline_files()


def test_a_plugged_in_baseline_s_line_of_what_it_sees_is_shown_for_its_own_file_only(plugged):
    root = plugged({"kgpubench.baselines": {"my_seeing": "plugged_mod:SEEING", "my_ruled": "plugged_mod:RULED"}})
    line = "The launch's grid and block and the GPU's SM count: nothing else"
    assert sees("my_seeing") == line and sees("my_ruled") is None and sees("lgbm") != line

    def rec(model, model_file, sha):
        return read_record({"task": "kernel-time", "scheme": "by-gpu", "model": model, "model_file": model_file,
                            "model_sha256": sha})

    mine = sha256_file(root / "my_seeing.py")
    results = [rec("my_seeing", "my_seeing.py", mine),
               rec("my_seeing", "my_seeing.py", "0" * 64),  # a submission of that name, another file
               rec("my_seeing", "submissions/my_seeing.py", mine),  # the same bytes from elsewhere: not the plugin
               rec("my_ruled", "my_ruled.py", sha256_file(root / "my_ruled.py"))]  # registered, no line
    assert [baseline_name(r) for r in results] == ["my_seeing", None, None, "my_ruled"]
    assert seen_rows(results) == [("my_seeing", line)]


@pytest.mark.parametrize("bad", ["", "   ", "two\nlines", "x" * (MAX_CHARS + 1), 3])
def test_a_baseline_file_s_line_must_be_one_short_line(tmp_path, bad):
    with pytest.raises(ValueError, match=r"baseline 'mine': sees must be one non-empty line of at most 110"):
        BaselineFile(tmp_path / "mine.py", (On(config="kernels"),), sees=bad)
