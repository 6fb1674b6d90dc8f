"""No dead code in the package: vulture (min confidence 60) over the package and everything that calls it finds
nothing but the implicit uses listed here, and the names removed as dead (issue 31) stay gone."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CALLERS = ("kgpubench", "tests", "baselines", "benchmarks", "scripts", "collectors")

# (file, name): used, but not by a call vulture can see.
IMPLICIT = {
    # dataclass fields of records that are serialised whole (asdict / getattr by column name)
    **{("kgpubench/features/record.py", n): "a feature column (as_columns / as_dict)"
       for n in ("flops_fp64", "arithmetic_intensity", "occupancy_limiter")},
    **{("kgpubench/features/source.py", n): "a SourceFeatures field, in the feature cache (asdict)"
       for n in ("constant_statements", "texture_statements", "statements")},
    ("kgpubench/features/toolchain.py", "local_bytes"): "a Resources field, in the feature cache (asdict)",
    ("kgpubench/hardware.py", "smem_per_block_bytes"): "a DeviceInfo field, in the bundle's machine report (asdict)",
    **{("kgpubench/results/result.py", n): "a field of the result file (results.result.Result)"
       for n in ("train_subsample", "cpu_time_s")},
    ("kgpubench/measure/timing.py", "per_unit_ms"): "a TimingResult field",
    # called by a framework
    **{("kgpubench/board/site/check.py", n): "html.parser.HTMLParser callback"
       for n in ("handle_starttag", "handle_endtag", "handle_data")},
    ("kgpubench/cli/leaderboard.py", "splits"): "a typer command (@board_app.command)",
    ("kgpubench/tasks/ranking.py", "n_features_in_"): "scikit-learn's fitted-estimator attribute",
    ("kgpubench/measure/backends/cupy_backend.py", "max_dynamic_shared_size_bytes"): "CuPy's kernel attribute",
    ("kgpubench/measure/suites.py", "__path__"): "a package's import path (importlib)",
    ("kgpubench/measure/backends/fake.py", "__getattr__"): "a fake module's attribute hook",
    ("kgpubench/__init__.py", "__getattr__"): "the package's lazy attribute hook (kgpubench.collect, load_dataset)",
    ("kgpubench/importers/__init__.py", "__getattr__"): "the package's lazy re-exports of its readers",
}

# Dead or doubtful, in modules that other parts of issue 31 change; remove an entry once its name is gone.
ELSEWHERE = {
    ("kgpubench/board/site/data.py", "summary_value"), ("kgpubench/cli/collect.py", "NO_GPU_EXIT"),
    ("kgpubench/measure/timing.py", "METHODS"), ("kgpubench/measure/backends/fake.py", "_last_ms"),
    ("kgpubench/measure/backends/fake.py", "closed"), ("kgpubench/measure/backends/fake.py", "energy_reads"),
}

# (module, name) removed as dead: nothing may define or use them again.
REMOVED = (
    ("kgpubench.errors", "BackendError"),
    ("kgpubench.tasks.metrics", "get_metric"),
    ("kgpubench.store.identity", "NOT_COMPARED"),
    ("kgpubench.tasks.npb", "npb_gpu_default_tpb_table"),
    ("kgpubench.tasks.preprocess", "log_target"),
    ("kgpubench.tasks.stencil", "BASELINE"),
    ("kgpubench.features.toolchain", "resources_to_dict"),
    ("kgpubench.store.validation", "_MOVED_TO_CHECKS"),
)


def test_vulture_finds_no_dead_code_in_the_package():
    vulture = pytest.importorskip("vulture", reason="vulture is not installed (pip install -e '.[dev]')")
    v = vulture.Vulture(verbose=False)
    v.scavenge([str(ROOT / p) for p in CALLERS])
    found = {}
    for item in v.get_unused_code(min_confidence=60):
        rel = Path(item.filename).resolve().relative_to(ROOT).as_posix()
        if rel.startswith("kgpubench/"):
            found[(rel, item.name)] = f"{rel}:{item.first_lineno}: unused {item.typ} {item.name!r}"
    unexpected = sorted(line for key, line in found.items() if key not in IMPLICIT and key not in ELSEWHERE)
    assert unexpected == [], "dead code (remove it, or list an implicit use in IMPLICIT with its reason)"
    assert ("kgpubench/board/site/check.py", "handle_data") in found  # it sees the package


def test_store_has_no_key_pairs_and_validation_no_forwarding():
    from kgpubench.store import validation
    from kgpubench.store.store import Store

    assert not hasattr(Store, "key_pairs")
    with pytest.raises(AttributeError):
        validation.is_store  # noqa: B018 - moved to kgpubench.store.checks; no forwarding __getattr__ any more


@pytest.mark.parametrize("module, name", REMOVED)
def test_removed_dead_names_stay_gone(module, name):
    assert not hasattr(importlib.import_module(module), name)
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    users = [p.relative_to(ROOT).as_posix() for d in CALLERS for p in (ROOT / d).rglob("*.py")
             if p.name != Path(__file__).name and pattern.search(p.read_text(errors="replace"))]
    # collectors/stencil/spec.py keeps its own BASELINE (the collector's untiled run); the task's mirror had no user
    assert [u for u in users if (name, u) != ("BASELINE", "collectors/stencil/spec.py")] == []
