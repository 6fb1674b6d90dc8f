"""``kgpubench collect`` skips the configurations a dataset store already holds for the collection (same GPU model,
protocol, L2 policy and cold timer, status ok), measures the rest, and refuses a malformed store in one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli
from measure_fakes import DoubleSuite, double_impl

from kgpubench.cli.collect import _run_one, _store_path
from kgpubench.errors import KgpubenchError
from kgpubench.measure import features_link
from kgpubench.measure.api import collect, left_to_measure
from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.runner import CollectSummary
from kgpubench.measure.stored import stored_rows
from kgpubench.measure.timing import PROTOCOL_VERSION, StopRule
from kgpubench.resources import default_data_dir
from kgpubench.schema import get_table

FAST = StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10)
SIZES = (16, 32, 48)  # DoubleSuite: 3 sizes x 2 block sizes = 6 configurations


@pytest.fixture(autouse=True)
def no_per_case_features(monkeypatch):
    monkeypatch.setattr(features_link, "static_features", lambda case, dev, ptx_source=None: {})


def _fake() -> FakeBackend:
    return FakeBackend(implementations={"double": double_impl}, time_ms=0.5, with_nvml=False)


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> list[dict]:
    """Six rows of the fake GPU, as a collection writes them (warm, protocol 2, status ok)."""
    out = tmp_path_factory.mktemp("first")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(features_link, "static_features", lambda case, dev, ptx_source=None: {})
        done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=out, rule=FAST)
    rows = list(done.records)
    assert len(rows) == 6 and {r["measurement_protocol"] for r in rows} == {PROTOCOL_VERSION}
    assert {(r["status"], r["l2_policy"]) for r in rows} == {("ok", "warm")}
    return rows


def _store(folder: Path, rows: list[dict], *, table: str = "kernels", recompute_ids: bool = False) -> Path:
    """A dataset store folder holding ``rows`` as one part of ``table``, with its manifest."""
    part = folder / table / "part-0123456789abcdef.parquet"
    part.parent.mkdir(parents=True)
    pq.write_table(get_table(table).from_rows(rows, fill_row_id=recompute_ids), part)
    digest = hashlib.sha256(part.read_bytes()).hexdigest()
    manifest = {"dataset_version": "1.2.3", "changelog": [],
                "configs": {table: {"schema_version": get_table(table).version,
                                    "files": [{"path": f"{table}/{part.name}", "sha256": digest, "rows": len(rows)}]}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _ids(rows) -> set[str]:
    return {r["row_id"] for r in rows}


def test_stored_configurations_of_this_gpu_are_skipped_and_the_rest_measured(tmp_path, measured):
    held = measured[:4]
    store = _store(tmp_path / "store", held)
    lines: list[str] = []
    done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "out", rule=FAST, store=store,
                   notice=lines.append)
    s = done.summary
    assert (s.total, s.stored, s.skipped, s.written) == (6, 4, 0, 2)
    assert _ids(done.records) == _ids(measured) - _ids(held)  # exactly the two the store lacks
    assert lines == [f"regular: the store {store} (dataset 1.2.3) holds 4 of 6 configurations for "
                     f"{measured[0]['gpu_name']} (protocol {PROTOCOL_VERSION}, warm); skipped "
                     "(--remeasure-stored measures them again)"]
    assert "4 already in the store" in s.line("regular") and s.to_dict()["stored"] == 4
    # the Ray CLI prints the line from the summary's dict (its merged report): the same line, the same summary
    back = CollectSummary.from_dict({**s.to_dict(), "gpus": ["a"], "run_ids": []})
    assert back.line("regular") == s.line("regular") and back.to_dict() == s.to_dict()
    # a rerun skips the two now in the output as already there, the four others as stored
    again = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "out", rule=FAST, store=store).summary
    assert (again.written, again.skipped, again.stored) == (0, 2, 4)


@pytest.mark.parametrize("change, why", [
    ({"gpu_name": "NVIDIA H100 80GB HBM3"}, "another GPU model"),
    ({"measurement_protocol": None}, "protocol 1"),
    ({"status": "launch_error", "status_detail": "a stored failure"}, "a failure"),
    ({"l2_policy": "flushed", "timing_method": "cold"}, "another L2 policy"),
])
def test_rows_of_another_gpu_protocol_policy_or_a_failure_do_not_skip(tmp_path, measured, change, why):
    other = [{**r, **change} for r in measured]
    store = _store(tmp_path / "store", other, recompute_ids=True)
    if "gpu_name" not in change:
        assert _ids(other) == _ids(measured)  # same configurations: only the rule keeps them from counting
    lines: list[str] = []
    done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "out", rule=FAST, store=store,
                   notice=lines.append)
    assert (done.summary.written, done.summary.stored) == (6, 0), why
    assert lines == [f"regular: the store {store} (dataset 1.2.3) holds none of the 6 configurations for "
                     f"{measured[0]['gpu_name']} (protocol {PROTOCOL_VERSION}, warm)"]


def test_a_flushed_collection_is_stopped_only_by_rows_of_its_own_cold_timer(tmp_path, measured):
    cold = [{**r, "l2_policy": "flushed", "timing_method": "cold"} for r in measured[:3]]
    cupti = [{**r, "l2_policy": "flushed", "timing_method": "cupti"} for r in measured[3:5]]
    drained = [{**r, "l2_policy": "flushed", "timing_method": "cupti-drained"} for r in measured[5:]]
    store = _store(tmp_path / "store", cold + cupti + drained)
    assert stored_rows(store, "kernels", l2_policy="flushed", cold_timer="events").row_ids == _ids(cold)
    assert stored_rows(store, "kernels", l2_policy="flushed", cold_timer="cupti").row_ids == _ids(cupti)
    # each CUPTI timer's rows say which (timing_method cupti-drained): neither stops the other's collection
    assert stored_rows(store, "kernels", l2_policy="flushed", cold_timer="cupti-drained").row_ids == _ids(drained)
    assert drained and not _ids(drained) & _ids(cupti)
    with pytest.raises(KgpubenchError, match="unknown cold timer 'nsys'"):
        stored_rows(store, "kernels", l2_policy="flushed", cold_timer="nsys")
    assert stored_rows(store, "kernels", l2_policy="warm").row_ids == frozenset()
    done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "out", rule=FAST, store=store,
                   l2_policy="flushed")  # the fake backend times cold samples as the event timer does
    assert done.summary.stored == 3 and _ids(done.records) == _ids(cupti) | _ids(drained)


@pytest.mark.parametrize("timer", ["events", "cupti", "cupti-drained"])
def test_stored_flushed_stream_and_app_rows_are_held_under_every_cold_timer(tmp_path, measured, timer):
    """A flushed unit too long for the queue is timed ``stream`` whatever the cold timer, and an app run ``app``:
    such stored rows are skipped (before, the store held them under no cold timer, so every session measured
    them again), while the cold labels of other timers still are not."""
    methods = ["stream", "app", "cold", "cupti", "cupti-drained", "stream"]
    rows = [{**r, "l2_policy": "flushed", "timing_method": m} for r, m in zip(measured, methods)]
    store = _store(tmp_path / "store", rows)
    own = {"events": "cold"}.get(timer, timer)
    expected = _ids(r for r in rows if r["timing_method"] in ("stream", "app", own))
    assert len(expected) == 4
    assert stored_rows(store, "kernels", l2_policy="flushed", cold_timer=timer).row_ids == expected


def test_the_store_skips_exactly_the_rows_that_let_an_output_folder_resume(tmp_path, measured):
    """One rule, two places: fed the same rows, a store holds a row for a collection exactly when the same row in
    the collection's output folder does not stop its resume (every L2 policy and cold timer)."""
    from kgpubench.errors import OptionError
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import check_shard_timing

    ways = [("flushed", "cold"), ("flushed", "cupti"), ("flushed", "cupti-drained"), ("flushed", "stream"),
            ("flushed", "app"), ("warm", "graph"), ("warm", "stream"), ("warm", "app"), ("warm", "batch")]
    rows = [{**r, "l2_policy": l2, "timing_method": m, "source": "fake"}
            for r, (l2, m) in zip(measured * 2, ways)]
    rows = [{**r, "size_params": [{"name": "n", "value": float(1000 + i)}]} for i, r in enumerate(rows)]
    rows = get_table("kernels").from_rows(rows).to_pylist()  # distinct row ids: one per way of timing
    assert len(_ids(rows)) == len(ways)
    store = _store(tmp_path / "store", rows)
    folders = {}
    for r in rows:
        writer = ShardWriter(tmp_path / "out" / r["timing_method"] / r["l2_policy"], "kernels")
        writer.append(r)
        writer.close()
        folders[r["row_id"]] = writer.folder
    checked = 0
    for policy, timer in [("warm", "events"), ("flushed", "events"), ("flushed", "cupti"),
                          ("flushed", "cupti-drained")]:
        held = stored_rows(store, "kernels", l2_policy=policy, cold_timer=timer).row_ids
        assert held and held != _ids(rows)  # each combination holds some rows and not others
        for rid, folder in folders.items():
            try:
                check_shard_timing(ShardWriter(folder, "kernels"), policy, timer)
                resumes = True
            except OptionError as exc:
                assert str(exc).startswith(f"{folder}: 1 row(s) there were timed another way")
                resumes = False
            assert resumes is (rid in held), (policy, timer, folder)
            checked += 1
    assert checked == 4 * len(ways)


