"""``kgpubench features`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kgpubench.cli.features import register

DATA = Path(__file__).parent / "data"


@pytest.fixture()
def app(monkeypatch, tmp_path):
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    app = typer.Typer()

    @app.callback()
    def _group() -> None:
        """Test group."""

    register(app)
    return app


def run(app, *args):
    return CliRunner().invoke(app, ["features", *args])


def test_json_from_ptx(app):
    result = run(app, "--ptx", str(DATA / "nest.ptx"), "--kernel", "nest", "--size", "n=64", "--trip", "L1=8",
                 "--trip", "L2=n/4", "--grid", "4", "--block", "64,2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["l"] == 941 and data["lmr"] == 128 and data["lshw"] == 128
    assert (data["nb"], data["nt"], data["w"]) == (4, 128, 4)
    assert [lp["trip_count"] for lp in data["loops"]] == [8, 16]


def test_missing_trip_count_and_static_counts(app):
    result = run(app, "--ptx", str(DATA / "nest.ptx"), "-k", "nest", "--json")
    assert result.exit_code == 1
    assert "no trip count for loop L1" in result.output
    result = run(app, "--ptx", str(DATA / "nest.ptx"), "-k", "nest", "--static-counts", "--json")
    assert result.exit_code == 0 and json.loads(result.output)["l"] == 17


def test_unknown_kernel_lists_the_entries(app):
    result = run(app, "--ptx", str(DATA / "nest.ptx"), "-k", "nset", "--static-counts")
    assert result.exit_code == 1
    assert "no kernel entry named 'nset'" in result.output and "entries are: nest" in result.output


def test_compiled_source_json(app):
    result = run(app, str(DATA / "kernels.cu"), "-k", "dist64", "--arch", "sm_80", "--grid", "40",
                 "--block", "256", "--sm-count", "108", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["entry"], data["ldpu"], data["lmr"], data["nb"]) == ("dist64", 3, 2, 40)
    assert data["nreg"] > 0 and data["sm_saturation"] == pytest.approx(40 / 108)


def test_source_that_does_not_compile(app, tmp_path):
    bad = tmp_path / "broken.cu"
    bad.write_text('extern "C" __global__ void oops(float* a) { a[0] = undefined_name; }\n')
    result = run(app, str(bad), "-k", "oops", "--arch", "sm_80")
    assert result.exit_code == 1
    assert "nvcc could not compile" in result.output and "broken.cu" in result.output
    assert "kernel oops" in result.output and "undefined_name" in result.output


def test_bad_option_value(app):
    result = run(app, "--ptx", str(DATA / "nest.ptx"), "-k", "nest", "--grid", "0,1")
    assert result.exit_code == 1 and "--grid '0,1'" in result.output
