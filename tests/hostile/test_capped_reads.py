"""The hostile-input corpus for every importer's file reading: all of them read upstream files through
``kgpubench.foundation.capped`` (``read_capped`` for bytes and JSON, ``open_capped_text`` for CSV), so these cases
cover each present and future importer's first step. A new input path adds its own cases beside these."""

from __future__ import annotations

import gzip

import pytest
from hostile_helpers import MIB, gzip_bomb

from kgpubench.errors import DataFileNotFoundError, ImportFormatError
from kgpubench.foundation.capped import loads_json, open_capped_text, read_capped

CSV = b"gpu,kernel,time_ms\nA100,gemm,1.5\n"


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


CASES = {
    "gzip bomb": (lambda p: gzip_bomb(p, 64), "the decompressed content is larger than the import ceiling"),
    "plain file past the ceiling": (lambda p: _write(p, b"x" * (4 * MIB + 1)), "the file is larger than"),
    "truncated gzip": (lambda p: _write(p, gzip.compress(CSV * 100)[:40]), "the gzip stream is truncated"),
    "corrupt gzip": (lambda p: _write(p, gzip.compress(CSV)[:10] + b"\x07" * 40), "does not decompress"),  # bad block
    "garbage after gzip": (lambda p: _write(p, gzip.compress(CSV) + b"junk"), "bytes after the end of the gzip"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("reader", [read_capped, open_capped_text])
def test_a_hostile_file_is_one_line_naming_it(case, reader, tmp_path, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_IMPORT_MAX_BYTES", str(4 * MIB))
    build, why = CASES[case]
    path = build(tmp_path / "upstream.csv.gz")
    with pytest.raises(ImportFormatError) as err:
        reader(path)
    assert str(err.value).startswith(f"{path}: ") and why in str(err.value) and "\n" not in str(err.value)


def test_text_that_is_not_utf8_and_a_missing_file(tmp_path):
    bad = _write(tmp_path / "latin1.csv", "gpu\nGeForce \u00e9\n".encode("latin-1"))
    with pytest.raises(ImportFormatError, match="byte 12 is not utf-8 text"):
        open_capped_text(bad)
    with pytest.raises(DataFileNotFoundError, match="no such file"):
        read_capped(tmp_path / "absent.csv")


@pytest.mark.parametrize("text,why", [
    ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
    ('{"a": {"b": [1, {"c": 1, "c": 1}]}}', "the key 'c' appears twice"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a": NaN', "not valid JSON"),
])
def test_strict_json(text, why):
    with pytest.raises(ImportFormatError, match=why):
        loads_json(text, "f.json")


def test_a_bad_ceiling_setting_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_IMPORT_MAX_BYTES", "lots")
    with pytest.raises(ImportFormatError, match="KGPUBENCH_IMPORT_MAX_BYTES='lots': expected a positive byte count"):
        read_capped(_write(tmp_path / "f.csv", CSV))
