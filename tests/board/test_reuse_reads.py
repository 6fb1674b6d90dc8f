"""What a reuse-everything ``leaderboard run --reuse`` reads (``benchmarks/leaderboard_reuse.py`` times it): each
config's files once per store manifest, the rows of a task whose config files changed once per (task, scheme) rather
than once per result, the package versions once per process. On the shipped data and committed results."""

from __future__ import annotations

import pytest

from kgpubench.board import leaderboard as L
from kgpubench.buildinfo import package_versions
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import data as D


@pytest.fixture()
def reads(monkeypatch):
    """The configs :meth:`Store.read` reads, in order, with the process's kept tables emptied first."""
    monkeypatch.setattr(D, "_TABLES", {})
    monkeypatch.setattr(D, "_USABLE", {})
    seen: list[str] = []
    real = Store.read

    def counted(self, config, **kwargs):
        seen.append(config)
        return real(self, config, **kwargs)

    monkeypatch.setattr(Store, "read", counted)
    return seen


def test_a_config_is_read_once_while_the_manifest_is_the_same(reads):
    store = Store(default_data_dir())
    first = D.config_table(store, "kernels")
    assert D.config_table(store, "kernels") is first and reads == ["kernels"]
    D.task_data("kernel-time", "random10")
    D.task_data("kernel-time-memory", "holdout80")
    assert reads == ["kernels"]  # two tasks of one config: its files read once
    D.config_table(store, "stencil")
    D.config_table(store, "npb")  # a third config: the first one read is let go
    D.config_table(store, "kernels")
    assert reads == ["kernels", "stencil", "npb", "kernels"]


def test_the_package_versions_are_a_fresh_dict_each_call():
    got = package_versions()
    got["numpy"] = "changed"
    assert package_versions()["numpy"] != "changed" and set(package_versions()) >= {"python", "numpy", "kgpubench"}


def test_reusing_a_changed_config_s_results_reads_each_task_and_scheme_once(reads, monkeypatch):
    """kernel-time's committed results (and its subsets') were made on earlier kernels files (another
    files_sha256), so each is compared by its rows: once per (task, scheme), twelve of them, whatever the number of
    results and their order (the process keeps the last four)."""
    built: list[tuple[str, str]] = []
    real = D.task_data
    monkeypatch.setattr(D, "task_data", lambda task, scheme, *a, **k: (built.append((task.name, scheme))
                                                                                 or real(task, scheme, *a, **k)))
    jobs = list(L.plan(None, None, ["kernel-time", "kernel-time-compute", "kernel-time-memory"]))
    store = Store(default_data_dir())
    rerun, reused = L._reuse(jobs, L.results_dir(), None, seed=0, store=store, progress=None, warn=pytest.fail)
    schemes = {(j.task.name, j.scheme) for j in jobs}
    # every job is run again or reused, each list in the plan's order
    assert rerun == [j for j in jobs if j in set(rerun)] and list(reused) == [j for j in jobs if j not in set(rerun)]
    assert len(reused) > len(jobs) // 2  # the committed board is this checkout's
    assert len(jobs) > 2 * len(schemes)
    assert built and sorted(built) == sorted(set(built)) and set(built) <= schemes  # once per (task, scheme)
    assert reads == ["kernels"]
