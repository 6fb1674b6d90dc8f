"""The CUDA toolchain: finding a compiler and ptxas per architecture, compiling to PTX, ptxas reports, the cache.

Two kinds of toolchain turn CUDA C++ into PTX:

* **nvcc** (``nvcc -ptx -lineinfo``). Candidates, in order: ``$KGPUBENCH_NVCC`` (path to an nvcc),
  ``nvcc``/``ptxas`` on ``PATH``, ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``, the pip wheels
  (``site-packages/nvidia/cu13/bin``, ``nvidia/cu12/bin``, ``nvidia/cuda_nvcc/bin``), ``/usr/local/cuda*/bin``.
* **NVRTC + ptxas** (no host compiler needed): ``libnvrtc`` loaded with :mod:`ctypes` compiles the
  device-only ``.cu`` files of this project with ``-lineinfo`` (what the harness itself compiles with,
  through CuPy), and a ptxas of the same or a newer release assembles the PTX. Candidates:
  ``$KGPUBENCH_NVRTC`` (path to ``libnvrtc.so*``), then the pip wheels ``nvidia-cuda-nvrtc-cu12``
  (``nvidia/cuda_nvrtc/lib``) or ``nvidia-cuda-nvrtc`` 13 (``nvidia/cu13/lib``); ptxas comes from the
  same candidate folders as nvcc (the ``nvidia-cuda-nvcc-cu12`` wheel ships ``nvidia/cuda_nvcc/bin/ptxas``).
  ``pip install "kgpubench[features]"`` installs the CUDA 12 pair, which covers sm_50 to sm_120.

Choice per architecture: the first nvcc that supports it, else the first NVRTC that supports it with a
matching ptxas. CUDA 13 dropped sm_50..sm_72, so on a machine whose nvcc is CUDA 13, sm_70 goes to a
CUDA 12 nvcc (``$KGPUBENCH_NVCC``) or to NVRTC 12 + ptxas 12. ``$KGPUBENCH_COMPILER`` (``auto``, ``nvcc``
or ``nvrtc``) forces one kind. :attr:`Toolchain.version` names what was used (``"13.0.88"`` for nvcc,
``"nvrtc 12.9.86 / ptxas 12.9.86"`` for NVRTC); it is part of every cache key.

Cache: ``features/`` of kgpubench's cache root (``$KGPUBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/kgpubench``, else
``~/.cache/kgpubench``); one JSON file per key, written
atomically. Toolchain versions are remembered per binary (path, size, mtime) so that a cache hit runs
no program and loads no library.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import CompileError, ToolchainError
from kgpubench.foundation.files import file_mode
from kgpubench.resources import cache_home

__all__ = [
    "INSTALL_HINT",
    "CompileError",
    "DiskCache",
    "Resources",
    "Toolchain",
    "arch_number",
    "cache_dir",
    "compile_to_ptx",
    "find_toolchain",
    "parse_ptxas_report",
    "ptxas_resources",
]

ENV_NVCC = "KGPUBENCH_NVCC"
ENV_NVRTC = "KGPUBENCH_NVRTC"
ENV_COMPILER = "KGPUBENCH_COMPILER"
#: Sub-folders of the ``nvidia`` namespace package that hold nvcc/ptxas (pip wheels).
WHEEL_BIN_DIRS = ("cu13/bin", "cu12/bin", "cuda_nvcc/bin")
#: Sub-folders of the ``nvidia`` namespace package that hold libnvrtc (pip wheels).
WHEEL_NVRTC_DIRS = ("cuda_nvrtc/lib", "cu13/lib", "cu12/lib")
INSTALL_HINT = ('install the CUDA compilers with `pip install "kgpubench[features]"` (the CUDA 12 wheels '
                "nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12: NVRTC and ptxas, sm_50 to sm_120, no host "
                "compiler needed), or put a CUDA toolkit's bin folder on PATH, or set KGPUBENCH_NVCC=/path/to/nvcc")


def _major(version: str) -> int:
    m = re.search(r"\d+", version)
    return int(m.group()) if m else 0


def _release(version: str) -> tuple[int, int]:
    m = re.search(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (_major(version), 0)


def _release_supports(version: str, arch: str) -> bool:
    """CUDA 13 and later start at sm_75; CUDA 12 covers sm_50 and up."""
    return not (_major(version) >= 13 and arch_number(arch) < 75)


@dataclass(frozen=True)
class Toolchain:
    """What compiles CUDA C++ to PTX (``nvcc``, or ``nvrtc``: a path to libnvrtc), ptxas, and the version.

    ``version`` is the nvcc (or ptxas) version, e.g. ``"13.0.88"``, or ``"nvrtc 12.9.86 / ptxas 12.9.86"``
    when NVRTC compiles.
    """

    nvcc: str | None
    ptxas: str | None
    version: str
    nvrtc: str | None = None

    @property
    def major(self) -> int:
        """Major CUDA version."""
        return _major(self.version)

    @property
    def kind(self) -> str:
        """``"nvcc"``, ``"nvrtc"`` or ``"ptxas"`` (assembler only)."""
        return "nvcc" if self.nvcc else "nvrtc" if self.nvrtc else "ptxas"

    def supports(self, arch: str) -> bool:
        """Whether this toolchain can compile for ``arch`` (CUDA 13 starts at sm_75)."""
        return _release_supports(self.version, arch)


@dataclass(frozen=True)
class Resources:
    """What ``ptxas -v`` reports for one entry (bytes; ``None`` where ptxas printed nothing)."""

    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    local_bytes: int
    const_bytes: int | None
    barriers: int | None


def arch_number(arch: str) -> int:
    """``"sm_90"`` / ``"sm_90a"`` / ``"compute_80"`` / ``"9.0"`` -> 90 / 90 / 80 / 90."""
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)[af]?", arch.strip()) or re.fullmatch(r"(\d+)\.(\d)", arch.strip())
    if not m:
        raise ToolchainError(f"architecture {arch!r} is not of the form sm_XY (e.g. sm_80, sm_90).")
    return int("".join(m.groups()))


def _nvidia_roots() -> list[Path]:
    """Folders of the ``nvidia`` namespace package (where NVIDIA's pip wheels unpack)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return [Path(loc) for loc in ((spec.submodule_search_locations or []) if spec else [])]


def _system_dirs() -> list[Path]:
    """CUDA toolkits installed in the usual place."""
    return [Path("/usr/local/cuda/bin")] + sorted(Path("/usr/local").glob("cuda-*/bin"), reverse=True)


def _candidate_dirs() -> list[Path]:
    """Folders that may hold nvcc and/or ptxas, in the order of preference (see the module docstring)."""
    dirs: list[Path] = []
    if os.environ.get(ENV_NVCC):
        dirs.append(Path(os.environ[ENV_NVCC]).expanduser().parent)
    for prog in ("nvcc", "ptxas"):
        found = shutil.which(prog)
        if found:
            dirs.append(Path(found).parent)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    dirs.extend(root / sub for root in _nvidia_roots() for sub in WHEEL_BIN_DIRS)
    dirs.extend(_system_dirs())
    unique: dict[str, Path] = {}
    for d in dirs:
        if d.is_dir():
            unique.setdefault(str(d.resolve()), d)
    return list(unique.values())


def _nvrtc_candidates() -> list[Path]:
    """libnvrtc files: ``$KGPUBENCH_NVRTC``, then the wheels (``libnvrtc.so.<major>``; not ``.alt``/builtins)."""
    libs: list[Path] = []
    if os.environ.get(ENV_NVRTC):
        libs.append(Path(os.environ[ENV_NVRTC]).expanduser())
    for root in _nvidia_roots():
        for sub in WHEEL_NVRTC_DIRS:
            libs.extend(sorted((root / sub).glob("libnvrtc.so*"), key=lambda p: (len(p.name), p.name)))
    unique: dict[str, Path] = {}
    for lib in libs:
        if lib.is_file():
            unique.setdefault(str(lib.resolve()), lib)
    return list(unique.values())


_VERSION_MEMO: dict[tuple, str] = {}


def _remembered(path: Path, kind: str, probe: Callable[[Path], str]) -> str:
    """``probe(path)``, remembered in memory and on disk per (path, size, mtime)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns) if kind == "program" else (kind, str(path), st.st_size,
                                                                                st.st_mtime_ns)
    if key in _VERSION_MEMO:
        return _VERSION_MEMO[key]
    store = DiskCache(cache_dir())
    disk_key = "toolchain-" + hashlib.sha256(json.dumps(key).encode()).hexdigest()
    hit = store.get(disk_key)
    if hit is None:
        hit = {"version": probe(path)}
        store.put(disk_key, hit)
    _VERSION_MEMO[key] = hit["version"]
    return hit["version"]


def _probe_program(program: Path) -> str:
    try:
        out = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        raise ToolchainError(f"cannot run {program} ({exc}); {INSTALL_HINT}.") from None
    m = re.search(r"V(\d+\.\d+\.\d+)", out.stdout) or re.search(r"release (\d+\.\d+)", out.stdout)
    if not m:
        raise ToolchainError(f"{program} --version printed no CUDA version ({out.stdout.strip()[:200]!r}); "
                             f"expected 'Cuda compilation tools, release X.Y, VX.Y.Z'. {INSTALL_HINT}.")
    return m.group(1)


def _version(program: Path) -> str:
    """Version of an nvcc or ptxas binary (``"12.9.86"``)."""
    return _remembered(program, "program", _probe_program)


def _nvrtc_version(lib: Path) -> str:
    """Version of a libnvrtc (``"12.9.86"``; see :func:`_probe_nvrtc`)."""
    return _remembered(lib, "nvrtc", _probe_nvrtc)


def _find_program(name: str, arch: str, skipped: list[str]) -> Toolchain | None:
    for d in _candidate_dirs():
        nvcc, ptxas = d / "nvcc", d / "ptxas"
        program = nvcc if name == "nvcc" else ptxas
        if not program.is_file():
            continue
        tc = Toolchain(nvcc=str(nvcc) if nvcc.is_file() else None, ptxas=str(ptxas) if ptxas.is_file() else None,
                       version=_version(program))
        if tc.supports(arch):
            return tc
        skipped.append(f"{name} {tc.version} ({d})")
    return None


def _find_nvrtc(arch: str, skipped: list[str]) -> Toolchain | None:
    """The first NVRTC supporting ``arch``, with a ptxas that supports it and is not older.

    Among the fitting ptxas: the same major release first, then the closest release, then folder order.
    """
    for lib in _nvrtc_candidates():
        version = _nvrtc_version(lib)
        if not _release_supports(version, arch):
            skipped.append(f"NVRTC {version} ({lib})")
            continue
        fitting, older = [], []
        for order, d in enumerate(_candidate_dirs()):
            ptxas = d / "ptxas"
            if not ptxas.is_file():
                continue
            pv = _version(ptxas)
            if _release_supports(pv, arch) and _release(pv) >= _release(version):
                fitting.append((_major(pv) != _major(version), _release(pv), order, str(ptxas), pv))
            else:
                older.append(f"{pv} ({d})")
        if fitting:
            *_, ptxas_path, pv = min(fitting)
            return Toolchain(nvcc=None, ptxas=ptxas_path, nvrtc=str(lib), version=f"nvrtc {version} / ptxas {pv}")
        skipped.append(f"NVRTC {version} ({lib}) without a ptxas of release {'.'.join(map(str, _release(version)))}"
                       f" or newer that supports {arch} (ptxas found: {', '.join(older) or 'none'}; the "
                       f"nvidia-cuda-nvcc-cu{_major(version)} wheel has one)")
    return None


def find_toolchain(arch: str = "sm_90", *, need: str = "nvcc") -> Toolchain:
    """Find a toolchain for ``arch`` that can compile CUDA C++ (``need="nvcc"``) or assemble PTX (``"ptxas"``).

    For ``need="nvcc"`` the result compiles with nvcc (``nvcc`` set) or with NVRTC (``nvcc`` is ``None``,
    ``nvrtc`` set); both come with a ptxas. nvcc wins where it supports ``arch``, unless
    ``$KGPUBENCH_COMPILER`` says ``nvrtc``.

    Raises
    ------
    ToolchainError
        None found (the message says what to install), or none supports ``arch``.
    """
    arch_number(arch)
    choice = os.environ.get(ENV_COMPILER, "auto").strip().lower() or "auto"
    if choice not in ("auto", "nvcc", "nvrtc"):
        raise ToolchainError(f"{ENV_COMPILER}={choice!r}: expected auto, nvcc or nvrtc (or leave it unset).")
    skipped: list[str] = []
    if need == "ptxas":
        found = _find_program("ptxas", arch, skipped)
    else:
        found = _find_program("nvcc", arch, skipped) if choice != "nvrtc" else None
        if found is None and choice != "nvcc":
            found = _find_nvrtc(arch, skipped)
    if found is not None:
        return found
    forced = f" ({ENV_COMPILER}={choice})" if choice != "auto" else ""
    if skipped:
        raise ToolchainError(f"no CUDA toolchain here supports {arch}{forced}: found {'; '.join(skipped)}. "
                             "CUDA 13 dropped sm_50..sm_72: install the CUDA 12 compilers with "
                             '`pip install "kgpubench[features]"` (nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12),'
                             f" or set {ENV_NVCC}=/path/to/cuda-12/bin/nvcc, or pick --arch sm_75 or newer.")
    what = "ptxas" if need == "ptxas" else "nvcc or NVRTC"
    raise ToolchainError(f"no CUDA compiler was found ({what} is needed{forced}); {INSTALL_HINT}.")


def compile_to_ptx(source: str, *, filename: str, kernel: str, arch: str, defines: dict[str, str],
                   options: tuple[str, ...], include_dirs: tuple[str, ...], toolchain: Toolchain) -> str:
    """Compile CUDA ``source`` to PTX for ``arch`` with ``-lineinfo`` (nvcc, or NVRTC); return the PTX text.

    With NVRTC the source is compiled as device code only (the kernels of this project have no host
    code), for ``compute_XY``; ``options`` go to NVRTC unchanged (the harness passes the same ones).

    Raises
    ------
    CompileError
        The compiler failed: the message names the file and kernel and carries the compiler's message.
    """
    flags = [f"-D{k}" if v is None or v == "" else f"-D{k}={v}" for k, v in sorted(defines.items())]
    flags += [f"-I{d}" for d in include_dirs] + list(options)
    where = f"{filename} (kernel {kernel}, {arch}, defines {defines or '{}'})"
    if toolchain.nvcc is None:
        if toolchain.nvrtc is None:
            raise ToolchainError(f"compiling {filename} needs nvcc or NVRTC, and the toolchain found has only "
                                 f"ptxas; {INSTALL_HINT}.")
        target = "compute_" + arch.strip().split("_", 1)[-1] if "_" in arch else f"compute_{arch_number(arch)}"
        ok, ptx, log = _nvrtc_compile(toolchain.nvrtc, source, filename,
                                      [f"--gpu-architecture={target}", "-lineinfo"] + flags)
        if not ok:
            raise CompileError(f"NVRTC ({toolchain.version}) could not compile {where}:\n{log.strip()}")
        return ptx
    with tempfile.TemporaryDirectory(prefix="kgpubench-nvcc-") as tmp:
        src = Path(tmp) / (Path(filename).name if filename.endswith(".cu") else "kernel.cu")
        src.write_text(source)
        out = Path(tmp) / "out.ptx"
        cmd = [toolchain.nvcc, "-ptx", "-lineinfo", f"-arch={arch}", "-o", str(out)] + flags + [str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, check=False)
        if proc.returncode != 0 or not out.is_file():
            message = (proc.stderr + proc.stdout).replace(str(src), filename).strip()
            raise CompileError(f"nvcc could not compile {where}:\n{message}")
        return out.read_text()


_NVRTC_LIBS: dict[str, object] = {}


def _nvrtc_builtins(path: str) -> list[Path]:
    """The ``libnvrtc-builtins`` beside the libnvrtc at ``path``, of its major version (none: an empty list).

    The ``nvidia-cuda-nvrtc`` 13 wheel's libnvrtc has no search path for it, so a compile through :mod:`ctypes`
    fails ("failed to open libnvrtc-builtins.so.13.0") unless it was loaded first; a CUDA toolkit's finds it
    through the loader's path either way."""
    lib = Path(path)
    major = lib.name.split(".so.")[1].split(".")[0] if ".so." in lib.name else ""
    return sorted(lib.parent.glob(f"libnvrtc-builtins.so.{major}*" if major else "libnvrtc-builtins.so*"))


def _load_nvrtc(path: str):
    """``ctypes.CDLL`` of a libnvrtc, with the signatures used here (loaded once per process)."""
    lib = _NVRTC_LIBS.get(path)
    if lib is not None:
        return lib
    try:
        for helper in _nvrtc_builtins(path):  # a pip wheel's libnvrtc finds its builtins only when already loaded
            ctypes.CDLL(str(helper), mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise ToolchainError(f"cannot load NVRTC {path} ({exc}); reinstall it (pip install --force-reinstall "
                             f"nvidia-cuda-nvrtc-cu12) or point {ENV_NVRTC} at a working libnvrtc.so.") from None
    p, sz, cp = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
    sigs = {"nvrtcVersion": [ctypes.POINTER(ctypes.c_int)] * 2,
            "nvrtcCreateProgram": [ctypes.POINTER(p), cp, cp, ctypes.c_int, ctypes.POINTER(cp), ctypes.POINTER(cp)],
            "nvrtcCompileProgram": [p, ctypes.c_int, ctypes.POINTER(cp)],
            "nvrtcGetProgramLogSize": [p, ctypes.POINTER(sz)], "nvrtcGetProgramLog": [p, ctypes.c_char_p],
            "nvrtcGetPTXSize": [p, ctypes.POINTER(sz)], "nvrtcGetPTX": [p, ctypes.c_char_p],
            "nvrtcDestroyProgram": [ctypes.POINTER(p)], "nvrtcGetErrorString": [ctypes.c_int]}
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    _NVRTC_LIBS[path] = lib
    return lib


@dataclass(frozen=True)
class NvrtcRun:
    """One NVRTC compilation through :mod:`ctypes`: ``status`` 0 on success, else NVRTC's result code with
    ``error`` its message (``created`` False when the program could not even be created)."""

    status: int
    error: str = ""
    log: str = ""
    ptx: str = ""
    cubin: bytes = b""
    created: bool = True


def nvrtc_run(path: str, source: str, name: str, options: list[str] | tuple[str, ...], *,
              cubin: bool = False) -> NvrtcRun:
    """Compile ``source`` with the libnvrtc at ``path``: the log, the PTX and (``cubin``) the CUBIN."""
    lib = _load_nvrtc(path)
    prog = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
    if status != 0:
        return NvrtcRun(status=status, error=lib.nvrtcGetErrorString(status).decode(), created=False)
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        if status != 0:
            return NvrtcRun(status=status, error=lib.nvrtcGetErrorString(status).decode(), log=log)
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        lib.nvrtcGetPTX(prog, buf)
        binary = b""
        if cubin:
            lib.nvrtcGetCUBINSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
            lib.nvrtcGetCUBIN.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
            raw = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetCUBIN(prog, raw)
            binary = raw.raw[:size.value]
        return NvrtcRun(status=0, log=log, ptx=buf.value.decode(), cubin=binary)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _nvrtc_compile(path: str, source: str, name: str, options: list[str]) -> tuple[bool, str, str]:
    """Compile ``source`` with the libnvrtc at ``path``; return (success, PTX, log)."""
    run = nvrtc_run(path, source, name, options)
    if not run.created:
        return False, "", f"nvrtcCreateProgram: {run.error}"
    if run.status != 0:
        return False, "", f"{run.error}\n{run.log}"
    return True, run.ptx, run.log


def _probe_nvrtc(lib: Path) -> str:
    """The full version of a libnvrtc: ``nvrtcVersion`` gives X.Y, the PTX header of a tiny program X.Y.Z."""
    handle = _load_nvrtc(str(lib))
    major, minor = ctypes.c_int(), ctypes.c_int()
    if handle.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
        raise ToolchainError(f"NVRTC {lib} did not report its version; reinstall it or unset {ENV_NVRTC}.")
    ok, ptx, _ = _nvrtc_compile(str(lib), 'extern "C" __global__ void kgpubench_probe() {}', "probe.cu", [])
    m = re.search(r"V(\d+\.\d+\.\d+)", ptx) if ok else None
    full = m.group(1) if m else ""
    return full if full.startswith(f"{major.value}.{minor.value}.") else f"{major.value}.{minor.value}"


def ptxas_resources(ptx: str, *, arch: str, toolchain: Toolchain) -> dict[str, Resources]:
    """Assemble ``ptx`` with ``ptxas -v`` for ``arch``; return the resources of every entry."""
    if toolchain.ptxas is None:
        raise ToolchainError(f"ptxas is needed for register and shared-memory figures; {INSTALL_HINT}.")
    with tempfile.TemporaryDirectory(prefix="kgpubench-ptxas-") as tmp:
        src = Path(tmp) / "in.ptx"
        src.write_text(ptx)
        proc = subprocess.run([toolchain.ptxas, "-v", f"-arch={arch}", "-o", str(Path(tmp) / "out.cubin"),
                               str(src)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CompileError(f"ptxas could not assemble the PTX for {arch}:\n{(proc.stderr + proc.stdout).strip()}")
    return parse_ptxas_report(proc.stderr + proc.stdout)


def parse_ptxas_report(text: str) -> dict[str, Resources]:
    """Parse ``ptxas -v`` output into ``{entry name: Resources}``."""
    entries: dict[str, dict] = {}
    current = props = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            entries.setdefault(current, {})
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            props = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and props in entries:
            entries[props].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            rec = entries[current]
            rec["registers"] = int(m.group(1))
            for key, pattern in (("smem", r"(\d+) bytes smem"), ("cmem", r"(\d+) bytes cmem\[0\]"),
                                 ("lmem", r"(\d+) bytes lmem"), ("barriers", r"used (\d+) barriers")):
                found = re.search(pattern, line)
                if found:
                    rec[key] = int(found.group(1))
    return {name: Resources(registers=r.get("registers", 0), shared_bytes=r.get("smem", 0),
                            stack_bytes=r.get("stack", 0), spill_store_bytes=r.get("spill_st", 0),
                            spill_load_bytes=r.get("spill_ld", 0), local_bytes=r.get("lmem", 0),
                            const_bytes=r.get("cmem"), barriers=r.get("barriers"))
            for name, r in entries.items() if "registers" in r}


def cache_dir() -> Path:
    """The feature cache folder: ``features/`` of kgpubench's cache root (:func:`kgpubench.resources.cache_home`)."""
    return cache_home("features")


class DiskCache:
    """JSON values on disk, one file per key, written atomically (temp file + rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored value, or ``None`` (also for an unreadable entry, which is then recomputed)."""
        try:
            return json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict) -> None:
        """Store ``value`` (a JSON-able dict); a failure to write is not an error (the cache is optional)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            os.fchmod(fd, file_mode())  # the mode any file of the user gets, not mkstemp's 0600
            with os.fdopen(fd, "w") as fh:
                json.dump(value, fh)
            os.replace(tmp, path)
        except OSError:
            pass
