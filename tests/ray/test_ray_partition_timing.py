"""A Ray actor refuses to resume its partition folder when the rows there were timed another way, in the same one
line as a serial collection's folder (:func:`kgpubench.measure.runner.check_shard_timing`). The actor's method is
called in this process, with the Ray tests' fake GPUs: no Ray needed."""

from __future__ import annotations

import pytest
import scale_fakes as fakes

from kgpubench.errors import OptionError
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions
from kgpubench.ray.collect import GpuCollector, SuiteJob, partition_folder


def _partition(tmp_path, collector: GpuCollector, l2_policy: str, sizes=None) -> tuple[dict, str]:
    """Collect partition 1 of 2 of the fake suite with ``l2_policy`` into its folder; the result and the folder."""
    ref = fakes.Suite() if sizes is None else (lambda: fakes.DoubleSuite(sizes=sizes, blocks=fakes.BLOCKS))
    job = SuiteJob("regular", "kernels", ref, CollectOptions(l2_policy=l2_policy))
    folder = partition_folder(tmp_path, "regular", fakes.H100.name, 0, 2)
    return collector.collect(job, 0, 2, frozenset(), str(folder), "none"), str(folder)


def test_a_partition_folder_timed_another_way_is_refused_naming_it(tmp_path):
    collector = GpuCollector(fakes.FakeGpus((fakes.H100,)), 0)
    first, folder = _partition(tmp_path, collector, "flushed", sizes=fakes.SIZES[:3])  # rows timing_method cold
    n = len(first["rows"])
    assert n and {(r["l2_policy"], r["timing_method"]) for r in first["rows"]} == {("flushed", "cold")}

    with pytest.raises(OptionError) as err:  # another L2 policy
        _partition(tmp_path, collector, "warm")
    assert str(err.value).startswith(f"{folder}: {n} row(s) there were timed another way ({n} flushed, "
                                     "timing_method cold) than this collection times (warm)")
    assert "\n" not in str(err.value)
    collector.backend.cold_timer = "cupti"  # as CupyBackend(cold_timer="cupti") says it: another cold timer
    with pytest.raises(OptionError, match=r"than this collection times \(flushed, timing_method cupti\)"):
        _partition(tmp_path, collector, "flushed")
    assert len(ShardWriter(folder, "kernels")) == n  # nothing was measured into it

    collector.backend.cold_timer = "events"  # the first run's way: the partition resumes and finishes
    again, _folder = _partition(tmp_path, collector, "flushed")
    summary = again["summary"]
    assert summary.skipped == n and summary.written == summary.total - n > 0
    assert {r["timing_method"] for r in again["rows"]} == {"cold"}


def test_flushed_stream_rows_in_a_partition_folder_do_not_stop_a_cupti_resume(tmp_path):
    """A unit too long for the queue is timed ``stream`` under every cold timer: such rows let the partition
    resume, as the same rows in a store are skipped (timed_alike)."""
    collector = GpuCollector(fakes.FakeGpus((fakes.H100,)), 0)
    first, folder = _partition(tmp_path, collector, "flushed", sizes=fakes.SIZES[:3])
    writer = ShardWriter(folder, "kernels")
    rows = [{**r, "timing_method": "stream"} for r in writer.rows()]
    for path in sorted(writer.folder.iterdir()):
        path.unlink()
    restamped = ShardWriter(folder, "kernels")
    for r in rows:
        restamped.append(r)
    restamped.close()
    collector.backend.cold_timer = "cupti"
    # the fake backend times cold samples as the event timer does; what is checked here is the resume, not the
    # label of the rows it adds
    again, _folder = _partition(tmp_path, collector, "flushed")
    summary = again["summary"]
    assert summary.skipped == len(rows) > 0 and summary.written == summary.total - len(rows) > 0
