"""KernelBench import: counts from the staged copy's PROVENANCE.md, hand-checked rows, and hostile inputs."""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgpubench.errors import ImportFormatError
from kgpubench.importers.kernelbench import import_rows, import_to_shard
from kgpubench.schema import get_table
from kgpubench.store.validation import validate_table

pytestmark = pytest.mark.usefixtures("_staged_licence")  # staged folders carry their LICENSE

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "kernelbench"
needs_staged = pytest.mark.skipif(not (STAGED / "v0.1").is_dir(),
                                  reason="../shared/external/kernelbench is not beside this checkout")

# PROVENANCE.md, "Set-ups and counts": non-null records per (set, set-up, mode); every file has 250 programs.
ALL6 = ("eager", "inductor-default", "inductor-reduce-overhead", "inductor-max-autotune",
        "inductor-max-autotune-no-cudagraphs", "cudagraphs")
EXPECTED_OK = {
    **{("v0.1", s, m): 250 for s in ("L4_modal", "A10G_modal", "A100_modal", "A100-80GB_modal", "L40S_modal")
       for m in ("eager", "inductor-default")},
    ("v0.1", "T4_modal", "eager"): 249, ("v0.1", "T4_modal", "inductor-default"): 249,
    **{("v0.1", s, m): 248 if m in ("inductor-max-autotune", "inductor-reduce-overhead") else 250
       for s in ("L40S_matx3", "H100_together") for m in ALL6},
    ("v0.1", "MI250", "eager"): 250, ("v0.1", "MI250", "inductor-default"): 250,
    ("v0.1", "MI250", "inductor-reduce-overhead"): 248,
    **{("v0.2", s, m): 250 for s in ("H100_Modal", "H100_PCIe_LambdaLabs") for m in ("eager", "inductor-default")},
}


@pytest.fixture(scope="module")
def staged_rows():
    return import_rows(STAGED)


@needs_staged
def test_counts_per_setup_and_mode_match_provenance(staged_rows):
    ok = collections.Counter((r["problem_set"], r["setup"], r["compile_mode"]) for r in staged_rows
                             if r["status"] == "ok")
    assert dict(ok) == EXPECTED_OK
    assert len(staged_rows) == 7750
    assert sum(ok.values()) == 6738 + 1000
    failed = sorted((r["setup"], r["compile_mode"], r["level"], r["problem"]) for r in staged_rows
                    if r["status"] != "ok")
    rnn = [(s, m, 3, p) for s, ms in (("H100_together", ("inductor-max-autotune", "inductor-reduce-overhead")),
                                      ("L40S_matx3", ("inductor-max-autotune", "inductor-reduce-overhead")),
                                      ("MI250", ("inductor-reduce-overhead",)))
           for m in ms for p in ("33_VanillaRNN.py", "34_VanillaRNNHidden.py")]
    # PROVENANCE.md says both T4 nulls are level3/31_VisionAttention; the compile file's null is in fact level 2's
    # program 34 (checked in the file: VisionAttention has a record there).
    t4 = [("T4_modal", "eager", 3, "31_VisionAttention.py"),
          ("T4_modal", "inductor-default", 2, "34_ConvTranspose3d_LayerNorm_GELU_Scaling.py")]
    assert failed == sorted(rnn + t4)
    assert all(r.get("time_ms_mean") is None and "null" in r["status_detail"]
               for r in staged_rows if r["status"] != "ok")
    assert sum(r["compile_mode"] == "eager" and r["status"] == "ok" for r in staged_rows) == 2249 + 500


@needs_staged
def test_gpu_comes_from_each_record_not_the_folder(staged_rows):
    gpus = collections.Counter((r["setup"], r["compile_mode"], r["gpu_name"]) for r in staged_rows)
    assert gpus[("A10G_modal", "eager", "NVIDIA A10G")] == 110
    assert gpus[("A10G_modal", "eager", "NVIDIA A10")] == 140
    assert gpus[("A10G_modal", "inductor-default", "NVIDIA A10G")] == 115
    assert gpus[("A100_modal", "eager", "NVIDIA A100-SXM4-80GB")] == 5
    assert gpus[("MI250", "eager", "AMD Instinct MI250X/MI250")] == 250
    # The null T4 records take the set-up's only GPU.
    assert {r["gpu_name"] for r in staged_rows if r["setup"] == "T4_modal"} == {"Tesla T4"}


