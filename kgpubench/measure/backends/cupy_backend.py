"""The CuPy backend: NVRTC compilation through the compile cache (CUBINs loaded with ``cupy.RawModule``),
CUDA-event timing, device query.

CuPy is imported inside the functions that use it; importing this module needs only NumPy.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgpubench.errors import OptionError
from kgpubench.measure.backends.base import (
    Capabilities,
    CaseFailure,
    CompileFailed,
    DeviceInfo,
    HostClock,
    Infeasible,
    failure_for_code,
    uuid_hash,
)
from kgpubench.measure.backends.cupti_clock import CuptiActivity
from kgpubench.measure.backends.cupy_timing import (
    COLD_TIMERS,
    DRAIN_US,
    FLUSH_MODES,
    Blocker,
    CupySampler,
    L2Flusher,
)
from kgpubench.measure.compile_cache import CompileCache, CupyNvrtc, FeatureDevice, Variant, default_jobs, precompile
from kgpubench.measure.power import open_nvml_device
from kgpubench.measure.suite import Case, Dim3, KernelSource

DEFAULT_SMEM_PER_BLOCK = 48 * 1024


def cupy_available() -> tuple[bool, str]:
    """Whether CuPy imports and sees at least one GPU; the reason when not."""
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken CUDA install raising at import
        return False, (f"CuPy is not usable ({type(exc).__name__}); install the GPU extra "
                       "(`pip install \"kgpubench[gpu]\"` or `kgpubench[gpu13]` for CUDA 13) on a machine "
                       "with an NVIDIA GPU.")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - any CUDA failure means no usable GPU
        return False, f"no NVIDIA GPU is usable here (CUDA runtime: {type(exc).__name__}); run on a GPU machine."
    if count < 1:
        return False, "no NVIDIA GPU found (CUDA reports 0 devices); run on a GPU machine."
    return True, ""


def check_cold_timer(cold_timer: str, l2_flush: str = "read") -> None:
    """Refuse an unknown cold timer, or a CUPTI timer with the write flush (CUPTI's samples are marked by the read
    flush's kernel), before CuPy or CUPTI is needed."""
    if cold_timer not in COLD_TIMERS:
        raise OptionError(f"unknown cold timer {cold_timer!r} (--cold-timer); use one of {', '.join(COLD_TIMERS)}")
    if uses_cupti(cold_timer) and l2_flush != "read":
        raise OptionError(f"the {cold_timer} cold timer needs the read L2 flush, not {l2_flush!r}; use "
                          "l2_flush='read'")


def uses_cupti(cold_timer: str) -> bool:
    """Whether the cold timer reads CUPTI's kernel records (``cupti``, ``cupti-drained``)."""
    return cold_timer.startswith("cupti")


class CupyKernel:
    """A kernel from a compiled ``cupy.RawModule``, callable as ``kernel(grid, block, args, shared_mem=0)``."""

    def __init__(self, module: Any, name: str) -> None:
        self._module = module
        self.name = name
        self._fn = module.get_function(name)
        self.max_threads_per_block = int(self._fn.max_threads_per_block)
        self._smem_set = DEFAULT_SMEM_PER_BLOCK

    def __call__(self, grid: Dim3, block: Dim3, args: tuple, shared_mem: int = 0) -> None:
        if shared_mem > self._smem_set:
            self._fn.max_dynamic_shared_size_bytes = int(shared_mem)
            self._smem_set = int(shared_mem)
        self._fn(tuple(grid), tuple(block), args, shared_mem=int(shared_mem))

    def function(self, name: str) -> CupyKernel:
        return CupyKernel(self._module, name)

    @property
    def registers(self) -> int:
        """Registers per thread of the compiled kernel."""
        return int(self._fn.num_regs)


class CupyBackend:
    """Backend on a real GPU through CuPy. Rows it produces have ``source = "measured"``.

    Capabilities: CUDA graphs, ahead-of-time compilation and PTX always; power and clocks when NVML
    (nvidia-ml-py) reaches this GPU.
    """

    name = "cupy"
    row_source = "measured"
    clock = HostClock()

    def __init__(self, device: int = 0, compile_cache_dir: Path | None = None, l2_flush: str = "read",
                 cold_timer: str = "events") -> None:
        if l2_flush not in FLUSH_MODES:
            raise ValueError(f"unknown L2 flush mode {l2_flush!r}; use one of {', '.join(FLUSH_MODES)}")
        check_cold_timer(cold_timer, l2_flush)
        import cupy

        self.l2_flush = l2_flush  # the L2 flush of cold samples (cupy_timing.FLUSH_MODES)
        self.cold_timer = cold_timer  # how cold samples are timed (cupy_timing.COLD_TIMERS)
        self.xp = cupy
        self._index = int(device)
        cupy.cuda.Device(self._index).use()
        self._modules: dict[str, Any] = {}
        self._precompiled: dict[str, Any] = {}  # variant key -> Artefact, or the NVRTC message of a failure
        self._keys: dict[tuple, tuple[str, Any]] = {}  # (path, defines, options) -> (variant key, Variant)
        self._compile_cache_dir = compile_cache_dir
        self._compile_cache: Any = None
        self._info: DeviceInfo | None = None
        self._nvml: Any = None
        self._nvml_tried = False
        self._blocker: Any = None
        self._flusher: Any = None
        # set to a list, it receives every CUPTI-timed cold sample read both ways (timing_agreement's proof)
        self.cold_pairs: list | None = None
        # CUPTI's collector, before any measuring: a machine where it cannot record fails here, in one line
        self._activity = CuptiActivity.get() if uses_cupti(cold_timer) else None

    @property
    def capabilities(self) -> Capabilities:
        """Graphs, precompile and PTX; power and clocks with NVML (:meth:`nvml`)."""
        with_nvml = self.nvml() is not None
        return Capabilities(graphs=True, power=with_nvml, clocks=with_nvml, precompile=True, ptx=True)

    # -- compilation ---------------------------------------------------------------------------------
    @property
    def compile_cache(self) -> Any:
        """The :class:`~kgpubench.measure.compile_cache.CompileCache` (NVRTC through CuPy), made on first use."""
        if self._compile_cache is None:
                self._compile_cache = CompileCache(self._compile_cache_dir, compiler=CupyNvrtc.find())
        return self._compile_cache

    def precompile(self, cases: Sequence[Case] = (), *, sources: Sequence[KernelSource] = (),
                   features: bool = True) -> list[dict[str, Any] | None]:
        """Compile every variant of ``cases`` and ``sources`` ahead of time, over all CPU cores, through the
        disk cache; with ``features``, also each case's static-feature columns (returned per case, else
        ``None``). Later :meth:`compile` calls only load the CUBINs."""
        dev = self.device()
        jobs = default_jobs()
        t0 = time.perf_counter()
        done = precompile(self.compile_cache, dev.arch, cases, sources,
                          features=FeatureDevice(dev.arch, dev.sm_count) if features else None, jobs=jobs)
        self._precompiled.update(done.artefacts)
        self._precompiled.update(done.failures)
        if done.compiled or done.failures:
            print(f"compiled {done.compiled} kernel variants ({done.hits} cached, {len(done.failures)} failed) on "
                  f"{len(done.workers)} processes in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return done.features

    def _artefact(self, source: KernelSource) -> tuple[str, Any]:
        cache = self.compile_cache
        ident = (str(source.path), source.define_options(), tuple(source.options))
        if ident not in self._keys:
            variant = Variant.of(source, self.device().arch)
            self._keys[ident] = (cache.key(variant), variant)
        key, variant = self._keys[ident]
        found = self._precompiled.get(key)
        if isinstance(found, str):
            raise CompileFailed(found)
        if found is None:
            found, _hit = cache.get(variant, key)  # raises CompileFailed
            self._precompiled[key] = found
        return key, found

    def compile(self, source: KernelSource) -> CupyKernel:
        """Load ``source``'s CUBIN for this device (compiled ahead of time, or now through the cache)."""
        import cupy

        key, artefact = self._artefact(source)
        module = self._modules.get(key)
        try:
            if module is None:
                module = cupy.RawModule(path=str(artefact.cubin))
            kernel = CupyKernel(module, source.kernel)
        except Exception as exc:
            failure = self.classify(exc)
            if failure is None:
                raise
            raise failure from exc
        self._modules[key] = module
        return kernel

    def ptx(self, source: KernelSource) -> str:
        """PTX of ``source`` from NVRTC for this device, with line info (for static features without nvcc)."""
        return self._artefact(source)[1].ptx_text()

    # -- timing --------------------------------------------------------------------------------------
    def time_launches(self, fn: Callable[[], None], count: int) -> list[float]:
        """Times in ms of ``count`` back-to-back calls of ``fn``, between consecutive CUDA events."""
        import cupy

        events = [cupy.cuda.Event() for _ in range(count + 1)]
        events[0].record()
        for i in range(count):
            fn()
            events[i + 1].record()
        events[-1].synchronize()
        return [cupy.cuda.get_elapsed_time(events[i], events[i + 1]) for i in range(count)]

    def sampler(self, fn: Callable[[], None], *, method: str, launches: int) -> Any:
        """A protocol-2 sampler of ``fn`` (see :mod:`kgpubench.measure.backends.cupy_timing`)."""
        if self._blocker is None:
            self._blocker = Blocker()
        flusher = None
        if method == "cold":
            if self._flusher is None:
                drain = DRAIN_US if self.cold_timer == "cupti-drained" else 0.0
                self._flusher = L2Flusher(self.device().l2_bytes, self.l2_flush, drain_us=drain)
            flusher = self._flusher
        return CupySampler(fn, method=method, launches=launches, blocker=self._blocker, flusher=flusher,
                           activity=self._activity if method == "cold" else None,
                           pairs=self.cold_pairs if method == "cold" else None)

    def synchronize(self) -> None:
        import cupy

        cupy.cuda.Device(self._index).synchronize()

    def free_memory_bytes(self) -> int:
        import cupy

        pool = cupy.get_default_memory_pool()
        pool.free_all_blocks()
        free, _total = cupy.cuda.runtime.memGetInfo()
        return int(free)

    # -- errors --------------------------------------------------------------------------------------
    def classify(self, exc: BaseException) -> CaseFailure | None:
        """Map a CuPy exception to a row failure by type and CUDA error code; ``None`` if not a case failure."""
        import cupy

        if isinstance(exc, CaseFailure):
            return exc
        if isinstance(exc, cupy.cuda.compiler.CompileException):
            return CompileFailed(f"NVRTC: {type(exc).__name__}")
        if isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
            return Infeasible("out of device memory", code=2)
        code = getattr(exc, "status", None)
        if isinstance(code, int) and isinstance(exc, _cuda_error_types()):
            return failure_for_code(code)
        return None

    # -- device --------------------------------------------------------------------------------------
    def device(self) -> DeviceInfo:
        if self._info is None:
            self._info = self._query()
        return self._info

    def _query(self) -> DeviceInfo:
        import cupy

        rt = cupy.cuda.runtime
        props = rt.getDeviceProperties(self._index)
        attrs = cupy.cuda.Device(self._index).attributes
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        clock_khz = attrs.get("ClockRate") or props.get("clockRate")
        mem_khz = attrs.get("MemoryClockRate") or props.get("memoryClockRate")
        bus = attrs.get("GlobalMemoryBusWidth") or props.get("memoryBusWidth")
        raw_uuid = props.get("uuid")
        nvml = self.nvml()
        uuid_text = _format_uuid(raw_uuid) if raw_uuid else (nvml.uuid() if nvml else None)
        rv = rt.runtimeGetVersion()
        try:
            nv = cupy.cuda.nvrtc.getVersion()
            toolchain = f"nvrtc {nv[0]}.{nv[1]}"
        except Exception:  # noqa: BLE001 - depends on the CUDA install
            toolchain = None
        smem_block = int(props.get("sharedMemPerBlock", DEFAULT_SMEM_PER_BLOCK))
        return DeviceInfo(
            name=name,
            compute_capability=f"{props['major']}.{props['minor']}",
            sm_count=int(props["multiProcessorCount"]),
            memory_bytes=int(props["totalGlobalMem"]),
            l2_bytes=_positive(props.get("l2CacheSize")),
            smem_per_sm_bytes=_positive(props.get("sharedMemPerMultiprocessor")),
            smem_per_block_bytes=smem_block,
            smem_per_block_optin_bytes=int(props.get("sharedMemPerBlockOptin") or smem_block),
            max_threads_per_block=int(props["maxThreadsPerBlock"]),
            max_block_dim=tuple(int(v) for v in props["maxThreadsDim"]),
            max_grid_dim=tuple(int(v) for v in props["maxGridSize"]),
            warp_size=int(props.get("warpSize", 32)),
            clock_sm_mhz=clock_khz / 1000.0 if clock_khz else None,
            clock_mem_mhz=mem_khz / 1000.0 if mem_khz else None,
            memory_bus_width_bits=_positive(bus),
            uuid_hash=uuid_hash(uuid_text) if uuid_text else None,
            driver_version=(nvml.driver_version() if nvml else None) or _version_text(rt.driverGetVersion()),
            cuda_version=_version_text(rv),
            toolchain_version=toolchain,
            cupy_version=cupy.__version__,
        )

    def nvml(self) -> Any | None:
        """The NVML handle of this GPU (matched by PCI bus id), or ``None`` without nvidia-ml-py/NVML."""
        if not self._nvml_tried:
            self._nvml_tried = True
            import cupy

            self._nvml = open_nvml_device(cupy.cuda.Device(self._index).pci_bus_id)
        return self._nvml


def _cuda_error_types() -> tuple[type, ...]:
    """CuPy's CUDA driver and runtime error classes (both carry the error code in ``status``)."""
    import cupy
    from cupy_backends.cuda.api import runtime

    return (cupy.cuda.driver.CUDADriverError, runtime.CUDARuntimeError)


def _positive(value: Any) -> int | None:
    return int(value) if value else None


def _version_text(v: int) -> str:
    """CUDA's integer version (13000) as text (``13.0``)."""
    return f"{v // 1000}.{(v % 1000) // 10}"


def _format_uuid(raw: Any) -> str:
    """A 16-byte UUID as ``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` (NVML's spelling)."""
    data = bytes(raw) if not isinstance(raw, str) else raw.encode("latin-1")
    h = data.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
