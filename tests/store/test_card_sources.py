"""The card's sources block: every source of the rows with its citation, licence and rows per GPU."""

from __future__ import annotations

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES
from kgpubench.sources import BENCHMARK_HUB, KNOWN_SOURCES, citation_line
from kgpubench.store.card import sources_table
from kgpubench.store.store import Store


def _rows_by_source(store: Store) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for config in TABLES:
        for entry in store.files(config):
            t = pq.read_table(store.path / entry["path"], columns=["source"])
            for d in pc.value_counts(t["source"]).to_pylist():
                out[(d["values"], config)] = out.get((d["values"], config), 0) + d["counts"]
    return out


@pytest.mark.slow
def test_every_source_of_the_shipped_rows_is_cited_with_its_licence_and_row_counts():
    store = Store(default_data_dir())
    block = sources_table(store)
    counts = _rows_by_source(store)
    sources = {s for s, _ in counts}
    for source in sources:
        line = next(x for x in block.splitlines() if x.startswith(f"| `{source}` |"))
        for (s, config), n in counts.items():
            if s == source:
                assert f"{config} {n}" in line
        if source.startswith("imported:"):
            prov = KNOWN_SOURCES[source.removeprefix("imported:")]  # every imported source is a known one
            assert prov.title and prov.authors and prov.year and prov.license and prov.attribution
            assert citation_line(prov) in line and f"| {prov.license} |" in line
    # the benchmark hub's citation, spelt out
    assert citation_line(BENCHMARK_HUB) == ("Floris-Jan Willemsen, Rob V. van Nieuwpoort, Ben van Werkhoven, \"FAIR "
                                            "Benchmark Hub for Auto-Tuning\", Zenodo (data set), 2025, "
                                            "doi:10.5281/zenodo.15364124")


def test_rows_per_gpu_per_source_add_up_to_the_store(tmp_path):
    store = Store(default_data_dir())
    block = sources_table(store).split("Rows per GPU per source:")[1]
    total = 0
    for line in block.splitlines():
        if line.startswith("| `"):
            for part in line.rsplit("|", 2)[1].split(","):
                total += int(part.split()[-1])
    assert total == sum(store.rows(c) for c in TABLES)


def test_an_empty_store_has_no_sources(tmp_path):
    assert sources_table(Store(tmp_path / "empty")) == "No rows yet.\n"


def test_the_committed_board_cites_the_sources_of_every_imported_task():
    from kgpubench.resources import source_checkout
    from kgpubench.tasks import list_tasks

    root = source_checkout()
    readme = (root / "leaderboard" / "README.md").read_text()
    imported = [t for t in list_tasks() if t.sources]
    assert "autotune-config" in {t.name for t in imported}
    for task in imported:
        page = (root / "leaderboard" / f"task-{task.name}.html").read_text()
        for name in task.sources:
            prov = KNOWN_SOURCES[name]
            assert citation_line(prov) in readme
            assert prov.title in page and str(prov.year) in page


def test_a_task_naming_an_unknown_source_is_refused():
    import dataclasses

    import pytest

    from kgpubench.tasks import get_task

    with pytest.raises(ValueError, match="not in kgpubench.sources.KNOWN_SOURCES"):
        dataclasses.replace(get_task("autotune-config"), sources=("nowhere",))


@pytest.mark.slow
def test_one_gpu_has_one_name_across_every_shipped_config():
    """Rows of the same GPU (the same catalogue entry) carry the same gpu_name whatever their source, so that
    cross-GPU work can join the configs on it (CLBlast's Kepler/Maxwell cards were once 'NVIDIA GeForce ...'
    while gpuperfpredict's were 'GeForce ...')."""
    import pyarrow.compute as pc

    import kgpubench

    names: dict[str, set[str]] = {}
    for config in TABLES:
        table = kgpubench.load_dataset(config, format="arrow").select(["gpu_name", "gpu_catalogue_name"])
        pairs = table.group_by(["gpu_catalogue_name", "gpu_name"]).aggregate([]).to_pylist()
        for p in pairs:
            if p["gpu_catalogue_name"] is not None:
                names.setdefault(p["gpu_catalogue_name"], set()).add(p["gpu_name"])
    assert {k: v for k, v in names.items() if len(v) > 1} == {}
    assert names["GeForce GTX 970"] == {"GeForce GTX 970"} and len(names) >= 30
    assert pc.count_distinct(kgpubench.load_dataset("profiles", format="arrow")["gpu_name"]).as_py() == 8


# -- the seed studies ------------------------------------------------------------------------------------------
def test_every_seed_study_is_declared_with_its_citation_fields():
    import pytest

    from kgpubench.sources import SEED_STUDIES, cite, seed_study

    assert list(SEED_STUDIES) == ["000", "001", "002", "003"]
    for sid, s in SEED_STUDIES.items():
        assert seed_study(sid) is s and s.title and len(s.authors) == len(s.surnames) >= 2
        line = cite(sid)
        assert s.title in line and ", ".join(s.authors) in line
        assert (s.link in line) if s.link else ("http" not in line)
    wang = seed_study("002")
    assert (wang.short, wang.year, wang.url) == ("Wang and Chen 2013", 2013, "http://www.jos.org.cn/1000-9825/4361.htm")
    assert "Journal of Software" in wang.venue and "24(8):1746-1760" in wang.venue
    assert seed_study("003").url == "https://proceedings-sol.sbc.org.br/index.php/sscad/article/view/30999"
    assert "SSCAD" in seed_study("003").venue and seed_study("003").short == "da Silva et al."
    assert seed_study("000").short == "Riahi et al. 2024"
    # what no source states stays unknown, never guessed
    assert seed_study("001").venue is None and seed_study("001").year is None and seed_study("001").link is None
    with pytest.raises(KeyError, match="000, 001, 002, 003"):
        seed_study("004")


def test_the_card_names_every_seed_study_and_no_bare_seed_id_in_its_own_text():
    import re

    from kgpubench.resources import source_checkout
    from kgpubench.sources import SEED_STUDIES
    from kgpubench.store.card import CARD_PATH, seed_studies_table

    if source_checkout() is None:
        return
    text = CARD_PATH.read_text()
    block = text.split("<!-- BEGIN kgpubench:seeds -->\n")[1].split("<!-- END kgpubench:seeds -->")[0]
    assert block == seed_studies_table()
    for s in SEED_STUDIES.values():
        row = next(x for x in block.splitlines() if x.startswith(f"| {s.id} | {s.short} |"))
        assert s.title in row and ", ".join(s.authors) in row and (s.link or "not found") in row
    # neither the hand-written text nor the field tables (the schema's column docs) use a bare seed id
    assert not re.search(r"seed 00\d", text, re.I)