@needs_staged
def test_hand_checked_rows(staged_rows):
    def row(ps, setup, mode, level, problem):
        (r,) = [r for r in staged_rows if (r["problem_set"], r["setup"], r["compile_mode"], r["level"],
                                            r["problem"]) == (ps, setup, mode, level, problem)]
        return r

    r = row("v0.1", "A10G_modal", "eager", 1, "1_Square_matrix_multiplication_.py")
    assert (r["gpu_name"], r["time_ms_mean"], r["time_ms_std"], r["time_ms_min"], r["time_ms_max"]) == (
        "NVIDIA A10G", 0.858, 0.0121, 0.836, 0.883)
    assert r["repeats"] == 100 and r["warmups"] == 3 and r["problem_id"] == 1
    assert r["constants"] == [{"name": "N", "value": 2048.0}]
    assert r["input_elements"] == 2 * 2048 * 2048 and r["input_shapes"] == ["[2048,2048]", "[2048,2048]"]
    assert r["framework_version"] == "2.5.0" and r["cuda_version"] == "12.4" and r["l2_flushed"] is False
    assert r["collected_at"] == dt.datetime(2025, 3, 16, tzinfo=dt.timezone.utc)
    assert r["source_commit"] == "7dd9cfa0c02e8340c9bc9a919d3f19777a8f2eb2"
    assert r["source_file"] == "v0.1/results/timing/A10G_modal/baseline_time_torch.json"
    v2 = row("v0.2", "H100_Modal", "eager", 1, "1_Square_matrix_multiplication_.py")
    assert v2["constants"] == [{"name": "N", "value": 4096.0}]  # same name, another program
    assert v2["l2_flushed"] is True and v2["framework_version"] == "2.9.0 (likely)"
    assert v2["gpu_name"] == "NVIDIA H100 80GB HBM3"
    mi = row("v0.1", "MI250", "eager", 1, "1_Square_matrix_multiplication_.py")
    assert mi["gpu_vendor"] == "amd" and mi["framework_version"] is None
    # Lambda's v0.2 level1/92 is the older program text (problem_variants.csv), Modal's the manifest's.
    lam = row("v0.2", "H100_PCIe_LambdaLabs", "eager", 1, "92_cumsum_exclusive.py")
    mod = row("v0.2", "H100_Modal", "eager", 1, "92_cumsum_exclusive.py")
    assert lam["program_blob"] == "0c819da737987709b30caa1b89d4c812175651d4"
    assert mod["program_blob"] != lam["program_blob"]
    masked = row("v0.1", "H100_together", "eager", 1, "93_masked_cumsum.py")
    assert masked["input_elements"] is None and masked["input_shapes"][1] == '["?"]'


@needs_staged
def test_staged_rows_validate(staged_rows):
    table = get_table("programs").from_rows(staged_rows[:600] + staged_rows[-600:])
    assert validate_table(table, "programs", file="staged") == []


# ----- hostile inputs: a tiny folder in the upstream format ----------------------------------------------------

MANIFEST = ("version,level,problem_file,problem_id,name,upstream_commit,upstream_path,git_blob,source_bytes,constants,"
            "nn_modules,forward_calls,get_inputs,parse\n"
            'v0.1,level1,1_Mm.py,1,Mm,{c},KernelBench/level1/1_Mm.py,{b},794,"{{""N"":8}}",,torch.matmul,'
            '"[{{""fn"":""randn"",""args"":[8,8]}}]",ok\n').format(c="a" * 40, b="b" * 40)


def _record(**over):
    return {"mean": 1.5, "std": 0.1, "min": 1.2, "max": 1.9, "num_trials": 100, "hardware": "Tesla T4",
            "device": "cuda:0", **over}


