"""tests/ mirrors the package (issue 42): every folder under tests/ is the twin of a folder of ``kgpubench/``
(``tests/board/site/`` tests ``kgpubench/board/site/``), a declared cross-cutting folder, or a declared folder of
test inputs; every folder of the package that holds modules has its twin or says where it is tested; and a test
file at the top of tests/ is declared as a test of a top-level module or of a property of the whole package.

A test goes in the twin of the folder of the module it tests (what it imports and checks, not its name)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = {"__pycache__"}  # made by Python

# Folders of tests/ that mirror no package folder, and why. Their subfolders are theirs.
CROSS_CUTTING = {
    "baselines": "the bundled model files of baselines/ (not a package folder), one file per baseline family",
    "benchmarks": "the speed scripts of benchmarks/, each run on a small input",
    "collectors": "the measured suites of collectors/<suite>/ (kernels, specs, references); subfolders mirror it",
    "hostile": "one test per attack on an input path, across importers, store, submissions, results and the CLI",
}
# Cross-cutting folders whose subfolders mirror a folder of the repository.
MIRRORS_REPO_FOLDER = {"collectors": "collectors"}
# Folders of test inputs inside a mirrored folder: files its tests read, no tests.
INPUTS = {
    "features/data": "CUDA source and PTX the feature extractors read",
    "importers/data": "small real upstream files with hand-checked rows",
    "sandbox/models": "the hostile model files the sandbox runs",
}
# Package folders with modules and no tests/ twin, and where they are tested.
TESTED_ELSEWHERE = {
    "measure/backends": "with the harness that drives them, in tests/measure/ (test_gpu_backend.py, "
                        "test_cupti_clock.py, test_cupy_sampler_queue.py, test_contracts.py)",
}
# Top-level modules of kgpubench/ with no top-level test file of their own, and where they are tested.
TOP_MODULES_TESTED_ELSEWHERE = {
    "sources.py": "with the card and the board that cite the sources (tests/store/test_card_sources.py, "
                  "tests/board/test_board_names_and_counts.py)",
    "testing.py": "with the contracts its checks hold (tests/measure/test_contracts.py, tests/measure/test_api.py, "
                  "tests/models/test_model_checks.py); every folder's tests build their rows with it",
}
# The test files at the top of tests/: a top-level module of kgpubench/ each tests, or the property of the
# whole package (or of the repository around it) it holds.
TOP_LEVEL = {
    "test_bad_input.py": "bad input across commands: one error line, never a traceback",
    "test_buildinfo.py": "kgpubench/buildinfo.py",
    "test_cache_home.py": "kgpubench/resources.py (the one cache root the folders share)",
    "test_dead_code.py": "no dead code in the package (vulture)",
    "test_dependencies.py": "every imported third-party module is a declared dependency",
    "test_developing.py": "docs/DEVELOPING.md's recipes, walked through across the package",
    "test_device_slim.py": "scripts/device_slim.sh",
    "test_errors.py": "kgpubench/errors.py",
    "test_file_modes.py": "the mode of every file the package writes for others",
    "test_hardware.py": "kgpubench/hardware.py",
    "test_import_graph.py": "the import graph: no cycle, folders are layers",
    "test_layout.py": "the layout of tests/ itself",
    "test_packaging.py": "the wheel",
    "test_readme_layout.py": "README's Layout section",
    "test_readme_make.py": "README against the Makefile",
    "test_scripts.py": "the scripts of scripts/",
    "test_standalone_docs.py": "the shipped documents stand alone",
    "test_submitting_example.py": "leaderboard/SUBMITTING.md's worked example, end to end",
    "test_vendor_figures.py": "kgpubench/hardware.py's vendor catalogue against the packaged data",
}


def folders(root: Path) -> set[str]:
    """Every folder below ``root``, as a path relative to it (``board/site``)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_dir() and not any(part in IGNORED or part.startswith(".") for part in p.relative_to(root).parts)}


