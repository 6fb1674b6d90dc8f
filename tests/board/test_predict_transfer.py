"""``kgpubench predict`` for a GPU a one-GPU task's data lacks: kernel-time holds the H100 only, so its answer for
another GPU is the roofline transfer (:mod:`kgpubench.board.roofline_transfer`), scored leave-one-GPU-out on
rodinia-time. On the shipped data: the transfer's score is computed once (seconds) and the kernel-time model trained
once (seconds) into a temporary cache; the tests that need either are marked slow."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helpers import cli

from kgpubench.board import predict as P
from kgpubench.board import roofline_transfer as T
from kgpubench.errors import NoDataError, OptionError
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import get_task
from kgpubench.tasks.data import task_data
from kgpubench.tasks.selection import task_rows

H100 = "NVIDIA H100 80GB HBM3"
# Three targets whose bandwidths (the bound of a small memory-bound kernel) all differ from each other.
TARGETS = ("GeForce RTX 4090", "L4", "Radeon RX 7900 XTX")
SEED000 = ("n", "s", "cpx", "nb", "nt", "w", "alpha", "l", "lc", "lmr", "lmw", "lshr", "lshw", "ls", "ldpu", "lsfu",
           "dpc", "shmem_words", "nreg")


@pytest.fixture(scope="module")
def score():
    """The transfer's leave-one-GPU-out score on rodinia-time, computed from the shipped rows."""
    return T.score()


@pytest.fixture(scope="module")
def cache(tmp_path_factory, score):
    with pytest.MonkeyPatch.context() as mp:
        folder = tmp_path_factory.mktemp("predict-transfer-cache")
        mp.setenv(P.CACHE_ENV, str(folder))
        mp.setattr(P, "scored", lambda data_dir=None: (score, True))  # computed once above
        yield folder


@pytest.fixture(scope="module")
def va():
    """A `kgpubench features --json` object of vector_add built from its H100 row in kernel-time (compiled for
    sm_90), and that row."""
    data = task_data("kernel-time", "random10")
    i = data.rows["kernel"].to_pylist().index("vector_add")
    r = data.rows.slice(i, 1).to_pylist()[0]
    return {"kernel": "vector_add", "entry": "vector_add", "arch": "sm_90",
            "grid": [r["grid_x"], r["grid_y"], r["grid_z"]], "block": [r["block_x"], r["block_y"], r["block_z"]],
            "mix": {"fp32": r["mix_fp32"]}, "flops": r["flops"], "global_bytes_read": r["global_bytes_read"],
            "global_bytes_written": r["global_bytes_written"], **{c: r[c] for c in SEED000}}, r


@pytest.fixture(scope="module")
def answers(cache, va, tmp_path_factory):
    path = tmp_path_factory.mktemp("va") / "va.json"
    path.write_text(json.dumps(va[0]))
    values = P.read_input_file(path, "kernel-time")
    return {g: P.predict("kernel-time", g, values) for g in (*TARGETS, H100)}, path




def test_a_features_file_keeps_what_the_transfer_reads_beside_the_task_s_columns(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"kernel": "k", "entry": "k", "arch": "sm_89", "grid": [2], "block": [64], "nb": 2,
                                "nt": 64, "flops": 3.0, "global_bytes_read": 8.0, "global_bytes_written": 4.0,
                                "occupancy": 1.0}))
    got = P.read_input_file(path, "kernel-time")
    assert (got["arch"], got["flops"], got["global_bytes_read"], got["global_bytes_written"]) == ("sm_89", 3, 8, 4)
    assert "occupancy" not in got  # neither the task's nor the transfer's
    assert T.work_of("kernels", got) == (3.0 * 128, 12.0 * 128)  # per thread x nb x nt = 2 x 64 threads


def test_the_work_of_an_input_without_counts_is_one_error_naming_them():
    with pytest.raises(OptionError, match=r"global_bytes_read, global_bytes_written are missing .* features --json"):
        T.work_of("kernels", {"flops": 1, "nb": 1, "nt": 1})
    with pytest.raises(OptionError, match="a launch that does work"):
        T.work_of("kernels", {"flops": 0, "global_bytes_read": 0, "global_bytes_written": 0, "nb": 1, "nt": 1})


