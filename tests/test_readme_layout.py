"""README's "Layout" section is true: every path it names exists, it names every folder of the package and every
top-level folder of the repository, and the modules it names are where it says."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = {"__pycache__", "_bundled", "build", "dist"}  # made by Python, the wheel build or `make demo`


def layout_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Layout\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def named_paths(section: str) -> list[str]:
    """Every backticked path of the section (a token with a ``/`` or a ``.py``/``.md`` suffix)."""
    return [t for t in re.findall(r"`([^`\s]+)`", section) if "/" in t or t.endswith((".py", ".md"))]


def tracked_folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in IGNORED
            and any(p.rglob("*.*"))}


def test_every_path_the_layout_names_exists():
    names = named_paths(layout_section())
    assert len(names) > 20  # it sees the section's paths
    missing = [n for n in names if not (ROOT / n).exists()]
    assert missing == []


def test_the_layout_names_every_package_folder_and_every_top_level_folder():
    names = set(named_paths(layout_section()))
    package = {f"kgpubench/{d}/" for d in tracked_folders(ROOT / "kgpubench")}
    assert {"kgpubench/store/", "kgpubench/board/", "kgpubench/sandbox/"} <= package
    assert sorted(package - names) == []
    top = {f"{d}/" for d in tracked_folders(ROOT) if d != ".venv"}
    assert {"kgpubench/", "baselines/", "tests/"} <= top
    assert sorted(top - names) == []


def test_the_checker_finds_a_stale_module_name(tmp_path):
    section = "## Layout\n`kgpubench/` the library (`kgpubench/store.py`, `kgpubench/tasks/loading.py`), `tests/`.\n"
    assert named_paths(section) == ["kgpubench/", "kgpubench/store.py", "kgpubench/tasks/loading.py", "tests/"]
    assert [n for n in named_paths(section) if not (ROOT / n).exists()] == ["kgpubench/store.py"]
