"""Inputs, launch arguments and output checks of the regular-suite kernels.

Inputs are drawn, and the NumPy reference (:mod:`.reference`) computed, once per problem (kernel, sizes) from
the generator the harness passes for the first case of that problem (``MAKERS``); each case then binds its own
device copies of the inputs and fresh outputs to the compiled kernel as a
:class:`~kgpubench.measure.launch.LaunchCase` (``BINDERS``) whose check compares the outputs with the
reference on the device: only counts and the first bad values cross to the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgpubench.measure.launch import LaunchCase
from kgpubench.measure.suite import CompiledKernel
from kgpubench.measure.verify import compare, count_nonfinite

from . import reference as ref
from .spec import SPEC_BY_KERNEL, Launch

F32 = np.float32
HOT = {"step": 0.5, "rx1": 0.2, "ry1": 0.2, "rz1": 0.05, "amb": 80.0}
SRAD_LAMBDA = 0.5
MM_CHECK_ROWS = 64


Output = tuple[str, Any, np.ndarray, Any]  # (name, device array, expected array, selector)


@dataclass
class CheckOutputs:
    """The check of a case's outputs (a :class:`~kgpubench.measure.launch.LaunchCase` check).

    Each of ``outputs``, ``(name, device array, expected array, selector)``, is compared with the problem's
    reference (on the device under CuPy); the selector picks the part of the output the kernel writes
    (``None``: all of it); an output named in ``all_finite`` must also hold no NaN anywhere.
    """

    outputs: list[Output]
    all_finite: tuple[str, ...] = ()

    def __call__(self) -> tuple[bool, str]:
        details = []
        for name, arr, expected, sel in self.outputs:
            got = arr if sel is None else arr[sel]
            if name in self.all_finite:
                unwritten = count_nonfinite(arr)
                if unwritten:
                    return False, f"{name}: {unwritten} values left unwritten (NaN)"
            ok, detail = compare(got, expected, name=name)
            if not ok:
                return False, detail
            details.append(detail)
        return True, "; ".join(details)


def bind(kernel: CompiledKernel, launch: Launch, args: tuple, outputs: list[Output], *,
         all_finite: tuple[str, ...] = (), reset: Callable[[], None] | None = None,
         in_place: tuple[str, ...] = ()) -> LaunchCase:
    """The :class:`~kgpubench.measure.launch.LaunchCase` of one case: ``outputs`` are checked; those not
    ``in_place`` are poisoned before the check launch (``reset`` restores the in-place ones)."""
    poisoned = [arr for name, arr, _e, _s in outputs if name not in in_place]
    return LaunchCase(kernel, launch.grid, launch.block, args, CheckOutputs(outputs, all_finite),
                      shared_mem=launch.shared_mem, outputs=poisoned, reset=reset)


def problem_key(kernel: str, sizes: Any) -> tuple:
    """The problem of a case: kernel and sizes (its launch configurations share inputs and references)."""
    return (kernel, tuple(sorted(dict(sizes).items())))


# ---- per-kernel inputs (host) and bindings (device) -------------------------------------------------------
def _uniform(rng: np.random.Generator, shape: Any, lo: float, hi: float) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape).astype(F32)


def _make_vector_add(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    a, b = _uniform(rng, sz["n"], -1, 1), _uniform(rng, sz["n"], -1, 1)
    return {"a": a, "b": b, "c": ref.vector_add(a, b)}


def _make_euclid(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    rec = np.empty(2 * sz["n"], dtype=F32)
    rec[0::2] = _uniform(rng, sz["n"], -90, 90)
    rec[1::2] = _uniform(rng, sz["n"], -180, 180)
    lat, lng = float(F32(rng.uniform(-90, 90))), float(F32(rng.uniform(-180, 180)))
    return {"records": rec, "lat": lat, "lng": lng, "d": ref.euclid(rec, lat, lng)}


def _srad_image(sz: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, float]:
    J = _uniform(rng, (sz["rows"], sz["cols"]), 0.5, 1.5)
    q0sqr = float(F32(np.var(J, dtype=np.float64) / np.mean(J, dtype=np.float64) ** 2))
    return J, q0sqr


def _make_srad_1(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    J, q0sqr = _srad_image(sz, rng)
    return {"J": J, "q0sqr": q0sqr, **ref.srad_1(J, q0sqr)}


def _make_srad_2(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    J, q0sqr = _srad_image(sz, rng)
    d = ref.srad_1(J, q0sqr)
    return {"J": J, **d, "J_out": ref.srad_2(J, d["dN"], d["dS"], d["dW"], d["dE"], d["C"], SRAD_LAMBDA)}


def _make_hotspot(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    shape = (sz["rows"], sz["cols"])
    power, temp = _uniform(rng, shape, 0, 1), _uniform(rng, shape, 70, 90)
    return {"power": power, "temp": temp, "out": ref.hotspot(power, temp, sz["iters"], **HOT)}


def _make_matrix_mul(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    n = sz["n"]
    A, B = _uniform(rng, (n, n), -1, 1), _uniform(rng, (n, n), -1, 1)
    rows = np.sort(rng.choice(n, size=min(n, MM_CHECK_ROWS), replace=False))
    return {"A": A, "B": B, "rows": rows, "C_rows": ref.matrix_mul(A, B, rows)}


def _gauss_matrix(sz: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    a = _uniform(rng, (sz["n"], sz["n"]), -1, 1)
    a[sz["t"], sz["t"]] = sz["n"]  # a well-conditioned pivot
    return a


def _make_fan1(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    a = _gauss_matrix(sz, rng)
    return {"a": a, "m": ref.fan1(a, sz["t"])}


def _make_fan2(sz: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    a = _gauss_matrix(sz, rng)
    b, m = _uniform(rng, sz["n"], -1, 1), _uniform(rng, sz["n"], -1, 1)
    a_out, b_out = ref.fan2(a, b, m, sz["t"])
    return {"a": a, "b": b, "m_in": m, "a_out": a_out, "b_out": b_out}


MAKERS: dict[str, Callable[[dict[str, int], np.random.Generator], dict[str, Any]]] = {
    "vector_add": _make_vector_add, "euclid": _make_euclid, "srad_cuda_1": _make_srad_1,
    "srad_cuda_2": _make_srad_2, "calculate_temp": _make_hotspot, "matrix_mul": _make_matrix_mul,
    "fan1": _make_fan1, "fan2": _make_fan2,
}


def _dev(xp: Any, shared: Any) -> Any:
    """The case's own copy of a shared problem input (device to device; a copy under NumPy too: kernels must
    never touch the problem's inputs)."""
    return xp.array(shared, copy=True)


