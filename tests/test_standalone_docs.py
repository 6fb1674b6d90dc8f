"""The project stands alone: no document it ships points into the team's ``../shared`` folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `../shared/...` or a bare `shared/<folder>` path (a cluster path such as `/shared/shards` is not one).
POINTER = re.compile(r"\.\./shared\b|(?<![\w/.-])shared/(?:external|seeds|measured|withheld|SEEDS|DESIGN|SPEC)")


def documents() -> list[Path]:
    docs = [ROOT / n for n in ("README.md", "CONTRIBUTING.md", "DATASET_CARD.md")]
    docs += sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "leaderboard").glob("*.md"))
    docs += sorted((ROOT / "leaderboard").glob("*.html")) + [ROOT / "kgpubench" / "data" / "README.md"]
    return [d for d in docs if d.exists()]


def test_no_shipped_document_points_into_shared():
    found = [f"{d.relative_to(ROOT)}:{i}: {line.strip()[:80]}" for d in documents()
             for i, line in enumerate(d.read_text().splitlines(), 1) if POINTER.search(line)]
    assert found == []
    assert (ROOT / "docs" / "DESIGN.md").exists()  # the architecture page travels with the project


def test_the_pattern_finds_a_pointer_and_spares_a_cluster_path():
    assert POINTER.search("read ../shared/DESIGN.md first")
    assert POINTER.search("files in `shared/measured/h100/`")
    assert not POINTER.search("kgpubench collect --ray auto --out /shared/shards")
