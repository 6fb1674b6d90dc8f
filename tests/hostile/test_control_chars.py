"""Hostile text (issue 40 item 3): a control character (ESC, BEL, NUL, a newline) or a bidi override in any text
value of any table is refused by the schema, in one line naming the row and the column, on every path that
takes rows (a shard, a merge, an importer); what kgpubench prints that came from data or model code is escaped."""

from __future__ import annotations

import gzip

import pytest
from cli_helpers import cli

from kgpubench.board.summary import result_summary
from kgpubench.cli.failure import escape, one_line
from kgpubench.errors import ONE_LINE_RULE, escape_text, is_printable_line
from kgpubench.results.result import Result
from kgpubench.schema import TABLES
from kgpubench.store.shards import write_shard
from kgpubench.store.validation import validate_table
from kgpubench.testing import valid_row, valid_table

# OSC "set the window title", then "clear the screen": what the probe put in a GPU name.
TERMINAL = "RTX \x1b]0;owned\x07\x1b[2J"
HOSTILE = {"ESC and BEL": TERMINAL, "NUL": "RTX\x002080", "newline": "RTX\nerror: forged", "tab": "RTX\t2080",
           "right-to-left override": "RTX \u202e0802", "first-strong isolate": "RTX \u2068x\u2069",
           "zero-width space": "RTX\u200b2080", "DEL": "RTX\x7f", "C1 CSI": "RTX\x9b2J"}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_rule_refuses_each_hostile_character(name):
    assert not is_printable_line(HOSTILE[name])
    shown = escape_text(HOSTILE[name])
    assert is_printable_line(shown) and "\x1b" not in shown


def test_printable_text_passes_unchanged():
    for text in ("NVIDIA GeForce RTX 2080 Ti", "AMD Instinct MI250X / MI250", "µs", "Ü ß 日本", "a b"):
        assert is_printable_line(text) and escape_text(text) == text


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_gpu_name_with_a_hostile_character_is_one_violation_naming_row_and_column(name):
    rows = [valid_row("kernels"), valid_row("kernels", gpu_name=HOSTILE[name])]
    found = [v for v in validate_table(valid_table("kernels", rows), "kernels") if v.rule == ONE_LINE_RULE]
    assert [(v.row, v.column) for v in found] == [(1, "gpu_name")]
    assert "\n" not in str(found[0]) and "\x1b" not in str(found[0])


def test_every_string_column_of_every_table_is_checked():
    """Each text column (and list of text, and parameter names and values) of every table: new tables inherit
    the rule from the shared machinery. One table per config, row ``i`` hostile in its ``i``-th text column only:
    each row is flagged in its own column and nowhere else (one validation per table, not per column)."""
    checked = 0
    for name, decl in TABLES.items():
        rows, columns = [], []
        for col in decl.columns:
            if col.name == "row_id":
                continue
            if col.type in ("string", "list<string>", "params_text", "sources"):
                value = {"string": "ok\x1b[2J", "list<string>": ["ok", "x\x07"],
                         "params_text": [{"name": "a\x00", "value": "1"}],
                         "sources": [{"name": "gpu_tdp_w", "value": "\u202edbgpu"}]}[col.type]
            elif col.type == "params":
                value = [{"name": "bx\x1b", "value": 1.0}]
            else:
                continue
            rows.append(valid_row(name, **{col.name: value}))
            columns.append(col.name)
        table = valid_table(name, rows)
        found = sorted((v.row, v.column) for v in validate_table(table, name) if v.rule == ONE_LINE_RULE)
        assert found == list(enumerate(columns)), name
        checked += len(columns)
    assert checked > 40


def test_a_shard_with_a_hostile_gpu_name_is_refused_by_validate_and_merge(tmp_path, monkeypatch, capsys):
    shard = write_shard(valid_table("kernels", gpu_name=TERMINAL), tmp_path / "bad.parquet", "kernels")
    store = tmp_path / "store"
    code, out, err = cli(monkeypatch, capsys, "validate", shard)
    assert code == 1 and "gpu_name" in out + err and "row 0" in out + err and "\x1b" not in out + err
    code, out, err = cli(monkeypatch, capsys, "merge", shard, "--into", store)
    (line,) = err.splitlines()
    assert code == 1 and "row 0, column 'gpu_name'" in line and "one line of printable text" in line
    assert "\x1b" not in out + err and not (store / "manifest.json").exists()


