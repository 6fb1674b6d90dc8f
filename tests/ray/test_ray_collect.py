"""``collect --ray`` on a local Ray with fake GPUs: every configuration measured exactly once per GPU model,
per-actor run ids, rows under each GPU's own name, a killed actor resumed, shards merged as a serial run."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
import scale_fakes as fakes

from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, collect_suite
from kgpubench.ray import partition_of
from kgpubench.ray.collect import RAY_DIR, SuiteJob, collect_on_ray, merge_leftovers, partition_folder

pytestmark = [pytest.mark.usefixtures("ray_local"), pytest.mark.slow]
# Columns that differ between two collections of the same configurations by design: the run, the board, and
# the device's state around the case (the fake GPU warms up one degree per reading, so it depends on how many
# cases ran before on that board).
RUN_COLUMNS = {"run_id", "collected_at", "gpu_uuid_hash", "temperature_c_before", "temperature_c_after"}


def _job(ref=None) -> SuiteJob:
    return SuiteJob("regular", "kernels", ref or fakes.Suite(), CollectOptions())


def _serial(out: Path, devices) -> list[dict]:
    """What one serial collection per GPU model writes (each on one fake GPU)."""
    writer = ShardWriter(out / "regular", "kernels")
    for dev in devices:
        collect_suite(fakes.Suite()(), fakes.backend_for(dev), writer, CollectOptions())
    writer.close()
    return writer.rows()


def _comparable(rows: list[dict]) -> dict[str, dict]:
    return {r["row_id"]: {k: v for k, v in r.items() if k not in RUN_COLUMNS} for r in rows}


def test_partition_rule_covers_every_row_once():
    ids = [f"row-{i}" for i in range(1000)]
    for parts in (1, 2, 3, 8):
        shares = [[r for r in ids if partition_of(r, parts) == k] for k in range(parts)]
        assert sorted(r for s in shares for r in s) == sorted(ids)  # every row once, none twice
        assert min(map(len, shares)) > 1000 / parts * 0.7  # and evenly enough (a hash, not a count)
    assert partition_of("row-1", 3) == partition_of("row-1", 3)
    with pytest.raises(ValueError):
        partition_of("row-1", 0)


def test_three_gpus_two_models_merge_like_serial(tmp_path):
    devices = (fakes.H100, fakes.H100, fakes.A100)
    report = collect_on_ray([_job()], tmp_path / "ray", make_backend=fakes.FakeGpus(devices))
    s = report.summaries["regular"]
    assert s["gpu_count"] == {"Fake A100 (CPU test double)": 1, "Fake H100 (CPU test double)": 2}
    # 12 configurations per GPU model: the two H100 partitions share them, the A100 measures all 12
    assert s["total"] == 24 and s["written"] == 24 and s["statuses"] == {"ok": 24} and not report.unfinished
    by_slot = {p["slot"]: p for p in s["partitions"]}
    assert by_slot[0]["total"] + by_slot[1]["total"] == 12 and by_slot[2]["total"] == 12
    assert len({p["run_id"] for p in s["partitions"]}) == 3  # each actor its own run and provenance
    rows = ShardWriter(tmp_path / "ray" / "regular", "kernels").rows()
    assert len(rows) == 24 and len({r["row_id"] for r in rows}) == 24
    for r in rows:  # every row in the partition of the actor that measured it, under its own device
        slot = next(p["slot"] for p in s["partitions"] if p["run_id"] == r["run_id"])
        if r["gpu_name"].startswith("Fake H100"):
            assert slot in (0, 1) and partition_of(r["row_id"], 2) == by_slot[slot]["part"]
            assert r["gpu_uuid_hash"] == f"h100h100h100{slot:04d}"
        else:
            assert slot == 2 and r["gpu_compute_capability"] == "8.0"
    assert _comparable(rows) == _comparable(_serial(tmp_path / "serial", (fakes.H100, fakes.A100)))
    assert not (tmp_path / "ray" / RAY_DIR).exists()  # every partition folder merged and removed
    again = collect_on_ray([_job()], tmp_path / "ray", make_backend=fakes.FakeGpus(devices))
    assert (again.summaries["regular"]["written"], again.summaries["regular"]["skipped"]) == (0, 24)


def test_killed_actor_is_resumed_losing_only_the_case_in_flight(tmp_path):
    marker = tmp_path / "killed"
    devices = (fakes.H100, fakes.H100)
    report = collect_on_ray([_job(fakes.Killing(str(marker), kill_at=3))], tmp_path / "out",
                            make_backend=fakes.FakeGpus(devices), retries=1, gpus=2)
    assert marker.exists() and not report.unfinished
    s = report.summaries["regular"]
    assert s["written"] == 12 and s["statuses"] == {"ok": 12}
    rows = ShardWriter(tmp_path / "out" / "regular", "kernels").rows()
    assert sorted(r["row_id"] for r in rows) == sorted({r["row_id"] for r in rows}) and len(rows) == 12
    # three runs: the killed actor's first process kept the 2 rows it finished; its restart measured the rest
    # of its partition (the case in flight included); the other actor measured its partition at once
    runs = {}
    for r in rows:
        runs[r["run_id"]] = runs.get(r["run_id"], 0) + 1
    assert len(runs) == 3 and 2 in runs.values()
    killed_pid = int(marker.read_text())
    restarted = [p for p in s["partitions"] if p["pid"] != killed_pid and p["skipped"] == 2]
    assert len(restarted) == 1 and restarted[0]["total"] == runs[restarted[0]["run_id"]] + 2
    assert _comparable(rows) == _comparable(_serial(tmp_path / "serial", (fakes.H100,)))


def test_leftover_partition_folders_are_merged_first(tmp_path):
    """A run killed with its driver leaves partition folders; the next run (serial or Ray) keeps their rows."""
    left = partition_folder(tmp_path, "regular", "Fake H100 (CPU test double)", 0, 2)
    writer = ShardWriter(left, "kernels")
    summary = collect_suite(fakes.Suite()(), fakes.backend_for(fakes.H100), writer,
                            CollectOptions(row_ids=None, kernels=None, quick=True))
    writer.close()
    assert summary.written == 2  # the quick plan: one size, two launches
    main = ShardWriter(tmp_path / "regular", "kernels")
    added = merge_leftovers(tmp_path, "regular", main)
    assert dict(added) == {"ok": 2} and len(main) == 2 and not (tmp_path / RAY_DIR).exists()
    report = collect_on_ray([_job()], tmp_path, make_backend=fakes.FakeGpus((fakes.H100,)), gpus=1)
    s = report.summaries["regular"]
    assert (s["written"], s["skipped"], s["total"]) == (10, 2, 12)


def test_a_suite_folder_or_leftover_timed_another_way_is_refused_before_any_partition(tmp_path):
    """As a serial resume: rows of another L2 policy in ``OUT/<suite>/``, or in a partition folder a stopped run
    left, stop the Ray collection in one line naming that folder; nothing is measured, merged or removed."""
    from kgpubench.errors import OptionError

    flushed = CollectOptions(l2_policy="flushed", quick=True)  # the fake suite's own policy is warm
    left = partition_folder(tmp_path, "regular", fakes.H100.name, 0, 1)
    writer = ShardWriter(left, "kernels")
    collect_suite(fakes.Suite()(), fakes.backend_for(fakes.H100), writer, flushed)
    writer.close()
    n = len(writer)
    with pytest.raises(OptionError) as err:
        collect_on_ray([_job()], tmp_path, make_backend=fakes.FakeGpus((fakes.H100,)), gpus=1)
    assert str(err.value).startswith(f"{left}: {n} row(s) there were timed another way ({n} flushed, "
                                     "timing_method cold) than this collection times (warm)")
    assert len(ShardWriter(left, "kernels")) == n and len(ShardWriter(tmp_path / "regular", "kernels")) == 0

    main = ShardWriter(tmp_path / "regular", "kernels")  # the same rows in the suite's folder instead
    merge_leftovers(tmp_path, "regular", main)
    main.close()
    assert not (tmp_path / RAY_DIR).exists()
    with pytest.raises(OptionError, match=rf"^{tmp_path / 'regular'}: {n} row\(s\) there were timed another"):
        collect_on_ray([_job()], tmp_path, make_backend=fakes.FakeGpus((fakes.H100,)), gpus=1)
    assert len(ShardWriter(tmp_path / "regular", "kernels")) == n and not (tmp_path / RAY_DIR).exists()
    job = _job()
    resumed = collect_on_ray([SuiteJob(job.name, job.table, job.ref, replace(job.options, l2_policy="flushed"))],
                             tmp_path, make_backend=fakes.FakeGpus((fakes.H100,)), gpus=1)
    assert (resumed.summaries["regular"]["skipped"], resumed.summaries["regular"]["written"]) == (n, 12 - n)


def test_configurations_a_store_holds_for_a_gpu_model_are_skipped_on_every_partition(tmp_path):
    """As a serial collect with --store: the H100 configurations the store holds are not measured, by either of
    the two H100 actors, and the summary counts them; the A100 (none stored) measures all of its own."""
    from kgpubench.measure.stored import StoredRows

    h100 = sorted(r["row_id"] for r in _serial(tmp_path / "serial", (fakes.H100,)))
    held = frozenset(h100[::2])  # half of them, whichever partition they fall in
    stored = StoredRows(tmp_path / "store", "1.0.0", "kernels", held)
    job = _job()
    devices = (fakes.H100, fakes.H100, fakes.A100)
    report = collect_on_ray([replace(job, options=replace(job.options, stored=stored))], tmp_path / "ray",
                            make_backend=fakes.FakeGpus(devices))
    s = report.summaries["regular"]
    assert (s["total"], s["stored"], s["written"], s["skipped"]) == (24, len(held), 24 - len(held), 0)
    rows = ShardWriter(tmp_path / "ray" / "regular", "kernels").rows()
    assert not held & {r["row_id"] for r in rows}
    assert {r["row_id"] for r in rows if r["gpu_name"] == fakes.H100.name} == set(h100) - held


def test_fake_rows_never_validate(tmp_path):
    from kgpubench.store.checks import validate_paths

    _serial(tmp_path, (fakes.H100,))
    problems = validate_paths([tmp_path / "regular"])
    assert any("source" in str(v) for vs in problems.values() for v in vs)


def test_collect_on_ray_without_a_usable_gpu_is_exit_2(tmp_path, monkeypatch, capsys):
    """The local Ray declares GPUs, but CuPy finds none in the actors: one line, exit 2, nothing written (the
    entry point's handler turns NoGpuError into its exit code, as for a serial collect)."""
    from kgpubench.cli import main
    from kgpubench.measure.backends.cupy_backend import cupy_available

    if cupy_available()[0]:
        pytest.skip("a GPU is present: collect would measure")
    monkeypatch.delenv("KGPUBENCH_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["kgpubench", "collect", "--ray=", "--suite", "regular", "--quick", "--out",
                                      str(tmp_path)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    output = capsys.readouterr()
    assert exit_info.value.code == 2, output
    assert "a GPU actor cannot use its GPU" in output.err and "Traceback" not in output.err + output.out
    assert not any(tmp_path.iterdir())