def test_every_cold_timer_of_the_backend_has_the_timing_method_its_rows_record():
    from kgpubench.measure.backends.cupy_timing import COLD_TIMERS  # NumPy only: CuPy is imported when used
    from kgpubench.measure.timing import COLD_METHODS, METHODS

    assert set(COLD_METHODS) == set(COLD_TIMERS) and set(COLD_METHODS.values()) <= set(METHODS)


def test_remeasure_stored_measures_everything_and_the_default_is_the_packaged_store(tmp_path, measured, capsys):
    store = _store(tmp_path / "store", measured)
    assert _store_path(None, True, None, False) is None
    assert _store_path(None, False, None, False) == default_data_dir()
    assert _store_path(store, False, None, False) == store
    skipped = _run_one(DoubleSuite(sizes=SIZES), _fake(), None, False, tmp_path / "a", None, store=store)
    assert (skipped["written"], skipped["stored"]) == (0, 6)
    err = capsys.readouterr().err
    assert "holds 6 of 6 configurations" in err and "6 already in the store" in err
    everything = _run_one(DoubleSuite(sizes=SIZES), _fake(), None, False, tmp_path / "b", None, store=None)
    assert (everything["written"], everything["stored"]) == (6, 0)


def test_collect_reads_the_store_once_per_suite(tmp_path, measured, monkeypatch, capsys):
    """``kgpubench collect`` reads the store before the GPU is touched (a bad store fails first) and hands that
    reading to the collection, which does not read it again."""
    from kgpubench.measure import stored as stored_module
    from kgpubench.measure import suites as suites_module
    from kgpubench.measure.backends import registry

    store = _store(tmp_path / "store", measured[:4])
    reads = []
    held_in = stored_module._held_in
    monkeypatch.setattr(stored_module, "_held_in", lambda *a: reads.append(a[0]) or held_in(*a))
    monkeypatch.setattr(suites_module, "load_suite", lambda name: DoubleSuite(sizes=SIZES))
    monkeypatch.setattr(registry, "get_backend", lambda name, **kw: _fake())
    code, out, err = cli(monkeypatch, capsys, "collect", "--suite", "regular", "--store", store, "--out",
                         tmp_path / "shards", "--json")
    assert code in (0, None), err
    assert json.loads(out)["regular"]["stored"] == 4 and json.loads(out)["regular"]["written"] == 2
    assert reads == [store / "kernels" / "part-0123456789abcdef.parquet"]  # once, not once more per suite


