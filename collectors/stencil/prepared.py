"""Device state of one stencil configuration: the timed run and its verification.

Physics (fixed, documented for the card): spacings h = 10 m on every axis, velocity uniform in
[1500, 3500] m/s, dt = half the stability limit of the order. Fields: both time levels random in [-1, 1] on the
interior, zero on the R-wide frame (which the kernels never write).

Timed unit (:meth:`StencilRun.launch`): ``steps`` launches of the kernel on the configuration's grid, one per
time step, continuing from the current state (the scheme is stable, so the fields stay bounded however many
launches the harness times). Times are divided by ``steps`` (``Case.time_divisor``): they are per step.

Verification (:meth:`StencilRun.verify`), against the float64 NumPy reference, in two parts:

1. *Small grid, several steps.* The same compiled kernel (same dtype, order, tile, block size) runs
   ``VERIFY_STEPS`` steps on :func:`~.cases.verification_grid` (three full tiles and a partial one on every
   axis) from fresh random fields; both time levels, frame included, are compared with
   :func:`~.reference.run`.
2. *The real grid, one step, three planes.* One more step on the configuration's grid with the timed launch
   configuration; the new level on the planes ``i = R``, ``n1 // 2`` and ``n1 - R - 1`` (each a full j-k
   plane, covering both ends of j and k and the highest indices) is compared with
   :func:`~.reference.plane_step` computed from the ``2R + 1`` planes of the input around it.

A full NumPy reference of a 512^3 or 1024^3 grid (gigabytes, seconds per step) is not needed: the kernels are
generic in the grid size, part 1 checks the tile arithmetic and the time stepping, part 2 the indexing at the
real size.

The update is in place (the buffer a step writes holds u^{n-1}, an input of that step), so there is no pure
output to poison: :meth:`StencilRun.poison` leaves the fields alone. A point a kernel fails to write keeps
u^{n-1} instead of u^{n+1}, a difference of the order of the field, which the comparison detects.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kgpubench.measure.verify import compare, tolerance

from . import reference
from .cases import VERIFY_STEPS, verification_config
from .spec import StencilConfig
from .weights import fd_weights_float, stable_dt

H = (10.0, 10.0, 10.0)
VEL_RANGE = (1500.0, 3500.0)
CFL_FRACTION = 0.5
# Above this many points a field is filled from a pool of random planes (drawing 10^9 numbers on the host
# for every configuration would dominate the collection time; the values do not change the timing).
FULL_RANDOM_POINTS = 1 << 24
POOL_PLANES = 8


def time_step(order: int) -> float:
    """The time step used for ``order`` (half the stability limit at the largest velocity)."""
    return CFL_FRACTION * stable_dt(order, H, VEL_RANGE[1])


def coefficients(order: int, dtype: str) -> np.ndarray:
    """The kernels' ``coef`` argument: ``c_r / h_a^2`` for the axes a = i, j, k, in ``dtype``."""
    c = fd_weights_float(order)
    return np.array([w / (h * h) for h in H for w in c], dtype=dtype)


