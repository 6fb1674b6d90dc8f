"""The sandbox's own contract: limits, the child's view, what crosses the pipe, refusals, failures."""

from __future__ import annotations

import math
import os
import textwrap

import numpy as np
import pandas as pd
import pytest
from sandbox_helpers import MODELS, needs_isolation, render

from kgpubench.errors import LimitsError, SandboxError, SandboxUnavailableError
from kgpubench.resources import default_data_dir
from kgpubench.sandbox import process as sandbox_process
from kgpubench.sandbox import session as sandbox
from kgpubench.sandbox.checks import checked_predictions
from kgpubench.sandbox.child import frame_to_ipc, ipc_to_frame
from kgpubench.sandbox.limits import Limits
from kgpubench.sandbox.session import ModelSession, sandbox_plan


def _model(tmp_path, body, name="m.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("field, value, option", [
    ("memory_gb", -1, "--memory-gb"), ("memory_gb", 0, "--memory-gb"), ("memory_gb", math.nan, "--memory-gb"),
    ("memory_gb", math.inf, "--memory-gb"), ("timeout_s", math.nan, "--timeout"), ("timeout_s", math.inf, "--timeout"),
    ("timeout_s", 0.0, "--timeout"), ("threads", 0, "--threads"), ("threads", 1.5, "--threads"),
    ("threads", True, "--threads"), ("output_mb", -2.0, "output_mb"),
])
def test_bad_limits_are_refused_in_one_line(field, value, option):
    with pytest.raises(LimitsError) as err:
        Limits(**{field: value})
    text = str(err.value)
    assert text.startswith(f"{option}: got {value!r};") and "greater than 0" in text and "\n" not in text


def test_limits_become_rlimits():
    got = Limits(timeout_s=100, memory_gb=2, threads=3, processes=10, disk_mb=64).child_limits()
    assert got == {"memory_bytes": 2 * 2**30, "cpu_s": 100 * 3 + 10, "file_bytes": 64 * 2**20, "processes": 17}


def test_features_survive_the_pipe(small):
    X, _ = small
    X = X.copy()
    labels = pd.DataFrame({"label": np.asarray(["a", None, "b"] * 4, dtype=object)})  # as feature_frame does
    X["label"] = labels.astype({"label": object})["label"]
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
    X.loc[3, numeric[0]] = np.nan
    assert X["kernel"].dtype == object and len(numeric) > 5
    back = ipc_to_frame(frame_to_ipc(X))
    pd.testing.assert_frame_equal(back, X)
    assert back["label"].dtype == object and pd.isna(back["label"][1]) and back["label"][2] == "b"


@pytest.mark.parametrize("value, message", [
    (np.array([1.0, np.nan, 2.0]), r"1 NaN/inf value\(s\) \(first at row 1\)"),
    (np.array([np.inf, 1.0, 2.0]), r"1 NaN/inf value\(s\) \(first at row 0\)"),
    (np.ones(2), r"shape \(2,\), expected \(3,\)"),
    (np.ones((3, 1)), r"shape \(3, 1\), expected \(3,\)"),
    (np.array(["1", "2", "3"]), r"returned ndarray of <U1, not numbers; expected a 1-D array of 3 numbers"),
    (np.array([True, False, True]), "ndarray of bool"),
    (np.ones(3, dtype=complex), "ndarray of complex128"),
    ([1.0, 2.0, 3.0], "returned list"),
])
def test_checked_predictions_refuses_in_one_line(value, message):
    with pytest.raises(SandboxError, match=message) as err:
        checked_predictions(value, 3, "m.py")
    assert err.value.kind == "invalid-output" and "\n" not in str(err.value)


def test_checked_predictions_gives_float64():
    out = checked_predictions(np.arange(3, dtype=np.int32), 3)
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1.0, 2.0]


def test_the_view_holds_no_repository_and_masks_the_package_data(tmp_path):
    import kgpubench

    package = os.path.dirname(os.path.realpath(kgpubench.__file__))
    repo = os.path.dirname(package)
    inside = os.path.join(package, "tasks")
    plan = sandbox_plan(hide=[inside, str(tmp_path)])
    assert repo not in plan["binds"] and package in plan["binds"] or any(
        package.startswith(b + "/") for b in plan["binds"])
    assert not any(b == repo or repo.startswith(b + "/") for b in plan["binds"])
    assert str(default_data_dir().resolve()) in plan["masks"]
    assert inside in plan["masks"]  # a hidden path inside the view is masked...
    assert str(tmp_path) not in plan["masks"]  # ...one outside it is not in the view at all