def test_the_bound_is_the_slower_of_compute_and_memory():
    figures = {"gpu_memory_bandwidth_gbs": 1000.0, "gpu_peak_fp32_gflops": 10_000.0}  # 1e12 B/s, 1e13 flop/s
    assert T.bound_ms(1e9, 1e9, figures) == pytest.approx(1.0)  # 1e9 B / 1e12 B/s = 1 ms > 0.1 ms of compute
    assert T.limiter(1e9, 1e9, figures) == "memory"
    assert T.bound_ms(1e11, 1e9, figures) == pytest.approx(10.0) and T.limiter(1e11, 1e9, figures) == "compute"


def test_the_architecture_notes_compare_the_input_s_with_the_target_s_and_the_data_s():
    h100, ada, amd = P.gpu_spec(H100), P.gpu_spec("GeForce RTX 4090"), P.gpu_spec("Radeon RX 7900 XTX")
    assert (P.arch_of(h100), P.arch_of(ada), P.arch_of(amd)) == ("sm_90", "sm_89", None)
    mismatch = P.arch_notes("sm_90", h100, ada)
    assert len(mismatch) == 1 and "not for NVIDIA GeForce RTX 4090's sm_89" in mismatch[0]
    assert "--arch sm_89" in mismatch[0]
    match = P.arch_notes("sm_89", h100, ada)
    assert "the transfer's bytes and flops are the target's" in match[0]
    assert "the model learnt from NVIDIA H100 80GB HBM3 rows compiled for sm_90" in match[1]
    assert "is not an NVIDIA GPU (amd, rdna3)" in P.arch_notes("sm_90", h100, amd)[0]
    assert "does not say which architecture" in P.arch_notes(None, h100, ada)[0]


@pytest.mark.slow  # reads rodinia-time's 212,352 rows (seconds)
def test_the_transfer_is_scored_on_every_launch_of_every_ordered_gpu_pair(score):
    """Recount the pairs from the rows: a launch measured on n GPUs gives n (n - 1) ordered pairs; then one pair's
    measured / predicted by hand against the kept distribution."""
    rows = task_rows(get_task("rodinia-time"), Store(default_data_dir()).read("profiles")).to_pandas()
    per_launch = rows.groupby(list(T.LAUNCH_KEY), dropna=False)["gpu_name"].nunique()
    assert score.pairs == int((per_launch * (per_launch - 1)).sum()) > 100_000
    assert score.gpus == sorted(rows["gpu_name"].unique()) and len(score.gpus) == 8
    assert set(score.per_gpu_median_ape) == set(score.gpus)
    # carrying a time by the roofline beats carrying it unchanged (ignoring the GPU) on the held-out GPUs
    assert 0 < score.median_ape < score.unchanged_median_ape
    assert score.ratio_quantile(0.05) < 1 < score.ratio_quantile(0.95)
    assert np.all(np.diff(score.quantiles) >= 0) and len(score.quantiles) == T.QUANTILES
    # both directions of each pair are kept: the log ratios are symmetric, so their median is exactly 1
    assert score.ratio_quantile(0.5) == pytest.approx(1.0)
    assert score.ratio_quantile(0.05) == pytest.approx(1 / score.ratio_quantile(0.95))
    # one launch by hand: its time on the P100 carried from the GTX 980
    key = next(k for k in per_launch[per_launch == 8].index if not any(isinstance(v, float) and math.isnan(v)
                                                                        for v in k))
    launch = rows[np.logical_and.reduce([rows[c] == v for c, v in zip(T.LAUNCH_KEY, key)])].set_index("gpu_name")
    work = {}
    for g in ("GeForce GTX 980", "Tesla P100-PCIE-12GB"):
        r = launch.loc[g]
        flops = (r["prof_floating_point_operations_single_precision"]
                 + r["prof_floating_point_operations_double_precision"])
        moved = 4 * (r["prof_gld_inst_32bit"] + r["prof_gst_inst_32bit"])
        work[g] = max(flops / (r["gpu_peak_fp32_gflops"] * 1e9), moved / (r["gpu_memory_bandwidth_gbs"] * 1e9)), r
    src = work["GeForce GTX 980"][1]
    flops = (src["prof_floating_point_operations_single_precision"]
             + src["prof_floating_point_operations_double_precision"])
    moved = 4 * (src["prof_gld_inst_32bit"] + src["prof_gst_inst_32bit"])
    dst = work["Tesla P100-PCIE-12GB"][1]
    ratio = (max(flops / (dst["gpu_peak_fp32_gflops"] * 1e9), moved / (dst["gpu_memory_bandwidth_gbs"] * 1e9))
             / work["GeForce GTX 980"][0])
    mine = dst["time_ms"] / (src["time_ms"] * ratio)
    assert score.quantiles[0] <= mine <= score.quantiles[-1]


