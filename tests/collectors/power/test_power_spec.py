"""The power sweep: block counts from the SM count, saturations, case counts, columns, trip counts."""

from __future__ import annotations

import importlib
import sys

import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.features.expr import evaluate
from kgpubench.measure.features_link import trip_env
from kgpubench.measure.suites import load_suite

SUITE = load_suite("power")
spec = importlib.import_module("kgpubench_collectors.power.spec")


def test_grid_choices_on_132_sms_by_hand():
    # round(f * 132): 13.2, 26.4, 39.6, 52.8, 66, 79.2, 92.4, 105.6, 118.8, 132; then 2 and 4 blocks per SM.
    choices = spec.grid_choices(132)
    assert [c.nb for c in choices] == [13, 26, 40, 53, 66, 79, 92, 106, 119, 132, 264, 528]
    assert choices[0].saturation == pytest.approx(13 / 132)
    assert choices[2].saturation == pytest.approx(40 / 132)
    assert [c.saturation for c in choices[-3:]] == [1.0, 1.0, 1.0]
    assert [c.blocks_per_sm for c in choices[-2:]] == [2, 4]


def test_grid_choices_on_40_sms_hit_the_tenths_exactly():
    choices = spec.grid_choices(40)
    assert [c.nb for c in choices] == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 80, 160]
    assert [c.saturation for c in choices[:10]] == pytest.approx([0.1 * k for k in range(1, 11)])


def test_grid_choices_on_4_sms_drop_duplicates():
    # 0.4 -> 1 (at least one block), 0.8 -> 1, 1.2 -> 1, 1.6 -> 2, 2 -> 2, 2.4 -> 2, 2.8 -> 3, 3.2, 3.6 -> 4...
    choices = spec.grid_choices(4)
    assert [c.nb for c in choices] == [1, 2, 3, 4, 8, 16]
    assert [c.saturation for c in choices] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]


def test_quick_grids_are_half_and_full_saturation():
    assert [c.nb for c in spec.grid_choices(132, quick=True)] == [66, 132]
    with pytest.raises(ValueError, match="positive"):
        spec.grid_choices(0)


@pytest.mark.parametrize("sms", [132, 40])
def test_full_sweep_spans_saturation_0_1_to_1_for_every_kernel(sms):
    cases = SUITE.cases(quick=False, sm_count=sms)
    # 11 kernel variants x 2 sizes x 3 block shapes x 12 block counts.
    assert len(cases) == 11 * 2 * 3 * 12 == 792
    by_kernel: dict[str, set] = {}
    for c in cases:
        by_kernel.setdefault(f"{c.key['kernel']}/{c.key['variant']}", set()).add(min(c.grid[0], sms) / sms)
        assert c.power is True
        assert "sm_saturation" not in c.columns  # the harness computes it from the measured device
    assert len(by_kernel) == 11
    for sats in by_kernel.values():
        assert min(sats) == pytest.approx(0.1, abs=0.005) and max(sats) == 1.0
        assert len(sats) == 10


def test_case_identities_are_unique():
    cases = SUITE.cases(quick=False, sm_count=132)
    keys = {(c.key["kernel"], c.key["variant"], tuple(sorted(c.key["size_params"].items())), c.grid, c.block)
            for c in cases}
    assert len(keys) == len(cases)


def test_quick_sweep_is_two_configurations_per_kernel_variant():
    cases = SUITE.cases(quick=True, sm_count=132)
    assert len(cases) == 22
    assert {c.grid[0] for c in cases} == {66, 132}
    dotp = [c for c in cases if c.key["kernel"] == "dotp"]
    assert dotp[0].block == (256, 1, 1) and dotp[0].sizes == {"n": 2**25}


