"""The package's import graph has no cycle, between modules or between folders: each folder is one layer
(foundation -> store -> suites -> tasks -> results -> sandbox -> models -> board). Every import counts: at module
level, inside a function, and under ``if TYPE_CHECKING:`` too (a type a lower layer needs lives in that layer or is
a structural ``Protocol``)."""

from __future__ import annotations

import ast
import functools
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package_dir: Path) -> dict[str, Path]:
    out = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import node, wherever it sits (``if TYPE_CHECKING:`` bodies included)."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from pkg import sub`` counts as importing ``pkg.sub``)."""
    mods = _modules(package_dir)
    top = package_dir.name

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for name in names:
                target = owner(name) if name.split(".")[0] == top else None
                if target and target != mod:
                    graph[mod].add(target)
    return graph


@functools.cache
def package_graph() -> dict[str, set[str]]:
    return import_graph(ROOT / "kgpubench")


def cycle_of(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def test_the_package_has_no_import_cycle():
    graph = package_graph()
    assert len(graph) > 80 and "kgpubench.store.validation" in graph["kgpubench.store.store"]  # it sees the edges
    assert cycle_of(graph) is None


@pytest.mark.parametrize("low, high", [
    ("kgpubench.store.card", "kgpubench.store.store"), ("kgpubench.store.validation", "kgpubench.store.store"),
    ("kgpubench.results.result", "kgpubench.models.evaluation"),
    ("kgpubench.tasks.data", "kgpubench.results.result"), ("kgpubench.tasks.data", "kgpubench.models.evaluation"),
    ("kgpubench.models.evaluation", "kgpubench.board.leaderboard"),
    ("kgpubench.models.submission", "kgpubench.board.leaderboard"),
    ("kgpubench.measure.backends.base", "kgpubench.measure.backends.fake"),
    ("kgpubench.measure.backends.base", "kgpubench.measure.backends.cupy_backend"),
    ("kgpubench.results.ownership", "kgpubench.board.leaderboard"),
    ("kgpubench.hardware", "kgpubench.measure"), ("kgpubench.store.validation", "kgpubench.store.checks"),
])
def test_the_three_old_loops_point_one_way(low, high):
    """The lower module reaches nothing above it, not even through others."""
    graph = package_graph()
    seen, todo = set(), [low]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    assert high not in seen


# docs/DEVELOPING.md's architecture table: each layer is its folders (and the few modules at the top of the
# package). A module imports its own layer and the layers before it, never a later one.
LAYERS = (
    ("foundation", ("foundation", "registry", "schema", "errors", "resources", "hardware", "buildinfo", "sources")),
    ("store", ("store",)),
    ("suites", ("measure", "features", "importers")),
    ("tasks", ("tasks",)),
    ("results", ("results",)),
    ("sandbox", ("sandbox",)),
    # testing: the suites' and backends' checks, and check_model, which runs a model (nothing in the package imports it)
    ("models", ("models", "testing")),
    ("board", ("board", "ray", "cli", "__main__", "")),
)
# every folder of the package and every module at its top
TOP_LEVEL = {p.stem if p.suffix else p.name for p in (ROOT / "kgpubench").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").is_file())}


def layer_of(module: str) -> int:
    """Index in :data:`LAYERS` of the folder (or top-level module) holding ``module`` (``""``: the package)."""
    name = module.removeprefix("kgpubench").removeprefix(".")
    top = name.split(".")[0]
    found = [i for i, (_, names) in enumerate(LAYERS) if top in names]
    assert found, f"{module} has no layer in LAYERS (docs/DEVELOPING.md): add its folder"
    return found[0]


def test_the_layers_name_each_folder_once_and_every_folder():
    """A folder is one layer: the table names folders (no module inside one), each once, and all of them."""
    named = [n for _, names in LAYERS for n in names if n]
    assert len(named) == len(set(named)) and all("." not in n for n in named)
    assert set(named) == TOP_LEVEL, (sorted(set(named) - TOP_LEVEL), sorted(TOP_LEVEL - set(named)))


def test_every_import_points_to_the_same_or_an_earlier_layer():
    graph = package_graph()
    down = sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))
    assert down == []
    assert layer_of("kgpubench.tasks.export") == 3 and layer_of("kgpubench.importers.api") == 2
    assert layer_of("kgpubench.tasks.loading") == 3 and layer_of("kgpubench.store.store") == 1
    assert layer_of("kgpubench.tasks.data") == 3 and layer_of("kgpubench.models.evaluation") == 6  # task data, models
    assert layer_of("kgpubench.foundation.capped") == 0 and layer_of("kgpubench") == len(LAYERS) - 1