def module_folders(package: Path) -> set[str]:
    """The folders below ``package`` that hold a Python module."""
    return {f for f in folders(package) if any((package / f).glob("*.py"))}


def layout_problems(tests: Path, package: Path, repo: Path) -> list[str]:
    """One line per folder or file of ``tests`` that breaks the mirror of ``package`` (and per stale
    declaration); empty when tests/ mirrors the package."""
    have, modules = folders(tests), module_folders(package)
    problems = []
    for f in sorted(have):
        top = f.split("/")[0]
        if f in modules or f in INPUTS:
            continue
        if top in CROSS_CUTTING:
            mirrored = MIRRORS_REPO_FOLDER.get(top)
            if mirrored and f != top and not (repo / mirrored / Path(f).relative_to(top)).is_dir():
                problems.append(f"tests/{f}/: {mirrored}/ has no folder {Path(f).relative_to(top)}; name it as "
                                f"the folder of {mirrored}/ it tests")
            continue
        problems.append(f"tests/{f}/: no folder kgpubench/{f}/; move its tests to the tests/ twin of the folder of "
                        "the module each tests, or declare it in CROSS_CUTTING or INPUTS of tests/test_layout.py "
                        "with the reason")
    for f in sorted(modules - have - set(TESTED_ELSEWHERE)):
        problems.append(f"kgpubench/{f}/: no tests/{f}/; put its tests there, or declare in TESTED_ELSEWHERE of "
                        "tests/test_layout.py where they are")
    for f in sorted(TESTED_ELSEWHERE):
        if f not in modules or f in have:
            problems.append(f"TESTED_ELSEWHERE names kgpubench/{f}/, which is not a package folder without tests: "
                            "drop it")
    for f in sorted({*CROSS_CUTTING, *INPUTS} - have):
        problems.append(f"tests/{f}/ is declared in tests/test_layout.py but does not exist: drop it")
    for f in sorted({*CROSS_CUTTING, *INPUTS} & modules):
        problems.append(f"tests/{f}/ is declared in tests/test_layout.py but mirrors kgpubench/{f}/: drop it")
    files = {p.name for p in tests.glob("test_*.py")}
    for name in sorted(files - set(TOP_LEVEL)):
        problems.append(f"tests/{name}: a test file at the top of tests/; move it to the twin of its subject's "
                        "folder, or declare in TOP_LEVEL of tests/test_layout.py what top-level module or "
                        "whole-package property it tests")
    for name in sorted(set(TOP_LEVEL) - files):
        problems.append(f"TOP_LEVEL of tests/test_layout.py names tests/{name}, which does not exist: drop it")
    return problems


def test_tests_mirror_the_package():
    assert {"board", "board/site", "cli", "schema", "models", "tasks"} <= folders(ROOT / "tests")  # it sees them
    assert layout_problems(ROOT / "tests", ROOT / "kgpubench", ROOT) == []


def test_every_top_level_module_has_a_top_level_test_or_says_where_it_is_tested():
    subjects = " ".join(TOP_LEVEL.values())
    modules = {p.name for p in (ROOT / "kgpubench").glob("*.py")} - {"__init__.py", "__main__.py"}
    assert {"errors.py", "hardware.py", "testing.py"} <= modules  # it sees them
    assert {m for m in modules if f"kgpubench/{m}" not in subjects} == set(TOP_MODULES_TESTED_ELSEWHERE)