def _folder(tmp_path: Path, text: str | bytes | None = None, name: str = "baseline_time_torch.json") -> Path:
    root = tmp_path / "kb"
    timing = root / "v0.1" / "results" / "timing" / "T4_modal"
    timing.mkdir(parents=True)
    (root / "v0.1" / "problems.csv").write_text(MANIFEST)
    if text is None:
        text = json.dumps({"level1": {"1_Mm.py": _record()}, "level2": {}, "level3": {}})
    (timing / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def test_tiny_folder_imports(tmp_path):
    rows = import_rows(_folder(tmp_path))
    assert len(rows) == 1 and rows[0]["time_ms_mean"] == 1.5 and rows[0]["gpu_name"] == "Tesla T4"
    assert rows[0]["time_cv"] == pytest.approx(0.1 / 1.5)


HOSTILE = {
    "list at top level": ("[]", "top level is a JSON list"),
    "record is a string": ('{"level1": {"1_Mm.py": "fast"}, "level2": {}, "level3": {}}',
                           "record level1/1_Mm.py: the record is a JSON str"),
    "missing mean": (json.dumps({"level1": {"1_Mm.py": {k: v for k, v in _record().items() if k != "mean"}},
                                 "level2": {}, "level3": {}}), "record level1/1_Mm.py: field 'mean' is missing"),
    "negative mean": (json.dumps({"level1": {"1_Mm.py": _record(mean=-1.0)}, "level2": {}, "level3": {}}),
                      "field 'mean' is -1.0"),
    "NaN mean": ('{"level1": {"1_Mm.py": {"mean": NaN, "std": 0, "min": 1, "max": 2, "num_trials": 100, '
                 '"hardware": "Tesla T4"}}, "level2": {}, "level3": {}}', "holds NaN"),
    "hardware with a newline": (json.dumps({"level1": {"1_Mm.py": _record(hardware="Tesla\nerror: forged")},
                                            "level2": {}, "level3": {}}),
                                "record level1/1_Mm.py: field 'hardware' is 'Tesla\\nerror: forged', not one line"),
    "empty hardware": (json.dumps({"level1": {"1_Mm.py": _record(hardware=" ")}, "level2": {}, "level3": {}}),
                       "record level1/1_Mm.py: field 'hardware' is empty"),
    "duplicate key": ('{"level1": {"1_Mm.py": ' + json.dumps(_record()) + ', "1_Mm.py": ' + json.dumps(_record())
                      + '}, "level2": {}, "level3": {}}', "key '1_Mm.py' appears twice"),
    "truncated gzip": (gzip.compress(json.dumps({"level1": {}, "level2": {}, "level3": {}}).encode())[:-12],
                       "gzip stream is truncated"),
    "program not in its set's manifest": (json.dumps({"level1": {"7_Other.py": _record()}, "level2": {},
                                                      "level3": {}}), "not in v0.1/problems.csv"),
    "missing level": (json.dumps({"level1": {"1_Mm.py": _record()}, "level2": {}}), "level3 is missing"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_one_line_and_writes_nothing(tmp_path, case):
    text, expected = HOSTILE[case]
    folder = _folder(tmp_path, text)
    out = tmp_path / "out.parquet"
    with pytest.raises(ImportFormatError) as err:
        import_to_shard(folder, out)
    message = str(err.value)
    assert "\n" not in message and expected in message, message
    assert "baseline_time_torch.json" in message
    assert not out.exists()


@pytest.mark.integration
def test_cli_gives_one_red_line_and_no_output(tmp_path):
    import subprocess
    import sys

    from kgpubench.cli import app

    folder = _folder(tmp_path, json.dumps({"level1": {"1_Mm.py": _record(hardware="Mystery\0GPU")}, "level2": {},
                                           "level3": {}}))
    out = tmp_path / "out.parquet"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "kgpubench", "import", "kernelbench", str(folder), "--out", str(out)],
                          capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(root), "COLUMNS": "400",
                                                                        "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "'Mystery\\x00GPU'" in lines[0] and "level1/1_Mm.py" in lines[0] and "'hardware'" in lines[0]
    assert not out.exists()
    ok = _folder(tmp_path / "again")
    (tmp_path / "again" / "LICENSE").write_text("test data licence\n")
    result = CliRunner().invoke(app, ["import", "kernelbench", str(ok), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 1 programs rows (ok 1)" in result.output and out.exists()


def test_unknown_mode_file_name_is_refused(tmp_path):
    folder = _folder(tmp_path, name="baseline_time_torch_compile_tvm.json")
    with pytest.raises(ImportFormatError, match="not a KernelBench timing file name"):
        import_rows(folder)
