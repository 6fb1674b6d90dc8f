"""Hostile find-db files on `kgpubench import miopen`: each is one line naming the file (and the line and field
where there is one), and no shard is written. A time of 0 is upstream's mark of an untimed solver: dropped, not
refused (tests/importers/test_miopen.py)."""

from __future__ import annotations

import bz2
import time

import pytest
from cli_helpers import cli
from hostile_helpers import MIB

from kgpubench.errors import ImportFormatError
from kgpubench.hardware import UnknownGpuWarning
from kgpubench.importers.miopen import import_to_shard
from kgpubench.store.shards import read_shard


@pytest.fixture(autouse=True)
def _licence(tmp_path):
    """The staged folders of these cases carry their upstream LICENSE (in the folder or the one above it)."""
    (tmp_path / "LICENSE").write_text("test data licence\n")

KEY = "64-56-56-3x3-128-56-56-8-1x1-1x1-1x1-0-NCHW-FP32-F"
GOOD = f"{KEY}=GemmFwdRest:1.25,4096,miopenConvolutionFwdAlgoGEMM\n"
NAME = "gfx90a6e.HIP.fdb.txt.bz2"


def _line(key: str = KEY, entry: str = "GemmFwdRest:1.25,4096,miopenConvolutionFwdAlgoGEMM") -> bytes:
    return bz2.compress((GOOD + f"{key}={entry}\n").encode())


CASES = {
    "truncated bz2": (bz2.compress(GOOD.encode() * 50)[:-20], "the bzip2 stream is truncated"),
    "not bz2 after the magic": (b"BZh9" + b"\x00" * 64, "starts like bzip2 but does not decompress"),
    "too few key fields": (_line(key="64-56-56-3x3-128-56-56-8-1x1-1x1-NCHW-FP32-F"),
                           "line 2, field key: '64-56-56-3x3-128-56-56-8-1x1-1x1-NCHW-FP32-F'; expected 15 or 17"),
    "size not a number": (_line(key=KEY.replace("-56-56-3x3", "-5a-56-3x3", 1)), "line 2, field in_h: '5a'"),
    "size 0": (_line(key=KEY.replace("-8-1x1", "-0-1x1", 1)), "line 2, field batch: '0'; expected a whole number >= 1"),
    "unknown dtype": (_line(key=KEY.replace("FP32", "FP12")), "line 2, field dtype: 'FP12'; expected one of FP64"),
    "unknown layout": (_line(key=KEY.replace("NCHW", "NHCW")), "line 2, field layout: 'NHCW'"),
    "a 3-D layout on a 2-D key": (_line(key=KEY.replace("NCHW", "NCDHW")), "line 2, field layout: 'NCDHW'; "
                                                                           "expected a layout of 2 spatial dimensions"),
    "unknown direction": (_line(key=KEY[:-1] + "X"), "line 2, field direction: 'X'"),
    "groups not dividing the channels": (_line(key=KEY + "_g5"), "line 2, field groups: '5'"),
    "line without '='": (bz2.compress((GOOD + KEY + "\n").encode()), "line 2, field line:"),
    "time NaN": (_line(entry="GemmFwdRest:nan,0,miopenConvolutionFwdAlgoGEMM"), "line 2, field time: 'nan'"),
    "time negative": (_line(entry="GemmFwdRest:-1.5,0,miopenConvolutionFwdAlgoGEMM"), "line 2, field time: '-1.5'"),
    "time infinite": (_line(entry="GemmFwdRest:inf,0,miopenConvolutionFwdAlgoGEMM"), "line 2, field time: 'inf'"),
    "time not a number": (_line(entry="GemmFwdRest:fast,0,miopenConvolutionFwdAlgoGEMM"),
                          "line 2, field time: 'fast'; expected a time in milliseconds (a number)"),
    "workspace over 2**40": (_line(entry=f"GemmFwdRest:1.0,{2**40 + 1},miopenConvolutionFwdAlgoGEMM"),
                             "line 2, field workspace: '1099511627777'; expected at most 2**40 bytes"),
    "workspace negative": (_line(entry="GemmFwdRest:1.0,-8,miopenConvolutionFwdAlgoGEMM"),
                           "line 2, field workspace: '-8'; expected a whole number of bytes"),
    "entry with a missing field": (_line(entry="GemmFwdRest:1.0,miopenConvolutionFwdAlgoGEMM"),
                                   "line 2, field entry: 'GemmFwdRest:1.0,miopenConvolutionFwdAlgoGEMM'"),
    "older entry with a missing field": (_line(entry="miopenConvolutionFwdAlgoGEMM:GemmFwdRest,1.0,0,rocBlas"),
                                         "line 2, field entry:"),
    "not utf-8": (bz2.compress(GOOD.encode() + b"64-56\xff=x\n"), "line 2: byte "),
    "empty file": (bz2.compress(b""), "line 1: the file holds no problem line"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_find_db_is_one_line_and_writes_nothing(case, tmp_path):
    data, why = CASES[case]
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / NAME
    path.write_bytes(data)
    out = tmp_path / "out.parquet"
    with pytest.raises(ImportFormatError) as info:
        import_to_shard(tmp_path / "in", out)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert why in message, message
    assert not out.exists()


def test_a_bz2_bomb_stops_at_the_ceiling(tmp_path, monkeypatch):
    """64 MiB of zeros compress to a few kB with bzip2; the read stops once the text passes the (lowered) ceiling."""
    monkeypatch.setenv("KGPUBENCH_IMPORT_MAX_BYTES", str(4 * MIB))
    (tmp_path / "in").mkdir()
    bomb = tmp_path / "in" / NAME
    bomb.write_bytes(bz2.compress(b"\0" * (64 * MIB), 9))
    assert bomb.stat().st_size < 64 * 1024
    start = time.monotonic()
    with pytest.raises(ImportFormatError) as info:
        import_to_shard(tmp_path / "in", tmp_path / "out.parquet")
    assert time.monotonic() - start < 3
    assert str(info.value).startswith(f"{bomb}: the decompressed content is larger than the import ceiling of "
                                      "4,194,304 bytes")


def test_through_the_cli_a_bad_time_is_one_red_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / NAME).write_bytes(CASES["time NaN"][0])
    out = tmp_path / "out" / "conv.parquet"
    code, _, err = cli(monkeypatch, capsys, "import", "miopen", tmp_path / "in", "--out", out)
    (line,) = err.splitlines()
    assert code == 1 and NAME in line and "line 2, field time: 'nan'" in line
    assert not out.parent.exists()


def test_a_target_no_table_knows_imports_as_amd_with_a_null_architecture(tmp_path):
    """gfx1999 is no processor of LLVM's table: the rows are still AMD's (a find-db is), the family stays null
    (never a guess from the digits), with the one notice of a pair no product has."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "gfx1999_40.HIP.fdb.txt").write_text(GOOD)
    with pytest.warns(UnknownGpuWarning, match="no single AMD product has gfx1999 with 40 CUs"):
        path, _ = import_to_shard(tmp_path / "in", tmp_path / "out.parquet")
    _, table = read_shard(path)
    (row,) = table.to_pylist()
    assert (row["gpu_name"], row["gpu_vendor"], row["gpu_architecture"]) == ("AMD gfx1999 (40 CUs)", "amd", None)
    assert row["gpu_specs_source"] == [{"name": "gpu_vendor", "value": "derived"}]
