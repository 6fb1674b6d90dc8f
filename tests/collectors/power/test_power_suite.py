"""The suite under the harness with the CPU fake backend: argument order, poisoning, what verification catches.

The fake runs NumPy/Python stand-ins of the kernels written from the CUDA sources' contracts (not from the
suite's references) on small problems. Fake rows carry ``source = "fake"`` and never validate as data.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import scipy.fft
import scipy.linalg

from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.runner import measure_case
from kgpubench.measure.suites import load_suite

SUITE = load_suite("power")
power = importlib.import_module("kgpubench_collectors.power")
spec = importlib.import_module("kgpubench_collectors.power.spec")
prepare = importlib.import_module("kgpubench_collectors.power.prepare")

SMALL = {
    "dotp": {"n": 1000},
    "madd": {"side": 24},
    "mtrans": {"side": 40},
    "scalar_prod": {"nvec": 6, "len": 300},
    "fwt_batch": {"nvec": 5, "log2_len": 6},
    "scan_rows": {"nrows": 4, "row_len": 256},
    "histogram256": {"nwords": 777},
    "dct8x8": {"side": 24},
    "black_scholes": {"nopt": 50},
    "binomial_options": {"nopt": 6, "steps": 16},
}


def _grid_stride_owner(n, nb, nt):
    return (np.arange(n) // nt) % nb


def dotp(grid, block, args, smem):
    a, b, partial, n = args
    owner = _grid_stride_owner(int(n), grid[0], block[0])
    for blk in range(grid[0]):
        partial[blk] = np.float32(sum(float(x) * float(y) for x, y in zip(a[owner == blk], b[owner == blk])))


def madd(grid, block, args, smem):
    a, b, c, d, _count = args
    d[:] = a * b + c


def mtrans(grid, block, args, smem):
    x, out, rows, cols = args
    out.reshape(int(cols), int(rows))[:] = x.reshape(int(rows), int(cols)).T


def scalar_prod(grid, block, args, smem):
    a, b, out, nvec, length = args
    a, b = a.ravel(), b.ravel()  # the kernel sees flat memory
    for v in range(int(nvec)):
        out[v] = np.dot(a[v * length:(v + 1) * length].astype(float), b[v * length:(v + 1) * length])


def fwt_batch(grid, block, args, smem):
    x, out, _nvec = args
    out[:] = x @ scipy.linalg.hadamard(x.shape[1]).astype(np.float32)


def scan_rows(grid, block, args, smem):
    x, out, nrows = args
    for r in range(int(nrows)):
        run = 0
        for i in range(x.shape[1]):
            out[r, i] = run % 2**32
            run += int(x[r, i])


def histogram256(grid, block, args, smem):
    words, partial, n = args
    owner = _grid_stride_owner(int(n), grid[0], block[0])
    partial[:] = 0
    for w, blk in zip(words.tolist(), owner.tolist()):
        for shift in (0, 8, 16, 24):
            partial[blk * 256 + ((w >> shift) & 0xFF)] += 1


def dct8x8(grid, block, args, smem):
    img, out, width, height = args
    for y in range(0, int(height), 8):
        for x in range(0, int(width), 8):
            out[y:y + 8, x:x + 8] = scipy.fft.dctn(img[y:y + 8, x:x + 8].astype(float), norm="ortho")


def _ncdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def black_scholes(grid, block, args, smem):
    s, k, t, call, put, r, v, nopt = args
    r, v = float(r), float(v)
    for i in range(int(nopt)):
        si, ki, ti = float(s[i]), float(k[i]), float(t[i])
        d1 = (math.log(si / ki) + (r + v * v / 2) * ti) / (v * math.sqrt(ti))
        d2 = d1 - v * math.sqrt(ti)
        call[i] = si * _ncdf(d1) - ki * math.exp(-r * ti) * _ncdf(d2)
        put[i] = ki * math.exp(-r * ti) * _ncdf(-d2) - si * _ncdf(-d1)


def binomial_options(steps):
    def run(grid, block, args, smem):
        s, k, t, price, r, v, nopt = args
        r, v = float(r), float(v)
        for o in range(int(nopt)):
            dt = float(t[o]) / steps
            u = math.exp(v * math.sqrt(dt))
            p = (math.exp(r * dt) - 1 / u) / (u - 1 / u)
            vals = [max(float(s[o]) * u ** (2 * i - steps) - float(k[o]), 0.0) for i in range(steps + 1)]
            for n in range(steps, 0, -1):
                vals = [math.exp(-r * dt) * (p * vals[i + 1] + (1 - p) * vals[i]) for i in range(n)]
            price[o] = vals[0]

    return run


IMPLS = {"dotp": dotp, "madd": madd, "mtrans": mtrans, "scalar_prod": scalar_prod, "fwt_batch": fwt_batch,
         "scan_rows": scan_rows, "histogram256": histogram256, "dct8x8": dct8x8, "black_scholes": black_scholes,
         "binomial_options": binomial_options(SMALL["binomial_options"]["steps"])}


def small_case(pk, nb=3):
    grid = spec.GridChoice(nb=nb, fraction=0.75, blocks_per_sm=1, saturation=spec.sm_saturation(nb, 4))
    return power.make_case(pk, SMALL[pk.kernel], pk.blocks[0], grid)


@pytest.mark.parametrize("pk", spec.KERNELS, ids=lambda pk: pk.name)
def test_a_correct_kernel_verifies_and_gets_a_power_window(pk):
    backend = FakeBackend(implementations=IMPLS, time_ms=2.0)
    out = measure_case(small_case(pk), SUITE, backend)
    assert out.status == "ok", out.detail
    assert out.columns["time_ms_median"] == pytest.approx(2.0)
    assert out.columns["power_window_ms"] >= 500.0


@pytest.mark.parametrize("pk", spec.KERNELS, ids=lambda pk: pk.name)
def test_a_kernel_that_writes_nothing_fails_verification(pk):
    out = measure_case(small_case(pk), SUITE, FakeBackend())
    assert out.status == "verification_failed"
    assert "time_ms_median" not in out.columns


def _broken(name, damage):
    def run(grid, block, args, smem):
        IMPLS[name](grid, block, args, smem)
        damage(args)

    return FakeBackend(implementations={**IMPLS, name: run})


def _kernel(name, variant=""):
    return next(pk for pk in spec.KERNELS if pk.kernel == name and pk.variant == variant)


def test_dotp_with_one_block_missing_fails():
    out = measure_case(small_case(_kernel("dotp")), SUITE, _broken("dotp", lambda a: a[2].__setitem__(1, 0.0)))
    assert out.status == "verification_failed" and "partial sums" in out.detail


def test_madd_fp64_off_by_1e_9_fails():
    def damage(args):
        args[3][5] += 1e-9

    out = measure_case(small_case(_kernel("madd", "fp64")), SUITE, _broken("madd", damage))
    assert out.status == "verification_failed" and "float64" in out.detail


def test_histogram_with_a_count_in_the_wrong_bin_fails():
    def damage(args):
        args[1][0] -= 1
        args[1][1] += 1  # block totals still right: only the bin check can see it

    out = measure_case(small_case(_kernel("histogram256")), SUITE, _broken("histogram256", damage))
    assert out.status == "verification_failed" and "bins" in out.detail


def test_histogram_with_a_count_moved_between_blocks_fails_the_block_totals():
    def damage(args):
        args[1][5] -= 1
        args[1][256 + 5] += 1  # global bins still right: only the per-block totals can see it

    out = measure_case(small_case(_kernel("histogram256")), SUITE, _broken("histogram256", damage))
    assert out.status == "verification_failed" and "block totals" in out.detail


def test_binomial_prices_one_percent_off_fail():
    def damage(args):
        args[3][:] *= np.float32(1.01)

    out = measure_case(small_case(_kernel("binomial_options")), SUITE, _broken("binomial_options", damage))
    assert out.status == "verification_failed"


def test_scan_off_by_one_fails():
    out = measure_case(small_case(_kernel("scan_rows")), SUITE,
                       _broken("scan_rows", lambda a: a[1].__setitem__((3, 255), a[1][3, 255] + 1)))
    assert out.status == "verification_failed" and "1 of 1024" in out.detail


def test_block_shares_by_hand():
    # n = 10, 2 blocks of 3 threads: stride 6; block 0 owns 0-2 and 6-8, block 1 owns 3-5 and 9.
    np.testing.assert_array_equal(prepare.block_shares(10, 2, 3), [6, 4])
    np.testing.assert_array_equal(prepare.block_sums(np.arange(10.0), 2, 3), [0 + 1 + 2 + 6 + 7 + 8, 3 + 4 + 5 + 9])


@pytest.mark.gpu
@pytest.mark.parametrize("pk", spec.KERNELS, ids=lambda pk: pk.name)
def test_every_kernel_verifies_on_the_gpu(pk):
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("cupy")
    sms = backend.device().sm_count
    for case in SUITE.cases(quick=True, kernels=[pk.name], sm_count=sms):
        out = measure_case(case, SUITE, backend)
        assert out.status == "ok", (case.label(), out.detail)


def test_sample_is_everything_when_small_and_distinct_sorted_draws_when_large():
    rng = np.random.default_rng(1)
    np.testing.assert_array_equal(prepare.sample(rng, 10, 20), np.arange(10))
    picked = prepare.sample(rng, 10**9, 100)
    assert 95 <= picked.size <= 100  # birthday collisions among 100 draws of 1e9 are rare
    assert (np.diff(picked) > 0).all() and picked[0] >= 0 and picked[-1] < 10**9


def test_all_written_finds_a_single_poisoned_element():
    out = np.zeros(1000, dtype=np.float32)
    out[7] = np.nan
    ok, detail = prepare.all_written(out, "x")
    assert not ok and "1 of 1000" in detail and "first at 7" in detail
    ints = np.zeros(50, dtype=np.uint32)
    ints[49] = 0xFFFFFFFF
    assert prepare.all_written(ints, "y")[0] is False
    assert prepare.all_written(np.arange(50, dtype=np.uint32), "z") == (True, "")


def test_a_systematic_error_on_a_sampled_large_output_fails():
    pk = _kernel("madd", "fp32")
    grid = spec.GridChoice(nb=4, fraction=1.0, blocks_per_sm=1, saturation=1.0)
    case = power.make_case(pk, {"side": 512}, pk.blocks[0], grid)  # 262144 elements > 65536 sampled

    def scaled(args):
        args[3][:] *= np.float32(1 + 1e-5)

    assert measure_case(case, SUITE, FakeBackend(implementations=IMPLS)).status == "ok"
    assert measure_case(case, SUITE, _broken("madd", scaled)).status == "verification_failed"
