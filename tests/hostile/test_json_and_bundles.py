"""Hostile inputs, issue 30 item 7: duplicate JSON keys, and a bundle's machine report of the wrong types."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest
from cli_helpers import cli

from kgpubench.errors import BundleError, ImportFormatError
from kgpubench.importers.common import load_json
from kgpubench.store.bundle import MANIFEST


def test_a_duplicate_json_key_is_refused_naming_the_key(tmp_path):
    """Before: the last value silently won (a reviewer reading the first saw a different file)."""
    path = tmp_path / "cache.json"
    path.write_text('{"device_name": "A", "cache": {"1": {"time": 1.0, "time": 0.001}}}')
    with pytest.raises(ImportFormatError) as err:
        load_json(path)
    assert str(err.value) == (f"{path}: the key 'time' appears twice in one JSON object; which value counts is "
                              "ambiguous, so nothing is read. Expected a Kernel Tuner cache file or a T4 results "
                              "file, plain or gzipped with each key once.")


def test_a_duplicate_key_through_the_import_cli_is_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "cache.json"
    path.write_text('{"device_name": "A", "device_name": "B"}')
    out = tmp_path / "out" / "s.parquet"
    code, _, err = cli(monkeypatch, capsys, "import", "kernel-tuner", path, "--out", out)
    (line,) = err.splitlines()
    assert code == 1 and "the key 'device_name' appears twice" in line and not out.parent.exists()


def _bundle(tmp_path, machine: bytes, summary: bytes = b'{"gpus": []}', shard: bytes = b"PAR1") -> zipfile.Path:
    members = {"machine.json": machine, "summary.json": summary, "shards/kernels.parquet": shard}
    files = [{"path": n, "bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in members.items()]
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(MANIFEST, json.dumps({"bundle_format": 1, "files": files}))
        for n, d in members.items():
            zf.writestr(n, d)
    return path


@pytest.mark.parametrize("machine,summary,why", [
    (b'{"gpu": ["H100"]}', b"{}", "machine.json: `gpu` is a list, expected a JSON object"),
    (b'{"gpu": {"gpu_name": 5}}', b"{}", "machine.json: `gpu.gpu_name` is '5' (int)"),
    (b'{"gpu": {"gpu_name": "H100\\nforged line"}}', b"{}", "`gpu.gpu_name` is 'H100\\nforged line' (str)"),
    (b'{"kgpubench": "1.0"}', b"{}", "machine.json: `kgpubench` is a str"),
    (b'{"kgpubench": {"version": 1, "commit": null}}', b"{}", "`kgpubench.version` is '1' (int)"),
    (b'{"kgpubench": {"commit": ["x"]}}', b"{}", "`kgpubench.commit` is \"['x']\" (list)"),
    (b"{}", b'{"gpus": "H100"}', "summary.json: `gpus` is a str"),
    (b"{}", b'{"gpus": [null]}', "summary.json: `gpus[0]` is 'None' (NoneType)"),
    (b'{"gpu": {}, "gpu": {}}', b"{}", "machine.json is unreadable: the key 'gpu' appears twice"),
    (b"[" * 100_000, b"{}", "machine.json is unreadable: JSON nested too deeply"),
])
def test_a_machine_report_of_the_wrong_types_is_refused_in_one_line(tmp_path, monkeypatch, capsys, machine,
                                                                     summary, why):
    """Before: ``kgpubench merge`` said "internal error" (an AttributeError building the changelog note)."""
    bundle = _bundle(tmp_path, machine, summary)
    with pytest.raises(BundleError) as err:
        from kgpubench.store.bundle import read_bundle

        read_bundle(bundle)
    assert str(err.value).startswith(f"{bundle}: refused: ") and why in str(err.value), str(err.value)
    code, _, err_text = cli(monkeypatch, capsys, "merge", bundle, "--into", tmp_path / "store")
    (line,) = err_text.splitlines()
    assert code == 1 and why in line and not (tmp_path / "store").exists()
