"""The CUDA toolchain: finding nvcc/ptxas, compiling to PTX, ptxas resource reports, the disk cache.

Discovery order (the first that has the needed program and supports the architecture wins):
``$KGPUBENCH_NVCC`` (path to an nvcc), ``nvcc``/``ptxas`` on ``PATH``, ``$CUDA_HOME/bin``,
``$CUDA_PATH/bin``, the pip wheel ``nvidia-cuda-nvcc`` (``site-packages/nvidia/cu13/bin`` or
``nvidia/cuda_nvcc/bin``; ``pip install "kgpubench[features]"``), ``/usr/local/cuda*/bin``.
CUDA 13 dropped sm_50..sm_72: a toolchain of major version 13 or later is skipped for those, so an
older toolkit elsewhere (on ``PATH`` or ``$KGPUBENCH_NVCC``) can serve sm_70.

Cache: ``$KGPUBENCH_CACHE_DIR`` or ``~/.cache/kgpubench/features``; one JSON file per key, written
atomically. Toolchain versions are remembered per binary (path, size, mtime) so that a cache hit runs
no program at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from kgpubench.errors import ToolchainError

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
ENV_CACHE = "KGPUBENCH_CACHE_DIR"
INSTALL_HINT = ('install the CUDA compiler with `pip install "kgpubench[features]"` (the nvidia-cuda-nvcc '
                "wheel), or put a CUDA toolkit's bin folder on PATH, or set KGPUBENCH_NVCC=/path/to/nvcc")


class CompileError(ToolchainError):
    """nvcc or ptxas rejected the input; the message carries the compiler's own message."""


@dataclass(frozen=True)
class Toolchain:
    """nvcc and/or ptxas of one CUDA installation and its version (e.g. ``"13.0.88"``)."""

    nvcc: str | None
    ptxas: str | None
    version: str

    @property
    def major(self) -> int:
        """Major CUDA version."""
        return int(self.version.split(".")[0])

    def supports(self, arch: str) -> bool:
        """Whether this toolchain can compile for ``arch`` (CUDA 13 starts at sm_75)."""
        return not (self.major >= 13 and arch_number(arch) < 75)


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


def _candidate_dirs() -> list[Path]:
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
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia")
        for loc in (spec.submodule_search_locations or []) if spec else []:
            for sub in ("cu13", "cu12", "cuda_nvcc"):
                dirs.append(Path(loc) / sub / "bin")
    except (ImportError, ValueError):
        pass
    dirs.append(Path("/usr/local/cuda/bin"))
    dirs.extend(sorted(Path("/usr/local").glob("cuda-*/bin"), reverse=True))
    unique: dict[str, Path] = {}
    for d in dirs:
        if d.is_dir():
            unique.setdefault(str(d.resolve()), d)
    return list(unique.values())


_VERSION_MEMO: dict[tuple, str] = {}


def _version(program: Path) -> str:
    st = program.stat()
    key = (str(program), st.st_size, st.st_mtime_ns)
    if key in _VERSION_MEMO:
        return _VERSION_MEMO[key]
    store = DiskCache(cache_dir())
    disk_key = hashlib.sha256(json.dumps(key).encode()).hexdigest()
    hit = store.get("toolchain-" + disk_key)
    if hit is None:
        try:
            out = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60,
                                 check=False)
        except OSError as exc:
            raise ToolchainError(f"cannot run {program} ({exc}); {INSTALL_HINT}.") from None
        m = re.search(r"V(\d+\.\d+\.\d+)", out.stdout) or re.search(r"release (\d+\.\d+)", out.stdout)
        if not m:
            raise ToolchainError(f"{program} --version printed no CUDA version ({out.stdout.strip()[:200]!r}); "
                                 f"expected 'Cuda compilation tools, release X.Y, VX.Y.Z'. {INSTALL_HINT}.")
        hit = {"version": m.group(1)}
        store.put("toolchain-" + disk_key, hit)
    _VERSION_MEMO[key] = hit["version"]
    return hit["version"]


def find_toolchain(arch: str = "sm_90", *, need: str = "nvcc") -> Toolchain:
    """Find a toolchain that has ``need`` (``"nvcc"`` or ``"ptxas"``) and supports ``arch``.

    Raises
    ------
    ToolchainError
        None found (the message says how to install one), or none supports ``arch``.
    """
    seen_versions = []
    for d in _candidate_dirs():
        nvcc, ptxas = d / "nvcc", d / "ptxas"
        program = nvcc if need == "nvcc" else ptxas
        if not program.is_file():
            continue
        tc = Toolchain(nvcc=str(nvcc) if nvcc.is_file() else None, ptxas=str(ptxas) if ptxas.is_file() else None,
                       version=_version(program))
        if tc.supports(arch):
            return tc
        seen_versions.append(f"{tc.version} ({d})")
    if seen_versions:
        raise ToolchainError(f"no CUDA toolchain here supports {arch}: found {', '.join(seen_versions)}; CUDA 13 "
                             f"dropped sm_50..sm_72. Install CUDA 12.x and set {ENV_NVCC}=/path/to/cuda-12/bin/nvcc, "
                             "or pick --arch sm_75 or newer.")
    raise ToolchainError(f"neither nvcc nor ptxas was found ({need} is needed); {INSTALL_HINT}.")


def compile_to_ptx(source: str, *, filename: str, kernel: str, arch: str, defines: dict[str, str],
                   options: tuple[str, ...], include_dirs: tuple[str, ...], toolchain: Toolchain) -> str:
    """Compile CUDA ``source`` to PTX with ``nvcc -ptx -lineinfo``; return the PTX text.

    Raises
    ------
    CompileError
        nvcc failed: the message names the file and kernel and carries nvcc's message.
    """
    if toolchain.nvcc is None:
        raise ToolchainError(f"compiling {filename} needs nvcc, and the toolchain found has only ptxas; "
                             f"{INSTALL_HINT}.")
    with tempfile.TemporaryDirectory(prefix="kgpubench-nvcc-") as tmp:
        src = Path(tmp) / (Path(filename).name if filename.endswith(".cu") else "kernel.cu")
        src.write_text(source)
        out = Path(tmp) / "out.ptx"
        cmd = [toolchain.nvcc, "-ptx", "-lineinfo", f"-arch={arch}", "-o", str(out)]
        cmd += [f"-D{k}" if v is None or v == "" else f"-D{k}={v}" for k, v in sorted(defines.items())]
        cmd += [f"-I{d}" for d in include_dirs] + list(options) + [str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, check=False)
        if proc.returncode != 0 or not out.is_file():
            message = (proc.stderr + proc.stdout).replace(str(src), filename).strip()
            raise CompileError(f"nvcc could not compile {filename} (kernel {kernel}, {arch}, "
                               f"defines {defines or '{}'}):\n{message}")
        return out.read_text()


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
    """The feature cache folder: ``$KGPUBENCH_CACHE_DIR`` or ``~/.cache/kgpubench/features``."""
    env = os.environ.get(ENV_CACHE)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kgpubench" / "features"


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
            with os.fdopen(fd, "w") as fh:
                json.dump(value, fh)
            os.replace(tmp, path)
        except OSError:
            pass


def resources_to_dict(res: Resources) -> dict:
    """JSON form of :class:`Resources`."""
    return asdict(res)
