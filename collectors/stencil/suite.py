"""The stencil suite object: the harness contract (:class:`kgpubench.measure.suite.Suite`) over the sweep."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kgpubench.errors import unknown_name
from kgpubench.measure.suite import SuiteBase

from .cases import make_case
from .prepare import StencilCaches, StencilRun, problem_key
from .spec import VARIANTS, StencilConfig, sweep

COLLECTOR_VERSION = "1.1.0"  # 1.1.0: one time step per timed unit (protocol 2 samples many)


class StencilSuite(SuiteBase):
    """The stencil suite (harness contract :class:`kgpubench.measure.suite.Suite`).

    ``--kernel`` names are the variants: ``thread-tile`` and ``shared-tile``.
    """

    name = "stencil"
    table = "stencil"
    collector_version = COLLECTOR_VERSION
    # Time steps follow each other in the solver, so samples run back to back (the fields of most grids are
    # far larger than L2 anyway).
    l2_policy = "warm"

    def __init__(self) -> None:
        self._caches = StencilCaches()

    def kernels(self) -> Sequence[str]:
        """The variants, accepted by ``--kernel``."""
        return VARIANTS

    def configs(self, *, quick: bool, kernels: Sequence[str] | None = None) -> Iterator[StencilConfig]:
        """The sweep's configurations, optionally only the named variants."""
        for k in kernels or ():
            if k not in VARIANTS:
                raise unknown_name("stencil kernel", k, VARIANTS)
        return sweep(quick, kernels)

    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None, device: Any = None) -> Iterable[Any]:
        """One harness case per configuration (see :mod:`.spec` for the sweep)."""
        configs = list(self.configs(quick=quick, kernels=kernels))
        self._caches.fields.plan(problem_key(cfg) for cfg in configs)
        return [make_case(cfg) for cfg in configs]

    def prepare(self, case: Any, kernel: Any, xp: Any, rng: Any) -> StencilRun:
        """Bind ``kernel`` to the problem's fields (drawn by its first configuration) and to the small
        verification grid of ``case``."""
        return StencilRun(config_of(case), kernel, xp, rng, self._caches)

    def drop_caches(self) -> None:
        """Free the fields of the current problem and the small-grid references (after the suite)."""
        self._caches.clear()


def config_of(case: Any) -> StencilConfig:
    """Rebuild the :class:`StencilConfig` of a case made by :func:`make_case`."""
    k, c = case.key, case.columns
    return StencilConfig(
        grid=(int(k["grid_nx"]), int(k["grid_ny"]), int(k["grid_nz"])), dtype=str(k["dtype"]),
        space_order=int(k["space_order"]), tile=(int(k["tile_b1"]), int(k["tile_b2"]), int(k["tile_b3"])),
        variant=str(k["variant"]), block_size=int(k["block_size"]), steps=int(c["steps"]),
        group=str(c["sweep_group"]),
    )


SUITE = StencilSuite()
