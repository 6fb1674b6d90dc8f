"""Compile checks: CUDA source -> PTX -> ptxas for one architecture, through the toolchain chosen for it.

:func:`compile_check` compiles one device-only ``.cu`` (a file or source text) with the toolchain that
:func:`~kgpubench.features.toolchain.find_toolchain` picks for the architecture (nvcc where it supports the
arch, else NVRTC + ptxas from the CUDA 12 wheels, which is how sm_70 works beside a CUDA 13 nvcc), then
assembles the PTX with ``ptxas -v`` for that architecture, so register, shared-memory and other limits of
the target are checked too. :func:`compile_check_many` does the same for many sources (or one source
under many sets of defines) and keeps the number of compiler processes small: with nvcc, one nvcc process
per architecture and option set compiles all of them (each unit is a small wrapper file that ``#define``\\ s
its macros and ``#include``\\ s its source); NVRTC runs in this process anyway. ptxas runs once per unit.

Nothing is cached: a check compiles every time (the feature extraction has its own cache).

Example
-------
>>> from pathlib import Path
>>> from kgpubench.features.check import compile_check
>>> mod = compile_check(Path("collectors/regular/kernels/vector_add.cu"), "sm_70")  # doctest: +SKIP
>>> mod.entries, mod.resources["vector_add"].registers  # doctest: +SKIP
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgpubench.errors import DataFileNotFoundError
from kgpubench.features.toolchain import (
    CompileError,
    Resources,
    Toolchain,
    compile_to_ptx,
    find_toolchain,
    ptxas_resources,
)

__all__ = ["CheckedModule", "CompileUnit", "compile_check", "compile_check_many"]


@dataclass(frozen=True)
class CompileUnit:
    """One thing to compile: a ``.cu`` file (``Path``) or CUDA source text (``str``), its defines and options.

    ``label`` names the unit in error messages (default: the file name and the defines).
    """

    source: Path | str
    defines: Mapping[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    label: str = ""

    def name(self) -> str:
        """The label, or ``"<file> (K=V, ...)"``."""
        if self.label:
            return self.label
        base = self.source.name if isinstance(self.source, Path) else "<source text>"
        defs = ", ".join(f"{k}={v}" for k, v in sorted(self.defines.items()))
        return f"{base} ({defs})" if defs else base


@dataclass(frozen=True)
class CheckedModule:
    """The result of a compile check: the PTX and what ptxas reported for every entry."""

    label: str
    arch: str
    ptx: str
    resources: dict[str, Resources]
    toolchain: Toolchain

    @property
    def entries(self) -> list[str]:
        """Names of the kernel entries ptxas assembled (sorted)."""
        return sorted(self.resources)


def _defines(unit: CompileUnit) -> dict[str, str]:
    """``-D`` semantics: an empty value means 1 (as ``-DNAME`` does)."""
    return {str(k): "1" if v is None or str(v) == "" else str(v) for k, v in unit.defines.items()}


def _text_and_name(unit: CompileUnit) -> tuple[str, str, list[str]]:
    """Source text, file name for messages, and extra include folders (the file's own folder)."""
    if isinstance(unit.source, Path):
        if not unit.source.is_file():
            raise DataFileNotFoundError(f"CUDA source {unit.source} does not exist; expected a .cu file "
                                        f"(compile check of {unit.name()}).")
        return unit.source.read_text(), unit.source.name, [str(unit.source.resolve().parent)]
    return unit.source, "kernel.cu", []


def _compile_one(unit: CompileUnit, arch: str, include_dirs: Sequence[str], toolchain: Toolchain) -> str:
    text, filename, extra = _text_and_name(unit)
    try:
        return compile_to_ptx(text, filename=filename, kernel="(all entries)", arch=arch, defines=_defines(unit),
                              options=tuple(unit.options), include_dirs=tuple(extra) + tuple(include_dirs),
                              toolchain=toolchain)
    except CompileError as exc:
        raise CompileError(f"compile check of {unit.name()} for {arch} failed: {exc}") from None


def _nvcc_batch(units: Sequence[CompileUnit], arch: str, include_dirs: Sequence[str],
                toolchain: Toolchain) -> list[str] | None:
    """PTX of ``units`` (same options) from one nvcc process; ``None`` when nvcc failed."""
    with tempfile.TemporaryDirectory(prefix="kgpubench-check-") as tmp:
        files = []
        for i, unit in enumerate(units):
            text, _, _ = _text_and_name(unit)
            if isinstance(unit.source, Path):
                target = unit.source.resolve()
            else:
                target = Path(tmp) / f"src{i}.cu"
                target.write_text(text)
            lines = [f"#define {k} {v}" for k, v in sorted(_defines(unit).items())]
            wrapper = Path(tmp) / f"unit{i}.cu"
            wrapper.write_text("\n".join(lines + [f'#include "{target}"', ""]))
            files.append(wrapper)
        cmd = [toolchain.nvcc, "-ptx", "-lineinfo", f"-arch={arch}", "-odir", tmp]
        cmd += [f"-I{d}" for d in include_dirs] + list(units[0].options) + [str(f) for f in files]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, check=False)
        outs = [Path(tmp) / f"unit{i}.ptx" for i in range(len(units))]
        if proc.returncode != 0 or not all(p.is_file() for p in outs):
            return None
        return [p.read_text() for p in outs]