@pytest.mark.slow  # trains kernel-time's model and scores the transfer (seconds)
def test_a_one_gpu_task_s_prediction_depends_on_the_gpu_asked_for(answers, va, score):
    got, _ = answers
    h100 = got[H100]
    assert h100.gpu_in_data and h100.transfer is None  # the data's own GPU: the model's answer
    values = [got[g].prediction for g in TARGETS]
    assert len(set(values)) == 3, values
    for g in TARGETS:
        a, t = got[g], got[g].transfer
        assert not a.gpu_in_data and t is not None and t.source_gpu == H100 and t.scored_on == "rodinia-time"
        assert t.source_prediction == pytest.approx(h100.prediction)  # the model's answer on the H100, carried
        # vector_add is memory-bound on both: the ratio of the two bandwidths, from the catalogue by hand
        bw = {n: P.gpu_spec(n).columns()["gpu_memory_bandwidth_gbs"] for n in (H100, g)}
        assert (t.source_limiter, t.target_limiter) == ("memory", "memory")
        assert a.prediction == pytest.approx(h100.prediction * bw[H100] / bw[g], rel=1e-9)
        threads = va[1]["nb"] * va[1]["nt"]
        assert t.bytes == (va[1]["global_bytes_read"] + va[1]["global_bytes_written"]) * threads
        assert a.interval is not None and a.interval.low < a.prediction < a.interval.high
        assert a.interval.samples == t.scored_pairs and "rodinia-time leave-one-GPU-out" in a.interval.source
        # the band is at least as wide as the transfer's own (the model's error on the H100 comes on top)
        assert a.interval.high / a.interval.low >= 0.99 * score.ratio_quantile(0.95) / score.ratio_quantile(0.05)
        assert not any("the model cannot tell GPUs apart" in n for n in a.notes)
        assert any("times the ratio of the two GPUs' roofline bounds" in n for n in a.notes)
    assert any("not for NVIDIA GeForce RTX 4090's sm_89" in n for n in got["GeForce RTX 4090"].notes)
    assert any("is not an NVIDIA GPU" in n for n in got["Radeon RX 7900 XTX"].notes)


@pytest.mark.slow  # trains kernel-time's model and scores the transfer (seconds)
def test_the_text_and_json_say_the_transfer_its_interval_and_the_architecture(answers, monkeypatch, capsys):
    got, path = answers
    for g in TARGETS:
        code, out, err = cli(monkeypatch, capsys, "predict", "kernel-time", "--gpu", g, "--input", path)
        assert code in (0, None), err
        a = got[g]
        assert out.startswith(f"kernel-time on {a.gpu} (no rows in the data: carried from {H100} by the roofline "
                              f"transfer): time_ms_median = {a.prediction:.4g} ms")
        assert f"90% interval: [{a.interval.low:.4g}, {a.interval.high:.4g}] ms" in out
        assert f"roofline transfer from {H100}: " in out and "leave-one-GPU-out on rodinia-time (8 GPUs)" in out
        assert f"(the source's time unchanged: {a.transfer.scored_unchanged_median_ape:.0f} %)" in out
        assert "memory-bound here, memory-bound there" in out
        assert any(line.startswith("  note: ") and "sm_90" in line for line in out.splitlines())
    code, out, _ = cli(monkeypatch, capsys, "predict", "kernel-time", "--gpu", "L4", "--input", path, "--json")
    parsed = json.loads(out)
    assert tuple(sorted(parsed)) == tuple(sorted(P.JSON_KEYS))
    assert parsed["transfer"]["source_gpu"] == H100 and parsed["transfer"]["target_arch"] == "sm_89"
    assert parsed["prediction"] == pytest.approx(got["L4"].prediction)


@pytest.mark.slow  # trains kernel-time's model (seconds)
def test_a_one_gpu_task_that_cannot_be_carried_is_refused_not_answered_for_the_wrong_gpu(answers, va, monkeypatch):
    monkeypatch.setattr(P, "WORK_RULES", {})
    values = P.read_input_file(answers[1], "kernel-time")
    with pytest.raises(NoDataError, match=r"holds 1 GPU\(s\) \(NVIDIA H100 80GB HBM3\).*whatever --gpu says"):
        P.predict("kernel-time", "L4", values)
    assert math.isfinite(P.predict("kernel-time", H100, values).prediction)  # its own GPU still answers
