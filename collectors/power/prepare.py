"""Inputs, launch arguments and output checks of the power-suite kernels.

:func:`prepare` draws fresh random inputs on the host with the harness's ``numpy.random.Generator``, copies
them to the device with ``xp.asarray`` and returns a :class:`PreparedPower` whose ``verify`` compares the
device outputs with :mod:`reference`. Tolerances are bounds on the float32 (or float64) rounding of each
kernel's own operation order, written next to each check; integer outputs must match exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import reference as ref

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)
OPTION_RANGES = {"s": (5.0, 30.0), "k": (1.0, 100.0), "t": (0.25, 10.0)}
RISK_FREE = 0.02
VOLATILITY = 0.30
BINOMIAL_CHECKED = 64

Check = Callable[..., tuple[bool, str]]


class PreparedPower:
    """Device inputs and outputs of one case, bound to its compiled kernel (the harness's PreparedCase)."""

    def __init__(self, kernel: Any, case: Any, args: tuple, outputs: list, check: Check) -> None:
        self._kernel = kernel
        self._grid = tuple(case.grid)
        self._block = tuple(case.block)
        self._smem = int(case.shared_mem_bytes)
        self._args = args
        self._outputs = outputs
        self._check = check

    def launch(self) -> None:
        """Enqueue one launch of the kernel."""
        self._kernel(self._grid, self._block, self._args, shared_mem=self._smem)

    def poison(self) -> None:
        """Fill float outputs with NaN and integer outputs with all ones bits."""
        for out in self._outputs:
            if np.dtype(out.dtype).kind == "f":
                out.fill(np.nan)
            else:
                out.fill(np.iinfo(np.dtype(out.dtype)).max)

    def verify(self) -> tuple[bool, str]:
        """Copy the outputs to the host and compare them with the NumPy reference."""
        host = [out.get() if hasattr(out, "get") else np.asarray(out) for out in self._outputs]
        return self._check(*host)

    def release(self) -> None:
        """Drop every reference to the device arrays."""
        self._args = ()
        self._outputs = []
        self._check = _released


def _released(*_host: Any) -> tuple[bool, str]:
    return False, "case already released"


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


def block_sums(values: np.ndarray, nb: int, nt: int) -> np.ndarray:
    """float64 sums of ``values`` per block of a flat grid-stride loop (see :func:`block_shares`)."""
    stride = int(nb) * int(nt)
    rounds = -(-values.size // stride)
    padded = np.zeros(rounds * stride, dtype=values.dtype)
    padded[:values.size] = values
    return padded.reshape(rounds, nb, nt).sum(axis=(0, 2), dtype=np.float64)


def _uniform(rng: Any, shape: Any, lo: float, hi: float, dtype: Any = np.float32) -> np.ndarray:
    x = rng.random(shape, dtype=np.float64 if np.dtype(dtype) == np.float64 else np.float32)
    return (x * (hi - lo) + lo).astype(dtype, copy=False)


def _options(rng: Any, nopt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(_uniform(rng, nopt, *OPTION_RANGES[name]) for name in ("s", "k", "t"))  # type: ignore


# -- one builder per kernel: (case, xp, rng) -> (args, outputs, check) ----------------------------------------

def _dotp(case: Any, xp: Any, rng: Any):
    n, nb, nt = case.sizes["n"], case.blocks, case.threads_per_block
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    partial = xp.empty(nb, dtype=np.float32)

    def check(got):
        expected = block_sums(a * b, nb, nt)
        # Positive terms: each thread adds n / (nb nt) products in float32; 5e-4 relative is far above the
        # statistical rounding of such sums (~ eps sqrt(terms) / 3) and far below one missing product row.
        return within(got, expected, 5e-4 * expected + 1e-6, "dotp per-block partial sums")

    return (xp.asarray(a), xp.asarray(b), partial, np.int64(n)), [partial], check


def _madd(case: Any, xp: Any, rng: Any):
    dtype = np.float64 if case.key["variant"] == "fp64" else np.float32
    eps = EPS64 if dtype == np.float64 else EPS32
    count = case.sizes["side"] ** 2
    a, b, c = (_uniform(rng, count, -1.0, 1.0, dtype) for _ in range(3))
    d = xp.empty(count, dtype=dtype)

    def check(got):
        # One rounding of a*b and one of the sum (or one of a fused multiply-add).
        tol = 2 * eps * (np.abs(a.astype(np.float64) * b) + np.abs(c)) + 1e-300
        return within(got, ref.madd(a, b, c), tol, f"madd {np.dtype(dtype).name}")

    return (xp.asarray(a), xp.asarray(b), xp.asarray(c), d, np.int64(count)), [d], check


def _mtrans(case: Any, xp: Any, rng: Any):
    side = case.sizes["side"]
    x = rng.random((side, side), dtype=np.float32)
    out = xp.empty((side, side), dtype=np.float32)

    def check(got):
        return exact(got.reshape(side, side), ref.mtrans(x), "mtrans")

    return (xp.asarray(x), out, np.int32(side), np.int32(side)), [out], check


def _scalar_prod(case: Any, xp: Any, rng: Any):
    nvec, length = case.sizes["nvec"], case.sizes["len"]
    a, b = (_uniform(rng, nvec * length, -1.0, 1.0) for _ in range(2))
    out = xp.empty(nvec, dtype=np.float32)

    def check(got):
        scale = ref.scalar_prod(np.abs(a), np.abs(b), nvec, length)
        # len / nt serial adds plus log2(nt) tree levels per vector: < 40 roundings of at most sum|a b|.
        return within(got, ref.scalar_prod(a, b, nvec, length), 1e-5 * scale + 1e-6, "scalar_prod")

    return (xp.asarray(a), xp.asarray(b), out, np.int32(nvec), np.int32(length)), [out], check


def _fwt(case: Any, xp: Any, rng: Any):
    nvec, log2_len = case.sizes["nvec"], case.sizes["log2_len"]
    x = _uniform(rng, (nvec, 2 ** log2_len), -1.0, 1.0)
    out = xp.empty(x.shape, dtype=np.float32)

    def check(got):
        # Every stage rounds values bounded by sum|x_row| once: log2_len * eps * sum|x_row| bounds the error.
        tol = log2_len * EPS32 * np.abs(x).sum(axis=1, dtype=np.float64)[:, None] + 1e-6
        return within(got.reshape(x.shape), ref.fwt(x), tol, "fwt_batch")

    return (xp.asarray(x), out, np.int32(nvec)), [out], check


def _scan(case: Any, xp: Any, rng: Any):
    shape = (case.sizes["nrows"], case.sizes["row_len"])
    x = rng.integers(0, 1024, shape, dtype=np.uint32)
    out = xp.empty(shape, dtype=np.uint32)

    def check(got):
        return exact(got, ref.scan_exclusive(x), "scan_rows")

    return (xp.asarray(x), out, np.int32(shape[0])), [out], check


def _histogram(case: Any, xp: Any, rng: Any):
    nwords, nb, nt = case.sizes["nwords"], case.blocks, case.threads_per_block
    words = rng.integers(0, 2 ** 32, nwords, dtype=np.uint32)
    partial = xp.empty(nb * 256, dtype=np.uint32)

    def check(got):
        per_block = got.reshape(nb, 256).astype(np.int64)
        ok, detail = exact(per_block.sum(axis=1), 4 * block_shares(nwords, nb, nt), "histogram256 block totals")
        if not ok:
            return ok, detail
        return exact(per_block.sum(axis=0), ref.histogram256(words), "histogram256 bins")

    return (xp.asarray(words), partial, np.int64(nwords)), [partial], check


def _dct(case: Any, xp: Any, rng: Any):
    side = case.sizes["side"]
    img = _uniform(rng, (side, side), 0.0, 255.0)
    out = xp.empty((side, side), dtype=np.float32)

    def check(got):
        # Two 8-term passes with |C| rows of norm 1: |Y| <= 8 max|X|; < 32 roundings of that size.
        tol = 32 * EPS32 * 8 * float(np.abs(img).max())
        return within(got.reshape(side, side), ref.dct8x8(img), tol, "dct8x8")

    return (xp.asarray(img), out, np.int32(side), np.int32(side)), [out], check


def _black_scholes(case: Any, xp: Any, rng: Any):
    nopt = case.sizes["nopt"]
    s, k, t = _options(rng, nopt)
    call, put = xp.empty(nopt, dtype=np.float32), xp.empty(nopt, dtype=np.float32)

    def check(got_call, got_put):
        want_call, want_put = ref.black_scholes(s, k, t, RISK_FREE, VOLATILITY)
        # float32 log/erfc/exp with a few ulp each on prices made of terms up to s and k.
        tol = 5e-5 * (s.astype(np.float64) + k)
        ok, detail = within(got_call, want_call, tol, "black_scholes call")
        if not ok:
            return ok, detail
        return within(got_put, want_put, tol, "black_scholes put")

    args = (xp.asarray(s), xp.asarray(k), xp.asarray(t), call, put, np.float32(RISK_FREE),
            np.float32(VOLATILITY), np.int32(nopt))
    return args, [call, put], check


def _binomial(case: Any, xp: Any, rng: Any):
    nopt, steps = case.sizes["nopt"], case.sizes["steps"]
    s, k, t = _options(rng, nopt)
    picked = np.sort(rng.choice(nopt, size=min(BINOMIAL_CHECKED, nopt), replace=False))
    price = xp.empty(nopt, dtype=np.float32)

    def check(got):
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

    args = (xp.asarray(s), xp.asarray(k), xp.asarray(t), price, np.float32(RISK_FREE), np.float32(VOLATILITY),
            np.int32(nopt))
    return args, [price], check


BUILDERS: dict[str, Callable] = {
    "dotp": _dotp,
    "madd": _madd,
    "mtrans": _mtrans,
    "scalar_prod": _scalar_prod,
    "fwt_batch": _fwt,
    "scan_rows": _scan,
    "histogram256": _histogram,
    "dct8x8": _dct,
    "black_scholes": _black_scholes,
    "binomial_options": _binomial,
}


def prepare(case: Any, kernel: Any, xp: Any, rng: Any) -> PreparedPower:
    """Fresh inputs for ``case`` on the device, bound to ``kernel`` (see the module doc)."""
    args, outputs, check = BUILDERS[case.source.kernel](case, xp, rng)
    return PreparedPower(kernel, case, args, outputs, check)
