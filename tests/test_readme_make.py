"""The README says exactly what `make test` installs: the Makefile's extras, and the system package its
`browser` step installs as root."""

from __future__ import annotations

import re
from pathlib import Path

try:  # Python 3.11 has tomllib; 3.10 (requires-python) gets tomli from the dev extra
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
INSTALLS = "What `make test` installs:"


def _makefile() -> str:
    return (ROOT / "Makefile").read_text()


def _targets(makefile: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each rule's target -> (prerequisites, recipe lines); variables in targets are kept as written."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for line in makefile.splitlines():
        if line.startswith("\t") and current is not None:
            rules[current][1].append(line.strip())
            continue
        m = re.match(r"^([^\s:=#][^:=]*):(?!=)(.*)$", line)
        current = None
        if m and not m.group(1).startswith("."):
            current = m.group(1).strip()
            rules[current] = (m.group(2).replace("|", " ").split(), [])
    return rules


def _needs(rules, target: str, seen: set[str] | None = None) -> set[str]:
    """``target`` and every rule it depends on, transitively."""
    seen = set() if seen is None else seen
    if target in seen or target not in rules:
        return seen
    seen.add(target)
    for dep in rules[target][0]:
        _needs(rules, dep, seen)
    return seen


def _test_installs() -> tuple[set[str], list[str]]:
    """The extras the rules `make test` runs install with pip, and their apt-get install commands."""
    rules = _targets(_makefile())
    needed = _needs(rules, "test")
    recipes = [line for target in needed for line in rules[target][1]]
    extras = set()
    for line in recipes:
        for group in re.findall(r'pip install[^"]*"\.\[([^\]]*)\]"', line):
            extras |= {e.strip() for e in group.split(",")}
    apt = [m for line in recipes for m in re.findall(r"apt-get install (?:-\S+ )+[a-z0-9.+-]+", line)]
    return extras, apt


def _readme_paragraph() -> str:
    text = (ROOT / "README.md").read_text()
    assert text.count(INSTALLS) == 1, f"README.md: one paragraph starting {INSTALLS!r}"
    return " ".join(text.split(INSTALLS, 1)[1].split("\n\n", 1)[0].split())


def test_the_rules_make_test_runs_are_found():
    extras, apt = _test_installs()
    assert "dev" in extras and len(extras) >= 2  # lint's $(STAMP) install, reached through test -> lint
    assert apt and all("chromium" in cmd for cmd in apt)


def test_readme_names_every_extra_make_test_installs_and_only_those():
    extras, _ = _test_installs()
    paragraph = _readme_paragraph()
    m = re.search(r"with the extras (.+?)\. Outside", paragraph)
    assert m, paragraph
    named = set(re.findall(r"`([a-z0-9_-]+)`", re.sub(r"\([^)]*\)", "", m.group(1))))
    assert named == extras
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras <= set(declared)


def test_readme_names_the_system_package_and_when_it_is_installed():
    _, apt = _test_installs()
    paragraph = _readme_paragraph()
    for cmd in apt:
        package = cmd.split()[-1]
        assert f"Debian's `{package}` package" in paragraph
        flags = " ".join(f for f in cmd.split() if f.startswith("--"))
        assert f"`apt-get install {flags} {package}`" in paragraph
    makefile = _makefile()
    # the Makefile installs it only as root; the README says so, and what happens otherwise
    assert '"$$(id -u)" = 0' in makefile and "as root" in paragraph and "skips" in paragraph
    assert "apt-get update" in makefile and "apt-get update" in paragraph
    # the quick-start line says it too
    quick = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("make test "))
    assert "chromium" in quick and "extras" in quick