def host_fields(rng: np.random.Generator, grid: tuple[int, int, int], radius: int,
                dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two random time levels (zero frame) and a random velocity, on the host, in ``dtype``."""
    levels = []
    for _ in range(2):
        u = np.zeros(grid, dtype=dtype)
        inner = tuple(slice(radius, n - radius) for n in grid)
        u[inner] = rng.uniform(-1.0, 1.0, tuple(n - 2 * radius for n in grid))
        levels.append(u)
    vel = rng.uniform(*VEL_RANGE, grid).astype(dtype)
    return levels[0], levels[1], vel


def _pooled_field(xp: Any, rng: np.random.Generator, grid: tuple[int, int, int], radius: int, dtype: str,
                  low: float, high: float, frame: bool) -> Any:
    n1, n2, n3 = grid
    pool = rng.uniform(low, high, (POOL_PLANES, n2, n3)).astype(dtype)
    if frame:
        pool[:, :radius] = 0
        pool[:, n2 - radius:] = 0
        pool[:, :, :radius] = 0
        pool[:, :, n3 - radius:] = 0
    pool_dev = xp.asarray(pool)
    out = xp.empty(grid, dtype=dtype)
    for start in range(0, n1, POOL_PLANES):
        stop = min(start + POOL_PLANES, n1)
        out[start:stop] = pool_dev[: stop - start]
    if frame:
        out[:radius] = 0
        out[n1 - radius:] = 0
    return out


def device_fields(xp: Any, rng: np.random.Generator, grid: tuple[int, int, int], radius: int,
                  dtype: str) -> tuple[Any, Any, Any]:
    """Fields of :func:`host_fields` on the device; large grids repeat a pool of random planes."""
    if grid[0] * grid[1] * grid[2] <= FULL_RANDOM_POINTS:
        return tuple(xp.asarray(a) for a in host_fields(rng, grid, radius, dtype))  # type: ignore
    u0 = _pooled_field(xp, rng, grid, radius, dtype, -1.0, 1.0, frame=True)
    u1 = _pooled_field(xp, rng, grid, radius, dtype, -1.0, 1.0, frame=True)
    vel = _pooled_field(xp, rng, grid, radius, dtype, *VEL_RANGE, frame=False)
    return u0, u1, vel


def to_host(xp: Any, a: Any) -> np.ndarray:
    """A NumPy copy of a device (or host) array."""
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.array(a, copy=True)


class Problem:
    """One grid's device state: buffers 0 and 1 (time levels), velocity, coefficients, step counter.

    Step ``s`` reads the current level from buffer ``(s + 1) % 2`` and overwrites buffer ``s % 2``.
    """

    def __init__(self, cfg: StencilConfig, kernel: Any, xp: Any, fields: tuple[Any, Any, Any]) -> None:
        self.cfg, self.kernel, self.xp = cfg, kernel, xp
        self.buffers = [fields[0], fields[1]]
        self.vel = fields[2]
        self.coef = xp.asarray(coefficients(cfg.space_order, cfg.dtype))
        self.dt = time_step(cfg.space_order)
        self.dt2 = np.dtype(cfg.dtype).type(self.dt * self.dt)
        self.dims = tuple(np.int32(n) for n in cfg.grid)
        self.step_index = 0

    def step(self) -> None:
        """Enqueue one time step."""
        w = self.step_index % 2
        args = (self.buffers[1 - w], self.buffers[w], self.vel, self.coef, self.dt2, *self.dims)
        self.kernel(self.cfg.launch_grid, (self.cfg.block_size, 1, 1), args,
                    shared_mem=self.cfg.shared_mem_bytes)
        self.step_index += 1

    def run(self, steps: int) -> None:
        """Enqueue ``steps`` time steps."""
        for _ in range(steps):
            self.step()


class StencilRun:
    """The prepared case of one configuration (see the module docstring)."""

    def __init__(self, cfg: StencilConfig, kernel: Any, xp: Any, rng: np.random.Generator) -> None:
        self.cfg, self.xp = cfg, xp
        self.main = Problem(cfg, kernel, xp, device_fields(xp, rng, cfg.grid, cfg.radius, cfg.dtype))
        self.vcfg = verification_config(cfg)
        self.pristine = host_fields(rng, self.vcfg.grid, cfg.radius, cfg.dtype)
        self.check = Problem(self.vcfg, kernel, xp, tuple(xp.array(a, copy=True) for a in self.pristine))
        self._expected: tuple[np.ndarray, np.ndarray] | None = None

    def launch(self) -> None:
        """Enqueue ``steps`` time steps on the configuration's grid."""
        self.main.run(self.cfg.steps)

    def poison(self) -> None:
        """Nothing to poison: the update is in place (see the module docstring)."""

    def verify(self) -> tuple[bool, str]:
        """Check the small grid over several steps and three planes of the real grid over one step."""
        ok_small, small = self._verify_small()
        ok_planes, planes = self._verify_planes()
        return ok_small and ok_planes, f"{small}; {planes}"

    def release(self) -> None:
        """Drop the device arrays."""
        self.main = self.check = None  # type: ignore[assignment]

    def expected_small(self) -> tuple[np.ndarray, np.ndarray]:
        """The float64 reference of the small grid after ``VERIFY_STEPS`` steps (computed once)."""
        if self._expected is None:
            h0, h1, hv = self.pristine
            self._expected = reference.run((h0, h1), hv, self.check.dt, H, self.cfg.space_order, VERIFY_STEPS)
        return self._expected

    def _verify_small(self) -> tuple[bool, str]:
        xp, chk = self.xp, self.check
        chk.buffers = [xp.array(self.pristine[0], copy=True), xp.array(self.pristine[1], copy=True)]
        chk.step_index = 0
        chk.run(VERIFY_STEPS)
        want = self.expected_small()
        rtol, atol = tolerance(self.cfg.dtype)
        results = [compare(chk.buffers[b], want[b], rtol=rtol, atol=atol,
                           name=f"grid {self.vcfg.grid} after {VERIFY_STEPS} steps, buffer {b}") for b in (0, 1)]
        return all(ok for ok, _ in results), "; ".join(d for _, d in results)

    def _verify_planes(self) -> tuple[bool, str]:
        xp, main, r = self.xp, self.main, self.cfg.radius
        n1 = self.cfg.grid[0]
        planes = sorted({r, n1 // 2, n1 - r - 1})
        w = main.step_index % 2
        cur, nxt = main.buffers[1 - w], main.buffers[w]
        inputs = [(to_host(xp, cur[i - r:i + r + 1]), to_host(xp, nxt[i]), to_host(xp, main.vel[i]))
                  for i in planes]
        main.step()
        rtol, atol = tolerance(self.cfg.dtype)
        for i, (slab, prev, vel) in zip(planes, inputs):
            want = reference.plane_step(prev, slab, vel, main.dt, H, self.cfg.space_order)
            ok, detail = compare(nxt[i], want, rtol=rtol, atol=atol, name=f"grid {self.cfg.grid} plane i={i}")
            if not ok:
                return False, detail
        return True, f"grid {self.cfg.grid} planes i={planes} after 1 step match"
