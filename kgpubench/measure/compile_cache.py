"""Ahead-of-time NVRTC compilation of every kernel variant of a collection, with an on-disk cache.

A *variant* is one compilation: a source text, its ``-D`` defines and options, and the target (``sm_XY``).
Before the measuring loop starts, :func:`precompile` collects the distinct variants of the selected cases,
compiles the missing ones in a process pool over the machine's cores (NVRTC needs no CUDA context, so the
workers never touch the GPU) and, in the same workers, computes every case's static-feature columns from
the artefacts. The loop then only loads modules and looks features up.

One NVRTC call per variant (``--gpu-architecture=sm_XY --generate-line-info -Xptxas=-v --no-cache``) gives

- the CUBIN the backend loads (``cupy.RawModule(path=...)``);
- the PTX with line information, from which :mod:`kgpubench.features` computes the static features;
- the ptxas report in the program log (registers, shared memory, spills), so features have the resource
  figures even where no ptxas binary is installed (a GPU machine with the CuPy wheels only).

``--no-cache`` is what keeps the ptxas report there on a GPU machine. From CUDA 12.9, NVRTC keeps the CUBINs
it builds in the driver's JIT cache (``$CUDA_CACHE_PATH``, by default ``~/.nv/ComputeCache``) and, on a later
compilation of the same program, returns the stored CUBIN without running ptxas, so the log has no
``ptxas info`` lines at all. That cache needs the driver library: where there is no GPU driver, NVRTC cannot
open it and compiles every time, which is why the empty logs were seen on a GPU only (the H200 sessions of
2026-11-26 and 2026-11-29, whose GPU test compiled variants that the session's background precompile or
earlier GPU tests had compiled with the same options). An NVRTC older than 12.9 refuses ``--no-cache``
(invalid option) and has no such cache: the variant is compiled again without it, and, for an NVRTC that
refuses ``-Xptxas=-v`` too, without the report (:data:`OPTION_LADDER`).

Cache layout (``$KGPUBENCH_COMPILE_CACHE``, default ``compile/`` of kgpubench's cache root, e.g.
``~/.cache/kgpubench/compile``)::

    ROOT/ab/abcdef....cubin   the CUBIN
    ROOT/ab/abcdef....ptx     the PTX
    ROOT/ab/abcdef....json    metadata written last: the options NVRTC took, compiler, log, sha256 and size of
                              both files

The key is the sha256 of the format version, the source text, the full NVRTC option list, the architecture
and the compiler's version. Every file is written atomically (temp file + rename); an entry whose metadata
does not parse or whose files do not match the recorded sha256 is compiled again, never trusted. Compile
failures are not stored: they come back as one ``compile_error`` row per case.

Sources must be self-contained (no ``#include`` of local headers; see :class:`kgpubench.measure.suite.KernelSource`),
which is why the key covers the source text alone.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kgpubench.errors import CompileCacheError, CompileFailed, KgpubenchError, ToolchainError
from kgpubench.features.ptx import parse_ptx
from kgpubench.features.toolchain import INSTALL_HINT, _nvrtc_candidates, _nvrtc_version, nvrtc_run, parse_ptxas_report
from kgpubench.foundation.files import file_mode
from kgpubench.measure.features_link import _warn_once, artefact_features
from kgpubench.measure.suite import Case, KernelSource
from kgpubench.resources import cache_home

ENV_CACHE = "KGPUBENCH_COMPILE_CACHE"
ENV_JOBS = "KGPUBENCH_COMPILE_JOBS"
FORMAT_VERSION = 1
STD_OPTION = "-std=c++17"
VERBOSE_PTXAS = "-Xptxas=-v"
#: NVRTC 12.9+: compile, never serve the CUBIN from the driver's compute cache (which skips ptxas and its report).
NO_CACHE = "--no-cache"
#: ``(verbose, no_cache)`` of :meth:`Variant.nvrtc_options`, tried in turn while NVRTC answers "invalid option":
#: NVRTC 12.9+ takes both; 12.0 to 12.8 have no cache and refuse ``--no-cache``; the last step is for an NVRTC
#: without ``-Xptxas`` (no resource report then).
OPTION_LADDER = ((True, True), (True, False), (False, False))
NVRTC_ERROR_INVALID_OPTION = 5
NVRTC_ERROR_COMPILATION = 6


@dataclass(frozen=True)
class CompileOutput:
    """What one compiler call returned: ``status`` 0 on success (NVRTC's result code otherwise)."""

    status: int
    ptx: str = ""
    cubin: bytes = b""
    log: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 0


class Compiler(Protocol):
    """A picklable NVRTC front end: ``compiler(text, filename, options) -> CompileOutput``.

    ``version`` names the compiler and its release (part of every cache key).
    """

    version: str

    def __call__(self, text: str, filename: str, options: Sequence[str]) -> CompileOutput: ...


# -- NVRTC front ends ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CupyNvrtc:
    """NVRTC through CuPy's bindings (``cupy.cuda.nvrtc``): no CUDA context is created."""

    version: str

    @classmethod
    def find(cls) -> CupyNvrtc:
        from cupy.cuda import nvrtc

        major, minor = nvrtc.getVersion()
        return cls(version=f"nvrtc {major}.{minor} (cupy)")

    def __call__(self, text: str, filename: str, options: Sequence[str]) -> CompileOutput:
        from cupy.cuda import nvrtc

        prog = nvrtc.createProgram(text, filename, [], [])
        try:
            try:
                nvrtc.compileProgram(prog, list(options))
            except nvrtc.NVRTCError as exc:
                return CompileOutput(status=int(getattr(exc, "status", NVRTC_ERROR_COMPILATION)),
                                     log=_safe_log(nvrtc, prog) or str(exc))
            return CompileOutput(status=0, ptx=program_text(nvrtc.getPTX(prog)),
                                 cubin=bytes(nvrtc.getCUBIN(prog)), log=_safe_log(nvrtc, prog))
        finally:
            nvrtc.destroyProgram(prog)


def _safe_log(nvrtc: Any, prog: Any) -> str:
    try:
        log = nvrtc.getProgramLog(prog)
    except Exception:  # noqa: BLE001 - a missing log must not hide the compile result
        return ""
    return program_text(log)


def program_text(value: Any) -> str:
    """A log or PTX from an NVRTC binding (``str``, ``bytes`` or ``None``) as text, without NUL characters.

    Bytes are decoded, never passed to ``str()``: ``str(b"...")`` is one line of escaped newlines, in which
    :func:`~kgpubench.features.toolchain.parse_ptxas_report` finds no register count. CuPy 14 with NVRTC 13
    returns the log with the C string's NUL terminator, which is dropped here.
    """
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode(errors="replace")
    return str(value).replace("\0", "")


@dataclass(frozen=True)
class CtypesNvrtc:
    """NVRTC loaded with :mod:`ctypes` from a ``libnvrtc`` (the features extra's wheel), for machines
    without CuPy; the same calls as :func:`kgpubench.features.toolchain.compile_to_ptx` plus the CUBIN."""

    library: str
    version: str

    @classmethod
    def find(cls) -> CtypesNvrtc:
        libs = _nvrtc_candidates()
        if not libs:
            raise ToolchainError(f"no NVRTC library found for ahead-of-time compilation; {INSTALL_HINT}.")
        return cls(library=str(libs[0]), version=f"nvrtc {_nvrtc_version(libs[0])} (ctypes)")

    def __call__(self, text: str, filename: str, options: Sequence[str]) -> CompileOutput:
        run = nvrtc_run(self.library, text, filename, tuple(options), cubin=True)
        if not run.created:
            return CompileOutput(status=run.status, log=run.error)
        return CompileOutput(status=run.status, ptx=run.ptx, cubin=run.cubin, log=run.log)


def default_compiler() -> Compiler:
    """CuPy's NVRTC where CuPy imports, else NVRTC through ctypes (the ``features`` extra's wheel)."""
    try:
        return CupyNvrtc.find()
    except Exception:  # noqa: BLE001 - no CuPy, or a CuPy without a usable NVRTC: try the wheel
        return CtypesNvrtc.find()


# -- variants and keys -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """One compilation: source text, NVRTC options (defines, the source's options, ``-std``) and target."""

    text: str
    filename: str
    options: tuple[str, ...]
    arch: str

    @classmethod
    def of(cls, source: KernelSource, arch: str) -> Variant:
        """The variant of ``source`` for ``arch`` (``sm_90``)."""
        return cls(text=Path(source.path).read_text(), filename=Path(source.path).name,
                   options=(*source.define_options(), *source.options, STD_OPTION), arch=arch)

    def nvrtc_options(self, verbose: bool = True, no_cache: bool = True) -> list[str]:
        """Every option NVRTC gets: CUBIN for ``arch`` with line info (and the ptxas report, compiled afresh
        rather than taken from NVRTC's cache, which would leave the report out)."""
        return [*self.options, f"--gpu-architecture={self.arch}", "--generate-line-info",
                *([VERBOSE_PTXAS] if verbose else []), *([NO_CACHE] if no_cache else [])]

    def key(self, compiler_version: str) -> str:
        """sha256 (hex) of everything that decides the output."""
        doc = {"format": FORMAT_VERSION, "source": hashlib.sha256(self.text.encode()).hexdigest(),
               "options": self.nvrtc_options(), "arch": self.arch, "compiler": compiler_version}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Artefact:
    """A cached compilation: the CUBIN and PTX files and the compiler log."""

    key: str
    cubin: Path
    ptx: Path
    log: str
    compiler: str

    def ptx_text(self) -> str:
        return self.ptx.read_text()

    def resources(self) -> dict[str, Any]:
        """``{entry: Resources}`` from the ptxas report in the log (empty when NVRTC printed none)."""
        return parse_ptxas_report(self.log)


def cache_root() -> Path:
    """``$KGPUBENCH_COMPILE_CACHE``, else ``compile/`` of kgpubench's cache root
    (:func:`kgpubench.resources.cache_home`)."""
    env = os.environ.get(ENV_CACHE)
    return Path(env).expanduser() if env else cache_home("compile")


def default_jobs() -> int:
    """``$KGPUBENCH_COMPILE_JOBS`` or the CPU cores this process may use."""
    env = os.environ.get(ENV_JOBS)
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise CompileCacheError(f"{ENV_JOBS}={env!r}: expected a whole number of processes (e.g. 16), or "
                                    "leave it unset to use every core.") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())  # the mode any file of the user gets, not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class CompileCache:
    """NVRTC artefacts on disk, by :meth:`Variant.key`.

    Parameters
    ----------
    root : Path, optional
        The cache folder (default :func:`cache_root`).
    compiler : Compiler, optional
        The NVRTC front end (default :func:`default_compiler`, found on first use). Tests pass a fake.
    """

    def __init__(self, root: Path | None = None, *, compiler: Compiler | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self._compiler = compiler

    @property
    def compiler(self) -> Compiler:
        if self._compiler is None:
            self._compiler = default_compiler()
        return self._compiler

    def key(self, variant: Variant) -> str:
        return variant.key(self.compiler.version)

    def _paths(self, key: str) -> tuple[Path, Path, Path]:
        folder = self.root / key[:2]
        return folder / f"{key}.cubin", folder / f"{key}.ptx", folder / f"{key}.json"

    def lookup(self, variant: Variant, key: str | None = None) -> Artefact | None:
        """The stored artefact of ``variant``; ``None`` when absent or corrupt (then it is compiled again)."""
        key = key or self.key(variant)
        cubin, ptx, meta_path = self._paths(key)
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
                return None
            if _sha(cubin.read_bytes()) != meta["cubin_sha256"] or _sha(ptx.read_bytes()) != meta["ptx_sha256"]:
                return None
            return Artefact(key=key, cubin=cubin, ptx=ptx, log=str(meta.get("log", "")),
                            compiler=str(meta.get("compiler", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def build(self, variant: Variant, key: str | None = None) -> Artefact:
        """Compile ``variant`` now and store it.

        Raises
        ------
        CompileFailed
            NVRTC rejected the source (the message carries NVRTC's log).
        """
        key = key or self.key(variant)
        for verbose, no_cache in OPTION_LADDER:  # down a step while NVRTC does not know an option
            options = variant.nvrtc_options(verbose=verbose, no_cache=no_cache)
            out = self.compiler(variant.text, variant.filename, options)
            if out.status != NVRTC_ERROR_INVALID_OPTION:
                break
        if not out.ok:
            first = next((ln.strip() for ln in out.log.splitlines() if "error" in ln.lower()),
                         out.log.strip().splitlines()[0] if out.log.strip() else f"NVRTC status {out.status}")
            raise CompileFailed(f"NVRTC failed on {variant.filename} {' '.join(variant.options)}: {first}")
        cubin, ptx, meta_path = self._paths(key)
        try:
            cubin.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(cubin, out.cubin)
            _write_atomic(ptx, out.ptx.encode())
            meta = {"format": FORMAT_VERSION, "key": key, "compiler": self.compiler.version,
                    "filename": variant.filename, "options": options, "arch": variant.arch,
                    "log": out.log, "cubin_sha256": _sha(out.cubin), "ptx_sha256": _sha(out.ptx.encode()),
                    "cubin_bytes": len(out.cubin), "ptx_bytes": len(out.ptx.encode())}
            _write_atomic(meta_path, json.dumps(meta, sort_keys=True, indent=1).encode())
        except OSError as exc:
            raise CompileCacheError(f"cannot write the compile cache {self.root} ({exc}); free disk space or set "
                                    f"{ENV_CACHE} to a writable folder.") from None
        return Artefact(key=key, cubin=cubin, ptx=ptx, log=out.log, compiler=self.compiler.version)

    def get(self, variant: Variant, key: str | None = None) -> tuple[Artefact, bool]:
        """``(artefact, hit)``: the stored artefact, or a fresh compilation (``hit`` False)."""
        key = key or self.key(variant)
        found = self.lookup(variant, key)
        if found is not None:
            return found, True
        return self.build(variant, key), False


# -- the parallel precompile -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class FeatureDevice:
    """What static features need to know about the GPU."""

    arch: str
    sm_count: int | None


@dataclass(frozen=True)
class _Task:
    root: Path
    compiler: Any
    variant: Variant
    key: str
    cases: tuple[tuple[int, Case], ...]
    device: FeatureDevice | None


@dataclass
class _Result:
    key: str
    artefact: Artefact | None
    error: str | None
    hit: bool
    features: dict[int, dict[str, Any]]
    warnings: list[tuple[str, str]]
    pid: int


def _work(task: _Task) -> _Result:
    cache = CompileCache(task.root, compiler=task.compiler)
    try:
        artefact, hit = cache.get(task.variant, task.key)
    except CompileFailed as exc:
        return _Result(task.key, None, exc.detail, False, {}, [], os.getpid())
    features: dict[int, dict[str, Any]] = {}
    warnings: list[tuple[str, str]] = []
    if task.device is not None and task.cases:
        features, warnings = artefact_features(artefact, task.variant.text, [c for _, c in task.cases],
                                               task.device, [i for i, _ in task.cases])
    return _Result(task.key, artefact, None, hit, features, warnings, os.getpid())


@dataclass
class Precompiled:
    """The outcome of :func:`precompile`.

    Attributes
    ----------
    artefacts : dict
        Variant key -> :class:`Artefact`.
    failures : dict
        Variant key -> NVRTC's message (each case of that variant becomes a ``compile_error`` row).
    features : list
        Per case given, its static-feature columns (``None`` where none were asked for).
    compiled, hits : int
        Variants compiled now / found in the cache.
    workers : set of int
        Process ids that did the work (the fan-out).
    warnings : list of str
        Every warning of this call about the features, in order (the same warning is printed once per
        process; this list holds it for each call, so a caller can say why a case's columns are missing).
    """

    artefacts: dict[str, Artefact] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    features: list[dict[str, Any] | None] = field(default_factory=list)
    compiled: int = 0
    hits: int = 0
    workers: set[int] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


def precompile(cache: CompileCache, arch: str, cases: Sequence[Case] = (), sources: Iterable[KernelSource] = (),
               *, features: FeatureDevice | None = None, jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> Precompiled:
    """Compile every distinct variant of ``cases`` and ``sources`` for ``arch`` that the cache lacks.

    With ``features`` (the GPU's arch and SM count), also compute each case's static-feature columns in the
    workers, from the artefacts. Variants are spread over ``jobs`` processes (default :func:`default_jobs`;
    a ``spawn`` pool, since the caller may already hold a CUDA context); with one job or one variant the
    work runs in this process.
    """
    by_key: dict[str, tuple[Variant, list[tuple[int, Case]]]] = {}
    variants: dict[tuple, tuple[str, Variant]] = {}

    def add(source: KernelSource) -> str:
        ident = (str(source.path), source.define_options(), tuple(source.options))
        if ident not in variants:
            variant = Variant.of(source, arch)
            variants[ident] = (cache.key(variant), variant)
        key, variant = variants[ident]
        by_key.setdefault(key, (variant, []))
        return key

    for i, case in enumerate(cases):
        by_key[add(case.source)][1].append((i, case))
    for source in sources:
        add(source)
    tasks = [_Task(cache.root, cache.compiler, v, k, tuple(cs), features) for k, (v, cs) in by_key.items()]
    out = Precompiled(features=[None] * len(cases))
    jobs = min(jobs or default_jobs(), len(tasks))
    for done, result in enumerate(_run(tasks, jobs), start=1):
        out.workers.add(result.pid)
        if result.artefact is None:
            out.failures[result.key] = result.error or "NVRTC failed"
            if features is not None:  # compile_error rows: no features to look for elsewhere
                for i, _case in by_key[result.key][1]:
                    out.features[i] = {}
        else:
            out.artefacts[result.key] = result.artefact
            out.hits += result.hit
            out.compiled += not result.hit
        for i, cols in result.features.items():
            out.features[i] = cols
        for warn_key, message in result.warnings:
            out.warnings.append(message)
            _warn_once(warn_key, message)
        if progress is not None:
            progress(done, len(tasks))
    return out


def describe_case_features(cache: CompileCache, device: FeatureDevice, case: Case,
                           columns: dict[str, Any] | None) -> str:
    """Why ``case``'s static-feature ``columns`` (from :func:`precompile`) are what they are, in a few lines for
    a failure message: its variant's cache entry (compiler, the entries and registers of the ptxas report in
    NVRTC's log, the PTX's entries, the log's first lines), and the columns recomputed here, in this process,
    from the same artefact, with the warnings that computation gives."""
    variant = Variant.of(case.source, device.arch)
    got = f"l={columns.get('l')!r} nreg={columns.get('nreg')!r}" if columns else f"no columns ({columns!r})"
    head = f"{case.source.kernel} {dict(case.sizes)} grid {tuple(case.grid)} block {tuple(case.block)}: {got}"
    artefact = cache.lookup(variant)
    if artefact is None:
        return f"{head}\n  no cache entry for {variant.filename} {' '.join(variant.options)} under {cache.root}"
    report = {name: res.registers for name, res in artefact.resources().items()}
    try:
        entries = ", ".join(parse_ptx(artefact.ptx_text()).entries) or "none"
    except KgpubenchError as exc:
        entries = f"unreadable ({exc})"
    again, warnings = artefact_features(artefact, variant.text, [case], device, [0])
    cols = again.get(0) or {}
    log = [ln.rstrip() for ln in artefact.log.splitlines() if ln.strip()]
    return "\n".join([
        head,
        f"  compiler {artefact.compiler}; ptxas report (entry: registers) {report or 'none'}; PTX entries {entries}",
        f"  recomputed in this process: l={cols.get('l')!r} nreg={cols.get('nreg')!r}"
        + "".join(f"\n  warning: {message}" for _key, message in warnings),
        f"  log ({len(log)} lines): " + (" | ".join(log[:6]) if log else "empty"),
    ])


def _run(tasks: list[_Task], jobs: int) -> Iterable[_Result]:
    if jobs <= 1 or len(tasks) <= 1:
        yield from map(_work, tasks)
        return
    chunk = max(1, min(8, len(tasks) // (4 * jobs)))
    done = 0
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context()) as pool:
            for result in pool.map(_work, tasks, chunksize=chunk):
                done += 1
                yield result
    except BrokenProcessPool as exc:
        # E.g. a script without an ``if __name__ == "__main__":`` guard, which every worker re-imports.
        print(f"warning: the compile worker processes failed ({exc}); compiling the remaining {len(tasks) - done} "
              "variants in this process. Guard the calling script's top level with "
              "`if __name__ == \"__main__\":` to compile in parallel.", file=sys.stderr)
        yield from map(_work, tasks[done:])


def _pool_context() -> Any:
    """``forkserver`` where there is one (workers fork from a fresh server that imported only this package,
    never the caller's main script or its CUDA context), else ``spawn``."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        preload = ["kgpubench.measure.compile_cache", "kgpubench.measure.features_link"]
        if "cupy" in sys.modules:  # imported once in the server instead of once per worker (no CUDA context)
            preload.append("cupy.cuda.nvrtc")
        ctx.set_forkserver_preload(preload)
        return ctx
    return multiprocessing.get_context("spawn")
