"""scripts/gpu_session.sh --dry-run: what a GPU session would run, most valuable first, without a GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_lists_proof_suites_repeat_and_tests_in_order(tmp_path):
    resume = tmp_path / "carried"
    resume.mkdir()
    (resume / "shards_regular.tar").write_bytes(b"")
    env = {**os.environ, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"), "PYTHON": sys.executable,
           "RESUME": str(resume)}
    res = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh"), "--dry-run", "--minutes", "3",
                          "--suites", "regular power", "--repeat", "50"], capture_output=True, text=True,
                         check=False, env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    commands = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("+ ")]
    assert commands[0] == "resume from shards_regular.tar"
    # the proof of the labels first, then the suites and the repeat; the GPU tests and ceilings last
    tests = next(i for i, c in enumerate(commands) if "-m pytest -m gpu" in c)
    assert "tests/collectors/regular/test_gpu.py" in commands[tests] and "conftest.py" not in commands[tests]
    scripts = [c.split()[1] for c in commands if "benchmarks/" in c]
    assert scripts == ["benchmarks/timing_agreement.py", "benchmarks/collect_overhead.py",
                       "benchmarks/repeat_check.py", "benchmarks/gpu_ceilings.py"]
    assert "timing_agreement" in commands[1] and tests > max(i for i, c in enumerate(commands) if "repeat_check" in c)
    collects = [c for c in commands if " collect " in c]
    assert [c.split("--suite ")[1].split()[0] for c in collects] == ["regular", "power"]
    assert all("--max-minutes 3" in c and f"--out {tmp_path}/work/shards" in c and "--lock-clocks none" in c
               for c in collects)
    assert "--count 50" in next(c for c in commands if "repeat_check" in c)
    # the proof compares the cold timers and writes its choice; only the flushed suite is timed with it, after a gate
    assert "--cold-timers events,cupti,cupti-drained --choose " + f"{tmp_path}/work/logs/cold_timer.json" in commands[1]
    assert collects[0].endswith("--cold-timer events (limit 270s)") and "--cold-timer" not in collects[1]
    assert "gpu_session: regular is flushed: collected only with a proven cold timer" in res.stdout
    # what comes back through $OUT: logs after the proof, one archive per suite, the repeat, logs after the tests
    assert [c for c in commands if c.startswith("pack")] == ["pack logs", "pack shards_regular", "pack shards_power",
                                                            "pack repeat", "pack logs"]
    assert "regular: 2363 cases" in res.stdout  # the plan of the full regular sweep
    assert not any((tmp_path / "work" / "shards").iterdir())  # nothing written in a dry run
    assert not any((tmp_path / "out").iterdir())


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_of_a_short_lease_precompiles_in_the_background_and_skips_what_it_is_told(tmp_path):
    """The 2026-11-26 H200 calls: background compile of the slow suites while the proof uses the GPU, a flush
    comparison, fractional minutes, no overhead sample and no GPU tests."""
    env = {**os.environ, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"), "PYTHON": sys.executable,
           "RESUME": str(tmp_path / "none"), "PRECOMPILE": "npb stencil", "PROOF_LIMIT": "150",
           "TA_ARGS": "--flushed-only --flush-modes write,read", "OVERHEAD_ARGS": "skip", "GPU_NAME": "NVIDIA H200"}
    res = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh"), "--dry-run", "--no-gpu-tests",
                          "--minutes", "0.6", "--suites", "npb"], capture_output=True, text=True, check=False,
                         env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    commands = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("+ ")]
    assert commands[0] == f"background precompile of [npb stencil] into {tmp_path}/work/compile-cache"
    assert commands[1].endswith("--flushed-only --flush-modes write,read (limit 150s)")
    assert "timing_agreement.py" in commands[1]
    assert not any("collect_overhead" in c or "-m pytest" in c or "gpu_ceilings" in c for c in commands)
    collect = next(c for c in commands if " collect " in c)
    assert "--max-minutes 0.6" in collect and collect.endswith("(limit 126s)")  # 0.6 min + 90 s, whole seconds
    # the plan says what the packaged store holds for the GPU named, which the collection skips
    held = next(ln for ln in res.stdout.splitlines() if ln.startswith("  for NVIDIA H200: the store "))
    assert held.endswith(" left to measure") and "kgpubench/data (dataset " in held


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("proven", [0, 1])
def test_the_flushed_suite_is_collected_only_with_a_proven_cold_timer(tmp_path, proven):
    """Without a proof in this call, a carried cold_timer.json decides: not proven, the regular suite is skipped;
    proven, it is collected with the chosen timer (here it then fails for want of a GPU, after the gate)."""
    resume = tmp_path / "carried"
    resume.mkdir()
    (resume / "cold_timer.json").write_text(f'{{"timer": "cupti", "proven": {"true" if proven else "false"}}}')
    (resume / "kgpubench_commit").write_text("c0ffee" * 6 + "abcd\n")  # as scripts/device_slim.sh leaves it
    env = {**os.environ, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"), "PYTHON": sys.executable,
           "RESUME": str(resume), "PATH": os.environ.get("PATH", "")}
    env.pop("KGPUBENCH_COMMIT", None)
    res = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh"), "--no-tests", "--minutes", "0.1",
                          "--suites", "regular"], capture_output=True, text=True, check=False, env=env,
                         cwd=tmp_path, timeout=300)
    assert f"commit {'c0ffee' * 6}abcd" in (tmp_path / "work" / "logs" / "env.txt").read_text()
    word = "proven" if proven else "not proven"
    assert f"gpu_session: cold timer cupti ({word}, {resume}/cold_timer.json)" in res.stdout, res.stdout + res.stderr
    collected = [ln for ln in res.stdout.splitlines() if ln.startswith("+ ") and " collect " in ln]
    if proven:
        assert len(collected) == 1 and "--cold-timer cupti (limit 96s)" in collected[0]
    else:
        assert collected == [] and "gpu_session: regular skipped: its cold timing is not proven" in res.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_help_prints_the_whole_header():
    res = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh"), "--help"], capture_output=True,
                         text=True, check=False, timeout=60)
    assert res.returncode == 0
    assert res.stdout.startswith("# A measuring session on a lent GPU machine")
    assert res.stdout.rstrip().endswith("--dry-run needs no GPU.") and "set -u" not in res.stdout
    assert "cupti-drained" in res.stdout  # the proof's third timer is documented


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_of_the_documented_first_call_proves_with_the_cupti_diagnostics_before_collecting(tmp_path):
    """docs/GPU_SESSION.md's first call of the next lease (issue 44): the proof of the flushed picks with all three
    cold timers (the diagnostics ride in its log and JSON), then regular only behind the proof's gate."""
    doc = (ROOT / "docs" / "GPU_SESSION.md").read_text()
    call = next(ln for ln in doc.splitlines() if ln.startswith("| 1 |"))
    command = call.split("`")[1]
    assert command.startswith("WORK=/tmp/w ") and "scripts/gpu_session.sh" in command
    env_words, args = command.split("scripts/gpu_session.sh")
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": sys.executable, "RESUME": str(tmp_path / "none")}
    for word in shlex_split(env_words):
        key, value = word.split("=", 1)
        env[key] = value
    env["WORK"] = str(tmp_path / "work")  # not /tmp/w on this machine
    documented = shlex_split(args)
    assert documented[documented.index("--suites") + 1].split()[0] == "regular"  # the flushed suite first
    # the plans of npb and stencil are slow to print and beside the point: the last --suites wins
    res = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh"), "--dry-run", *documented,
                          "--suites", "regular"],
                         capture_output=True, text=True, check=False, env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    commands = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("+ ")]
    proof = next(i for i, c in enumerate(commands) if "timing_agreement.py" in c)
    first_collect = next(i for i, c in enumerate(commands) if " collect --suite " in c)
    assert proof < first_collect
    assert "--cold-timers events,cupti,cupti-drained --choose" in commands[proof]
    assert "--flushed-only" in commands[proof] and commands[proof].endswith("(limit 240s)")
    assert "gpu_session: regular is flushed: collected only with a proven cold timer" in res.stdout
    assert not any("collect_overhead" in c or "-m pytest" in c for c in commands)


def shlex_split(text):
    import shlex

    return shlex.split(text)