def _resources(ptx: str, unit: CompileUnit, arch: str, toolchain: Toolchain) -> dict[str, Resources]:
    try:
        return ptxas_resources(ptx, arch=arch, toolchain=toolchain)
    except CompileError as exc:
        raise CompileError(f"compile check of {unit.name()} for {arch} failed: {exc}") from None


def compile_check_many(units: Sequence[CompileUnit], arch: str, *, include_dirs: Sequence[str] = (),
                       toolchain: Toolchain | None = None) -> list[CheckedModule]:
    """Compile every unit to PTX for ``arch`` and assemble it with ptxas; results in the order of ``units``.

    Parameters
    ----------
    units : sequence of CompileUnit
        Device-only CUDA sources (no host code), each with its defines and options.
    arch : str
        Target, e.g. ``"sm_70"``, ``"sm_80"``, ``"sm_90"``.
    include_dirs : sequence of str
        ``-I`` folders for every unit (a file's own folder is always searched).
    toolchain : Toolchain, optional
        Default: ``find_toolchain(arch)`` (nvcc where it supports ``arch``, else NVRTC + ptxas).

    Returns
    -------
    list of CheckedModule

    Raises
    ------
    ToolchainError
        No toolchain supports ``arch``; the message says what to install (``pip install "kgpubench[features]"``).
    CompileError
        A unit does not compile or does not assemble; the message names the unit and carries the compiler's.
    DataFileNotFoundError
        A ``Path`` source does not exist.
    """
    tc = toolchain if toolchain is not None else find_toolchain(arch, need="nvcc")
    ptx: dict[int, str] = {}
    if tc.nvcc is not None:
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, unit in enumerate(units):
            groups.setdefault(tuple(unit.options), []).append(i)
        for idx in groups.values():
            if len(idx) > 1:
                batch = _nvcc_batch([units[i] for i in idx], arch, include_dirs, tc)
                if batch is not None:
                    ptx.update(zip(idx, batch))
    out = []
    for i, unit in enumerate(units):
        text = ptx[i] if i in ptx else _compile_one(unit, arch, include_dirs, tc)  # one by one: precise errors
        out.append(CheckedModule(label=unit.name(), arch=arch, ptx=text,
                                 resources=_resources(text, unit, arch, tc), toolchain=tc))
    return out


def compile_check(source: Path | str, arch: str = "sm_90", *, defines: Mapping[str, Any] | None = None,
                  options: Sequence[str] = (), include_dirs: Sequence[str] = (),
                  toolchain: Toolchain | None = None) -> CheckedModule:
    """Compile one device-only CUDA source to PTX for ``arch`` and assemble it with ptxas.

    ``source`` is a ``.cu`` file (``Path``) or source text (``str``); ``defines`` become ``-D`` macros (an
    empty value means 1). See :func:`compile_check_many` for the toolchain choice and the errors raised.

    Returns
    -------
    CheckedModule
        ``ptx`` (text), ``resources`` (``{entry: Resources}`` from ``ptxas -v``), ``entries``, ``toolchain``.
    """
    unit = CompileUnit(source=source, defines=dict(defines or {}), options=tuple(options))
    return compile_check_many([unit], arch, include_dirs=include_dirs, toolchain=toolchain)[0]
