"""The folder importers' fast row ids (arrow-built key texts hashed from buffers, MIOpen's pre-hashed line heads)
are byte for byte the canonical per-row definition, :func:`kgpubench.schema.row_id_of`, on slices of the staged
upstream files; and MIOpen's rows come out in the promised order (file, line, row id)."""

from __future__ import annotations

import bz2
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgpubench.importers.aiconfigurator import import_aiconfigurator
from kgpubench.importers.miopen import PROBLEM_COLUMNS, PROBLEM_TABLE, import_miopen
from kgpubench.schema import get_table, row_id_of

pytestmark = pytest.mark.usefixtures("_staged_licence")

EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"
FDB = EXTERNAL / "miopen" / "perfdb"
AIC = EXTERNAL / "aiconfigurator" / "data"
# Two GPUs, both entry formats and 2-D and 3-D keys among their first lines.
FDB_FILES = ("gfx906_60.HIP.fdb.txt.bz2", "gfx90a6e.HIP.fdb.txt.bz2")
AIC_TABLES = ("b200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet",
              "a100_sxm/attention/vllm/0.14.0/context_attention_perf.parquet",
              "gb200/attention/sglang/0.5.14/generation_attention_perf.parquet")
LINES = 1500
ROWS = 3000


def _reference(config: str, table) -> list[str]:
    """Each row's id by the canonical definition, one Python call per row."""
    keys = get_table(config).key_columns
    return [row_id_of(config, {k: row[k] for k in keys}) for row in table.select(keys).to_pylist()]


@pytest.mark.skipif(not all((FDB / f).is_file() for f in FDB_FILES), reason="../shared/external/miopen not staged")
def test_miopen_ids_and_order_on_staged_lines(tmp_path):
    root = tmp_path / "fdb"
    root.mkdir()
    for name in FDB_FILES:
        with bz2.open(FDB / name, "rb") as fh:
            head = b"".join(fh.readline() for _ in range(LINES))
        (root / name.removesuffix(".bz2")).write_bytes(head)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = import_miopen(root)
    assert table.num_rows > LINES  # several solvers per line
    assert table["row_id"].to_pylist() == _reference("convolutions", table)
    problems = table.select(list(PROBLEM_COLUMNS)).to_pylist()
    assert table["problem_id"].to_pylist() == [row_id_of(PROBLEM_TABLE, p) for p in problems]
    order = list(zip(*(table[c].to_pylist() for c in ("source_file", "source_line", "row_id"))))
    assert order == sorted(order) and len(set(order)) == len(order)
    assert set(table["spatial_dims"].to_pylist()) == {2, 3}
    assert set(table["entry_format"].to_pylist()) >= {"solver-first"}


@pytest.mark.skipif(not all((AIC / t).is_file() for t in AIC_TABLES), reason="../shared/external/aiconfigurator "
                    "not staged")
def test_aiconfigurator_ids_on_staged_rows(tmp_path):
    root = tmp_path / "data"
    for rel in AIC_TABLES:
        (root / rel).parent.mkdir(parents=True)
        pq.write_table(pq.read_table(AIC / rel).slice(0, ROWS), root / rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = import_aiconfigurator(tmp_path)
    assert table.num_rows == sum(min(ROWS, pq.read_metadata(AIC / rel).num_rows) for rel in AIC_TABLES)
    assert set(table["operator"].to_pylist()) == {"gemm", "context_attention", "generation_attention"}
    assert table["row_id"].to_pylist() == _reference("llm_operators", table)
