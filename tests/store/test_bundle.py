"""Contribution bundles: written after collect, merged with `kgpubench merge`, bad ones refused in one line."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kgpubench
from kgpubench.buildinfo import package_version
from kgpubench.cli import app
from kgpubench.measure.backends.fake import FAKE_DEVICE
from kgpubench.store.bundle import (
    BUNDLE_FORMAT,
    MANIFEST,
    bundle_after_collect,
    finish_collect,
    is_bundle,
    read_bundle,
)
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 11, 24, 10, 0, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    """A collect output folder whose shard folders hold real rows (copies of packaged H100 rows)."""
    out = tmp_path_factory.mktemp("collect")
    kernels = kgpubench.load_dataset("kernels", format="arrow").slice(0, 20)
    npb = kgpubench.load_dataset("npb", format="arrow").slice(0, 10)
    write_shard(kernels, out / "regular" / "c00000000.parquet", "kernels")
    write_shard(npb, out / "npb" / "c00000000.parquet", "npb")
    return out


@pytest.fixture(scope="module")
def bundle(collected) -> Path:
    summary = {"regular": {"written": 20, "skipped": 0}, "npb": {"written": 10, "skipped": 0}}
    return bundle_after_collect(collected, [collected / "regular", collected / "npb", collected / "stencil"],
                                FAKE_DEVICE, summary, now=NOW)


def test_bundle_contents(bundle):
    assert bundle.name == "kgpubench-bundle-Fake-GPU-CPU-test-double-20261124T100000Z.zip" and is_bundle(bundle)
    b = read_bundle(bundle)
    assert b.manifest["bundle_format"] == BUNDLE_FORMAT == 1
    assert {f["path"]: f.get("rows") for f in b.manifest["files"]} == {
        "shards/kernels.parquet": 20, "shards/npb.parquet": 10, "machine.json": None, "summary.json": None}
    assert b.machine["kgpubench"]["version"] == package_version()
    assert b.machine["gpu"]["gpu_name"] == "Fake GPU (CPU test double)" and b.machine["gpu"]["gpu_sm_count"] == 4
    assert b.machine["software"] == {"driver": "fake", "cuda": "0.0", "cupy": None, "toolchain": "fake"}
    assert b.machine["device"]["clock_sm_mhz"] == 1000.0 and b.machine["device"]["uuid_hash"] == "0123456789abcdef"
    assert b.summary["rows"] == 30 and b.summary["gpus"] == ["NVIDIA H100 80GB HBM3"]
    assert b.summary["configs"]["kernels"]["status"] == {"ok": 20}
    assert b.summary["collect"]["npb"] == {"written": 10, "skipped": 0}
    assert "NVIDIA" not in b.note() and "kgpubench " + package_version() in b.note()


def test_a_bundle_of_several_gpus_names_each(collected, tmp_path):
    """collect --ray on mixed GPUs: the machine report lists every device that measured, not only the first."""
    from dataclasses import replace

    h100 = replace(FAKE_DEVICE, name="Fake H100 (CPU test double)", uuid_hash="h100h100h100h100")
    a100 = replace(FAKE_DEVICE, name="Fake A100 (CPU test double)", compute_capability="8.0",
                   uuid_hash="a100a100a100a100", driver_version="fake-2")
    path = bundle_after_collect(tmp_path, [collected / "regular"], h100, {}, now=NOW, devices=[h100, h100, a100])
    machine = read_bundle(path).machine
    assert machine["gpu"]["gpu_name"] == "Fake H100 (CPU test double)"  # the first device, as before
    assert [(d["gpu_name"], d["gpu_uuid_hash"], d["driver"]) for d in machine["devices_all"]] == [
        ("Fake H100 (CPU test double)", "h100h100h100h100", "fake"),
        ("Fake H100 (CPU test double)", "h100h100h100h100", "fake"),
        ("Fake A100 (CPU test double)", "a100a100a100a100", "fake-2")]
    assert machine["devices_all"][2]["gpu_compute_capability"] == "8.0"
    one = bundle_after_collect(tmp_path / "one", [collected / "regular"], h100, {}, now=NOW, devices=[h100])
    assert "devices_all" not in read_bundle(one).machine  # one device: the report's gpu part says it all


def test_bundle_merges_once(bundle, tmp_path):
    runner = CliRunner()
    store = tmp_path / "store"
    result = runner.invoke(app, ["merge", str(bundle), "--into", str(store)])
    assert result.exit_code == 0, result.output
    assert "merged 20 kernels, 10 npb; 0 exact duplicate(s) skipped; dataset version 0.0.0 -> 0.1.0" in result.output
    want = kgpubench.load_dataset("kernels", format="arrow").slice(0, 20)["row_id"].to_pylist()
    assert Store(store).read("kernels")["row_id"].to_pylist() == want
    assert Store(store).manifest()["changelog"][-1]["note"].startswith(f"bundle {bundle.name}: Fake GPU")
    result = runner.invoke(app, ["merge", str(bundle), "--into", str(store)])
    assert "merged nothing new; 30 exact duplicate(s) skipped; dataset version 0.1.0 -> 0.1.0" in result.output


def _rewrite(src: Path, dst: Path, change) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        members = {n: zin.read(n) for n in zin.namelist()}
        for name, data in change(members).items():
            zout.writestr(name, data)
    return dst


def _tampered(members):
    data = bytearray(members["shards/npb.parquet"])
    data[len(data) // 2] ^= 0xFF
    return {**members, "shards/npb.parquet": bytes(data)}


def _new_format(members):
    manifest = json.loads(members[MANIFEST])
    return {**members, MANIFEST: json.dumps({**manifest, "bundle_format": 2}).encode()}


def _extra_member(members):
    return {**members, "shards/stencil.parquet": members["shards/npb.parquet"]}


def _bad(kind: str, bundle: Path, tmp_path: Path) -> Path:
    dst = tmp_path / f"{kind}.zip"
    if kind == "truncated":
        dst.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
        return dst
    return _rewrite(bundle, dst, {"tampered": _tampered, "wrong-version": _new_format, "extra": _extra_member}[kind])


@pytest.mark.parametrize("kind,why", [
    ("tampered", "member 'shards/npb.parquet' has sha256"),
    ("truncated", "not a readable zip archive (truncated in transfer"),
    ("wrong-version", "bundle format 2; this kgpubench reads format 1: upgrade kgpubench"),
    ("extra", "member 'shards/stencil.parquet' is not in the manifest"),
])
def test_bad_bundles_are_refused_in_one_line(bundle, tmp_path, kind, why):
    bad = _bad(kind, bundle, tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    proc = subprocess.run([sys.executable, "-m", "kgpubench", "merge", str(bad), "--into", str(tmp_path / "store")],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=120,
                          env={**env, "PYTHONPATH": str(ROOT), "COLUMNS": "400"})
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {bad}: refused: ") and why in lines[0], lines[0]
    assert not (tmp_path / "store").exists()


def test_collect_hook_with_the_fake_backend_writes_no_bundle_for_fake_rows(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(ROOT / "tests" / "measure"))
    from measure_fakes import DoubleSuite, double_impl

    from kgpubench.measure import suites as suites_mod
    from kgpubench.measure.backends import registry

    # `kgpubench collect` imports both names from these modules when it runs
    fake = registry.get_backend("fake", implementations={"double": double_impl}, time_ms=20.0)
    monkeypatch.setattr(registry, "get_backend", lambda *a, **k: fake)
    monkeypatch.setattr(suites_mod, "load_suite", lambda name, root=None: DoubleSuite())
    result = CliRunner().invoke(app, ["collect", "--suite", "regular", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "bundle" in ln]
    # source="fake" rows never validate, so collect says why in one line and keeps the shards
    assert len(lines) == 1 and lines[0].startswith("no bundle written: 4 schema violation(s) in the shards, first: ")
    assert "source" in lines[0] and "fake" in lines[0]
    assert len(list((tmp_path / "regular").glob("*.parquet"))) == 1 and not list(tmp_path.glob("*.zip"))
    assert finish_collect(tmp_path, [tmp_path / "regular"], FAKE_DEVICE) is None
    assert "no bundle written" in capsys.readouterr().err


def test_contributing_walks_from_install_to_pull_request_in_under_10_commands():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [ln for ln in block.splitlines() if ln.strip()]
    assert len(commands) < 10 and commands[1].startswith("pip install") and "git push" in commands[-1]
    registered = {c.name or c.callback.__name__ for c in app.registered_commands}
    registered |= {g.name for g in app.registered_groups}
    used = [ln.split()[1] for ln in commands if ln.startswith("kgpubench ")]
    assert used and all(u in registered for u in used), used


def test_bundle_path_imports_no_heavy_ml_packages(collected, tmp_path):
    # what collect runs at its end must work on a GPU machine without datasets, lightgbm or xgboost
    code = ("import sys\nfrom pathlib import Path\nfrom kgpubench.store.bundle import bundle_after_collect\n"
            "from kgpubench.measure.backends.fake import FAKE_DEVICE\n"
            f"p = bundle_after_collect(Path({str(tmp_path)!r}), [Path({str(collected / 'npb')!r})], FAKE_DEVICE)\n"
            "print('HEAVY', sorted(m for m in ('datasets', 'lightgbm', 'xgboost') if m in sys.modules), p.exists())")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "HEAVY [] True" in res.stdout, res.stdout + res.stderr
