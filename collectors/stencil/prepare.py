"""Device state of the stencil configurations: the timed run and its verification.

Physics (fixed, documented for the card): spacings h = 10 m on every axis, velocity uniform in
[1500, 3500] m/s, dt = half the stability limit of the order. Fields: both time levels random in [-1, 1] on the
interior, zero on the R-wide frame (which the kernels never write).

The fields of a problem (grid, dtype, space order) are drawn once, on the device, by its first configuration
and shared by all its configurations (:class:`Fields`; a 1024^3 float64 problem is 26 GB): each configuration
continues the time stepping from the state the previous one left. The scheme is stable, so the fields stay
bounded however many steps all configurations run; the values do not change the timing.

Timed unit (:meth:`StencilRun.launch`): ``steps`` launches of the kernel on the configuration's grid, one per
time step, continuing from the current state. Times are divided by ``steps`` (``Case.time_divisor``): they are
per step.

Verification (:meth:`StencilRun.verify`), against the float64 NumPy reference, in two parts, both compared on
the device (only counts and the first bad values cross to the host):

1. *Small grid, several steps.* The same compiled kernel (same dtype, order, tile, block size) runs
   ``VERIFY_STEPS`` steps on :func:`~.cases.verification_grid` (three full tiles and a partial one on every
   axis) from random fields; both time levels, frame included, are compared with :func:`~.reference.run`.
   Fields and reference depend only on (verification grid, dtype, order): they are computed once per such key
   and kept on the host (:data:`SMALL_CACHE_BYTES`), and every configuration runs from fresh device copies.
2. *The real grid, one step, three planes.* The planes ``i = R``, ``n1 // 2`` and ``n1 - R - 1`` (each a full
   j-k plane, covering both ends of j and k and the highest indices): their inputs (the ``2R + 1`` planes of
   the current level around each, the plane of the previous level) are put back to the values they had when
   the fields were drawn, one more step runs with the timed launch configuration, and the new level on the
   three planes is compared with :func:`~.reference.plane_step` of those inputs, computed once per problem.

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

from kgpubench.measure.problems import BoundedCache, ProblemCache
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
# Small-grid references kept on the host (the full sweep has 558 distinct ones, 1.3 GB in all).
SMALL_CACHE_BYTES = 2 << 30


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


def check_planes(grid: tuple[int, int, int], radius: int) -> list[int]:
    """The ``i`` planes checked on the real grid: ``R``, ``n1 // 2`` and ``n1 - R - 1``."""
    n1 = grid[0]
    return sorted({radius, n1 // 2, n1 - radius - 1})


class Fields:
    """The device state of one problem (grid, dtype, space order), shared by its configurations.

    Buffers 0 and 1 (time levels), velocity, coefficients, the step counter; and, for the plane check, the
    drawn values of each checked plane's inputs with the reference of one step from them.
    """

    def __init__(self, grid: tuple[int, int, int], dtype: str, order: int, xp: Any, fields: tuple[Any, Any, Any]):
        self.grid, self.dtype, self.order, self.xp = grid, dtype, order, xp
        self.buffers = [fields[0], fields[1]]
        self.vel = fields[2]
        self.coef = xp.asarray(coefficients(order, dtype))
        self.dt = time_step(order)
        self.dt2 = np.dtype(dtype).type(self.dt * self.dt)
        self.dims = tuple(np.int32(n) for n in grid)
        self.step_index = 0
        self._pristine: dict[int, tuple[Any, Any]] | None = None
        self._expected: dict[int, Any] = {}

    @property
    def radius(self) -> int:
        return self.order // 2

    def remember_planes(self) -> None:
        """Keep the current inputs of the checked planes (the next step reads buffer ``(s + 1) % 2`` and writes
        buffer ``s % 2``) and the reference of one step from them (once per problem, on the host)."""
        xp, r, w = self.xp, self.radius, self.step_index % 2
        cur, prev = self.buffers[1 - w], self.buffers[w]
        self._pristine = {}
        for i in check_planes(self.grid, r):
            slab, plane = xp.array(cur[i - r:i + r + 1], copy=True), xp.array(prev[i], copy=True)
            self._pristine[i] = (slab, plane)
            want = reference.plane_step(to_host(xp, plane), to_host(xp, slab), to_host(xp, self.vel[i]), self.dt, H,
                                        self.order)
            self._expected[i] = xp.asarray(want)

    def restore_planes(self) -> dict[int, Any]:
        """Put the checked planes' inputs back (for the next step's parity); return their expected new planes."""
        if self._pristine is None:
            self.remember_planes()
        r, w = self.radius, self.step_index % 2
        cur, nxt = self.buffers[1 - w], self.buffers[w]
        for i, (slab, plane) in self._pristine.items():
            cur[i - r:i + r + 1] = slab
            nxt[i] = plane
        return self._expected


class Problem:
    """One configuration's launch over some :class:`Fields` (shared, or the small grid's own).

    Step ``s`` reads the current level from buffer ``(s + 1) % 2`` and overwrites buffer ``s % 2``.
    """

    def __init__(self, cfg: StencilConfig, kernel: Any, xp: Any, fields: Fields | tuple[Any, Any, Any]) -> None:
        self.cfg, self.kernel, self.xp = cfg, kernel, xp
        self.fields = fields if isinstance(fields, Fields) else Fields(cfg.grid, cfg.dtype, cfg.space_order, xp,
                                                                         fields)

    @property
    def buffers(self) -> list[Any]:
        return self.fields.buffers

    @buffers.setter
    def buffers(self, value: list[Any]) -> None:
        self.fields.buffers = value

    @property
    def step_index(self) -> int:
        return self.fields.step_index

    @step_index.setter
    def step_index(self, value: int) -> None:
        self.fields.step_index = value

    @property
    def vel(self) -> Any:
        return self.fields.vel

    @property
    def dt(self) -> float:
        return self.fields.dt

    def step(self) -> None:
        """Enqueue one time step."""
        f = self.fields
        w = f.step_index % 2
        args = (f.buffers[1 - w], f.buffers[w], f.vel, f.coef, f.dt2, *f.dims)
        self.kernel(self.cfg.launch_grid, (self.cfg.block_size, 1, 1), args, shared_mem=self.cfg.shared_mem_bytes)
        f.step_index += 1

    def run(self, steps: int) -> None:
        """Enqueue ``steps`` time steps."""
        for _ in range(steps):
            self.step()


class SmallGrid:
    """The small-grid check of one (verification grid, dtype, order): drawn fields and the float64 reference
    of ``VERIFY_STEPS`` steps from them (host arrays)."""

    def __init__(self, vcfg: StencilConfig, rng: np.random.Generator) -> None:
        self.fields = host_fields(rng, vcfg.grid, vcfg.radius, vcfg.dtype)
        h0, h1, hv = self.fields
        self.expected = reference.run((h0, h1), hv, time_step(vcfg.space_order), H, vcfg.space_order, VERIFY_STEPS)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.fields) + sum(a.nbytes for a in self.expected)


class StencilCaches:
    """What the stencil configurations share: the current problem's :class:`Fields` (one problem at a time)
    and the small-grid references (least recently used dropped beyond :data:`SMALL_CACHE_BYTES`)."""

    def __init__(self) -> None:
        self.fields: ProblemCache[Fields] = ProblemCache()
        self.small: BoundedCache[SmallGrid] = BoundedCache(SMALL_CACHE_BYTES)

    def clear(self) -> None:
        self.fields.clear()
        self.small.clear()


def problem_key(cfg: StencilConfig) -> tuple:
    """The problem of a configuration: the fields its timed run and plane check use."""
    return (tuple(cfg.grid), cfg.dtype, cfg.space_order)


class StencilRun:
    """The prepared case of one configuration (see the module docstring)."""

    def __init__(self, cfg: StencilConfig, kernel: Any, xp: Any, rng: np.random.Generator,
                 caches: StencilCaches | None = None) -> None:
        self.cfg, self.xp = cfg, xp
        self._caches = caches if caches is not None else StencilCaches()
        key = problem_key(cfg)

        def draw() -> Fields:
            return Fields(cfg.grid, cfg.dtype, cfg.space_order, xp,
                          device_fields(xp, rng, cfg.grid, cfg.radius, cfg.dtype))

        self.main = Problem(cfg, kernel, xp, self._caches.fields.get(key, draw, where=xp.__name__))
        self.vcfg = verification_config(cfg)
        self.small = self._caches.small.get((self.vcfg.grid, cfg.dtype, cfg.space_order),
                                            lambda: SmallGrid(self.vcfg, rng))
        # The small grid's buffers are fresh copies at every check; its velocity is only read.
        self.check = Problem(self.vcfg, kernel, xp, (None, None, xp.asarray(self.small.fields[2])))
        self._key = key

    @property
    def pristine(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The small grid's drawn fields (host)."""
        return self.small.fields

    def launch(self) -> None:
        """Enqueue ``steps`` time steps on the configuration's grid."""
        self.main.run(self.cfg.steps)

    def poison(self) -> None:
        """Nothing to poison: the update is in place (see the module docstring)."""

    def verify(self) -> tuple[bool, str]:
        """Check the small grid over several steps and three planes of the real grid over one step."""
        ok_small, small = self._verify_small()
        ok_planes, planes = self._verify_planes()
        if not (ok_small and ok_planes):
            self._caches.fields.clear()  # a wrong kernel may have left garbage: the next configuration redraws
        return ok_small and ok_planes, f"{small}; {planes}"

    def release(self) -> None:
        """Drop this configuration's arrays; the problem's fields stay for its next configuration (they go
        after the problem's last configuration, or with the next problem)."""
        if self.main is not None:
            self._caches.fields.done(self._key)
        self.main = self.check = None  # type: ignore[assignment]

    def expected_small(self) -> tuple[np.ndarray, np.ndarray]:
        """The float64 reference of the small grid after ``VERIFY_STEPS`` steps (computed once per key)."""
        return self.small.expected

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
        main = self.main
        expected = main.fields.restore_planes()
        nxt = main.buffers[main.step_index % 2]
        main.step()
        rtol, atol = tolerance(self.cfg.dtype)
        for i, want in expected.items():
            ok, detail = compare(nxt[i], want, rtol=rtol, atol=atol, name=f"grid {self.cfg.grid} plane i={i}")
            if not ok:
                return False, detail
        return True, f"grid {self.cfg.grid} planes i={sorted(expected)} after 1 step match"
