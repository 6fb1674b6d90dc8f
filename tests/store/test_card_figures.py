"""Every figure the card gives about the data is generated from the rows, and `kgpubench card --check` names a
figure that disagrees with them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import kgpubench.store.card as card_module
from kgpubench.cli import app
from kgpubench.resources import default_data_dir, source_checkout
from kgpubench.store.card import CARD_PATH, block_differences, block_names, generated_blocks, update
from kgpubench.store.card_figures import FIGURE_BLOCKS, NO_ROWS
from kgpubench.store.store import Store

runner = CliRunner()
needs_checkout = pytest.mark.skipif(source_checkout() is None, reason="DATASET_CARD.md lives in the source checkout")


@pytest.fixture(scope="module")
def shipped_blocks() -> dict[str, str]:
    """Every generated block of the committed card (and the two the store's README adds) from the packaged
    data, computed once for this module (the data do not change while the tests run)."""
    return generated_blocks(Store(default_data_dir()), block_names(CARD_PATH.read_text()) | {"summary", "changelog"})


def _block(text: str, name: str) -> str:
    m = re.search(rf"<!-- BEGIN kgpubench:{re.escape(name)} -->\n(.*?)<!-- END kgpubench:{re.escape(name)} -->",
                  text, re.S)
    assert m, f"the card has no block {name}"
    return m.group(1)


def _npb_class_s_cv_median() -> float:
    """Median time_cv of the shipped protocol-1 npb kernel rows of class S, read from the parquet parts."""
    store = Store(default_data_dir())
    values = []
    for entry in store.files("npb"):
        t = pq.read_table(store.path / entry["path"],
                          columns=["row_kind", "npb_class", "time_cv", "source", "measurement_protocol"])
        keep = pc.and_(pc.and_(pc.equal(t["row_kind"], "kernel"), pc.equal(t["npb_class"], "S")),
                       pc.and_(pc.equal(t["source"], "measured"), pc.is_null(t["measurement_protocol"])))
        values += t.filter(keep)["time_cv"].to_pylist()
    return float(np.median(np.array(values, dtype=float)))


@needs_checkout
def test_the_card_states_the_npb_class_s_cv_median_of_the_shipped_rows():
    block = _block(CARD_PATH.read_text(), "figures:measured")
    stated = re.search(r"Median `time_cv` of the `npb` kernel rows, per class: .*?\bS (\d+\.\d+)", block)
    assert stated, block
    assert float(stated.group(1)) == round(_npb_class_s_cv_median(), 2)
    assert float(stated.group(1)) == 0.57  # the figure: the card once said 0.52


@needs_checkout
def test_the_card_has_every_figure_block_and_no_number_in_the_sentence_that_once_had_one():
    text = CARD_PATH.read_text()
    assert set(FIGURE_BLOCKS) | {"seeds"} <= block_names(text)
    assert "median `time_cv` of 0.52" not in text and "seed 000" not in text.split("## Configs")[0]


@needs_checkout
def test_check_names_a_generated_figure_that_disagrees_with_the_data(tmp_path, shipped_blocks, monkeypatch):
    def blocks_of_the_packaged_data(store, only=None):
        assert Path(store.path).resolve() == default_data_dir().resolve()
        return {name: shipped_blocks[name] for name in only}

    # `card --check` computes what test_every_generated_block_... computed: take the same blocks
    monkeypatch.setattr(card_module, "generated_blocks", blocks_of_the_packaged_data)
    text = CARD_PATH.read_text()
    block = _block(text, "figures:tunings")
    assert "- 12,231 rows: 8,774 device" in block  # computed from the shipped rows
    card = tmp_path / "DATASET_CARD.md"
    card.write_text(text.replace(block, block.replace("- 12,231 rows:", "- 12,232 rows:")))
    result = runner.invoke(app, ["card", "--check", "--card", str(card)])
    assert result.exit_code == 1
    lines = [x for x in result.output.splitlines() if "block figures:tunings" in x]
    assert len(lines) == 1 and "'- 12,232 rows:" in lines[0] and "'- 12,231 rows:" in lines[0], result.output
    assert f"out of date: {card}" in result.output
    assert card.read_text().count("12,232") == 1  # --check writes nothing


def test_block_differences_reports_only_the_blocks_that_differ():
    text = ("# card\n<!-- BEGIN kgpubench:a -->\nx 1\ny 2\n<!-- END kgpubench:a -->\n"
            "<!-- BEGIN kgpubench:b -->\nz 3\n<!-- END kgpubench:b -->\n<!-- BEGIN kgpubench:c -->\nq\n"
            "<!-- END kgpubench:c -->\n")
    assert block_differences(text, {"a": "x 1\ny 2\n", "b": "z 4\n"}) == [
        "block b: the card says 'z 3'; the data give 'z 4'"]
    assert block_differences(text, {"a": "x 1\n"}) == ["block a: the card says 'y 2'; the data give '(nothing)'"]


def test_an_empty_store_gives_no_figures(tmp_path):
    store = Store(tmp_path / "empty")
    blocks = generated_blocks(store, set(FIGURE_BLOCKS))
    assert blocks["figures:measured"] == "No protocol-1 rows.\n"
    assert blocks["figures:protocol2"] == "No protocol-2 rows.\n"
    assert all(blocks[n] == NO_ROWS for n in FIGURE_BLOCKS if n not in ("figures:measured", "figures:protocol2"))


def _protocol2_counts(config: str) -> dict[str, int]:
    """Rows per GPU of one measured config with measurement_protocol 2, read from the parquet parts."""
    out: dict[str, int] = {}
    for path in sorted((default_data_dir() / config).glob("*.parquet")):
        table = pq.read_table(path)
        if "measurement_protocol" not in table.column_names:
            continue
        names = table.filter(pc.equal(table["measurement_protocol"], 2))["gpu_name"].to_pylist()
        for name in names:
            out[name] = out.get(name, 0) + 1
    return out


def test_the_protocol2_block_states_each_gpus_rows_as_the_shipped_parts_hold_them(shipped_blocks):
    block = _block(CARD_PATH.read_text(), "figures:protocol2")
    npb, stencil = _protocol2_counts("npb"), _protocol2_counts("stencil")
    assert npb and stencil  # the shipped data hold protocol-2 rows (NVIDIA H200, 2026-11-26)
    for gpu in sorted(set(npb) | set(stencil)):
        assert f"- **{gpu}**:" in block
        section = block.split(f"- **{gpu}**:")[1].split("\n- **")[0]
        assert f"`npb` {npb.get(gpu, 0):,};" in section and f"`stencil` {stencil.get(gpu, 0):,}." in section
    assert "Clocks locked on 0 of" in block  # a lent machine: the clocks were left alone
    assert block == shipped_blocks["figures:protocol2"]


def test_update_with_a_copy_of_the_card_regenerates_its_figures(tmp_path):
    store = Store(tmp_path / "empty")
    card = tmp_path / "card.md"
    card.write_text("# c\n<!-- BEGIN kgpubench:figures:programs -->\n- 7 rows\n"
                    "<!-- END kgpubench:figures:programs -->\n")
    differences: list[str] = []
    assert card in update(store, card, check=True, differences=differences)
    assert differences == ["block figures:programs: the card says '- 7 rows'; the data give 'No rows yet.'"]
    update(store, card)
    assert "No rows yet." in card.read_text() and "- 7 rows" not in card.read_text()


def test_card_refuses_a_missing_card_file(tmp_path):
    result = runner.invoke(app, ["card", "--check", "--card", str(tmp_path / "nope.md")])
    assert result.exit_code == 1 and "--card" in result.output + str(result.exception)


@needs_checkout
def test_every_generated_block_of_the_committed_card_agrees_with_the_shipped_rows(shipped_blocks):
    """The card's side of `card --check` (the store's README.md, which embeds the card, is checked by
    tests/cli/test_cli_data.py): no generated figure of DATASET_CARD.md disagrees with the packaged data."""
    text = CARD_PATH.read_text()
    assert set(shipped_blocks) >= block_names(text)
    assert block_differences(text, {name: shipped_blocks[name] for name in block_names(text)}) == []


def test_cross_board_spread_compares_boards_not_runs_and_one_timing_method_at_a_time():
    import pandas as pd

    from kgpubench.store.card_figures import cross_board_spread

    rows = pd.DataFrame([
        # a: board X 1.0; board Y two runs 1.1 and 1.3 (median 1.2) -> 1.2 / 1.0 - 1
        ("a", "graph", "X", "ok", 1.0), ("a", "graph", "Y", "ok", 1.1), ("a", "graph", "Y", "ok", 1.3),
        ("b", "graph", "X", "ok", 2.0), ("b", "graph", "X", "ok", 4.0),  # two runs, one board: not across boards
        ("c", "graph", "X", "ok", 1.0), ("c", "graph", "Y", "failed", None),  # a failed row is no time
        ("d", "cold", "X", "ok", 1.0), ("d", "cupti", "Y", "ok", 3.0),  # two timers: not the same label
        ("e", "graph", "Y", "ok", 5.0), ("e", "graph", "X", "ok", 4.0),  # the order of the boards does not matter
    ], columns=["row_id", "timing_method", "gpu_uuid_hash", "status", "time_ms_median"])
    spread = cross_board_spread(rows)
    assert sorted(spread.index.get_level_values(0)) == ["a", "e"]
    assert spread.loc[("a", "graph")] == pytest.approx(0.2) and spread.loc[("e", "graph")] == pytest.approx(0.25)


@needs_checkout
def test_the_card_counts_the_shipped_configurations_measured_on_two_boards(shipped_blocks):
    """The count in the card's cross-board line, against the row ids of the shipped stencil rows that two
    boards hold (read straight from the parquet parts)."""
    store = Store(default_data_dir())
    boards: dict[str, set] = {}
    for entry in store.files("stencil"):
        t = pq.read_table(store.path / entry["path"], columns=["row_id", "gpu_uuid_hash", "status",
                                                              "measurement_protocol", "source"])
        keep = pc.and_(pc.and_(pc.equal(t["source"], "measured"), pc.equal(t["status"], "ok")),
                       pc.fill_null(pc.equal(t["measurement_protocol"], 2), False))
        for rid, board in zip(t.filter(keep)["row_id"].to_pylist(), t.filter(keep)["gpu_uuid_hash"].to_pylist()):
            boards.setdefault(rid, set()).add(board)
    twice = sum(len(b) > 1 for b in boards.values())
    assert twice > 0  # the H200's stencil rows of 2026-11-29 repeat configurations of 2026-11-26's boards
    line = next(x for x in shipped_blocks["figures:protocol2"].splitlines() if "Measured again on another board" in x)
    assert f"`stencil` {twice:,} configurations, median " in line
