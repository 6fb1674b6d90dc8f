"""Picklable stand-ins for NVRTC (the compile cache's ``Compiler``), importable by pool workers.

Each call leaves a file in ``calls`` (named after the process and a counter), so tests count compilations
made in other processes too.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from kgpubench.measure.compile_cache import NVRTC_ERROR_COMPILATION, CompileOutput


def _record(calls: Path, options) -> None:
    calls.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(repr(list(options)).encode()).hexdigest()[:8]
    (calls / f"{os.getpid()}-{time.perf_counter_ns()}-{digest}").touch()


def call_count(calls: Path) -> int:
    """Compilations recorded in ``calls`` so far."""
    return len(list(calls.iterdir())) if calls.is_dir() else 0


@dataclass(frozen=True)
class CountingCompiler:
    """Deterministic fake output from text and options; ``#error`` in the text is a compile error."""

    calls: Path
    version: str = "fake-nvrtc 1.0"

    def __call__(self, text, filename, options):
        _record(self.calls, options)
        if "#error" in text:
            return CompileOutput(status=NVRTC_ERROR_COMPILATION,
                                 log=f"{filename}(1): error: the source says #error\n1 error detected")
        body = hashlib.sha256((text + "\0".join(options)).encode()).hexdigest()
        return CompileOutput(status=0, ptx=f"// fake ptx {body}\n", cubin=b"\x7fELF" + body.encode(),
                             log="ptxas info    : Used 12 registers")


@dataclass(frozen=True)
class BarrierCompiler:
    """Waits until ``parties`` different processes have each started a compilation (or fails after a
    minute): only a real fan-out over that many worker processes gets past the first call."""

    calls: Path
    parties: int = 2
    version: str = "fake-nvrtc 1.0"

    def __call__(self, text, filename, options):
        _record(self.calls, options)
        deadline = time.monotonic() + 60
        while len({p.name.split("-")[0] for p in self.calls.iterdir()}) < self.parties:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only one process compiled within 60 s (expected {self.parties})")
            time.sleep(0.01)
        return CompileOutput(status=0, ptx="// fake\n", cubin=b"\x7fELF", log="")


REPORT = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
          "ptxas info    : Used 12 registers, used 0 barriers\n")


@dataclass(frozen=True)
class DriverCachingCompiler:
    """NVRTC 12.9+ on a machine with a GPU driver: a CUBIN it built is kept in the driver's cache (``store``, a
    folder, shared by processes as the driver's is) and handed back on the next compilation of the same text and
    options without running ptxas, so with no ptxas report in the log, unless the options say ``--no-cache``."""

    calls: Path
    store: Path
    version: str = "fake-nvrtc 13.0"

    def __call__(self, text, filename, options):
        _record(self.calls, options)
        cubin = b"\x7fELF" + hashlib.sha256(text.encode()).hexdigest().encode()
        if "--no-cache" in options:
            return CompileOutput(status=0, ptx="// fake\n", cubin=cubin, log=REPORT)
        entry = self.store / hashlib.sha256((text + "\0".join(options)).encode()).hexdigest()
        if entry.exists():  # a cache hit: ptxas does not run, the log is empty
            return CompileOutput(status=0, ptx="// fake\n", cubin=entry.read_bytes(), log="")
        self.store.mkdir(parents=True, exist_ok=True)
        entry.write_bytes(cubin)
        return CompileOutput(status=0, ptx="// fake\n", cubin=cubin, log=REPORT)


@dataclass(frozen=True)
class OptionRejectingCompiler:
    """An NVRTC that does not know the option ``rejects`` (status 5, invalid option) but compiles without it, with
    a ptxas report in its log when it was asked for one (``-Xptxas=-v``). The default is an NVRTC without
    ``-Xptxas=-v``; ``rejects="--no-cache"`` is NVRTC 12.0 to 12.8 (no cache, no such option)."""

    calls: Path
    rejects: str = "-Xptxas=-v"
    version: str = "fake-nvrtc 0.9"

    def __call__(self, text, filename, options):
        _record(self.calls, options)
        if self.rejects in options:
            return CompileOutput(status=5, log=f"nvrtc: error: unrecognized option {self.rejects} found\n")
        return CompileOutput(status=0, ptx="// fake\n", cubin=f"\x7fELF-{self.version}".encode(),
                             log=REPORT if "-Xptxas=-v" in options else "")