def test_a_store_reading_made_for_another_collection_is_refused(tmp_path, measured):
    store = _store(tmp_path / "store", measured[:4])
    warm = stored_rows(store, "kernels", l2_policy="warm")
    done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "a", rule=FAST, store=warm)
    assert (done.summary.stored, done.summary.written) == (4, 2)  # the reading is used as the store would be
    flushed = stored_rows(store, "kernels", l2_policy="flushed", cold_timer="cupti")
    with pytest.raises(KgpubenchError) as err:
        collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "b", rule=FAST, store=flushed)
    assert str(err.value).startswith(f"{store}: the store's rows were read for a collection of kernels (flushed, "
                                     "cold timer cupti), not for this one (kernels, warm, cold timer events)")
    assert not (tmp_path / "b").exists()  # refused before anything is written


def test_a_store_without_the_table_is_a_note_and_no_skip(tmp_path, measured):
    store = _store(tmp_path / "store", [], table="npb")
    lines: list[str] = []
    done = collect(DoubleSuite(sizes=SIZES), backend=_fake(), out=tmp_path / "out", rule=FAST, store=store,
                   notice=lines.append)
    assert done.summary.written == 6 and done.summary.stored == 0
    assert lines == [f"regular: the store {store} (dataset 1.2.3) holds no kernels rows; nothing skipped"]


