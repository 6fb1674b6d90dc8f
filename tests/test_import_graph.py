"""The package's import graph has no cycle: data flows one way (suites -> shards -> store -> tasks/splits ->
models -> results -> board). Every import counts: at module level, inside a function, and under
``if TYPE_CHECKING:`` too (a type a lower layer needs lives in that layer or is a structural ``Protocol``)."""

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
    ("kgpubench.board.result", "kgpubench.board.evaluation"),
    ("kgpubench.tasks.data", "kgpubench.board.result"), ("kgpubench.tasks.data", "kgpubench.board.evaluation"),
    ("kgpubench.board.evaluation", "kgpubench.board.leaderboard"),
    ("kgpubench.board.submission", "kgpubench.board.leaderboard"),
    ("kgpubench.measure.backends.base", "kgpubench.measure.backends.fake"),
    ("kgpubench.measure.backends.base", "kgpubench.measure.backends.cupy_backend"),
    ("kgpubench.board.ownership", "kgpubench.board.leaderboard"),
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


# docs/DEVELOPING.md's architecture table: a module imports its own layer and the layers before it, never later.
LAYERS = (
    ("foundations", ("errors", "registry", "resources", "schema", "store.identity", "store.locking", "store.shards",
                     "store.view", "hardware", "buildinfo", "sources")),
    ("rows", ("store.validation", "store.card", "store.card_figures", "store.croissant")),
    # the importers' package (its __init__ re-exports api, common and t4) sits below the store: store.bundle reads
    # through importers.limits, and importing any importer runs the package's __init__
    ("suites", ("measure", "features", "importers")),
    ("store", ("store", "store.store", "store.checks", "store.bundle", "store.hub", "store.upgrade")),
    # the T4 export reads through load_dataset
    ("tasks", ("tasks", "store.loading", "importers.export")),
    ("result records", ("board", "board.result", "board.ownership", "board.tolerance", "board.sees")),
    # testing: the suites' and backends' checks, and check_model, which runs a model (nothing in the package imports it)
    ("models", ("sandbox", "board.evaluation", "board.fewshot", "board.submission", "board.model_checks", "testing")),
    ("board", ("board.leaderboard", "board.counts", "board.render", "board.ranking", "board.budget", "board.site",
               "board.pull_request", "board.summary", "board.predict", "board.answer", "board.roofline_transfer", "ray",
               "cli", "__main__", "")),
)


def layer_of(module: str) -> int:
    """Index in :data:`LAYERS` of the longest prefix naming ``module`` (``""``: the package itself)."""
    name = module.removeprefix("kgpubench").removeprefix(".")
    best = max(((len(p), i) for i, (_, prefixes) in enumerate(LAYERS) for p in prefixes
                if name == p or (p and name.startswith(p + "."))), default=None)
    assert best is not None, f"{module} has no layer in LAYERS (docs/DEVELOPING.md): add it"
    return best[1]


def test_every_import_points_to_the_same_or_an_earlier_layer():
    graph = package_graph()
    # ``kgpubench`` itself (``__version__``, the package folder) is imported before any submodule anyway.
    down = sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets if b != "kgpubench" and layer_of(b) > layer_of(a))
    assert down == []
    assert layer_of("kgpubench.importers.export") == 4 and layer_of("kgpubench.importers.api") == 2
    assert layer_of("kgpubench.store.loading") == 4 and layer_of("kgpubench.store.store") == 3
    assert layer_of("kgpubench.tasks.data") == 4 and layer_of("kgpubench.board.evaluation") == 6  # task data, models


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
    assert {"store", "board", "sandbox", "tasks", "measure", "ray"} <= {p.name for p in (ROOT / "kgpubench").iterdir()}
