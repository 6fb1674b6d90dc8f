"""`kgpubench info` on the shipped data: a user's summary on one screen; the GPU names behind `--gpus`."""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kgpubench.cli import main
from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES
from kgpubench.store.store import Store

pytestmark = pytest.mark.slow  # each info reads every shipped config (about 4 s)

SCREEN_LINES = 24  # a classic terminal
SCREEN_WIDTH = 100  # info wraps to the terminal, at most 100 columns


def run_info(*args: str, columns: int = 200) -> tuple[int, str]:
    """``python -m kgpubench info ARGS`` in this process, on a terminal ``columns`` wide."""
    out = io.StringIO()
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    with mock.patch.dict(os.environ, dict(env, COLUMNS=str(columns)), clear=True), \
            mock.patch.object(sys, "argv", ["kgpubench", "info", *args]), redirect_stdout(out), \
            redirect_stderr(io.StringIO()):
        try:
            main()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
    return code, out.getvalue()


@pytest.fixture(scope="module")
def shipped():
    """Per config, read from the shipped parquet files directly (not through the store's reader): rows, ok rows,
    GPU names, and GPU names whose rows carry figures."""
    store = Store(default_data_dir())
    figures = {}
    for config in TABLES:
        names, figured, ok = set(), set(), 0
        for entry in store.files(config):
            t = pq.read_table(store.path / entry["path"], columns=["gpu_name", "status", "gpu_peak_fp32_gflops"])
            names |= set(t["gpu_name"].to_pylist())
            figured |= set(t.filter(pc.is_valid(t["gpu_peak_fp32_gflops"]))["gpu_name"].to_pylist())
            ok += pc.sum(pc.equal(t["status"], "ok")).as_py() or 0
        figures[config] = {"rows": store.rows(config), "ok": ok, "gpus": names, "figured": figured}
    return store, figures


@pytest.fixture(scope="module")
def summary():
    code, text = run_info()
    assert code == 0, text
    return text


def _cells(text: str) -> dict[str, list[str]]:
    """The summary table's rows: first cell -> the other cells."""
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and (parts[0] in TABLES or parts[0] == "all"):
            rows[parts[0]] = parts[1:]
    return rows


def test_the_summary_fits_one_screen_and_prints_no_maintainer_todo(summary):
    lines = summary.splitlines()
    assert 0 < len(lines) <= SCREEN_LINES, len(lines)
    assert max(len(line) for line in lines) <= SCREEN_WIDTH
    for todo in ("ALIASES", "hardware.py", "alias table", "add it", "add each"):
        assert todo not in summary
    # the CLBlast device list of the shipped tunings (a CPU among them) is behind --gpus, not in the summary
    assert "Intel(R) Core(TM)" not in summary and "kgpubench info --gpus" in summary


def test_the_summary_numbers_are_the_stores(summary, shipped):
    store, want = shipped
    cells = _cells(summary)
    assert set(cells) == {*TABLES, "all"}
    for config, (rows, ok, gpus, figured, schema, files) in ((c, cells[c]) for c in TABLES):
        w = want[config]
        assert int(rows.replace(",", "")) == w["rows"], config
        assert int(ok.replace(",", "")) == w["ok"], config
        assert int(gpus) == len(w["gpus"]) and int(figured) == len(w["figured"]), config
        assert schema == TABLES[config].version and int(files) == len(store.files(config)), config
    rows, ok, gpus, figured, files = cells["all"]
    assert int(rows.replace(",", "")) == sum(w["rows"] for w in want.values()) > 1_000_000
    assert int(ok.replace(",", "")) == sum(w["ok"] for w in want.values())
    assert int(gpus) == len(set().union(*(w["gpus"] for w in want.values())))
    assert int(figured) == len(set().union(*(w["figured"] for w in want.values())))
    # a config whose names are not all GPUs with figures (CLBlast's devices and fallbacks) shows both counts
    assert any(len(w["figured"]) < len(w["gpus"]) for w in want.values())
    assert f"dataset {store.version}" in summary.splitlines()[0]


def test_gpus_lists_every_name_wrapped_and_without_figures_apart(shipped):
    _, want = shipped
    code, text = run_info("--gpus", columns=80)
    assert code == 0, text
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = " ".join(line.strip() for line in text.splitlines())
    for config, w in want.items():
        head = f"{config}: {w['rows']:,} rows"
        assert head in flat, config
        section = flat.split(head, 1)[1]
        nxt = [section.index(f"{c}: ") for c in want if c != config and f"{c}: " in section]
        section = section[:min(nxt)] if nxt else section
        if w["figured"]:
            assert f"{len(w['figured'])} with catalogue figures:" in section, config
        without = w["gpus"] - w["figured"]
        if without:
            assert f"{len(without)} without (their figure columns are null):" in section, config
            rest = section.split("without (their figure columns are null):", 1)[1]
            assert all(name in rest for name in without), config
        assert all(name in section for name in w["gpus"]), config
    assert "ALIASES" not in text
