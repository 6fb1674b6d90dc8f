"""Issue 20's escapes, each tried by a model file: contained in the sandbox, and shown to work unconfined.

The unconfined runs (``isolate=False, trust=True``) are the controls: the same attack file, run as a plain
child process, does read the disk, write the victim files, talk to the host's socket and leave a process
behind, so a contained result below is the sandbox's doing and not a broken attack.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import numpy as np
import pytest
from sandbox_helpers import needs_isolation, processes_with, render, settled

from kgpubench.errors import SandboxError
from kgpubench.models.evaluation import load_model_module, model_factory, run_folds
from kgpubench.resources import default_data_dir
from kgpubench.sandbox.limits import Limits
from kgpubench.sandbox.session import ModelSession
from kgpubench.tasks.data import task_data

SECRET = 42.5


@pytest.fixture(scope="module")
def host_socket():
    """A TCP server on 127.0.0.1 that hands every caller the number SECRET."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(str(SECRET).encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _victim(folder):
    """A store-like folder (manifest, a committed result) whose bytes the attack tries to change."""
    (folder / "results").mkdir(parents=True)
    (folder / "manifest.json").write_text('{"version": "1.0.0"}\n')
    (folder / "results" / "lgbm.json").write_text('{"model": "lgbm"}\n')
    return folder


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _attack(tmp, store, port, small, isolate):
    """Run escape.py once; return its report, the victim before/after, and the processes left behind."""
    victim = _victim(tmp / "victim")
    repo_readme = default_data_dir().parents[1] / "README.md"
    secrets = [str(store.path / "manifest.json"), str(default_data_dir() / "manifest.json"), "/etc/passwd",
               str(repo_readme)]
    assert all(os.path.isfile(s) for s in secrets)
    path = render("escape", tmp, secrets=secrets, victim=str(victim), port=port)
    before = _snapshot(victim)
    X, y = small
    session = ModelSession(path, "autotune-config", limits=Limits(timeout_s=60), trust=True, isolate=isolate)
    with session:
        session.fit(X, y)
        report = session.predict(X)
        token = session.token
        assert processes_with(token)  # the session's processes carry its token while it runs
    linger = int(report[4])
    left = settled(lambda: processes_with(token), {linger} if not isolate else set())
    return {"report": report, "before": before, "after": _snapshot(victim), "left": left, "linger": linger}


@pytest.fixture(scope="module")
def contained(tmp_path_factory, store, host_socket, small):
    if not __import__("kgpubench.sandbox.session").sandbox.session.isolation_support()[0]:
        pytest.skip("no kernel isolation here")
    return _attack(tmp_path_factory.mktemp("contained"), store, host_socket, small, isolate=True)


