"""Locking the GPU clocks for a collection, and always undoing it.

Protocol 2 can lock the SM clock through NVML when the collector runs as root (NVML needs it for
``nvmlDeviceSetGpuLockedClocks``): at the board's default applications clock (``--lock-clocks auto``) or at
a given MHz. The default is ``none``: on a GPU that is shared or lent (a cluster node, a cloud machine)
nobody may change the clocks, so locking is the owner's explicit choice. The lock is undone on every way out
this process controls: normal exit, an exception, Ctrl-C, SIGTERM and SIGHUP (turned into ``SystemExit`` so
the ``with`` block unwinds) and ``atexit``. A SIGKILL cannot be caught: after one, ``nvidia-smi
--reset-gpu-clocks`` (or a locking run of ``kgpubench collect``, which resets before it locks) restores the
clocks. Rows record ``clocks_locked`` and the clocks around every measurement.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from typing import Any

from kgpubench.errors import ClockLockError

_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


def parse_lock_mode(value: str) -> str | float:
    """``auto``, ``none`` or a clock in MHz (from ``--lock-clocks``)."""
    text = str(value).strip().lower()
    if text in ("auto", "none"):
        return text
    try:
        mhz = float(text)
    except ValueError:
        raise ClockLockError(f"--lock-clocks {value!r}: expected auto, none or an SM clock in MHz "
                             "(e.g. 1755).") from None
    if not (100.0 <= mhz <= 5000.0):
        raise ClockLockError(f"--lock-clocks {value!r}: {mhz:g} MHz is not a plausible SM clock; give a value "
                             "between 100 and 5000 MHz, auto or none.")
    return mhz


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


class ClockLock:
    """Context manager: lock the SM clock of ``nvml`` (an :class:`~kgpubench.measure.power.NvmlDevice`).

    Attributes after entering: ``locked`` (bool), ``mhz`` (the locked clock or ``None``), ``note`` (why not
    locked, for the log).
    """

    def __init__(self, nvml: Any, mode: str | float = "auto", *, is_root: bool | None = None) -> None:
        self.nvml, self.mode = nvml, mode
        self.is_root = _running_as_root() if is_root is None else is_root
        self.locked = False
        self.mhz: float | None = None
        self.note = ""
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> ClockLock:
        if self.mode == "none":
            self.note = "clocks not locked (--lock-clocks none)"
            return self
        if self.nvml is None:
            if self.mode != "auto":
                raise ClockLockError("--lock-clocks needs NVML (nvidia-ml-py) to lock the clocks; install the "
                                     "gpu extra or pass --lock-clocks none.")
            self.note = "clocks not locked: NVML is not available"
            return self
        if not self.is_root:
            if self.mode != "auto":
                raise ClockLockError("--lock-clocks with a clock value needs root (NVML refuses clock locks "
                                     "otherwise); run as root or pass --lock-clocks auto/none.")
            self.note = "clocks not locked: not running as root"
            return self
        mhz = self.nvml.default_sm_clock_mhz() if self.mode == "auto" else float(self.mode)
        if not mhz:
            self.note = "clocks not locked: NVML reports no default applications clock"
            return self
        try:
            self.nvml.reset_sm_clock()  # a lock a killed run left behind
            self.nvml.lock_sm_clock(mhz)
        except Exception as exc:  # noqa: BLE001 - NVMLError (not supported, no permission): measure unlocked
            self.note = f"clocks not locked: NVML refused ({type(exc).__name__}: {exc})"
            return self
        self.locked, self.mhz = True, float(mhz)
        atexit.register(self._undo)
        for sig in _SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, _exit_on_signal)
            except ValueError:  # not the main thread: atexit and __exit__ still undo the lock
                pass
        self.note = f"SM clock locked at {mhz:g} MHz"
        return self

    def _undo(self) -> None:
        if self.locked:
            self.locked = False
            try:
                self.nvml.reset_sm_clock()
            except Exception as exc:  # noqa: BLE001 - say so; nothing else can be done
                print(f"warning: could not reset the GPU clocks ({exc}); run `nvidia-smi --reset-gpu-clocks`",
                      file=sys.stderr)

    def __exit__(self, *exc: object) -> None:
        was = self.locked
        self._undo()
        if was:
            atexit.unregister(self._undo)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
