"""gpuperfpredict -> `profiles`: real upstream rows hand-checked, counts from PROVENANCE.md, and hostile files
(each refused with one line naming the file, row and column, and nothing written)."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgpubench.errors import DataFileNotFoundError, ImportFormatError
from kgpubench.importers.gpuperfpredict import (
    GPU_LABELS,
    UPSTREAM_COLUMNS,
    UpstreamFile,
    compare_device_info,
    find_files,
    import_table,
    import_to_shard,
)
from kgpubench.schema import get_table, row_ids

pytestmark = pytest.mark.usefixtures("_staged_licence")  # staged folders carry their LICENSE

SNAPSHOT = Path(__file__).resolve().parents[3] / "shared" / "external" / "gpuperfpredict"
needs_snapshot = pytest.mark.skipif(not (SNAPSHOT / "datasets").is_dir(),
                                    reason="../shared/external/gpuperfpredict is not beside this checkout")

# PROVENANCE.md, "Rows per GPU and kernel".
GPUS = ("GTX-680", "Tesla-K20", "Titan", "Quadro", "TitanX", "GTX-970", "GTX-980", "Tesla-P100")
PER_KERNEL = {"bpnn_layerforward_CUDA": 57, "bpnn_adjust_weights_cuda": 57, "calculate_temp": 6400, "kernel": 5270,
              "lud_diagonal": 8448, "lud_perimeter": 8416}
NO_LUD_PERIMETER = ("TitanX", "GTX-970")


def _files(*names: str) -> list[UpstreamFile]:
    return [f for f in find_files(SNAPSHOT) if f.path.name in names]


@needs_snapshot
def test_every_staged_table_has_the_documented_row_count():
    files = find_files(SNAPSHOT)
    counts = {}
    for f in files:  # data lines = lines - header; the tables quote no newlines
        counts[(f.kernel, f.gpu)] = gzip.decompress(f.path.read_bytes()).count(b"\n") - 1
    expected = {(k, g): n for k, n in PER_KERNEL.items() for g in GPUS
                if not (k == "lud_perimeter" and g in NO_LUD_PERIMETER)}
    assert counts == expected
    assert sum(counts.values()) == 212_352
    per_gpu = {g: sum(n for (_, gg), n in counts.items() if gg == g) for g in GPUS}
    assert per_gpu == {"GTX-680": 28_648, "Tesla-K20": 28_648, "Titan": 28_648, "Quadro": 28_648, "TitanX": 20_232,
                       "GTX-970": 20_232, "GTX-980": 28_648, "Tesla-P100": 28_648}


@needs_snapshot
def test_backprop_tables_hand_checked():
    names = [f"{k}-{g}.csv.gz" for k in ("bpnn_layerforward_CUDA", "bpnn_adjust_weights_cuda") for g in GPUS]
    table = import_table(SNAPSHOT, files=_files(*names))
    assert table.num_rows == 16 * 57
    rows = table.to_pylist()
    fwd_980 = [r for r in rows if r["kernel"] == "bpnn_layerforward_CUDA" and r["gpu_name"] == "GeForce GTX 980"]
    fwd_680 = [r for r in rows if r["kernel"] == "bpnn_layerforward_CUDA" and r["gpu_name"] == "GeForce GTX 680"]
    # static.smem: 1.0625 KiB in the GTX-980 file, 1088 bytes in the GTX-680 file: both 1088 bytes.
    assert {r["static_smem_bytes"] for r in fwd_980} == {1088} == {r["static_smem_bytes"] for r in fwd_680}
    # Registers differ by generation (PROVENANCE): 11 on CC 3.x, 18 on GTX-980, 15 on P100, 19 on TitanX.
    regs = {r["gpu_name"]: r["registers_per_thread"] for r in rows if r["kernel"] == "bpnn_layerforward_CUDA"}
    assert regs == {"GeForce GTX 680": 11, "Tesla K20c": 11, "GeForce GTX TITAN": 11, "Quadro K5200": 11,
                    "GeForce GTX TITAN X": 19, "GeForce GTX 970": 19, "GeForce GTX 980": 18,
                    "Tesla P100-PCIE-12GB": 15}
    # Input 8192..65536 step 1024, one launch each; grid 1 x (in1/16), block 16x16.
    assert [r["input_size_1"] for r in fwd_980] == list(range(8192, 65537, 1024))
    assert {(r["grid_x"], r["grid_y"], r["grid_z"]) for r in fwd_980 if r["input_size_1"] == 8192} == {(1, 512, 1)}
    assert {(r["block_x"], r["block_y"], r["block_z"], r["launch_index"]) for r in rows} == {(16, 16, 1, 0)}
    adjust = [r for r in rows if r["kernel"] == "bpnn_adjust_weights_cuda"]
    assert {r["static_smem_bytes"] for r in adjust} == {0} and {r["application"] for r in rows} == {"backprop"}
    # Minimum duration of bpnn_adjust_weights_cuda on Tesla-P100: 5e-06 s (quantised to 1 us) -> 0.005 ms.
    p100 = [r["time_ms"] for r in adjust if r["gpu_name"] == "Tesla P100-PCIE-12GB"]
    assert min(p100) == pytest.approx(0.005, rel=1e-12)
    first = fwd_980[0]
    assert first["timed_unit"] == "kernel-launch" and first["repeats"] == 1 and first["status"] == "ok"
    assert first["upstream_gpu_id"] == 8 and first["upstream_kernel_id"] == 1
    assert first["source"] == "imported:gpuperfpredict" and first["source_license"] == "CC-BY-4.0"
    assert first["source_commit"] == "35b81711089273c775f143ecaeadae03ebf5910a"
    assert first["source_file"] == "datasets/bpnn_layerforward_CUDA-GTX-980.csv"
    assert first["collected_at"] == dt.datetime(2018, 5, 4, tzinfo=dt.timezone.utc)
    assert first["gpu_catalogue_name"] == "GeForce GTX 980" and first["gpu_sm_count"] == 16
    quadro = next(r for r in rows if r["gpu_name"] == "Quadro K5200")
    assert quadro["gpu_catalogue_name"] == "Quadro K5200" and quadro["gpu_cores"] == 2304
    p100_row = next(r for r in rows if r["gpu_name"] == "Tesla P100-PCIE-12GB")
    assert p100_row["gpu_catalogue_name"] == "Tesla P100 PCIe 12 GB"
    assert p100_row["gpu_memory_bytes"] == 12 * 2**30
    # The vectorised row ids are exactly what the schema's row_ids gives.
    assert [r["row_id"] for r in rows[::37]] == row_ids(get_table("profiles"), rows[::37])
    assert len({r["row_id"] for r in rows}) == len(rows)


@needs_snapshot
def test_heartwall_and_hotspot_launch_indices_and_units():
    table = import_table(SNAPSHOT, files=_files("kernel-GTX-980.csv.gz", "calculate_temp-Titan.csv.gz"))
    heart = table.filter(table["kernel"].to_pandas().eq("kernel").to_numpy())
    first = heart.slice(0, 1).to_pylist()[0]
    # Upstream row "9": input 20, duration 1.4e-05 s (the short frame-0 launch), 11.59375 KiB, 40 registers.
    assert (first["input_size_1"], first["launch_index"], first["registers_per_thread"]) == (20, 0, 40)
    assert first["time_ms"] == pytest.approx(0.014, rel=1e-12)
    assert first["static_smem_bytes"] == 11872 and first["prof_warps_launched"] == 408
    assert first["prof_achieved_occupancy"] == pytest.approx(0.364388)
    second = heart.slice(1, 1).to_pylist()[0]
    assert second["launch_index"] == 1 and second["time_ms"] == pytest.approx(13.201, rel=1e-12)
    # heartwall: in1 launches per input (one per frame) -> launch_index 0..in1-1.
    frame = heart.select(["input_size_1", "launch_index"]).to_pandas()
    per_input = frame.groupby("input_size_1")["launch_index"].agg(["count", "max"])
    assert (per_input["count"] == per_input.index).all() and (per_input["max"] == per_input.index - 1).all()
    # hotspot: in2/2 launches per (grid side, iterations).
    hot = table.filter(table["kernel"].to_pandas().eq("calculate_temp").to_numpy()).select(
        ["input_size_1", "input_size_2", "launch_index"]).to_pandas()
    counts = hot.groupby(["input_size_1", "input_size_2"])["launch_index"].agg(["count", "max"]).reset_index()
    assert (counts["count"] == counts["input_size_2"] // 2).all() and (counts["max"] == counts["count"] - 1).all()


@needs_snapshot
def test_device_info_disagreements_with_the_catalogue():
    lines = {d.line() for d in compare_device_info(SNAPSHOT / "datasets" / "deviceInfo.csv")}
    assert "Tesla-K20 `GM`: deviceInfo 4 GB, catalogue 5" in lines  # a K20c has 5 GB
    assert "GTX-970 `max_clock_rate`: deviceInfo 1076 MHz, catalogue 1178" in lines
    assert "Tesla-P100 `bus`: deviceInfo 4096 bits, catalogue 3072" in lines
    assert "Tesla-P100 `theoretical_flops`: deviceInfo 7168 GFLOP/s, catalogue 9526" in lines
    assert not any(line.startswith("GTX-980") for line in lines)  # GTX-980 agrees on every figure


def test_profiler_columns_can_never_be_features():
    from kgpubench.tasks import forbidden_features

    decl = get_table("profiles")
    prof = {c.name for c in decl.columns if c.name.startswith("prof_")}
    assert len(prof) == 66 and all(decl.column(c).measured for c in prof)
    assert prof | {"time_ms", "repeats", "timed_unit"} <= forbidden_features("profiles")
    assert {"registers_per_thread", "static_smem_bytes", "launch_index", "gpu_peak_fp32_gflops"}.isdisjoint(
        forbidden_features("profiles"))


# ----- hostile files ------------------------------------------------------------------------------------------
def _upstream_text(gpu: str = "GTX-680", kernel: str = "calculate_temp", rows: int = 3, *, drop: str | None = None,
                   rename: tuple[str, str] | None = None, edit=None) -> str:
    """A small table in the upstream format (R row names first, quoted header), all rows one hotspot input."""
    kib = GPU_LABELS[gpu][2] == "KiB"
    cols = [c for c in UPSTREAM_COLUMNS if c != drop]
    header = [rename[1] if rename and c == rename[0] else c for c in cols]
    lines = [",".join(f'"{h}"' for h in header)]
    for i in range(rows):
        value = {"": f'"{i + 1}"', "input.size.1": "64", "input.size.2": "256", "duration": "1.2e-05",
                 "grid.x": "6", "grid.y": "6", "block.x": "16", "block.y": "16", "registers.per.thread": "36",
                 "static.smem": "3" if kib else "3072", "device": str(GPU_LABELS[gpu][1]), "name": f'"{kernel}"',
                 "kernel": "6", "gpu_name": f'"{gpu}"'}
        row = {c: value.get(c, "1.5") for c in cols}
        if edit:
            edit(i, row)
        lines.append(",".join(row[c] for c in cols))
    return "\n".join(lines) + "\n"


def _write(tmp_path: Path, text: str, name: str = "calculate_temp-GTX-680.csv.gz") -> Path:
    folder = tmp_path / "snap" / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(gzip.compress(text.encode()))
    return tmp_path / "snap"


def _refused(tmp_path: Path, snap: Path, *fragments: str) -> str:
    out = tmp_path / "out.parquet"
    with pytest.raises((ImportFormatError, DataFileNotFoundError)) as info:
        import_to_shard(snap, out)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    assert not out.exists()
    return message


def test_a_valid_synthetic_file_imports(tmp_path):
    snap = _write(tmp_path, _upstream_text("GTX-980"), "calculate_temp-GTX-980.csv.gz")
    path, table = import_to_shard(snap, tmp_path / "ok.parquet")
    assert path.exists() and table.num_rows == 3
    assert table["launch_index"].to_pylist() == [0, 1, 2]
    assert table["static_smem_bytes"].to_pylist() == [3072] * 3  # 3 KiB
    assert table["time_ms"].to_pylist() == pytest.approx([0.012] * 3)
    assert table["gpu_name"].to_pylist() == ["GeForce GTX 980"] * 3


def test_mixed_units_in_static_smem_are_refused(tmp_path):
    def bytes_in_row_2(i, row):
        if i == 1:
            row["static.smem"] = "3072"
    snap = _write(tmp_path, _upstream_text("GTX-980", edit=bytes_in_row_2), "calculate_temp-GTX-980.csv.gz")
    _refused(tmp_path, snap, "calculate_temp-GTX-980.csv.gz", "row 2 (line 3)", "'static.smem'", "looks like bytes")


def test_kib_in_a_bytes_file_is_refused(tmp_path):
    def kib_in_row_3(i, row):
        if i == 2:
            row["static.smem"] = "3"
    snap = _write(tmp_path, _upstream_text("GTX-680", edit=kib_in_row_3))
    _refused(tmp_path, snap, "row 3 (line 4)", "'static.smem'", "looks like KiB")


def test_a_missing_column_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text(drop="registers.per.thread"))
    _refused(tmp_path, snap, "calculate_temp-GTX-680.csv.gz", "missing column 'registers.per.thread'")


def test_a_misspelt_column_is_refused_with_a_suggestion(tmp_path):
    snap = _write(tmp_path, _upstream_text(rename=("duration", "duraton")))
    _refused(tmp_path, snap, "unknown column 'duraton'", "did you mean 'duration'")


def test_the_singular_flop_column_must_stay_singular(tmp_path):
    snap = _write(tmp_path, _upstream_text(rename=("floating_point_operation.single_precision_mul.",
                                                   "floating_point_operations.single_precision_mul.")))
    _refused(tmp_path, snap, "unknown column 'floating_point_operations.single_precision_mul.'",
             "did you mean 'floating_point_operation.single_precision_mul.'")


def test_an_absent_row_name_column_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text(drop=""))
    _refused(tmp_path, snap, "R row-name column", "absent")


def test_row_names_that_do_not_increase_are_refused(tmp_path):
    def repeat(i, row):
        if i == 2:
            row[""] = '"2"'
    snap = _write(tmp_path, _upstream_text(edit=repeat))
    _refused(tmp_path, snap, "row 3 (line 4)", "R row names", "2 after 2")


@pytest.mark.parametrize("value, shown", [("-1.2e-05", "-1.2e-05"), ("0", "0.0")])
def test_a_non_positive_duration_is_refused(tmp_path, value, shown):
    def bad(i, row):
        if i == 1:
            row["duration"] = value
    snap = _write(tmp_path, _upstream_text(edit=bad))
    _refused(tmp_path, snap, "row 2 (line 3)", "'duration'", shown, "must be positive")


@pytest.mark.parametrize("value, shown", [("", "missing"), ("NA", "missing"), ("inf", "inf")])
def test_a_missing_or_infinite_value_is_refused(tmp_path, value, shown):
    def bad(i, row):
        if i == 2:
            row["duration"] = value
    snap = _write(tmp_path, _upstream_text(edit=bad))
    _refused(tmp_path, snap, "row 3 (line 4)", "'duration'", shown)


def test_a_negative_counter_is_refused(tmp_path):
    def bad(i, row):
        if i == 0:
            row["achieved_occupancy"] = "-0.5"
    snap = _write(tmp_path, _upstream_text(edit=bad))
    _refused(tmp_path, snap, "row 1 (line 2)", "'achieved_occupancy'", "never negative")


def test_a_gpu_label_outside_gpu_labels_imports_by_the_rule(tmp_path):
    """`-` read as a space (Tesla-K40m -> the alias table's Tesla K40m), the id from the rows, the unit from the
    first non-zero static.smem (3072: bytes)."""
    text = _upstream_text().replace('"GTX-680"', '"Tesla-K40m"').replace(',1,"calculate_temp"', ',2,"calculate_temp"')
    snap = _write(tmp_path, text, "calculate_temp-Tesla-K40m.csv.gz")
    _, table = import_to_shard(snap, tmp_path / "k40.parquet")
    assert table["gpu_name"].to_pylist() == ["Tesla K40m"] * 3 and table["upstream_gpu_id"].to_pylist() == [2] * 3
    assert table["gpu_catalogue_name"].to_pylist() == ["Tesla K40m"] * 3
    assert table["static_smem_bytes"].to_pylist() == [3072] * 3


def test_a_new_labels_kib_file_is_read_as_kib(tmp_path):
    text = _upstream_text("GTX-980").replace('"GTX-980"', '"GTX-980-B"').replace(',8,"calculate_temp"',
                                                                                  ',12,"calculate_temp"')
    snap = _write(tmp_path, text, "calculate_temp-GTX-980-B.csv.gz")
    with pytest.warns(UserWarning, match="GPU 'GTX 980 B' is not in the GPU alias table"):
        _, table = import_to_shard(snap, tmp_path / "b.parquet")
    assert table["static_smem_bytes"].to_pylist() == [3 * 1024] * 3 and table["gpu_sm_count"].null_count == 3


@pytest.mark.filterwarnings("ignore:GPU 'GTX X' is not in the GPU alias table")
def test_a_new_label_with_two_ids_is_refused(tmp_path):
    text = _upstream_text().replace('"GTX-680"', '"GTX-X"')
    _write(tmp_path, text.replace(',1,"calculate_temp"', ',2,"calculate_temp"'), "calculate_temp-GTX-X.csv.gz")
    snap = _write(tmp_path, text.replace('"calculate_temp",6,', '"lud_diagonal",9,'), "lud_diagonal-GTX-X.csv.gz")
    _refused(tmp_path, snap, "lud_diagonal-GTX-X.csv.gz", "'device'", "is 1, but calculate_temp-GTX-X.csv.gz gives GPU "
             "'GTX-X' id 2")


def test_a_truncated_gzip_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text(rows=200))
    path = snap / "datasets" / "calculate_temp-GTX-680.csv.gz"
    path.write_bytes(path.read_bytes()[:-40])
    _refused(tmp_path, snap, "calculate_temp-GTX-680.csv.gz", "truncated")


def test_a_name_column_that_disagrees_with_the_file_name_is_refused(tmp_path):
    def other_kernel(i, row):
        if i == 1:
            row["name"] = '"lud_diagonal"'
    snap = _write(tmp_path, _upstream_text(edit=other_kernel))
    _refused(tmp_path, snap, "row 2 (line 3)", "'name'", "'lud_diagonal'", "file name gives kernel 'calculate_temp'")


def test_a_gpu_name_column_that_disagrees_with_the_file_name_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text("Quadro"), "calculate_temp-GTX-680.csv.gz")
    _refused(tmp_path, snap, "row 1 (line 2)", "'gpu_name'", "'Quadro'", "GPU label 'GTX-680'")


def test_a_device_id_that_is_not_the_file_gpus_is_refused(tmp_path):
    def quadro_id(i, row):
        if i == 2:
            row["device"] = "5"
    snap = _write(tmp_path, _upstream_text("GTX-680", edit=quadro_id))
    _refused(tmp_path, snap, "row 3 (line 4)", "'device'", "is 5", "GPU 'GTX-680'", "is 1")


@pytest.mark.integration
def test_the_cli_prints_one_red_line_and_writes_nothing(tmp_path):
    import os
    import subprocess
    import sys

    snap = _write(tmp_path, _upstream_text(rename=("duration", "duraton")))
    out = tmp_path / "cli.parquet"
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    proc = subprocess.run([sys.executable, "-m", "kgpubench", "import", "gpuperfpredict", str(snap), "--out",
                           str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and not out.exists()
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "did you mean 'duration'" in lines[0], proc.stderr


def test_the_cli_writes_a_shard(tmp_path):
    from kgpubench.cli import app

    snap = _write(tmp_path, _upstream_text())
    out = tmp_path / "cli.parquet"
    result = CliRunner().invoke(app, ["import", "gpuperfpredict", str(snap), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and "wrote 3 profiles rows (1 GPUs)" in result.output


def test_a_table_present_twice_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text())
    (snap / "datasets" / "calculate_temp-GTX-680.csv").write_text(_upstream_text())
    _refused(tmp_path, snap, "calculate_temp-GTX-680.csv", "holds the same table", "keep one")


def test_a_missing_folder_or_an_empty_one_is_refused(tmp_path):
    _refused(tmp_path, tmp_path / "nowhere", "no such folder")
    (tmp_path / "empty" / "datasets").mkdir(parents=True)
    _refused(tmp_path, tmp_path / "empty", "no <kernel>-<GPU>.csv[.gz] tables")


def test_a_header_without_rows_is_refused(tmp_path):
    snap = _write(tmp_path, _upstream_text(rows=0))
    _refused(tmp_path, snap, "header but no rows")