@pytest.fixture(scope="module")
def unconfined(tmp_path_factory, store, host_socket, small):
    out = _attack(tmp_path_factory.mktemp("unconfined"), store, host_socket, small, isolate=False)
    yield out
    if out["linger"] > 0:  # the setsid grandchild the control run left behind, by its pid
        try:
            os.kill(out["linger"], signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_disk_reading_is_contained(contained, unconfined):
    # store manifest, package data, /etc/passwd, the repository's README
    assert unconfined["report"][0] == 4
    assert contained["report"][0] == 0


def test_writing_is_contained(contained, unconfined):
    assert unconfined["report"][1] == 3 and unconfined["after"] != unconfined["before"]
    assert "part-junk.parquet" in unconfined["after"]
    assert contained["report"][1] == 0
    assert contained["after"] == contained["before"]


def test_socket_to_the_host_is_contained(contained, unconfined):
    assert unconfined["report"][2] == SECRET
    assert contained["report"][2] == -1


def test_fork_bomb_is_capped_and_reaped(contained, unconfined):
    assert unconfined["report"][3] == 50
    forked = contained["report"][3]
    assert 0 < forked < 50 and forked <= Limits().processes + 4
    assert contained["left"] == set()


def test_setsid_grandchild_dies_with_the_session(contained, unconfined):
    assert unconfined["linger"] > 0 and unconfined["left"] == {unconfined["linger"]}  # survives unconfined
    assert contained["linger"] > 0  # it was started inside...
    assert contained["left"] == set()  # ...and is gone with every other process of the session


@pytest.mark.slow
@pytest.mark.parametrize("isolate", [pytest.param(True, marks=needs_isolation), False])
def test_a_grandchild_holding_the_pipes_cannot_stretch_the_timeout(tmp_path, small, isolate):
    X, y = small
    session = ModelSession(render("stall", tmp_path), "autotune-config", limits=Limits(timeout_s=3), trust=True,
                           isolate=isolate)
    session.start()
    token = session.token
    session.fit(X, y)
    start = time.monotonic()
    with pytest.raises(SandboxError, match="exceeded the time limit of 3 s while predict") as err:
        session.predict(X)
    assert err.value.kind == "timeout"
    assert time.monotonic() - start < 3 + 2.5
    (grandchild,) = [int(line.split()[1]) for line in err.value.log.splitlines() if line.startswith("grandchild")]
    left = settled(lambda: processes_with(token), set() if isolate else {grandchild})
    if isolate:
        assert left == set()
    else:  # unconfined, the setsid grandchild lives on (and is ended here by its pid)
        assert left == {grandchild}
        os.kill(grandchild, signal.SIGKILL)


@needs_isolation
def test_label_reading_finds_nothing_in_the_sandbox(tmp_path, store):
    path = render("peek", tmp_path)
    data = task_data("autotune-config", "by-gpu", store.path)
    inproc, _ = run_folds(data, model_factory(load_model_module(path)))  # the old, in-process way
    assert all(f["scores"]["male"] == 0.0 and f["scores"]["top1_regret"] == 0.0 for f in inproc.values())
    with ModelSession(path, data.task, limits=Limits(timeout_s=60)) as session:
        boxed, _ = run_folds(data, session.factory)
    # predictions of 1.0 everywhere: the mean absolute log error is mean(|ln 1 - ln y|) over the fold, not 0
    for fold, rec in boxed.items():
        y = data.y[data.folds == fold]
        assert rec["scores"]["male"] == pytest.approx(float(np.mean(np.abs(np.log(y)))), rel=1e-5)
        assert rec["scores"]["male"] > 0.1


@needs_isolation
@pytest.mark.parametrize("mode, kind, message", [
    ("sys-exit", "model-error", r"predict\(\) failed: the model called sys.exit\(0\) \(forge.py line \d+\)"),
    ("os-exit", "exit", r"exited with code 0 while predict\(\), without answering"),
    ("frame", "protocol", r"it sent 'predictions' while fit\(\)"),
])
def test_forging_an_answer_is_refused(tmp_path, small, mode, kind, message):
    X, y = small
    path = render("forge", tmp_path, mode=mode, target=str(tmp_path / "result.json"))
    with ModelSession(path, "autotune-config", limits=Limits(timeout_s=60)) as session:
        with pytest.raises(SandboxError, match=message) as err:
            session.fit(X, y)
            session.predict(X)
    assert err.value.kind == kind
    assert "\n" not in str(err.value)


@needs_isolation
def test_targets_learnt_in_one_fold_are_gone_in_the_next(tmp_path, store):
    """Every row is a training row of another fold: a child that outlived its fold could look test rows up."""
    path = render("memorize", tmp_path)
    data = task_data("autotune-config", "by-gpu", store.path)
    with ModelSession(path, data.task, limits=Limits(timeout_s=60), fresh_folds=False) as session:
        kept, _ = run_folds(data, session.factory)
    # folds in order GPU A, B, C: B's and C's test rows were training rows of an earlier fold
    assert [kept[f]["scores"]["male"] == 0.0 for f in ("GPU A", "GPU B", "GPU C")] == [False, True, True]
    with ModelSession(path, data.task, limits=Limits(timeout_s=60)) as session:  # a fresh child per fold
        fresh, _ = run_folds(data, session.factory)
    for fold, rec in fresh.items():
        train_mean = float(np.mean(data.y[data.folds != fold]))
        y = data.y[data.folds == fold]
        assert rec["scores"]["male"] == pytest.approx(float(np.mean(np.abs(np.log(train_mean) - np.log(y)))),
                                                      rel=1e-5)