def conftest_constants(conftest: Path) -> dict[str, object]:
    """The literal constants of a conftest (a ``frozenset({...})`` read as its set), read without importing it."""
    out = {}
    for node in ast.parse(conftest.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "frozenset" and value.args:
                value = value.args[0]
            try:
                out[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def test_the_folders_tests_conftest_names_exist():
    """tests/conftest.py's folder rules name folders of tests/: a moved folder left under its old name there would
    lose its tier, its helpers or its shared worker without a test failing."""
    names = conftest_constants(ROOT / "tests" / "conftest.py")
    shared, integration, helpers = names["SHARED_DIRS"], names["INTEGRATION_DIRS"], names["HELPER_DIRS"]
    assert "tests/board/site/" in shared and "sandbox" in integration and "tasks" in helpers  # it reads them
    assert [d for d in shared if not (d.startswith("tests/") and d.endswith("/") and (ROOT / d).is_dir())] == []
    assert sorted(d for d in {*integration, *helpers} if not (ROOT / "tests" / d).is_dir()) == []
    # the file rule too: a renamed or deleted test file left in INTEGRATION_MODULES is a dead entry
    files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    modules = names["INTEGRATION_MODULES"]
    assert "test_leaderboard.py" in modules and sorted(n for n in modules if n not in files) == []


def _tree(root: Path, *paths: str) -> Path:
    for p in paths:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text("")
    return root


def _mirrored(tmp_path: Path) -> tuple[Path, Path]:
    package = _tree(tmp_path / "pkg", "__init__.py", "board/leaderboard.py", "board/site/pages.py",
                    "board/site/templates/page.html.j2", "measure/__init__.py", "measure/backends/base.py",
                    "data/x.parquet", "features/ptx.py", "importers/api.py", "sandbox/child.py")
    tests = _tree(tmp_path / "tests", "board/test_a.py", "board/site/test_b.py", "measure/test_c.py",
                  "features/data/kernels.cu", ".pytest_cache/v/x", "board/__pycache__/test_a.pyc",
                  "hostile/test_d.py", "collectors/npb/test_e.py",
                  *[f"{d}/.keep" for d in {*CROSS_CUTTING, *INPUTS}], *TOP_LEVEL)
    (tmp_path / "collectors" / "npb").mkdir(parents=True)
    (tmp_path / "collectors" / "npb" / "__init__.py").write_text("")
    return tests, package


def test_a_mirrored_tree_passes(tmp_path):
    tests, package = _mirrored(tmp_path)
    assert layout_problems(tests, package, tmp_path) == []


def test_a_stray_folder_fails(tmp_path):
    tests, package = _mirrored(tmp_path)
    _tree(tests, "leaderboard/test_a.py", "board/site/extra/test_x.py", "collectors/gemm/test_f.py")
    problems = layout_problems(tests, package, tmp_path)
    assert [p.split(":")[0] for p in problems] == ["tests/board/site/extra/", "tests/collectors/gemm/",
                                                   "tests/leaderboard/"]
    assert "collectors/ has no folder gemm" in problems[1]


def test_a_package_folder_without_tests_fails(tmp_path):
    tests, package = _mirrored(tmp_path)
    _tree(package, "results/result.py")
    assert layout_problems(tests, package, tmp_path) == [
        "kgpubench/results/: no tests/results/; put its tests there, or declare in TESTED_ELSEWHERE of "
        "tests/test_layout.py where they are"]


def test_an_undeclared_top_level_test_file_fails(tmp_path):
    tests, package = _mirrored(tmp_path)
    _tree(tests, "test_ranking.py")
    (tests / "test_scripts.py").unlink()
    problems = layout_problems(tests, package, tmp_path)
    assert [p.split(":")[0] for p in problems] == ["tests/test_ranking.py", "TOP_LEVEL of tests/test_layout.py names "
                                                   "tests/test_scripts.py, which does not exist"]


def test_a_stale_declaration_fails(tmp_path):
    tests, package = _mirrored(tmp_path)
    _tree(tests, "measure/backends/test_f.py")
    (tests / "benchmarks" / ".keep").unlink()
    (tests / "benchmarks").rmdir()
    problems = layout_problems(tests, package, tmp_path)
    assert problems == [
        "TESTED_ELSEWHERE names kgpubench/measure/backends/, which is not a package folder without tests: drop it",
        "tests/benchmarks/ is declared in tests/test_layout.py but does not exist: drop it"]