def test_refused_without_isolation_unless_trusted(tmp_path, small, monkeypatch):
    X, y = small
    monkeypatch.delenv(sandbox.TRUST_ENV, raising=False)
    monkeypatch.setattr(sandbox, "isolation_support", lambda: (False, "unshare: Operation not permitted"))
    path = render("forge", tmp_path, mode="none", target=str(tmp_path / "unused"))
    with pytest.raises(SandboxUnavailableError) as err:
        ModelSession(path, "autotune-config").start()
    assert str(err.value) == ("refusing to run forge.py: this machine cannot isolate model code (unshare: Operation "
                              "not permitted); pass --trust (trust=True) only for code you trust, to run it "
                              "unisolated.")
    with ModelSession(path, "autotune-config", trust=True, limits=Limits(timeout_s=60)) as session:
        assert not session.isolated
        session.fit(X, y)
        assert session.predict(X).tolist() == [float(np.mean(y))] * len(X)


@needs_isolation
def test_a_sandbox_that_cannot_be_built_is_a_one_line_refusal(tmp_path, monkeypatch):
    def broken(hide=(), limits=None):
        plan = sandbox_plan(hide, limits)
        plan["binds"].append(str(tmp_path / "vanished"))
        return plan

    monkeypatch.setattr(sandbox, "sandbox_plan", broken)
    path = render("forge", tmp_path, mode="none", target="unused")
    with pytest.raises(SandboxUnavailableError, match=r"the sandbox could not be built \(.*open .*vanished: No such "
                                                      r"file or directory\); pass --trust") as err:
        ModelSession(path, "autotune-config", limits=Limits(timeout_s=60)).start()
    assert "\n" not in str(err.value)


@needs_isolation
def test_limits_identity_and_threads_reach_the_model(tmp_path, small):
    X, y = small
    limits = Limits(timeout_s=50, memory_gb=3, threads=2, processes=8, disk_mb=32)
    with ModelSession(render("inspect_limits", tmp_path), "autotune-config", limits=limits) as session:
        session.fit(X, y)
        got = session.predict(X)[:11].tolist()
    assert got[:5] == [3 * 2**30, 50 * 2 + 10, 8 + 2 + 4, 32 * 2**20, 0]  # AS, CPU, NPROC, FSIZE, CORE
    assert got[5] == (1 if os.geteuid() == 0 else 0)  # nobody outside when the caller is root
    assert got[6] == 0  # no capability
    assert got[7:9] == [2, 2]  # OMP_NUM_THREADS and the BLAS pool
    assert got[9:] == [1, 0]  # its private /tmp is writable, site-packages is not


@needs_isolation
def test_every_bad_output_is_refused_in_one_line_and_the_session_goes_on(tmp_path, small):
    X, y = small
    expected = [
        ("invalid-output", r"1 NaN/inf value\(s\) \(first at row 11\)"),
        ("invalid-output", r"1 NaN/inf value\(s\) \(first at row 0\)"),
        ("invalid-output", r"shape \(11,\), expected \(12,\)"),
        ("invalid-output", r"predict\(\) returned list of <U3, not numbers; expected a 1-D array of 12 numbers"),
        ("invalid-output", r"predict\(\) returned NoneType holding \['NoneType'\], not numbers"),
        ("invalid-output", r"shape \(12, 2\), expected \(12,\)"),
        ("invalid-output", r"returned list holding \['NoneType', 'float'\], not numbers"),
    ]
    with ModelSession(render("outputs", tmp_path), "autotune-config", limits=Limits(timeout_s=60)) as session:
        session.fit(X, y)
        for kind, message in expected:
            with pytest.raises(SandboxError, match=message) as err:
                session.predict(X)
            assert err.value.kind == kind and "\n" not in str(err.value)
        assert session.predict(X).tolist() == list(range(12))  # the child is still there and answering
        with pytest.raises(SandboxError, match=r"refused, it sent a \d+-byte message where at most \d+ bytes were "
                                               r"expected while predict\(\)") as err:
            session.predict(X)  # 200,000 values for 12 rows: not even read
        assert err.value.kind == "output"
        with pytest.raises(SandboxError, match="the session has ended"):
            session.predict(X)


