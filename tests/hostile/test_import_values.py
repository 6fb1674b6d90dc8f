"""Hostile inputs, issue 30 item 7, on the import path: parameters a float cannot hold, GPU names that are not
one printable line. Each is one line naming the file, and no shard is written."""

from __future__ import annotations

import json

import pytest
from cli_helpers import cli

GPU = "NVIDIA GeForce RTX 2080 Ti"


def _cache(device=GPU, **param) -> dict:
    keys = ["bx", *param]
    return {"device_name": device, "kernel_name": "k", "problem_size": [64], "tune_params_keys": keys,
            "tune_params": {k: [1] for k in keys},
            "cache": {"1": {"bx": 1, **param, "time": 1.5, "times": [1.5],
                            "timestamp": "2024-01-01T00:00:00+00:00"}}}


def _t4(value) -> dict:
    return {"schema_version": "1.0.0", "results": [
        {"timestamp": "2024-01-01T00:00:00+00:00", "configuration": {"bx": value}, "invalidity": "correct",
         "correctness": 1, "objectives": ["time"], "times": {"runtimes": [1.0]}, "measurements": [
             {"name": "time", "value": 1.0, "unit": "ms"}]}]}


CASES = {
    "401-digit int": (json.dumps(_cache()).replace('"bx": 1, "time"', f'"bx": 1{"0" * 400}, "time"'),
                      "configuration '1': parameter 'bx' is an integer of 401 digits"),
    "2**53 + 1": (json.dumps(_cache(seed=2**53 + 1)), "parameter 'seed' is an integer of 16 digits"),
    "1e400 (inf)": (json.dumps(_cache()).replace('"bx": 1, "time"', '"bx": 1e400, "time"'),
                    "parameter 'bx' is inf, which a float64 cannot hold exactly"),
    "T4 huge int": (json.dumps(_t4(10**30)), "results[0]: parameter 'bx' is an integer of 31 digits"),
    "device name with newline": (json.dumps(_cache(device="RTX\nerror: forged")),
                                 "the file's device_name is 'RTX\\nerror: forged'; a GPU name is one line"),
    "device name with NUL": (json.dumps(_cache(device="RTX\0 2080")), "the file's device_name is 'RTX\\x00 2080'"),
    "device name a list": (json.dumps(_cache(device=["RTX"])), "the file's device_name is a list"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_value_is_one_line_and_writes_nothing(case, tmp_path, monkeypatch, capsys):
    text, why = CASES[case]
    source = tmp_path / "in.json"
    source.write_text(text)
    out = tmp_path / "out" / "s.parquet"
    extra = ["--kernel", "k", "--problem-size", "64", "--gpu", GPU] if case.startswith("T4") else []
    code, stdout, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", out, *extra)
    assert code == 1 and "Traceback" not in stdout + err
    (line,) = err.splitlines()
    assert line.startswith(f"error: {source}: ") and why in line, line
    assert not out.parent.exists()


@pytest.mark.parametrize("gpu,shown", [("A\nB", "'A\\nB'"), ("A\0", "'A\\x00'"), ("x" * 201, "'xxxx")])
def test_a_hostile_gpu_option_is_refused(gpu, shown, tmp_path, monkeypatch, capsys):
    source = tmp_path / "in.json"
    source.write_text(json.dumps(_cache(device="")))
    code, _, err = cli(monkeypatch, capsys, "import", "kernel-tuner", source, "--out", tmp_path / "o.parquet",
                       "--gpu", gpu)
    (line,) = err.splitlines()
    assert code == 1 and f"--gpu is {shown}" in line and not (tmp_path / "o.parquet").exists()
