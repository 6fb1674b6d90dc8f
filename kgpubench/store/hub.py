"""A store folder as a Hugging Face dataset repository: its README's configs, the files to upload, a check of
the layout and the upload itself.

A store is laid out the way the Hub reads a dataset repository: ``README.md`` (YAML ``configs`` with each
config's ``data_files`` and ``dataset_info`` with its ``features``, then the card), ``croissant.json``,
``manifest.json`` and ``<config>/part-*.parquet``. So both ``datasets.load_dataset(<store>, "<config>")``
offline and, once uploaded, ``datasets.load_dataset("<org>/<name>", "<config>")`` give the rows that
``kgpubench.load_dataset("<config>", data_dir=<store>)`` gives.

A config without rows is declared too, with the declared features and a data file name that says it is empty:
``datasets`` cannot build a split of zero rows, so loading it stops with ``FileNotFoundError`` naming
``<config>/NO ROWS YET ...``; ``kgpubench.load_dataset`` returns an empty table with the declared columns.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import yaml

from kgpubench.errors import SchemaValidationError
from kgpubench.schema import TABLES
from kgpubench.store.card import SPLIT, empty_data_files, hf_features, hub_configs  # noqa: F401 - re-exported
from kgpubench.store.croissant import CROISSANT
from kgpubench.store.store import MANIFEST, README, Store


def upload_files(store: Store) -> list[str]:
    """The files of a dataset repository made from ``store`` (relative paths): the README, the Croissant
    metadata, the manifest and every part it lists; never locks, temp files or orphaned parts."""
    parts = [f["path"] for c in store.configs() for f in store.files(c)]
    return [README, CROISSANT, MANIFEST, *parts]


def readme_yaml(store: Store) -> dict:
    """The YAML header of the store's README.md (empty when there is none)."""
    path = store.path / README
    if not path.is_file():
        return {}
    text = path.read_text()
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        return {}
    return yaml.safe_load(text[4:text.index("\n---\n", 3)]) or {}


def check_layout(store: Store) -> list[str]:
    """What would keep the Hub (or plain ``datasets``) from reading ``store`` as kgpubench does, one line each:
    missing files, README configs or features that differ from the manifest and the schema, parts whose
    columns are not the declared ones (``datasets`` casts every file to the card's features)."""
    problems = []
    for rel in upload_files(store):
        if not (store.path / rel).is_file():
            fix = "`kgpubench validate --repair` regenerates it" if rel in (README, CROISSANT) else "restore it"
            problems.append(f"{store.path / rel}: missing; {fix}.")
    meta = readme_yaml(store)
    configs, infos = hub_configs(store)
    if meta.get("configs") != configs:
        problems.append(f"{store.path / README}: its `configs` do not list the manifest's files of every table; "
                        f"`kgpubench validate --repair {store.path}` regenerates it.")
    if meta.get("dataset_info") != infos:
        problems.append(f"{store.path / README}: its `dataset_info` features are not the declared schema; "
                        f"`kgpubench validate --repair {store.path}` regenerates it.")
    for config in store.configs():
        declared = TABLES[config].arrow_schema()
        for entry in store.files(config):
            path = store.path / entry["path"]
            if not path.is_file():
                continue
            schema = pq.read_schema(path).remove_metadata()
            if not schema.equals(declared.remove_metadata()):
                missing = sorted(set(declared.names) - set(schema.names))
                problems.append(f"{path}: columns differ from the declared {config} schema "
                                f"({len(missing)} missing: {', '.join(missing[:5]) or 'types differ'}); plain "
                                "`datasets` cannot cast it to the card's features. Merge its rows anew.")
    return problems


def push_to_hub(store: Store | Path | str, repo_id: str, *, token: str | None = None, private: bool = False,
                commit_message: str | None = None, api=None) -> list[str]:
    """Upload ``store`` as the dataset repository ``repo_id`` (created when missing); returns the files sent.

    Refuses (``SchemaValidationError``) when :func:`check_layout` finds a problem. ``api`` is a
    ``huggingface_hub.HfApi`` (default: a new one with ``token``).
    """
    store = store if isinstance(store, Store) else Store(store)
    problems = check_layout(store)
    if problems:
        raise SchemaValidationError(f"{store.path} is not ready to upload: {problems[0]}"
                                    + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    files = upload_files(store)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=str(store.path), allow_patterns=files,
                      commit_message=commit_message or f"kgpubench dataset version {store.version}")
    return files