def test_a_neusight_kernel_name_with_escapes_is_refused_and_nothing_written(tmp_path, monkeypatch, capsys):
    header = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name", "Warps per SM",
              "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y", "Block z", "CUDA Version", "B",
              "H"]
    row = ["ln", "0.05", "Tesla T4", "p2.1.0", "8902", "k\x1b]0;owned\x07", "1.0", "0.5", "1", "1", "1", "128",
           "1", "1", "cu121", "60", "272"]
    path = tmp_path / "ns" / "data" / "dataset" / "train" / "collect" / "ln" / "p2.1.0" / "Tesla T4.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress((",".join(header) + "\n" + ",".join(row) + "\n").encode()))
    (tmp_path / "ns" / "LICENSE").write_text("MIT\n")
    out = tmp_path / "o.parquet"
    code, stdout, err = cli(monkeypatch, capsys, "import", "neusight", tmp_path / "ns", "--out", out)
    assert code == 1 and "\x1b" not in stdout + err and "\x07" not in stdout + err
    (line,) = err.splitlines()
    assert "kernel_name" in line and "one line of printable text" in line, line
    assert not out.exists()


def test_printed_messages_are_escaped():
    assert escape(TERMINAL) == "RTX \\x1b]0;owned\\x07\\x1b[2J"
    assert escape("[bold]x\x1b") == "\\[bold]x\\x1b"  # rich markup escaped too
    assert one_line("a\nb\x1b[2J") == "a b\\x1b[2J"
    result = Result(model="m\u202eevil", task="npb-tpb", scheme="by-gpu", status="failed", seed=0,
                    message=f"ValueError: {TERMINAL}\nsecond line")
    text = result_summary(result)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert text.count("\n") == 2 and "\\x1b]0;owned" in text


def test_printable_text_beyond_ascii_passes_validation_and_a_hostile_value_among_it_is_found():
    """Values of printable ASCII alone pass without a look in Python; any other character is looked at: printable
    non-ASCII text passes, a hostile character (the C1 CSI and DEL are outside ASCII's printable range) is the
    one violation, on its row, wherever it sits among thousands of plain values."""
    texts = ["NVIDIA GeForce RTX 2080 Ti", "µs", "Ü ß 日本", "a b", "~!{}", ""]
    rows = [valid_row("kernels", gpu_name=texts[i % len(texts)]) for i in range(3000)]
    rows[1234] = valid_row("kernels", gpu_name=HOSTILE["C1 CSI"])
    rows[2999] = valid_row("kernels", gpu_name=HOSTILE["DEL"])
    found = [v for v in validate_table(valid_table("kernels", rows), "kernels") if v.rule == ONE_LINE_RULE]
    assert [(v.row, v.column, v.value) for v in found] == [(1234, "gpu_name", HOSTILE["C1 CSI"]),
                                                           (2999, "gpu_name", HOSTILE["DEL"])]


def test_a_hostile_value_is_found_on_its_row_in_any_chunk_of_a_sliced_column():
    """A column read from several parts is several chunks, and a slice starts inside one: the row a violation
    names counts from the table's first row, for text, lists of text and (name, value) structs alike."""
    import pyarrow as pa

    first = valid_table("autotune", [valid_row("autotune") for _ in range(5)])
    hostile = {"gpu_name": "RTX\x1b[2J", "params": [{"name": "bx", "value": 1.0}, {"name": "b\x07", "value": 2.0}],
               "gpu_specs_source": [{"name": "gpu_tdp_w", "value": "db\u202egpu"}]}
    rows = [valid_row("autotune") for _ in range(6)]
    rows[3] = valid_row("autotune", **hostile)
    second = valid_table("autotune", rows)
    table = pa.concat_tables([first, second]).slice(2)  # chunks of 3 and 6 rows, the first one offset by 2
    assert table["gpu_name"].num_chunks == 2
    found = sorted((v.row, v.column) for v in validate_table(table, "autotune") if v.rule == ONE_LINE_RULE)
    assert found == [(6, "gpu_name"), (6, "gpu_specs_source"), (6, "params")]
