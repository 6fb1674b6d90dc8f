"""Issue 30, item 1: two sandboxes that run at the same time (``leaderboard verify --jobs N``, ``--ray``) cannot
talk: no file lock, lease or inotify on the shared read-only files, no SysV IPC, no abstract socket, no nested
user namespace. The same attack run unconfined shows each channel works, so a pass means the sandbox closed it.

Before the fix a model published its training targets as read locks on the venv's ``pyvenv.cfg`` and another
sandbox read them back with ``F_GETLK``, and a model got uid 0 in a nested user namespace.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from sandbox_helpers import needs_isolation, render

from kgpubench.sandbox.limits import Limits
from kgpubench.sandbox.session import ModelSession

SLOTS = ("F_GETLK", "F_OFD_GETLK", "flock", "SysV shm", "SysV msg", "abstract socket", "inotify",
         "nested user namespace")


def _quietly(call, *args):
    try:
        call(*args)
    except Exception:  # noqa: BLE001 - the sender is killed when the receiver's session ends
        pass


def _talk(tmp_path, small, *, isolate: bool, wait: float) -> dict[str, float]:
    X, y = small
    (tmp_path / "send").mkdir()
    (tmp_path / "receive").mkdir()
    sender = render("channel", tmp_path / "send", role="send", hold=wait + 20.0, wait=0.0)
    receiver = render("channel", tmp_path / "receive", role="receive", hold=0.0, wait=wait)
    limits = Limits(timeout_s=wait + 60)
    with ModelSession(sender, "autotune-config", limits=limits, trust=True, isolate=isolate) as a, \
            ModelSession(receiver, "autotune-config", limits=limits, trust=True, isolate=isolate) as b:
        b.fit(X, y)
        started = threading.Thread(target=lambda: _quietly(a.fit, X, y), daemon=True)
        started.start()  # the sender holds its channels open while the receiver listens
        heard = np.asarray(b.predict(X))[:len(SLOTS)]
    return dict(zip(SLOTS, heard.tolist()))


def _remove_host_ipc() -> None:
    """The unconfined control creates a SysV segment and queue on the host: remove them (by their key)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    key, ipc_rmid = 0x4B475042, 0
    for get, ctl in ((libc.shmget, libc.shmctl), (libc.msgget, libc.msgctl)):
        ident = get(key, 0, 0)
        if ident >= 0:
            ctl(ident, ipc_rmid, None)


def test_unconfined_models_can_talk(tmp_path, small):
    """The control: without the sandbox each of these channels carries a bit (inotify, locks, IPC, sockets)."""
    try:
        heard = _talk(tmp_path, small, isolate=False, wait=6.0)
    finally:
        _remove_host_ipc()
    assert heard["F_GETLK"] == heard["F_OFD_GETLK"] == heard["flock"] == 1.0, heard
    assert heard["SysV shm"] == heard["SysV msg"] == heard["abstract socket"] == heard["inotify"] == 1.0, heard
    if os.geteuid() == 0:
        assert heard["nested user namespace"] == 1.0


@pytest.mark.slow
@needs_isolation
def test_sandboxes_running_at_once_cannot_talk(tmp_path, small):
    heard = _talk(tmp_path, small, isolate=True, wait=6.0)
    assert heard == dict.fromkeys(SLOTS, 0.0)
