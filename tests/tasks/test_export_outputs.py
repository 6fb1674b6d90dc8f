"""T4 export outputs: one distinct file per group even when names collide after slugging; no silent overwrite."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from kgpubench.errors import OutputExistsError
from kgpubench.tasks.export import export_t4_table, file_names


def autotune_rows(kernels: list[str], per_kernel: int = 4) -> pa.Table:
    rows = []
    for kernel in kernels:
        for i in range(per_kernel):
            rows.append({"gpu_name": "NVIDIA H100 PCIe", "kernel": kernel, "problem_size": "64x64",
                         "params": [{"name": "bx", "value": float(2**i)}], "params_text": [], "status": "ok",
                         "time_ms_mean": 1.0 + i, "collected_at": None})
    return pa.Table.from_pylist(rows)


def test_names_colliding_after_slugging_get_distinct_files_holding_every_row(tmp_path):
    kernels = ["conv a", "conv_a", "CONV_A"]  # one slug, and two of them differ only in case
    paths = export_t4_table(autotune_rows(kernels), "autotune", tmp_path)
    assert len(paths) == 3 and len({p.name.lower() for p in paths}) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    docs = [json.loads(p.read_text()) for p in paths]
    assert sorted(d["metadata"]["kernel_name"] for d in docs) == sorted(kernels)
    assert [len(d["results"]) for d in docs] == [4, 4, 4]
    for doc, path in zip(docs, paths):
        assert path.name.startswith("autotune__NVIDIA_H100_PCIe__") and "__64x64__" in path.name
        assert [r["configuration"]["bx"] for r in doc["results"]] == [1, 2, 4, 8]


def test_names_that_do_not_collide_keep_their_plain_form():
    names = file_names("autotune", [("G", "k1", "8"), ("G", "k2", "8")])
    assert names == {("G", "k1", "8"): "autotune__G__k1__8.json", ("G", "k2", "8"): "autotune__G__k2__8.json"}
    long = file_names("autotune", [("G", "k" * 400, "8")])[("G", "k" * 400, "8")]
    assert len(long) < 255 and long.endswith(".json")


def test_existing_files_are_refused_before_anything_is_written(tmp_path):
    table = autotune_rows(["a", "b"])
    first = export_t4_table(table, "autotune", tmp_path)
    first[1].write_text("edited by hand")
    first[0].unlink()
    with pytest.raises(OutputExistsError, match=r"already exists \(1 of the 2 files to write do\); pass --force"):
        export_t4_table(table, "autotune", tmp_path)
    assert not first[0].exists() and first[1].read_text() == "edited by hand"
    again = export_t4_table(table, "autotune", tmp_path, force=True)
    assert again == first and json.loads(first[1].read_text())["metadata"]["kernel_name"] == "b"


def test_out_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(OutputExistsError, match="is a file; give a folder"):
        export_t4_table(autotune_rows(["a"]), "autotune", tmp_path / "out")


def test_a_failed_export_removes_the_files_it_created(tmp_path, monkeypatch):
    import kgpubench.tasks.export as export

    calls = []
    real = export.write_t4

    def fail_second(path, doc, **kw):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, doc, **kw)

    monkeypatch.setattr(export, "write_t4", fail_second)
    with pytest.raises(KeyboardInterrupt):
        export_t4_table(autotune_rows(["a", "b", "c"]), "autotune", tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_cli_export_of_colliding_names_writes_every_row_and_needs_force_to_redo(tmp_path):
    from typer.testing import CliRunner

    from kgpubench.cli import app
    from kgpubench.schema import get_table
    from kgpubench.store.shards import write_shard
    from kgpubench.store.store import Store
    from kgpubench.testing import valid_row

    rows = [valid_row("autotune", kernel=k, params=[{"name": "bx", "value": float(b)}])
            for k in ("conv a", "conv_a", "conv+a") for b in (1, 2, 4, 8)]
    Store(tmp_path / "store").merge([write_shard(get_table("autotune").from_rows(rows), tmp_path / "s.parquet")])
    runner = CliRunner()
    args = ["export", "t4", "--config", "autotune", "--data", str(tmp_path / "store"), "--out", str(tmp_path / "t4")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote 3 T4 results file(s) to {tmp_path / 't4'}"
    files = sorted((tmp_path / "t4").iterdir())
    assert sum(len(json.loads(f.read_text())["results"]) for f in files) == 12 and len(files) == 3
    again = runner.invoke(app, args)
    assert again.exit_code == 1 and isinstance(again.exception, OutputExistsError)
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