def folder_of(module: str) -> str:
    """The folder (or top-level module) of the package that holds ``module``; the package's own ``__init__`` is
    ``kgpubench``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Folder -> the other folders (and top-level modules) its modules import."""
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        out.setdefault(folder_of(a), set()).update(folder_of(b) for b in targets if folder_of(b) != folder_of(a))
    return out


def test_no_folder_level_import_cycle():
    """Folders are the layers: no two folders (the package's own ``__init__`` counted as one) reach each other."""
    folders = folder_graph(package_graph())
    assert {"store", "tasks", "importers", "results", "models", "foundation", "kgpubench"} <= set(folders)
    assert "tasks" in folders["models"] and "foundation" in folders["store"]  # it sees the edges
    assert cycle_of(folders) is None


def test_the_folder_check_finds_a_cycle_between_folders_of_acyclic_modules(tmp_path):
    """Two folders reaching each other through different modules: no module-level cycle, a folder-level one."""
    pkg = tmp_path / "toy"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("import json\n")
    (pkg / "high" / "b.py").write_text("from toy.low import a\n")
    (pkg / "low" / "c.py").write_text("def f():\n    from toy.high import b\n")
    graph = import_graph(pkg)
    assert cycle_of(graph) is None
    assert folder_graph(graph) == {"toy": set(), "low": {"high"}, "high": {"low"}}
    assert sorted(set(cycle_of(folder_graph(graph)))) == ["high", "low"]
    (pkg / "low" / "c.py").write_text("import json\n")
    assert cycle_of(folder_graph(import_graph(pkg))) is None


def test_importing_a_module_runs_no_package_init_of_a_later_layer():
    """``import a.b.c`` first runs ``a/__init__`` and ``a/b/__init__``: what those import is imported too, so a
    package whose ``__init__`` re-exports a later layer's module cannot hide under an early layer's submodule."""
    graph = package_graph()

    def runs(pkg: str) -> int:  # the latest layer a package's __init__ imports (-1: it imports nothing)
        return max((layer_of(t) for t in graph[pkg]), default=-1)

    up = sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b}, which runs {pkg}/__init__ ({LAYERS[runs(pkg)][0]})"
                for a, targets in graph.items() for b in targets
                for pkg in (b.rsplit(".", n)[0] for n in range(1, b.count(".")))
                if pkg in graph and not (a == pkg or a.startswith(pkg + ".")) and runs(pkg) > layer_of(a))
    assert up == []


def test_the_checker_finds_a_cycle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toy.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("import json\n")
    graph = import_graph(pkg)
    assert graph == {"toy": set(), "toy.sub": set(), "toy.a": {"toy.sub.b"}, "toy.sub.b": {"toy.c"}, "toy.c": set()}
    assert cycle_of(graph) is None
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import toy.a\n")
    assert sorted(set(cycle_of(import_graph(pkg)))) == ["toy.a", "toy.c", "toy.sub.b"]


def test_the_top_of_the_package_holds_at_most_eight_modules():
    """The folder list shows the layers: everything else lives in a layer's folder."""
    top = sorted(p.name for p in (ROOT / "kgpubench").glob("*.py"))
    assert len(top) <= 8, top
    assert {"foundation", "store", "tasks", "results", "sandbox", "models", "board", "ray"} <= TOP_LEVEL
