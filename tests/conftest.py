"""Project-wide test setup.

Tiers (docs/DEVELOPING.md, "Test tiers"): every test is exactly one of ``unit`` (in-process, no child
process) or ``integration`` (starts processes: the model sandbox, the CLI, a wheel build, git, nvcc/ptxas, a
Ray instance); ``slow`` (several seconds even alone) and ``gpu`` come on top. The tier is the test's closest
explicit ``@pytest.mark.unit``/``integration`` (function, class, then module), else the rule here: a test in
an :data:`INTEGRATION_DIRS` folder or an :data:`INTEGRATION_MODULES` file, or one that uses an
:data:`INTEGRATION_FIXTURES` fixture, is ``integration``; every other test is ``unit``.
``KGPUBENCH_CHECK_TIERS=1`` fails a ``unit`` test that starts a process other than ``git`` (the project
commit, looked up once per process, whichever test comes first): the way to find a wrong tier.

``@pytest.mark.gpu`` tests are skipped unless CuPy imports and sees a GPU; model code runs in the sandbox,
unisolated (``KGPUBENCH_TRUST=1``) only on a host that cannot isolate it.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# Folders of the helper modules that tests of several folders import by name (``from task_fixtures import ...``,
# ``from cli_helpers import cli``, ``from hostile_helpers import MIB``): put on sys.path once, here, before any
# test module is imported, so no folder or file inserts a path of its own. A helper that only the tests of its own
# folder import (sandbox_helpers, plugin_helpers, the measure and Ray fakes) needs nothing: pytest puts a test's
# folder on sys.path when it imports the test (its default import mode; tests/ holds no __init__.py).
HELPER_DIRS = ("tasks", "cli", "hostile")
for _name in HELPER_DIRS:
    if str(TESTS / _name) not in sys.path:
        sys.path.insert(0, str(TESTS / _name))
TIERS = ("unit", "integration")
CHECK_TIERS_ENV = "KGPUBENCH_CHECK_TIERS"

# Folders (first part below tests/) whose every test starts processes.
INTEGRATION_DIRS = frozenset({"sandbox", "ray"})
# Test files whose tests start processes (file names: they stay right when a file moves between folders).
INTEGRATION_MODULES = frozenset({
    # the model sandbox (leaderboard run/verify/evaluate/submit)
    "test_board_robust.py", "test_leaderboard.py", "test_ci_verify.py", "test_reuse.py", "test_job_order.py",
    "test_pull_request.py", "test_npb_strategies.py", "test_submitting_example.py", "test_browser.py",
    # the CLI in a child process, git, ruff, a wheel build, store writers killed mid-merge
    "test_cli_data.py", "test_cli_tasks.py", "test_packaging.py", "test_buildinfo.py",
    "test_store_crash.py", "test_bundle.py", "test_cli_collect.py", "test_gpu_session_script.py",
    "test_import_cli.py", "test_cli.py",
    # nvcc / ptxas / NVRTC compiles
    "test_compile_check.py", "test_compiled.py", "test_toolchain_choice.py", "test_units.py", "test_ptx_counts.py",
    "test_compile_cache.py", "test_runner_precompile.py", "test_npb_kernels.py", "test_npb_precompile.py",
    "test_power_kernels.py", "test_stencil_compile.py", "test_stencil_features.py", "test_compile_features.py",
})
# Fixtures that start processes: a Ray instance, a wheel build, a CUDA toolchain.
INTEGRATION_FIXTURES = frozenset({"ray_local", "wheel", "toolchain_for"})
# Under ``pytest -n --dist loadfile`` (make test) a test file runs on one worker, its tests in order (module
# fixtures are built once; no two tests of a file ever run at once). The files of these folders run on one
# worker together, as one unit: they share a session resource (tests/ray: one Ray instance, started once;
# tests/board/site: the rendered board site).
SHARED_DIRS = ("tests/ray/", "tests/board/site/")


def tier_of(item: pytest.Item) -> str:
    """``unit`` or ``integration``: the closest explicit tier mark, else the folder/file/fixture rule."""
    for mark in item.iter_markers():  # closest first: function, class, module
        if mark.name in TIERS:
            return mark.name
    path = Path(item.path).resolve()
    rel = path.relative_to(TESTS) if path.is_relative_to(TESTS) else path
    if rel.parts[0] in INTEGRATION_DIRS or path.name in INTEGRATION_MODULES:
        return "integration"
    if INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "integration"
    return "unit"


@functools.cache
def gpu_available() -> tuple[bool, str]:
    """Whether CuPy and an NVIDIA GPU are usable here (and why not)."""
    from kgpubench.measure.backends.cupy_backend import cupy_available

    return cupy_available()


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tiers = {m.name for m in item.own_markers if m.name in TIERS}
        if len(tiers) > 1:
            raise pytest.UsageError(f"{item.nodeid}: marked both unit and integration; keep one")
        item.add_marker(tier_of(item))
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU and CuPy: {why}")
    for item in gpu_items:
        item.add_marker(skip)


def scope_of(nodeid: str) -> str:
    """The unit of work under ``--dist loadfile``: the test's file, or its :data:`SHARED_DIRS` folder."""
    path = nodeid.split("::", 1)[0]
    return next((d for d in SHARED_DIRS if path.startswith(d)), path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` with :func:`scope_of` as its unit; any other ``--dist`` keeps xdist's scheduler."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return FileScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    from kgpubench.sandbox.session import TRUST_ENV, isolation_support

    if not isolation_support()[0]:  # the suite's models are the project's own and its fixtures
        os.environ[TRUST_ENV] = "1"


def pytest_report_header(config: pytest.Config) -> str:
    from kgpubench.sandbox.session import isolation_support

    ok, why = isolation_support()
    return "model sandbox: " + ("kernel isolation" if ok else f"none here, models run unisolated ({why})")


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process(request: pytest.FixtureRequest):
    """With ``KGPUBENCH_CHECK_TIERS=1``: a ``unit`` test that starts a process fails, naming the command."""
    if os.environ.get(CHECK_TIERS_ENV) != "1" or request.node.get_closest_marker("unit") is None:
        yield
        return
    monkeypatch = request.getfixturevalue("monkeypatch")
    started: list[str] = []
    real_init = subprocess.Popen.__init__
    real_fork = os.fork

    def popen_init(self, args, *a, **kw):
        if not (isinstance(args, (list, tuple)) and args and args[0] == "git"):  # the commit, looked up once
            started.append(str(args)[:200])
        real_init(self, args, *a, **kw)

    def fork():
        started.append("os.fork()")
        return real_fork()

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    monkeypatch.setattr(os, "fork", fork)
    yield
    if started:
        pytest.fail(f"a unit test started {len(started)} process(es), first {started[0]}: mark it "
                    "@pytest.mark.integration or add its file to INTEGRATION_MODULES in tests/conftest.py",
                    pytrace=False)
