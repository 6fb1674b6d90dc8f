"""The curated GPU specification table: coverage, internal consistency, hand-checked facts, look-ups."""

from __future__ import annotations

import re

import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.hardware import GPU_COLUMNS, GPUS, find_gpu, gpu_columns, lookup_gpu
from kgpubench.schema.common import gpu_columns as schema_gpu_columns

REQUIRED = [  # benchmark_hub's 8 GPUs, then the seeds' and the common data-centre GPUs
    "NVIDIA A100-PCIE-40GB", "NVIDIA RTX A4000", "AMD Instinct MI250X", "AMD Radeon PRO W6600",
    "AMD Radeon PRO W7800", "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 3060 Laptop GPU",
    "NVIDIA GeForce RTX 3090", "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA A100-SXM4-40GB",
    "Tesla V100-SXM2-32GB", "Tesla T4", "NVIDIA L4", "NVIDIA L40S", "NVIDIA GeForce RTX 4090",
    "NVIDIA GeForce RTX 2080 SUPER", "NVIDIA GeForce 940MX",
]


def test_every_required_gpu_is_present():
    names = {g.name for g in GPUS}
    assert [n for n in REQUIRED if n not in names] == []


@pytest.mark.parametrize("gpu", GPUS, ids=lambda g: g.name)
def test_row_is_internally_consistent(gpu):
    peak = gpu.cores * gpu.fp32_ops_per_clock * gpu.clock_sm_mhz / 1000
    assert gpu.peak_fp32_gflops == pytest.approx(peak, rel=0.02)
    bandwidth = 2 * gpu.clock_mem_mhz * gpu.memory_bus_bits / 8 / 1000
    assert gpu.memory_bandwidth_gbs == pytest.approx(bandwidth, rel=0.01)
    assert gpu.cores % gpu.sm_count == 0
    assert (gpu.compute_capability is None) == (gpu.vendor == "amd")
    assert gpu.source and gpu.architecture == gpu.architecture.lower()


@pytest.mark.parametrize("gpu", GPUS, ids=lambda g: g.name)
def test_columns_obey_the_schema_rules(gpu):
    cols = {c.name: c for c in schema_gpu_columns()}
    values = gpu.columns()
    assert tuple(values) == GPU_COLUMNS == tuple(cols)
    for name, value in values.items():
        col = cols[name]
        if value is None:
            assert col.nullable, name
            continue
        if col.values:
            assert value in col.values
        if col.pattern:
            assert re.fullmatch(col.pattern, value)
        if col.min is not None:
            assert value > col.min if col.min_exclusive else value >= col.min


def test_hand_checked_facts():
    a100 = lookup_gpu("NVIDIA A100-PCIE-40GB")
    assert (a100.sm_count, a100.cores, a100.memory_bytes, a100.l2_bytes) == (108, 6912, 40 * 2**30, 40 * 2**20)
    assert a100.smem_per_sm_bytes == 167936 and a100.compute_capability == "8.0"
    assert lookup_gpu("H100 SXM").smem_per_sm_bytes == 233472
    assert lookup_gpu("Tesla T4").smem_per_sm_bytes == 65536
    mi = lookup_gpu("MI250X")  # one GCD: half the package
    assert (mi.vendor, mi.compute_capability, mi.sm_count, mi.memory_bytes) == ("amd", None, 110, 64 * 2**30)
    assert lookup_gpu("940MX").cores == 512  # the seed's GM107 part: 4 SMs x 128


@pytest.mark.parametrize("name", ["NVIDIA GeForce RTX 3090", "nvidia geforce rtx 3090", "RTX_3090",
                                  "GeForce RTX 3090", "  RTX-3090 "])
def test_lookup_is_tolerant(name):
    assert find_gpu(name).name == "NVIDIA GeForce RTX 3090"


def test_unknown_gpu():
    assert find_gpu("") is None and find_gpu("RTX 9999") is None
    with pytest.raises(UnknownNameError, match="Did you mean 'NVIDIA L40S'"):
        gpu_columns("NVIDIA L40")
    assert gpu_columns("a100 pcie")["gpu_name"] == "NVIDIA A100-PCIE-40GB"
