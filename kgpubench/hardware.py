"""GPU specifications: a curated table of vendor figures, looked up by the name a device reports.

One :class:`GpuSpec` per GPU model. Figures come from the vendor data sheets and whitepapers named in each
row's ``source``; where a figure is not printed there, it is derived from printed ones and the row says how.
Conventions shared by every row:

- ``memory_bytes``: the data-sheet capacity in GiB (vendors' "GB" for device memory) times 2**30.
- ``smem_per_sm_bytes``: the most shared memory one SM can hold (CUDA ``sharedMemPerMultiprocessor``, from
  the CUDA C++ Programming Guide's compute-capability table); on AMD the LDS one CU can use (64 KiB).
- ``clock_sm_mhz``: the data sheet's maximum (boost) clock; ``clock_mem_mhz``: the per-pin data rate divided by
  two (the convention NVML reports), so ``bandwidth = 2 * clock_mem_mhz * memory_bus_bits / 8 / 1000`` GB/s.
- ``peak_fp32_gflops``: the vendor figure; it equals ``cores * fp32_ops_per_clock * clock_sm_mhz / 1000``
  within a few percent (``fp32_ops_per_clock`` is 2 for one FMA per core per clock, 4 for RDNA3 dual issue).
- AMD Instinct MI250X: each of its two GCDs is a separate HIP device, so the row describes one GCD (half the
  package's CUs, memory, bandwidth, L2 and peak), which is what a kernel runs on.

Look-ups (:func:`find_gpu`, :func:`lookup_gpu`, :func:`gpu_columns`) ignore case, spaces, punctuation and
the vendor words NVIDIA, AMD, GeForce and Tesla, and accept each row's aliases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgpubench.errors import unknown_name

GiB = 2**30
MiB = 2**20
KiB = 2**10

# Column names of kgpubench/schema/common.py::gpu_columns, in order.
GPU_COLUMNS = (
    "gpu_name", "gpu_vendor", "gpu_architecture", "gpu_compute_capability", "gpu_sm_count", "gpu_cores",
    "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes", "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz",
    "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops",
)


@dataclass(frozen=True)
class GpuSpec:
    """Specifications of one GPU model (see the module docstring for the conventions).

    Parameters
    ----------
    name : str
        The name the device reports (CUDA ``cudaGetDeviceProperties().name`` / NVML, or HIP).
    vendor : {"nvidia", "amd"}
    architecture : str
        Lower-case family name (``ampere``, ``hopper``, ``cdna2``, ...).
    compute_capability : str or None
        CUDA compute capability; None for AMD.
    sm_count : int
        Streaming multiprocessors (NVIDIA) or compute units (AMD).
    cores : int
        CUDA cores or stream processors.
    memory_bytes, memory_bus_bits : int
        Device memory and memory interface width.
    memory_bandwidth_gbs : float
        Peak device-memory bandwidth (data sheet).
    l2_bytes, smem_per_sm_bytes : int
        L2 cache; shared memory (LDS) per SM (CU).
    clock_sm_mhz, clock_mem_mhz : float
        Maximum SM clock; memory clock (per-pin data rate / 2).
    peak_fp32_gflops : float
        Peak fp32 throughput (vendor figure).
    fp32_ops_per_clock : int
        fp32 operations per core per clock behind the peak (2, or 4 with dual issue).
    source : str
        The documents the figures come from, and how any derived figure was derived.
    aliases : tuple of str
        Other names the GPU goes by (short names, older driver spellings).
    """

    name: str
    vendor: str
    architecture: str
    compute_capability: str | None
    sm_count: int
    cores: int
    memory_bytes: int
    memory_bus_bits: int
    memory_bandwidth_gbs: float
    l2_bytes: int
    smem_per_sm_bytes: int
    clock_sm_mhz: float
    clock_mem_mhz: float
    peak_fp32_gflops: float
    source: str
    fp32_ops_per_clock: int = 2
    aliases: tuple[str, ...] = field(default=())

    def columns(self) -> dict[str, Any]:
        """The values of the common GPU columns (``gpu_name`` ... ``gpu_peak_fp32_gflops``)."""
        return {
            "gpu_name": self.name, "gpu_vendor": self.vendor, "gpu_architecture": self.architecture,
            "gpu_compute_capability": self.compute_capability, "gpu_sm_count": self.sm_count,
            "gpu_cores": self.cores, "gpu_memory_bytes": self.memory_bytes,
            "gpu_memory_bandwidth_gbs": float(self.memory_bandwidth_gbs), "gpu_l2_bytes": self.l2_bytes,
            "gpu_smem_per_sm_bytes": self.smem_per_sm_bytes, "gpu_clock_sm_mhz": float(self.clock_sm_mhz),
            "gpu_clock_mem_mhz": float(self.clock_mem_mhz), "gpu_peak_fp32_gflops": float(self.peak_fp32_gflops),
        }


_CC_SMEM = {"5.0": 64 * KiB, "7.0": 96 * KiB, "7.5": 64 * KiB, "8.0": 164 * KiB, "8.6": 100 * KiB,
            "8.9": 100 * KiB, "9.0": 228 * KiB}
_SMEM_SRC = "shared memory per SM: CUDA C++ Programming Guide, compute capability table"


def _nv(name: str, arch: str, cc: str, sms: int, per_sm: int, mem_gib: float, bus: int, bw: float, l2: int,
        boost: float, mem_clock: float, peak: float, source: str, aliases: tuple[str, ...] = ()) -> GpuSpec:
    return GpuSpec(name=name, vendor="nvidia", architecture=arch, compute_capability=cc, sm_count=sms,
                   cores=sms * per_sm, memory_bytes=int(mem_gib * GiB), memory_bus_bits=bus,
                   memory_bandwidth_gbs=bw, l2_bytes=l2, smem_per_sm_bytes=_CC_SMEM[cc], clock_sm_mhz=boost,
                   clock_mem_mhz=mem_clock, peak_fp32_gflops=peak, source=f"{source}; {_SMEM_SRC}",
                   aliases=aliases)


_A100 = {"arch": "ampere", "cc": "8.0", "sms": 108, "per_sm": 64, "bus": 5120, "l2": 40 * MiB, "boost": 1410.0,
         "peak": 19500.0}
_A100_SRC = "NVIDIA A100 Tensor Core GPU data sheet; NVIDIA A100 Tensor Core GPU Architecture whitepaper"
_H100_SRC = "NVIDIA H100 Tensor Core GPU data sheet; NVIDIA H100 Tensor Core GPU Architecture whitepaper"
_V100 = {"arch": "volta", "cc": "7.0", "sms": 80, "per_sm": 64, "bus": 4096, "bw": 900.0, "l2": 6 * MiB,
         "mem_clock": 877.0}
_V100_SRC = "NVIDIA Tesla V100 GPU data sheet; NVIDIA Tesla V100 GPU Architecture whitepaper"
_V100_SXM2 = dict(_V100, boost=1530.0, peak=15700.0, source=_V100_SRC)
_V100_PCIE = dict(_V100, boost=1380.0, peak=14000.0, source=_V100_SRC)
_AMPERE_GA10X_SRC = "NVIDIA Ampere GA102 GPU Architecture whitepaper"
_ADA_SRC = "NVIDIA Ada GPU Architecture whitepaper"
_TURING_SRC = "NVIDIA Turing GPU Architecture whitepaper"

_NVIDIA: tuple[GpuSpec, ...] = (
    _nv("NVIDIA A100-PCIE-40GB", mem_gib=40, bw=1555.0, mem_clock=1215.0,
        source=_A100_SRC, aliases=("A100 PCIe 40GB", "A100-PCIE-40GB", "A100 PCIe"), **_A100),
    _nv("NVIDIA A100-SXM4-40GB", mem_gib=40, bw=1555.0, mem_clock=1215.0,
        source=_A100_SRC, aliases=("A100 SXM4 40GB", "A100 SXM 40GB"), **_A100),
    _nv("NVIDIA A100-SXM4-80GB", mem_gib=80, bw=2039.0, mem_clock=1593.0,
        source=_A100_SRC, aliases=("A100 SXM4 80GB", "A100 SXM 80GB", "A100 80GB SXM"), **_A100),
    _nv("NVIDIA H100 80GB HBM3", "hopper", "9.0", 132, 128, 80, 5120, 3352.0, 50 * MiB, 1980.0, 2619.0, 67000.0,
        _H100_SRC + " (H100 SXM5; memory clock derived from the 3.35 TB/s bandwidth and the 5120-bit bus)",
        aliases=("H100 SXM", "H100 SXM5", "H100 SXM5 80GB", "NVIDIA H100 SXM5 80GB")),
    _nv("NVIDIA H100 PCIe", "hopper", "9.0", 114, 128, 80, 5120, 2039.0, 50 * MiB, 1755.0, 1593.0, 51000.0,
        _H100_SRC + " (H100 PCIe; memory clock derived from the 2 TB/s bandwidth and the 5120-bit bus)",
        aliases=("H100 PCIe 80GB", "NVIDIA H100 PCIe 80GB")),
    _nv("NVIDIA H200", "hopper", "9.0", 132, 128, 141, 6144, 4800.0, 50 * MiB, 1980.0, 3125.0, 67000.0,
        "NVIDIA H200 Tensor Core GPU data sheet (H200 SXM; SM count, clock and L2 as the GH100 of the H100 "
        "SXM5 per the H100 whitepaper; memory clock derived from the 4.8 TB/s bandwidth and the 6144-bit bus)",
        aliases=("H200 SXM", "NVIDIA H200 141GB HBM3e", "H200 141GB")),
    _nv("Tesla V100-SXM2-16GB", mem_gib=16, aliases=("V100 SXM2 16GB", "Tesla V100 SXM2 16GB", "V100"),
        **_V100_SXM2),
    _nv("Tesla V100-SXM2-32GB", mem_gib=32, aliases=("V100 SXM2 32GB", "Tesla V100 SXM2 32GB", "V100 32GB"),
        **_V100_SXM2),
    _nv("Tesla V100-PCIE-16GB", mem_gib=16, aliases=("V100 PCIe 16GB", "V100 PCIe"), **_V100_PCIE),
    _nv("Tesla V100-PCIE-32GB", mem_gib=32, aliases=("V100 PCIe 32GB",), **_V100_PCIE),
    _nv("Tesla T4", "turing", "7.5", 40, 64, 16, 256, 320.0, 4 * MiB, 1590.0, 5000.0, 8100.0,
        "NVIDIA T4 Tensor Core GPU data sheet; " + _TURING_SRC, aliases=("T4", "NVIDIA T4")),
    _nv("NVIDIA L4", "ada", "8.9", 58, 128, 24, 192, 300.0, 48 * MiB, 2040.0, 6250.0, 30300.0,
        "NVIDIA L4 Tensor Core GPU data sheet; " + _ADA_SRC, aliases=("L4",)),
    _nv("NVIDIA L40S", "ada", "8.9", 142, 128, 48, 384, 864.0, 96 * MiB, 2520.0, 9000.0, 91600.0,
        "NVIDIA L40S GPU data sheet; " + _ADA_SRC, aliases=("L40S",)),
    _nv("NVIDIA GeForce RTX 4090", "ada", "8.9", 128, 128, 24, 384, 1008.0, 72 * MiB, 2520.0, 10500.0, 82600.0,
        _ADA_SRC + " (GeForce RTX 4090 specifications)", aliases=("RTX 4090",)),
    _nv("NVIDIA GeForce RTX 2080 SUPER", "turing", "7.5", 48, 64, 8, 256, 496.0, 4 * MiB, 1815.0, 7750.0, 11150.0,
        "NVIDIA GeForce RTX 2080 SUPER specifications; " + _TURING_SRC + " (TU104 L2)",
        aliases=("RTX 2080 Super", "GeForce RTX 2080 SUPER", "RTX2080 Super")),
    _nv("NVIDIA GeForce RTX 2080 Ti", "turing", "7.5", 68, 64, 11, 352, 616.0, 5632 * KiB, 1545.0, 7000.0,
        13450.0, _TURING_SRC + " (RTX 2080 Ti reference board: 1545 MHz boost, 14 Gbps GDDR6)",
        aliases=("RTX 2080 Ti", "GeForce RTX 2080 Ti", "RTX_2080_Ti")),
    _nv("NVIDIA GeForce RTX 3060 Laptop GPU", "ampere", "8.6", 30, 128, 6, 192, 336.0, 3 * MiB, 1703.0, 7000.0,
        13082.0, "NVIDIA GeForce RTX 3060 Laptop GPU specifications (boost 1283-1703 MHz by laptop power; the "
        "top of the range is used and the peak is derived from it); " + _AMPERE_GA10X_SRC + " (GA106)",
        aliases=("RTX 3060 Laptop", "RTX 3060 Laptop GPU", "RTX_3060_laptop")),
    _nv("NVIDIA GeForce RTX 3090", "ampere", "8.6", 82, 128, 24, 384, 936.0, 6 * MiB, 1695.0, 9750.0, 35580.0,
        _AMPERE_GA10X_SRC + " (GeForce RTX 3090)", aliases=("RTX 3090", "GeForce RTX 3090", "RTX_3090")),
    _nv("NVIDIA RTX A4000", "ampere", "8.6", 48, 128, 16, 256, 448.0, 4 * MiB, 1560.0, 7000.0, 19200.0,
        "NVIDIA RTX A4000 data sheet; " + _AMPERE_GA10X_SRC + " (GA104 L2)", aliases=("RTX A4000", "A4000")),
    _nv("NVIDIA GeForce 940MX", "maxwell", "5.0", 4, 128, 2, 64, 40.1, 1 * MiB, 861.0, 2506.0, 881.7,
        "the GM107 (512-core, GDDR5) variant of the GeForce 940MX used by seed 000 (its table 6: 4 SMs x 128 "
        "cores, 1 MB L2, 2 GB); clocks 795/861 MHz and the 5 Gbps, 64-bit GDDR5 from the TechPowerUp GPU "
        "database; peak derived as 512 x 2 x 861 MHz (NVIDIA's product page gives only the 384-core GM108 part)",
        aliases=("GeForce 940MX", "940MX")),
)

_AMD: tuple[GpuSpec, ...] = (
    GpuSpec(name="AMD Instinct MI250X", vendor="amd", architecture="cdna2", compute_capability=None, sm_count=110,
            cores=7040, memory_bytes=64 * GiB, memory_bus_bits=4096, memory_bandwidth_gbs=1638.4,
            l2_bytes=8 * MiB, smem_per_sm_bytes=64 * KiB, clock_sm_mhz=1700.0, clock_mem_mhz=1600.0,
            peak_fp32_gflops=23950.0,
            source="AMD Instinct MI250X data sheet (package: 220 CUs, 128 GB HBM2e, 3.2768 TB/s, 47.9 TFLOPS "
                   "fp32 vector, 1700 MHz) halved to one GCD, the unit HIP exposes as a device; ROCm GPU "
                   "specifications table (110 CUs and 8 MB L2 per GCD, 64 KiB LDS)",
            aliases=("MI250X", "Instinct MI250X", "AMD Instinct MI250X/MI250")),
    GpuSpec(name="AMD Radeon PRO W6600", vendor="amd", architecture="rdna2", compute_capability=None, sm_count=28,
            cores=1792, memory_bytes=8 * GiB, memory_bus_bits=128, memory_bandwidth_gbs=224.0, l2_bytes=2 * MiB,
            smem_per_sm_bytes=64 * KiB, clock_sm_mhz=2903.0, clock_mem_mhz=7000.0, peak_fp32_gflops=10400.0,
            source="AMD Radeon PRO W6600 product specifications (28 CUs, 2903 MHz peak engine clock, 10.4 TFLOPS, "
                   "8 GB GDDR6 at 14 Gbps on 128 bits); AMD RDNA 2 architecture (Navi 23: 2 MB L2, LDS 128 KiB "
                   "per WGP = 64 KiB per CU)",
            aliases=("Radeon PRO W6600", "W6600")),
    GpuSpec(name="AMD Radeon PRO W7800", vendor="amd", architecture="rdna3", compute_capability=None, sm_count=70,
            cores=4480, memory_bytes=32 * GiB, memory_bus_bits=256, memory_bandwidth_gbs=576.0, l2_bytes=6 * MiB,
            smem_per_sm_bytes=64 * KiB, clock_sm_mhz=2499.0, clock_mem_mhz=9000.0, peak_fp32_gflops=45200.0,
            fp32_ops_per_clock=4,
            source="AMD Radeon PRO W7800 product specifications (70 CUs, 4480 stream processors, 2499 MHz boost, "
                   "45.2 TFLOPS fp32 with dual issue, 32 GB GDDR6 at 18 Gbps on 256 bits); ROCm GPU "
                   "specifications table (6 MB L2, LDS 128 KiB per WGP = 64 KiB per CU)",
            aliases=("Radeon PRO W7800", "W7800")),
)

GPUS: tuple[GpuSpec, ...] = _NVIDIA + _AMD
"""Every curated GPU, NVIDIA first."""

_VENDOR_WORDS = re.compile(r"\b(nvidia|amd|geforce|tesla)\b")


def normalize_name(name: str) -> str:
    """The look-up form of a device name: lower case, vendor words and everything but [a-z0-9] removed."""
    text = _VENDOR_WORDS.sub(" ", name.lower().replace("_", " "))
    return re.sub(r"[^a-z0-9]", "", text)


def _index() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for spec in GPUS:
        for name in (spec.name, *spec.aliases):
            key = normalize_name(name)
            if key in index and index[key] is not spec:
                raise ValueError(f"GPU table: name {name!r} is ambiguous ({index[key].name} and {spec.name})")
            index[key] = spec
    return index


_INDEX = _index()


def find_gpu(name: str) -> GpuSpec | None:
    """The spec of the GPU a device reports as ``name`` (case/spacing/vendor-word tolerant), or None."""
    return _INDEX.get(normalize_name(name or ""))


def lookup_gpu(name: str) -> GpuSpec:
    """Like :func:`find_gpu`, but an unknown name raises ``UnknownNameError`` with close matches."""
    spec = find_gpu(name)
    if spec is None:
        raise unknown_name("GPU (kgpubench.hardware table)", name, [g.name for g in GPUS])
    return spec


def gpu_columns(name: str) -> dict[str, Any]:
    """Values of the common GPU columns for the GPU called ``name``.

    Parameters
    ----------
    name : str
        The device name (``cupy.cuda.runtime.getDeviceProperties(0)["name"]``, NVML, HIP) or an alias.

    Returns
    -------
    dict
        ``gpu_name`` (the table's canonical name), ``gpu_vendor``, ``gpu_architecture``,
        ``gpu_compute_capability``, ``gpu_sm_count``, ``gpu_cores``, ``gpu_memory_bytes``,
        ``gpu_memory_bandwidth_gbs``, ``gpu_l2_bytes``, ``gpu_smem_per_sm_bytes``, ``gpu_clock_sm_mhz``,
        ``gpu_clock_mem_mhz``, ``gpu_peak_fp32_gflops``.

    Raises
    ------
    kgpubench.errors.UnknownNameError
        When the GPU is not in the table (the message lists close names).
    """
    return lookup_gpu(name).columns()


__all__ = ["GPUS", "GPU_COLUMNS", "GpuSpec", "find_gpu", "gpu_columns", "lookup_gpu", "normalize_name"]