def test_columns_and_defines_by_hand():
    cases = {(c.key["kernel"], c.key["variant"], c.block, c.grid[0], tuple(c.sizes.values())): c
             for c in SUITE.cases(quick=False, sm_count=132)}
    bino = cases[("binomial_options", "", (128, 1, 1), 13, (1024, 2048))]
    assert bino.columns["program"] == "binomial_options" and bino.columns["bound"] == "compute"
    assert bino.columns["cpx"] == 1024 * 2048 * 2049 / 2
    assert bino.columns["s"] == 1024 * 2048
    assert bino.source.defines == {"NUM_STEPS": 2048}
    assert bino.memory_bytes == 16 * 1024
    madd = cases[("madd", "fp64", (512, 1, 1), 528, (8192,))]
    assert madd.source.defines == {"FP64": 1}
    assert madd.memory_bytes == 4 * 8 * 8192**2 == 2147483648
    assert madd.key == {"suite": "power", "kernel": "madd", "variant": "fp64", "size_params": {"side": 8192}}
    dct = cases[("dct8x8", "", (8, 8, 4), 66, (4096,))]
    assert dct.source.defines == {"TILES_PER_BLOCK": 4} and dct.columns["cpx"] == 16 * 4096**2
    fwt = cases[("fwt_batch", "", (512, 1, 1), 132, (32768, 12))]
    assert fwt.source.defines == {"LOG2_LEN": 12, "BLOCK_SIZE": 512}
    assert fwt.columns["cpx"] == 32768 * 4096 * 12
    hist = cases[("histogram256", "", (128, 1, 1), 13, (2**25,))]
    assert hist.memory_bytes == 4 * 2**25 + 4 * 256 * 13


def test_trip_counts_evaluate_to_hand_values():
    cases = {(c.key["kernel"], c.block, c.grid[0], tuple(c.sizes.values())): c
             for c in SUITE.cases(quick=False, sm_count=132)}

    def trips(case):
        return [evaluate(e, trip_env(case)) for e in case.trip_counts.values()]

    # dotp: 2^25 elements over 132 blocks of 256 threads.
    assert trips(cases[("dotp", (256, 1, 1), 132, (2**25,))]) == pytest.approx([2**25 / (132 * 256)])
    # mtrans 8192: (8192 / 32)^2 = 65536 tiles over 13 blocks.
    assert trips(cases[("mtrans", (32, 8, 1), 13, (8192,))]) == pytest.approx([65536 / 13])
    # dct 4096 with 8 tiles per block: 4096^2 / 64 / 8 = 32768 groups over 264 blocks.
    assert trips(cases[("dct8x8", (8, 8, 8), 264, (4096,))]) == pytest.approx([32768 / 264])
    # binomial: options per block, leaves per thread, steps, mean nodes per thread and step.
    assert trips(cases[("binomial_options", (256, 1, 1), 66, (1024, 1024))]) == pytest.approx(
        [1024 / 66, 1025 / 256, 1024, 1025 / 512])
    assert trips(cases[("fwt_batch", (128, 1, 1), 40, (32768, 10))]) == pytest.approx([32768 / 40, 10])


def test_trip_count_names_are_the_rolled_for_lines():
    power = sys.modules["kgpubench_collectors.power"]
    assert power.rolled_loop_lines("dotp.cu") == (15,)
    # The four `for` lines of binomial_options.cu (options, leaves, steps, nodes); dotp's reduction loop
    # (line 21) is unrolled and has no name.
    assert power.rolled_loop_lines("binomial_options.cu") == (15, 27, 34, 36)
    case = next(c for c in SUITE.cases(quick=True, sm_count=8) if c.key["kernel"] == "scalar_prod")
    assert list(case.trip_counts) == ["line:12", "line:17"]


def test_kernel_selection_and_unknown_names():
    assert SUITE.kernels() == ["dotp", "madd", "mtrans", "scalar_prod", "fwt_batch", "scan_rows",
                               "histogram256", "dct8x8", "black_scholes", "binomial_options"]
    both = SUITE.cases(quick=True, kernels=["madd"], sm_count=10)
    assert sorted({c.key["variant"] for c in both}) == ["fp32", "fp64"]
    one = SUITE.cases(quick=True, kernels=["madd/fp64"], sm_count=10)
    assert {c.key["variant"] for c in one} == {"fp64"} and len(one) == 2
    with pytest.raises(UnknownNameError, match="did you mean 'dotp'|Did you mean 'dotp'"):
        SUITE.cases(quick=True, kernels=["dotq"], sm_count=10)


def test_sm_count_comes_from_the_device_info_or_a_planning_default(monkeypatch, capsys):
    class Dev:
        sm_count = 40

    assert SUITE.cases(quick=True, device=Dev())[0].grid == (20, 1, 1)
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    power = sys.modules["kgpubench_collectors.power.suite"]  # the suite object and its planning warning
    monkeypatch.setattr(power, "_warned", set())
    assert power.device_sm_count() is None
    assert [c.grid[0] for c in SUITE.cases(quick=True, kernels=["dotp"])] == [66, 132]
    assert "planned for 132 SMs" in capsys.readouterr().err