@needs_isolation
def test_printing_a_gigabyte_is_cut_short_and_kept_small(tmp_path, small):
    X, y = small
    path = render("flood", tmp_path, mode="print")
    with ModelSession(path, "autotune-config", limits=Limits(timeout_s=60, output_mb=4)) as session:
        with pytest.raises(SandboxError, match=r"refused, it printed more than 4 MiB while fit\(\)") as err:
            session.fit(X, y)
    assert err.value.kind == "output"
    assert len(err.value.log) < sandbox_process.LOG_HEAD + sandbox_process.LOG_TAIL + 100  # not the 4 MiB


@needs_isolation
def test_memory_limit_is_a_clear_failure(tmp_path, small):
    X, y = small
    path = render("flood", tmp_path, mode="memory")
    with ModelSession(path, "autotune-config", limits=Limits(timeout_s=60, memory_gb=2)) as session:
        with pytest.raises(SandboxError, match=r"ran out of memory in fit\(\) \(limit 2 GiB of address space; "
                                               r"MemoryError: .*\(flood.py line \d+\)\); raise --memory-gb") as err:
            session.fit(X, y)
    assert err.value.kind == "memory"


@needs_isolation
def test_errors_in_the_model_name_its_line(tmp_path, small):
    X, y = small
    path = _model(tmp_path, """
        class M:
            def fit(self, X, y):
                raise ValueError("no good\\nat all")
        def make_model(task, seed):
            return M()
        """, "bad.py")
    with ModelSession(path, "autotune-config", limits=Limits(timeout_s=60)) as session:
        with pytest.raises(SandboxError) as err:
            session.fit(X, y)
    assert str(err.value) == "bad.py: fit() failed: ValueError: no good at all (bad.py line 4)."
    assert err.value.kind == "model-error"
    broken = _model(tmp_path, "import numpy\nraise ImportError('needs torch')\n", "broken.py")
    with pytest.raises(SandboxError) as err:
        ModelSession(broken, "autotune-config", limits=Limits(timeout_s=60)).start()
    assert str(err.value) == "broken.py: importing the model failed: ImportError: needs torch (broken.py line 2)."
    assert err.value.kind == "import"
    nofactory = _model(tmp_path, "x = 1\n", "nofactory.py")
    with pytest.raises(SandboxError, match=r"defines no callable make_model\(task, seed\)"):
        ModelSession(nofactory, "autotune-config", limits=Limits(timeout_s=60)).start()


def test_measure_requests_are_checked_before_they_reach_a_problem():
    from kgpubench.sandbox.session import _serve_measure

    class Problem:
        calls = []

        def measure(self, assignment):
            self.calls.append(assignment)
            from kgpubench.tasks.npb import Measurement

            return Measurement(1.5, {"k": 0.5})

    problems = [Problem()]
    for bad in ({"problem": 1, "assignment": {}}, {"problem": "0", "assignment": {}},
                {"problem": 0, "assignment": {"k": "64"}}, {"problem": 0, "assignment": {"k": True}},
                {"problem": 0, "assignment": [["k", 64]]}):
        assert _serve_measure({"type": "measure", **bad}, problems)["type"] == "measure_error"
    assert Problem.calls == []
    good = _serve_measure({"type": "measure", "problem": 0, "assignment": {"k": 64}}, problems)
    assert good == {"type": "measurement", "app_time_s": 1.5, "kernel_time_s": {"k": 0.5}}
    assert Problem.calls == [{"k": 64}]


@needs_isolation
def test_the_zygote_is_single_threaded(small):
    X, y = small
    with ModelSession(MODELS / "peek.py", "autotune-config", limits=Limits(timeout_s=60)) as session:
        session.fit(X, y)  # a session through the zygote
        zygote = sandbox_process.zygote()
        assert zygote is not None and zygote.proc.poll() is None
        assert os.listdir(f"/proc/{zygote.proc.pid}/task") == [str(zygote.proc.pid)]  # safe to fork
        with open(f"/proc/{zygote.proc.pid}/cmdline", "rb") as fh:
            assert fh.read().split(b"\0")[1:4] == [b"-m", b"kgpubench.sandbox.child", b"zygote"]
