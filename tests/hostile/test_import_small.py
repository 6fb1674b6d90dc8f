"""Smaller hostile inputs of issue 40 item 5, each refused in one line with nothing written: a CSV field over the
csv module's limit, CLBlast parameters named twice, a CLBlast device that drives the terminal, NeuSight's
B = 2**60 + 1 (a float64 would store 2**60), a symbolic link out of a staged folder, a staged folder without
the upstream's LICENSE, and `predict --input`
JSON that is deeply nested, has a 500-digit number, a key twice or the wrong shape."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from cli_helpers import cli

HEADER = "kernel,precision,kind,device_type,vendor,architecture,device,params,source_file\n"
PARAMS = '"{""VW"":4,""WGS"":64,""WPT"":1}"'


def _clblast(folder: Path, row: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "best_configs.csv.gz").write_bytes(gzip.compress((HEADER + row).encode()))
    (folder / "LICENSE").write_text("Apache-2.0\n")
    return folder


def _import(monkeypatch, capsys, fmt: str, folder: Path, out: Path) -> str:
    code, stdout, err = cli(monkeypatch, capsys, "import", fmt, folder, "--out", out)
    assert code == 1 and "Traceback" not in stdout + err and "internal error" not in err, err
    (line,) = err.splitlines()
    assert not out.exists()
    return line


@pytest.mark.parametrize("row, why", [
    (f"Xaxpy,Single,device,GPU,NVIDIA,SM7.5,Tesla T4,\"{'x' * 140_000}\",a.hpp\n",
     "line 2: not a readable CSV row (field larger than field limit (131072))"),
    ('Xaxpy,Single,device,GPU,NVIDIA,SM7.5,Tesla T4,"{""VW"":4,""VW"":8}",a.hpp\n', "names parameter 'VW' twice"),
    (f"Xaxpy,Single,device,GPU,NVIDIA,SM7.5,\"Tesla \x1b]0;owned\x07\x1b[2J\",{PARAMS},a.hpp\n",
     "one line of printable text"),
])
def test_a_hostile_clblast_row_is_one_line(tmp_path, monkeypatch, capsys, row, why):
    line = _import(monkeypatch, capsys, "clblast", _clblast(tmp_path / "c", row), tmp_path / "o.parquet")
    assert why in line and "\x1b" not in line, line


NV_HEADER = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name", "Warps per SM",
             "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y", "Block z", "CUDA Version", "B", "H"]


def _neusight(root: Path, b: str) -> Path:
    row = ["ln", "0.05", "Tesla T4", "p2.1.0", "8902", "k", "1.0", "0.5", "1", "1", "1", "128", "1", "1", "cu121",
           b, "272"]
    path = root / "data" / "dataset" / "train" / "collect" / "ln" / "p2.1.0" / "Tesla T4.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress((",".join(NV_HEADER) + "\n" + ",".join(row) + "\n").encode()))
    (root / "LICENSE").write_text("MIT\n")
    return path


def test_a_neusight_integer_a_float_cannot_hold_is_refused(tmp_path, monkeypatch, capsys):
    _neusight(tmp_path / "ns", str(2**60 + 1))
    line = _import(monkeypatch, capsys, "neusight", tmp_path / "ns", tmp_path / "o.parquet")
    assert "column 'B'" in line and "at most 2**53" in line, line


def test_a_link_out_of_the_staged_folder_is_refused_unread(tmp_path, monkeypatch, capsys):
    outside = _clblast(tmp_path / "elsewhere", f"Xaxpy,Single,device,GPU,NVIDIA,SM7.5,Tesla T4,{PARAMS},a.hpp\n")
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "LICENSE").write_text("Apache-2.0\n")
    (staged / "best_configs.csv.gz").symlink_to(outside / "best_configs.csv.gz")
    line = _import(monkeypatch, capsys, "clblast", staged, tmp_path / "o.parquet")
    assert "a symbolic link to" in line and "outside the staged folder" in line, line
    path = _neusight(tmp_path / "ns", "60")
    (path.parent / "Tesla V100.csv.gz").symlink_to("/etc/passwd")
    line = _import(monkeypatch, capsys, "neusight", tmp_path / "ns", tmp_path / "o.parquet")
    assert "'/etc/passwd', outside the staged folder" in line, line


@pytest.mark.parametrize("text, why", [
    ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
    ('{"grid_x": 1' + "0" * 500 + "}", "(501 digits) is larger than a float64 holds exactly"),
    ('{"grid_x": 1, "grid_x": 2}', "the key 'grid_x' appears twice"),
    ('{"grid_x": 1e400}', "the number 1e400 is not finite"),
    ('{"grid_x": NaN}', "NaN is not a number JSON allows"),
    ('{"grid_x": [1, 2]}', "the value of 'grid_x' is a JSON list"),
    ('{"kernel": "k", "entry": "e", "grid": 5, "block": [1, 1, 1]}', "grid is 5"),
    ('{"kernel": "k", "entry": "e", "grid": [1], "block": [1], "mix": {"a": [1]}}', "mix is"),
    ("[1, 2]", "a JSON list"),
    ("{not json", "not JSON"),
])
def test_hostile_predict_input_is_one_line(tmp_path, monkeypatch, capsys, text, why):
    (tmp_path / "in.json").write_text(text)
    code, stdout, err = cli(monkeypatch, capsys, "predict", "kernel-time", "--gpu", "NVIDIA H200", "--input",
                            tmp_path / "in.json")
    assert code == 1 and "internal error" not in err and "Traceback" not in stdout + err, err
    (line,) = err.splitlines()
    assert line.startswith(f"error: --input {tmp_path / 'in.json'}: ") and why in line, line
    assert json.dumps(why)  # the reason is text


def test_a_staged_folder_without_its_licence_is_refused(tmp_path, monkeypatch, capsys):
    folder = _clblast(tmp_path / "c", f"Xaxpy,Single,device,GPU,NVIDIA,SM7.5,Tesla T4,{PARAMS},a.hpp\n")
    (folder / "LICENSE").unlink()
    line = _import(monkeypatch, capsys, "clblast", folder, tmp_path / "o.parquet")
    assert "no LICENSE file in the staged folder" in line, line
    (tmp_path / "LICENSE").write_text("Apache-2.0\n")  # the folder above (a staged data/ passed on its own)
    code, _, err = cli(monkeypatch, capsys, "import", "clblast", folder, "--out", tmp_path / "o.parquet")
    assert code in (0, None), err
