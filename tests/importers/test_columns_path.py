"""import_table reads Kernel Tuner caches column-wise (the fast path); the table must be the one the row dicts
give (``Table.from_rows(import_rows(...))``), for common caches and for the odd ones that fall back to rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgpubench.importers import import_rows, import_table
from kgpubench.importers.common import load_json, provenance_for
from kgpubench.importers.kernel_tuner import columns_from_cache
from kgpubench.schema import get_table
from kgpubench.store.validation import validate_table

DATA = Path(__file__).parent / "data"
EXCERPTS = [(DATA / "convolution_RTX_2080_Ti_excerpt.json", None), (DATA / "convolution_W7800_excerpt.json.gz", None),
            (DATA / "dedispersion_MI250X_excerpt.json.gz", "MI250X")]


def _same(paths, **options):
    fast = import_table(paths, **options)
    slow = get_table("autotune").from_rows(import_rows(paths, **options))
    assert fast.schema == slow.schema
    for name in fast.column_names:
        assert fast[name].to_pylist() == slow[name].to_pylist(), name
    return fast


@pytest.mark.parametrize(("path", "gpu"), EXCERPTS)
def test_excerpts_are_read_column_wise_and_equal_the_rows(path, gpu):
    loaded = load_json(path)
    read = columns_from_cache(loaded, provenance_for(), gpu=gpu)
    assert isinstance(read, tuple)  # the fast path took it
    table = _same([path], gpu=gpu)
    assert table.num_rows == read[1]
    assert validate_table(table, "autotune") == []


def test_several_files_in_one_table():
    table = _same([p for p, _ in EXCERPTS[:2]])
    assert table.num_rows == 4 + 2


def _cache(tmp_path, cache, keys=("block_size_x",), name="c.json"):
    doc = {"device_name": "NVIDIA GeForce RTX 3090", "kernel_name": "k", "problem_size": [64, 2],
           "tune_params_keys": list(keys), "tune_params": {}, "cache": cache}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


ODD = {
    # a parameter that is a number on one record and text on another: row path (split per value)
    "mixed parameter": ({"a": {"block_size_x": 32, "time": 1.0, "times": [1.0, 1.2]},
                         "b": {"block_size_x": "wide", "time": 2.0, "times": [2.0]}}, False),
    # a text parameter (list value) and a bool parameter: column path
    "text parameters": ({"a": {"block_size_x": [1, 2], "f": True, "time": 1.0, "times": [1.0, 1.0, 1.0]},
                         "b": {"block_size_x": [3], "f": False, "time": "InvalidConfig"}}, True),
    # the largest exact int parameter, an int phase time a float64 cannot hold exactly, nan/inf phase times,
    # GFLOP/s as an int, equal repeats (a parameter past 2**53 is refused: test_a_parameter_past_2_53_is_refused)
    "odd numbers": ({"a": {"block_size_x": 2**53, "time": 0.1, "times": [0.1] * 6, "compile_time": float("nan"),
                           "GFLOP/s": 12, "benchmark_time": 2**60 + 1},
                     "b": {"block_size_x": 4, "time": "CompilationFailedConfig", "framework_time": float("inf")}},
                    True),
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_odd_caches_give_the_row_path_table(tmp_path, case):
    cache, column_wise = ODD[case]
    keys = ("block_size_x", "f") if case == "text parameters" else ("block_size_x",)
    path = _cache(tmp_path, cache, keys=keys)
    read = columns_from_cache(load_json(path), provenance_for(), gpu=None)
    assert isinstance(read, tuple) == column_wise
    _same([path])


def test_a_bad_record_is_named_as_the_row_path_names_it(tmp_path):
    from kgpubench.importers import ImportFormatError

    path = _cache(tmp_path, {"a": {"block_size_x": 1, "time": 1.0, "times": [1.0]},
                             "b": {"block_size_x": 2, "time": "Exploded"}})
    with pytest.raises(ImportFormatError, match=r"configuration 'b' has time 'Exploded'"):
        import_table([path])


@pytest.mark.parametrize("times", [[1.0, "2"], [1.0, float("nan")], [], [True, 1.0], 5, [10**400]])
def test_bad_repeats_are_named_as_the_row_path_names_them(tmp_path, times):
    from kgpubench.importers import ImportFormatError

    path = _cache(tmp_path, {"a": {"block_size_x": 1, "time": 1.0, "times": [1.0, 1.1]},
                             "b": {"block_size_x": 2, "time": 1.0, "times": times}})
    with pytest.raises(ImportFormatError, match=r"configuration 'b' reports a time but its `times` is"):
        import_table([path])


def test_a_parameter_past_2_53_is_refused_by_the_column_path_too(tmp_path):
    """The hardening refuses a tuning parameter a float64 cannot hold exactly (it was stored as text); the column
    path must not let one through."""
    from kgpubench.importers import ImportFormatError, import_table

    doc = {"device_name": "NVIDIA RTX A4000", "kernel_name": "k", "problem_size": [8],
           "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [2**60 + 1]},
           "cache": {"a": {"block_size_x": 2**60 + 1, "time": 0.1, "times": [0.1, 0.1]}}}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFormatError, match="integer of 19 digits, which a float64 cannot hold exactly"):
        import_table([path])
