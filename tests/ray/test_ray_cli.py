"""The ``--ray`` options: Ray is never imported without them; with them, the commands run on Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgpubench.ray.cli import optional_values

ROOT = Path(__file__).resolve().parents[2]


def test_without_ray_option_ray_is_never_imported():
    code = ("import sys\nimport kgpubench.cli\nprint('AFTER_IMPORT', 'ray' in sys.modules)\n"
            "sys.argv = ['kgpubench', 'collect', '--suite', 'regular', '--quick', '--dry-run']\n"
            "from kgpubench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('AFTER_DRY_RUN', sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "AFTER_IMPORT False" in res.stdout and "AFTER_DRY_RUN []" in res.stdout, res.stdout + res.stderr
    assert "regular: 32 cases" in res.stdout  # the dry run did run


def test_ray_option_takes_an_optional_address():
    assert optional_values(["collect", "--ray"]) == ["collect", "--ray="]
    assert optional_values(["collect", "--ray", "--quick"]) == ["collect", "--ray=", "--quick"]
    assert optional_values(["collect", "--ray", "auto", "--quick"]) == ["collect", "--ray", "auto", "--quick"]
    assert optional_values(["collect", "--ray=10.0.0.1:6379"]) == ["collect", "--ray=10.0.0.1:6379"]
    assert optional_values(["x", "--", "--ray"]) == ["x", "--", "--ray"]  # after --: an argument, untouched


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch):
    from kgpubench.errors import MissingDependencyError
    from kgpubench.ray.session import import_ray, resolve_address

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(MissingDependencyError, match=r'pip install "kgpubench\[ray\]"'):
        import_ray()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert resolve_address("") == "10.0.0.1:6379" and resolve_address("local") is None
    assert resolve_address(" auto ") == "auto"


def test_collect_on_ray_hands_every_device_to_the_bundle(tmp_path, monkeypatch):
    """The Ray branch's bundle names every GPU that measured (the report's first device stays the main one)."""
    import contextlib
    from dataclasses import replace
    from types import SimpleNamespace

    import kgpubench.ray.collect as collect_mod
    import kgpubench.ray.session as session_mod
    import kgpubench.store.bundle as bundle_mod
    from kgpubench.measure.backends.fake import FAKE_DEVICE
    from kgpubench.ray import cli as ray_cli

    h100 = replace(FAKE_DEVICE, name="Fake H100 (CPU test double)")
    a100 = replace(FAKE_DEVICE, name="Fake A100 (CPU test double)")
    summary = {"written": 3, "skipped": 0, "statuses": {"ok": 3}, "stopped_early": False, "out": str(tmp_path)}
    report = collect_mod.RayCollectReport(summaries={"regular": summary}, devices=[h100, a100, h100])
    monkeypatch.setattr(collect_mod, "collect_on_ray", lambda jobs, out, **kw: report)
    monkeypatch.setattr(session_mod, "ray_session", lambda *a, **kw: contextlib.nullcontext())
    seen = {}
    monkeypatch.setattr(bundle_mod, "finish_collect",
                        lambda out, dirs, dev, summaries, devices=(): seen.update(dev=dev, devices=list(devices)))
    suites = [SimpleNamespace(name="regular", table="kernels")]
    out = ray_cli.collect(None, suites, {"regular": None}, quick=True, out=tmp_path, max_minutes=None,
                          lock_mode="none", l2=None)
    assert out == {"regular": summary}
    assert seen == {"dev": h100, "devices": [h100, a100, h100]}