def _empty(xp: Any, shape: Any) -> Any:
    return xp.empty(shape, dtype=F32)


def _bind_vector_add(d, sz, k, launch, xp) -> LaunchCase:
    a, b, c = _dev(xp, d["a"]), _dev(xp, d["b"]), _empty(xp, sz["n"])
    return bind(k, launch, (a, b, c, np.int32(sz["n"])), [("c", c, d["c"], None)])


def _bind_euclid(d, sz, k, launch, xp) -> LaunchCase:
    rec, dist = _dev(xp, d["records"]), _empty(xp, sz["n"])
    args = (rec, dist, np.int32(sz["n"]), F32(d["lat"]), F32(d["lng"]))
    return bind(k, launch, args, [("distances", dist, d["d"], None)])


def _bind_srad_1(d, sz, k, launch, xp) -> LaunchCase:
    shape = (sz["rows"], sz["cols"])
    J = _dev(xp, d["J"])
    outs = {name: _empty(xp, shape) for name in ("dN", "dS", "dW", "dE", "C")}
    args = (J, *outs.values(), np.int32(sz["rows"]), np.int32(sz["cols"]), F32(d["q0sqr"]))
    return bind(k, launch, args, [(n, arr, d[n], None) for n, arr in outs.items()])


def _bind_srad_2(d, sz, k, launch, xp) -> LaunchCase:
    ins = [_dev(xp, d[n]) for n in ("J", "dN", "dS", "dW", "dE", "C")]
    out = _empty(xp, (sz["rows"], sz["cols"]))
    args = (*ins, out, np.int32(sz["rows"]), np.int32(sz["cols"]), F32(SRAD_LAMBDA))
    return bind(k, launch, args, [("J_out", out, d["J_out"], None)])


def _bind_hotspot(d, sz, k, launch, xp) -> LaunchCase:
    power, temp = _dev(xp, d["power"]), _dev(xp, d["temp"])
    out = _empty(xp, (sz["rows"], sz["cols"]))
    args = (power, temp, out, np.int32(sz["rows"]), np.int32(sz["cols"]), np.int32(sz["iters"]),
            *(F32(HOT[n]) for n in ("step", "rx1", "ry1", "rz1", "amb")))
    return bind(k, launch, args, [("temp_out", out, d["out"], None)])


def _bind_matrix_mul(d, sz, k, launch, xp) -> LaunchCase:
    A, B, C = _dev(xp, d["A"]), _dev(xp, d["B"]), _empty(xp, (sz["n"], sz["n"]))
    args = (A, B, C, np.int32(sz["n"]), np.int32(sz["tk"]))
    return bind(k, launch, args, [("C", C, d["C_rows"], d["rows"])], all_finite=("C",))


def _bind_fan1(d, sz, k, launch, xp) -> LaunchCase:
    a, m = _dev(xp, d["a"]), _empty(xp, sz["n"])
    t = sz["t"]
    return bind(k, launch, (a, m, np.int32(sz["n"]), np.int32(t)), [("m", m, d["m"], slice(t + 1, None))])


def _bind_fan2(d, sz, k, launch, xp) -> LaunchCase:
    a, b, m = _dev(xp, d["a"]), _dev(xp, d["b"]), _dev(xp, d["m_in"])

    def reset() -> None:  # in-place kernel: restore the inputs; unwritten outputs then differ from the reference
        a[...] = d["a"]
        b[...] = d["b"]

    return bind(k, launch, (a, b, m, np.int32(sz["n"]), np.int32(sz["t"])),
                [("a", a, d["a_out"], None), ("b", b, d["b_out"], None)], reset=reset, in_place=("a", "b"))


BINDERS: dict[str, Callable[..., LaunchCase]] = {
    "vector_add": _bind_vector_add, "euclid": _bind_euclid, "srad_cuda_1": _bind_srad_1,
    "srad_cuda_2": _bind_srad_2, "calculate_temp": _bind_hotspot, "matrix_mul": _bind_matrix_mul,
    "fan1": _bind_fan1, "fan2": _bind_fan2,
}

assert set(MAKERS) == set(BINDERS) == set(SPEC_BY_KERNEL)