def _break(store: Path, how: str) -> str:
    """Spoil ``store`` one way; the text the error must contain."""
    part = next((store / "kernels").glob("*.parquet"))
    if how == "missing folder":
        return f"{store / 'nowhere'}: no such dataset store folder"
    if how == "no manifest":
        (store / "manifest.json").unlink()
        return f"{store}: no manifest.json, so not a dataset store"
    if how == "malformed manifest":
        (store / "manifest.json").write_text("{not json")
        return f"{store / 'manifest.json'}: malformed manifest"
    if how == "missing part":
        part.unlink()
        return f"{part}: listed in the store's manifest.json but missing"
    if how == "unreadable part":
        part.write_bytes(b"PAR1 this is not parquet")
        return f"{part}: not a readable parquet file"
    pq.write_table(pa.table({"gpu_name": ["x"], "status": ["ok"]}), part)  # a table without the key
    return f"{part}: no row_id column"


BREAKS = ("missing folder", "no manifest", "malformed manifest", "missing part", "unreadable part", "no row_id")


@pytest.mark.parametrize("how", BREAKS)
def test_a_malformed_store_is_one_line_naming_the_path_and_the_fix(tmp_path, measured, how, monkeypatch, capsys):
    store = _store(tmp_path / "store", measured)
    expected = _break(store, how)
    target = store / "nowhere" if how == "missing folder" else store
    with pytest.raises(KgpubenchError) as err:
        stored_rows(target, "kernels", l2_policy="warm")
    assert expected in str(err.value) and "--remeasure-stored" in str(err.value)
    # the command: one line, exit 1, before any GPU is looked for (this machine has none) and nothing written
    code, out, err_text = cli(monkeypatch, capsys, "collect", "--suite", "regular", "--quick", "--store", target,
                              "--out", tmp_path / "shards")
    lines = [ln for ln in err_text.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1 and expected in lines[0] and "Traceback" not in err_text
    assert not (tmp_path / "shards").exists()


# -- the shipped data -----------------------------------------------------------------------------------------------
H200 = "NVIDIA H200"


def _shipped_protocol2(table: str, gpu: str) -> set[str]:
    """Row ids of the packaged store's protocol-2 rows of ``gpu`` with status ok, read straight from its parts."""
    parts = sorted((default_data_dir() / table).glob("*.parquet"))
    data = pa.concat_tables(pq.read_table(p, columns=["row_id", "gpu_name", "measurement_protocol", "status"])
                            for p in parts).to_pylist()
    return {r["row_id"] for r in data
            if r["gpu_name"] == gpu and r["measurement_protocol"] == PROTOCOL_VERSION and r["status"] == "ok"}


@pytest.mark.parametrize("suite, table", [pytest.param("stencil", "stencil", marks=pytest.mark.slow), ("npb", "npb")])
def test_on_the_shipped_data_the_planner_skips_exactly_the_h200_rows_the_store_has(suite, table):
    expected = _shipped_protocol2(table, H200)
    assert expected  # the H200 sessions' rows are in the store
    left = left_to_measure(suite, gpu_name=H200, store=default_data_dir())
    assert left.held_ids == expected  # every stored H200 row is a planned configuration, and nothing else counts
    assert left.left == left.total - len(expected) >= 0  # planned and not held: left (npb: none, since 0.17.0)
    assert left.stored.version == json.loads((default_data_dir() / "manifest.json").read_text())["dataset_version"]


def test_on_the_shipped_data_another_gpu_model_holds_none_of_the_h200_configurations():
    # the H100's rows of the same npb configurations are protocol 1: they stop neither GPU's collection
    assert left_to_measure("npb", gpu_name="NVIDIA H100 80GB HBM3", store=default_data_dir()).held == 0
    assert _shipped_protocol2("npb", "NVIDIA H100 80GB HBM3") == set()


def test_dry_run_counts_what_the_store_holds_and_what_is_left_for_a_named_gpu(monkeypatch, capsys):
    expected = _shipped_protocol2("npb", H200)
    code, out, _err = cli(monkeypatch, capsys, "collect", "--suite", "npb", "--dry-run", "--json",
                          "--gpu-name", H200)
    assert code in (0, None)
    got = json.loads(out)["npb"]
    assert got["stored"] == len(expected) and got["left"] == got["cases"] - len(expected)
    assert got["store"] == str(default_data_dir()) and got["gpu_name"] == H200
    code, out, _err = cli(monkeypatch, capsys, "collect", "--suite", "npb", "--dry-run", "--gpu-name", H200,
                          "--remeasure-stored")
    assert "nothing skipped (--remeasure-stored)" in out and f"{got['cases']:,} left to measure" in out
    code, _out, err = cli(monkeypatch, capsys, "collect", "--suite", "npb", "--gpu-name", H200)
    assert code == 1 and "--gpu-name is for --dry-run only" in err
