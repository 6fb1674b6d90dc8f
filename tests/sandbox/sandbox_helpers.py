"""Helpers of the sandbox tests: attack model files, process audits, the isolation skip mark."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kgpubench.sandbox.session import isolation_support

MODELS = Path(__file__).parent / "models"


def render(name: str, folder: Path, **values) -> Path:
    """``models/<name>.py`` with each ``"__KEY__"`` placeholder replaced by ``repr(value)``, in ``folder``."""
    text = (MODELS / f"{name}.py").read_text()
    for key, value in values.items():
        text = text.replace(f'"__{key.upper()}__"', repr(value))
    assert '"__' not in text, f"unfilled placeholder in {name}.py"
    path = Path(folder) / f"{name}.py"
    path.write_text(text)
    return path


def processes_with(token: str) -> set[int]:
    """Host pids of a session: its launcher names itself ``kgpb-<token[:10]>`` and every process forked from
    it inherits the name (``/proc/PID/comm``); zombies, already dead, are not counted."""
    name = f"kgpb-{token[:10]}"
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() != name:
                        continue
                with open(f"/proc/{entry}/stat") as fh:
                    if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                        found.add(int(entry))
            except OSError:
                pass
    return found


def settled(probe, want, seconds: float = 3.0):
    """``probe()`` once it equals ``want``, or its last value after ``seconds`` (killing is asynchronous)."""
    end = time.monotonic() + seconds
    got = probe()
    while got != want and time.monotonic() < end:
        time.sleep(0.05)
        got = probe()
    return got


needs_isolation = pytest.mark.skipif(not isolation_support()[0],
                                     reason=f"no kernel isolation here: {isolation_support()[1]}")
