"""Board jobs start longest first: never-run jobs first (costliest declared task first), then by the wall time
of their previous result; nothing keys on a task or model name."""

from __future__ import annotations

import json

import kgpubench.board.leaderboard as lb
from kgpubench.tasks import get_task


def _jobs():
    return [lb.Job("baselines/median.py", "kernel-time", "random10"),
            lb.Job("baselines/lgbm.py", "kernel-time", "random10"),
            lb.Job("baselines/median.py", "autotune-config", "by-gpu"),
            lb.Job("baselines/xgb.py", "npb-tpb", "random10")]


def _write(root, job, wall):
    path = lb.result_path(root, job.task.name, job.scheme, job.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": job.task.name, "scheme": job.scheme, "model": job.name, "status": "ok",
                                "wall_time_s": wall}))


def test_order_from_declared_task_cost_then_previous_wall_times(tmp_path):
    jobs = _jobs()
    assert get_task("autotune-config").relative_cost == 100.0 and get_task("kernel-time").relative_cost == 1.0
    assert lb.job_order(jobs) == [2, 0, 1, 3]  # nothing known: the costly task first, the rest in job order
    _write(tmp_path, jobs[0], 3.0)
    _write(tmp_path, jobs[1], 40.5)
    _write(tmp_path, jobs[2], 12.0)
    lb.result_path(tmp_path, "npb-tpb", "random10", "xgb").parent.mkdir(parents=True)
    lb.result_path(tmp_path, "npb-tpb", "random10", "xgb").write_text("{not json")  # unreadable: unknown
    walls = [lb.previous_wall_time(tmp_path, j) for j in jobs]
    assert walls == [3.0, 40.5, 12.0, None]
    assert lb.job_order(jobs, walls) == [3, 1, 2, 0]


def test_previous_wall_time_refuses_what_is_not_a_time(tmp_path):
    job = _jobs()[0]
    assert lb.previous_wall_time(tmp_path, job) is None  # no result
    for bad in (True, -1.0, "12", None):
        _write(tmp_path, job, bad)
        assert lb.previous_wall_time(tmp_path, job) is None, bad
    from kgpubench.results.result import ABSENT

    assert lb.wall_time_of(ABSENT) is None and lb.wall_time_of(0) == 0.0  # verify reads committed results' field
    lb.result_path(tmp_path, job.task.name, job.scheme, job.name).write_text("[1, 2]")  # not an object
    assert lb.previous_wall_time(tmp_path, job) is None


def test_run_jobs_starts_in_that_order_and_returns_job_order(tmp_path, monkeypatch):
    jobs = _jobs()
    for job, wall in zip(jobs, (3.0, 40.5, 12.0, 7.0)):
        _write(tmp_path, job, wall)
    started = []
    monkeypatch.setattr(lb, "run_job", lambda job, *a: started.append(job) or {"status": "ok", "name": job.name})
    out = lb.run_jobs(jobs, wall_times=[lb.previous_wall_time(tmp_path, j) for j in jobs])
    assert started == [jobs[1], jobs[2], jobs[3], jobs[0]]
    assert [job for job, _ in out] == jobs
