"""Inputs, launch arguments and output checks of the power-suite kernels.

Inputs are drawn on the host with the harness's ``numpy.random.Generator`` once per problem (kernel, variant,
sizes: the first case of the problem draws them), copied to the device and kept there for the problem's
launch configurations (:class:`~kgpubench.measure.problems.ProblemCache`); references that do not depend on
the launch (the histogram's bins) are computed once per problem too. Every case gets its own device copies of
the inputs and fresh outputs, and :func:`prepare` returns a :class:`~kgpubench.measure.launch.LaunchCase`
whose ``verify`` compares the device outputs with :mod:`reference`. Tolerances are bounds on the float32 (or
float64) rounding of each kernel's own operation order, written next to each check; integer outputs must match
exactly.

Every output element is checked for having been written (poison: NaN for floats, all ones bits for integers,
values a correct kernel never produces here), on the device: only the count and the first bad index cross to
the host. The values are compared with the reference in full where that is cheap (the per-block partial sums
of ``dotp`` and ``histogram256``) and otherwise on a random sample of independent units drawn for each case
(``SAMPLE_ELEMENTS`` elements, ``SAMPLE_ROWS`` rows or vectors, ``SAMPLE_TILES`` DCT tiles): only the sampled
inputs and outputs are copied to the host, where the NumPy reference of the sample is computed. The units are
computed independently by the kernel, so a wrong unit is found with the probability of drawing it, and a
systematic error (indexing, arithmetic) is found at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgpubench.measure.launch import LaunchCase
from kgpubench.measure.verify import array_module, to_host

from . import reference as ref

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)
OPTION_RANGES = {"s": (5.0, 30.0), "k": (1.0, 100.0), "t": (0.25, 10.0)}
RISK_FREE = 0.02
VOLATILITY = 0.30
BINOMIAL_CHECKED = 64
SAMPLE_ELEMENTS = 1 << 16
SAMPLE_ROWS = 256
SAMPLE_TILES = 4096

Check = Callable[..., tuple[bool, str]]


def within(got: np.ndarray, expected: np.ndarray, tol: Any, what: str) -> tuple[bool, str]:
    """Whether ``|got - expected| <= tol`` everywhere (NaN fails), with a one-line detail."""
    got64 = np.asarray(got, dtype=np.float64).ravel()
    exp64 = np.asarray(expected, dtype=np.float64)
    tol_arr = np.broadcast_to(np.asarray(tol, dtype=np.float64), exp64.shape).ravel()
    exp64 = exp64.ravel()
    if got64.shape != exp64.shape:
        return False, f"{what}: {got64.size} values, expected {exp64.size}"
    err = np.abs(got64 - exp64)
    bad = ~(err <= tol_arr)
    if not bad.any():
        return True, f"{what}: max abs error {float(err.max(initial=0.0)):.3g} within tolerance"
    first = int(np.flatnonzero(bad)[0])
    return False, (f"{what}: {int(bad.sum())} of {err.size} values off; first at {first}: got {got64[first]!r}, "
                   f"expected {exp64[first]!r}, tolerance {tol_arr[first]:.3g}")


def exact(got: np.ndarray, expected: np.ndarray, what: str) -> tuple[bool, str]:
    """Whether ``got`` equals ``expected`` element for element."""
    got = np.asarray(got).ravel()
    expected = np.asarray(expected).ravel()
    if got.shape != expected.shape:
        return False, f"{what}: {got.size} values, expected {expected.size}"
    bad = got != expected
    if not bad.any():
        return True, f"{what}: all {got.size} values exact"
    first = int(np.flatnonzero(bad)[0])
    return False, (f"{what}: {int(bad.sum())} of {got.size} values differ; first at {first}: got {got[first]}, "
                   f"expected {expected[first]}")


def block_shares(n: int, nb: int, nt: int) -> np.ndarray:
    """Elements each block handles in a flat grid-stride loop (thread ``i`` of block ``b`` starts at
    ``b * nt + i`` and strides ``nb * nt``)."""
    full, rem = divmod(int(n), int(nb) * int(nt))
    b = np.arange(nb, dtype=np.int64)
    return full * nt + np.clip(rem - b * nt, 0, nt)


def block_sums(values: Any, nb: int, nt: int) -> Any:
    """float64 sums of ``values`` per block of a flat grid-stride loop (see :func:`block_shares`), computed
    where ``values`` lives (NumPy or CuPy)."""
    xp = array_module(values)
    stride = int(nb) * int(nt)
    full = values.size // stride
    sums = values[:full * stride].reshape(full, nb, nt).sum(axis=(0, 2), dtype=np.float64)
    rest = xp.zeros(stride, dtype=np.float64)
    rest[:values.size - full * stride] = values[full * stride:]
    return sums + rest.reshape(nb, nt).sum(axis=1)


def _uniform(rng: Any, shape: Any, lo: float, hi: float, dtype: Any = np.float32) -> np.ndarray:
    x = rng.random(shape, dtype=np.float64 if np.dtype(dtype) == np.float64 else np.float32)
    return (x * (hi - lo) + lo).astype(dtype, copy=False)


def _options(rng: Any, nopt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(_uniform(rng, nopt, *OPTION_RANGES[name]) for name in ("s", "k", "t"))  # type: ignore


def sample(rng: Any, n: int, k: int) -> np.ndarray:
    """Sorted distinct indices: all of ``range(n)`` when ``n <= k``, else about ``k`` drawn at random."""
    if n <= k:
        return np.arange(n)
    return np.unique(rng.integers(0, n, k))


def all_written(got: Any, what: str) -> tuple[bool, str]:
    """Whether no element still holds the poison (NaN or infinity for floats, all ones bits for integers);
    counted where ``got`` lives (NumPy or CuPy), only the count and the first index cross."""
    xp = array_module(got)
    flat = got.ravel()
    bad = ~xp.isfinite(flat) if flat.dtype.kind == "f" else flat == np.iinfo(flat.dtype).max
    nbad = int(xp.count_nonzero(bad))
    if not nbad:
        return True, ""
    first = int(xp.argmax(bad))
    return False, f"{what}: {nbad} of {flat.size} values not written (poison left); first at {first}"


def _then(*checks: Callable[[], tuple[bool, str]]) -> tuple[bool, str]:
    detail = ""
    for check in checks:
        ok, detail = check()
        if not ok:
            return ok, detail
    return True, detail


# -- per kernel: the problem's inputs (once per problem) and one case's arguments and check ------------------------
@dataclass(frozen=True)
class KernelIO:
    """``problem(case, xp, rng) -> dict`` draws a problem's inputs (device arrays, and host values its
    references need); ``bind(case, problem, xp, rng) -> (args, outputs, check)`` makes one case from them."""

    problem: Callable[[Any, Any, Any], dict]
    bind: Callable[[Any, dict, Any, Any], tuple]


def _own(xp: Any, shared: Any) -> Any:
    """The case's own copy of a problem input (device to device): kernels never touch the problem's arrays."""
    return xp.array(shared, copy=True)


def _at(xp: Any, array: Any, index: np.ndarray) -> np.ndarray:
    """``array[index]`` (along the first axis) gathered where ``array`` lives, then copied to the host."""
    return to_host(array[xp.asarray(index)])


def _dotp_problem(case: Any, xp: Any, rng: Any) -> dict:
    n = case.sizes["n"]
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    da, db = xp.asarray(a), xp.asarray(b)
    return {"a": da, "b": db, "prod": da * db}  # the float32 products the reference sums


def _dotp(case: Any, p: dict, xp: Any, rng: Any):
    n, nb, nt = case.sizes["n"], case.blocks, case.threads_per_block
    partial = xp.empty(nb, dtype=np.float32)

    def check(got):
        expected = to_host(block_sums(p["prod"], nb, nt))
        # Positive terms: each thread adds n / (nb nt) products in float32; 5e-4 relative is far above the
        # statistical rounding of such sums (~ eps sqrt(terms) / 3) and far below one missing product row.
        return within(to_host(got), expected, 5e-4 * expected + 1e-6, "dotp per-block partial sums")

    return (_own(xp, p["a"]), _own(xp, p["b"]), partial, np.int64(n)), [partial], check


def _madd_dtype(case: Any) -> Any:
    return np.float64 if case.key["variant"] == "fp64" else np.float32


def _madd_problem(case: Any, xp: Any, rng: Any) -> dict:
    count = case.sizes["side"] ** 2
    a, b, c = (xp.asarray(_uniform(rng, count, -1.0, 1.0, _madd_dtype(case))) for _ in range(3))
    return {"a": a, "b": b, "c": c}


def _madd(case: Any, p: dict, xp: Any, rng: Any):
    dtype = _madd_dtype(case)
    eps = EPS64 if dtype == np.float64 else EPS32
    count = case.sizes["side"] ** 2
    picked = sample(rng, count, SAMPLE_ELEMENTS)
    d = xp.empty(count, dtype=dtype)

    def check(got):
        pa, pb, pc = (_at(xp, p[name], picked) for name in "abc")
        # One rounding of a*b and one of the sum (or one of a fused multiply-add).
        tol = 2 * eps * (np.abs(pa.astype(np.float64) * pb) + np.abs(pc)) + 1e-300
        return _then(lambda: all_written(got, "madd"),
                     lambda: within(_at(xp, got, picked), ref.madd(pa, pb, pc), tol, f"madd {np.dtype(dtype).name}"))

    return (_own(xp, p["a"]), _own(xp, p["b"]), _own(xp, p["c"]), d, np.int64(count)), [d], check


def _mtrans_problem(case: Any, xp: Any, rng: Any) -> dict:
    side = case.sizes["side"]
    return {"x": xp.asarray(rng.random((side, side), dtype=np.float32))}


def _mtrans(case: Any, p: dict, xp: Any, rng: Any):
    side = case.sizes["side"]
    rows = sample(rng, side, SAMPLE_ROWS)
    out = xp.empty((side, side), dtype=np.float32)

    def check(got):
        got = got.reshape(side, side)
        x_cols = to_host(p["x"][:, xp.asarray(rows)])
        return _then(lambda: all_written(got, "mtrans"),
                     lambda: exact(_at(xp, got, rows), ref.mtrans(x_cols), f"mtrans ({rows.size} output rows)"))

    return (_own(xp, p["x"]), out, np.int32(side), np.int32(side)), [out], check


def _scalar_prod_problem(case: Any, xp: Any, rng: Any) -> dict:
    shape = (case.sizes["nvec"], case.sizes["len"])
    a, b = (xp.asarray(_uniform(rng, shape, -1.0, 1.0)) for _ in range(2))
    return {"a": a, "b": b}


def _scalar_prod(case: Any, p: dict, xp: Any, rng: Any):
    nvec, length = case.sizes["nvec"], case.sizes["len"]
    vecs = sample(rng, nvec, 4 * SAMPLE_ROWS)
    out = xp.empty(nvec, dtype=np.float32)

    def check(got):
        pa, pb = _at(xp, p["a"], vecs), _at(xp, p["b"], vecs)
        scale = ref.scalar_prod(np.abs(pa), np.abs(pb), vecs.size, length)
        # len / nt serial adds plus log2(nt) tree levels per vector: < 40 roundings of at most sum|a b|.
        want = ref.scalar_prod(pa, pb, vecs.size, length)
        return _then(lambda: all_written(got, "scalar_prod"),
                     lambda: within(_at(xp, got, vecs), want, 1e-5 * scale + 1e-6,
                                    f"scalar_prod ({vecs.size} vectors)"))

    return (_own(xp, p["a"]), _own(xp, p["b"]), out, np.int32(nvec), np.int32(length)), [out], check


def _fwt_problem(case: Any, xp: Any, rng: Any) -> dict:
    shape = (case.sizes["nvec"], 2 ** case.sizes["log2_len"])
    return {"x": xp.asarray(_uniform(rng, shape, -1.0, 1.0))}


def _fwt(case: Any, p: dict, xp: Any, rng: Any):
    nvec, log2_len = case.sizes["nvec"], case.sizes["log2_len"]
    shape = (nvec, 2 ** log2_len)
    vecs = sample(rng, nvec, SAMPLE_ROWS)
    out = xp.empty(shape, dtype=np.float32)

    def check(got):
        got = got.reshape(shape)
        px = _at(xp, p["x"], vecs)
        # Every stage rounds values bounded by sum|x_row| once: log2_len * eps * sum|x_row| bounds the error.
        tol = log2_len * EPS32 * np.abs(px).sum(axis=1, dtype=np.float64)[:, None] + 1e-6
        return _then(lambda: all_written(got, "fwt_batch"),
                     lambda: within(_at(xp, got, vecs), ref.fwt(px), tol, f"fwt_batch ({vecs.size} vectors)"))

    return (_own(xp, p["x"]), out, np.int32(nvec)), [out], check


def _scan_problem(case: Any, xp: Any, rng: Any) -> dict:
    shape = (case.sizes["nrows"], case.sizes["row_len"])
    # Row sums < 2^32 - 1: the poison never occurs.
    return {"x": xp.asarray(rng.integers(0, 1024, shape, dtype=np.uint32))}


def _scan(case: Any, p: dict, xp: Any, rng: Any):
    shape = (case.sizes["nrows"], case.sizes["row_len"])
    rows = sample(rng, shape[0], SAMPLE_ROWS)
    out = xp.empty(shape, dtype=np.uint32)

    def check(got):
        got = got.reshape(shape)
        want = ref.scan_exclusive(_at(xp, p["x"], rows))
        return _then(lambda: all_written(got, "scan_rows"),
                     lambda: exact(_at(xp, got, rows), want, f"scan_rows ({rows.size} rows)"))

    return (_own(xp, p["x"]), out, np.int32(shape[0])), [out], check


def _histogram_problem(case: Any, xp: Any, rng: Any) -> dict:
    words = rng.integers(0, 2 ** 32, case.sizes["nwords"], dtype=np.uint32)
    return {"words": xp.asarray(words), "bins": ref.histogram256(words)}  # the bins: once per problem


def _histogram(case: Any, p: dict, xp: Any, rng: Any):
    nwords, nb, nt = case.sizes["nwords"], case.blocks, case.threads_per_block
    partial = xp.empty(nb * 256, dtype=np.uint32)

    def check(got):
        per_block = to_host(got).reshape(nb, 256).astype(np.int64)  # nb * 256 counts: small
        return _then(
            lambda: exact(per_block.sum(axis=1), 4 * block_shares(nwords, nb, nt), "histogram256 block totals"),
            lambda: exact(per_block.sum(axis=0), p["bins"], "histogram256 bins"))

    return (_own(xp, p["words"]), partial, np.int64(nwords)), [partial], check


def _dct_problem(case: Any, xp: Any, rng: Any) -> dict:
    side = case.sizes["side"]
    img = _uniform(rng, (side, side), 0.0, 255.0)
    return {"img": xp.asarray(img), "absmax": float(np.abs(img).max())}


def _dct(case: Any, p: dict, xp: Any, rng: Any):
    side = case.sizes["side"]
    tiles = sample(rng, (side // 8) ** 2, SAMPLE_TILES)
    ty, tx = (xp.asarray(v) for v in np.divmod(tiles, side // 8))
    out = xp.empty((side, side), dtype=np.float32)

    def stack(a: Any) -> np.ndarray:  # the sampled 8 x 8 tiles one under the other, gathered, to the host
        return to_host(a.reshape(side // 8, 8, side // 8, 8)[ty, :, tx, :].reshape(-1, 8))

    def check(got):
        got = got.reshape(side, side)
        # Two 8-term passes with |C| rows of norm 1: |Y| <= 8 max|X|; < 32 roundings of that size.
        tol = 32 * EPS32 * 8 * p["absmax"]
        return _then(lambda: all_written(got, "dct8x8"),
                     lambda: within(stack(got), ref.dct8x8(stack(p["img"])), tol, f"dct8x8 ({tiles.size} tiles)"))

    return (_own(xp, p["img"]), out, np.int32(side), np.int32(side)), [out], check


def _options_problem(case: Any, xp: Any, rng: Any) -> dict:
    s, k, t = _options(rng, case.sizes["nopt"])
    return {"host": (s, k, t), "s": xp.asarray(s), "k": xp.asarray(k), "t": xp.asarray(t)}


def _black_scholes(case: Any, p: dict, xp: Any, rng: Any):
    nopt = case.sizes["nopt"]
    picked = sample(rng, nopt, SAMPLE_ELEMENTS)
    call, put = xp.empty(nopt, dtype=np.float32), xp.empty(nopt, dtype=np.float32)

    def check(got_call, got_put):
        ps, pk, pt = (_at(xp, p[name], picked) for name in "skt")
        want_call, want_put = ref.black_scholes(ps, pk, pt, RISK_FREE, VOLATILITY)
        # float32 log/erfc/exp with a few ulp each on prices made of terms up to s and k.
        tol = 5e-5 * (ps.astype(np.float64) + pk)
        return _then(lambda: all_written(got_call, "black_scholes call"),
                     lambda: all_written(got_put, "black_scholes put"),
                     lambda: within(_at(xp, got_call, picked), want_call, tol, f"black_scholes call ({picked.size})"),
                     lambda: within(_at(xp, got_put, picked), want_put, tol, f"black_scholes put ({picked.size})"))

    args = (_own(xp, p["s"]), _own(xp, p["k"]), _own(xp, p["t"]), call, put, np.float32(RISK_FREE),
            np.float32(VOLATILITY), np.int32(nopt))
    return args, [call, put], check


def _binomial(case: Any, p: dict, xp: Any, rng: Any):
    nopt, steps = case.sizes["nopt"], case.sizes["steps"]
    s, k, t = p["host"]  # nopt options: small
    picked = sample(rng, nopt, BINOMIAL_CHECKED)
    price = xp.empty(nopt, dtype=np.float32)

    def check(got):
        got = to_host(got)
        s64, k64, t64 = (x.astype(np.float64) for x in (s, k, t))
        # No-arbitrage bounds of a European call hold for every option (and fail on NaN).
        lower = np.maximum(s64 - k64 * np.exp(-RISK_FREE * t64), 0.0) - 1e-3 * s64
        inside = (got >= lower) & (got <= s64 * (1 + 1e-5))
        if not inside.all():
            i = int(np.flatnonzero(~inside)[0])
            return False, (f"binomial_options: {int((~inside).sum())} prices outside the no-arbitrage bounds; "
                           f"first at {i}: got {got[i]!r}, bounds [{lower[i]:.4g}, {s64[i]:.4g}]")
        want = ref.binomial_options(s[picked], k[picked], t[picked], RISK_FREE, VOLATILITY, steps)
        # float32 roll-back over `steps` levels: measured (NumPy float32 emulation) < 1e-4 * s at 2048 steps.
        return within(got[picked], want, 1e-3 * s64[picked], f"binomial_options ({picked.size} options)")

    args = (_own(xp, p["s"]), _own(xp, p["k"]), _own(xp, p["t"]), price, np.float32(RISK_FREE),
            np.float32(VOLATILITY), np.int32(nopt))
    return args, [price], check


BUILDERS: dict[str, KernelIO] = {
    "dotp": KernelIO(_dotp_problem, _dotp),
    "madd": KernelIO(_madd_problem, _madd),
    "mtrans": KernelIO(_mtrans_problem, _mtrans),
    "scalar_prod": KernelIO(_scalar_prod_problem, _scalar_prod),
    "fwt_batch": KernelIO(_fwt_problem, _fwt),
    "scan_rows": KernelIO(_scan_problem, _scan),
    "histogram256": KernelIO(_histogram_problem, _histogram),
    "dct8x8": KernelIO(_dct_problem, _dct),
    "black_scholes": KernelIO(_options_problem, _black_scholes),
    "binomial_options": KernelIO(_options_problem, _binomial),
}


def problem_key(case: Any) -> tuple:
    """The problem of a case: kernel, variant and sizes (its launch configurations share the inputs)."""
    return (case.source.kernel, case.key["variant"], tuple(sorted(dict(case.sizes).items())))


def prepare(case: Any, kernel: Any, xp: Any, rng: Any, problems: Any = None) -> LaunchCase:
    """Inputs for ``case`` on the device, bound to ``kernel`` (see the module doc).

    ``problems`` (a :class:`~kgpubench.measure.problems.ProblemCache`) keeps the problem's inputs for its
    other cases; without it every case draws its own.
    """
    io = BUILDERS[case.source.kernel]
    if problems is None:
        data = io.problem(case, xp, rng)
        on_release = None
    else:
        key = problem_key(case)
        data = problems.get(key, lambda: io.problem(case, xp, rng), where=xp.__name__)
        on_release = lambda: problems.done(key)  # noqa: E731 - a one-line callback
    args, outputs, check = io.bind(case, data, xp, rng)
    # outputs are poisoned (NaN for floats, all ones bits for the unsigned counts) and checked on the device
    return LaunchCase.of(case, kernel, args, lambda: check(*outputs), outputs=outputs, on_release=on_release)
