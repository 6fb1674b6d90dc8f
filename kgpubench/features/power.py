"""Seed-002 power features from executed instruction counts: compute density and branch density.

The seed counts statements of a source slice, weighted by how often loops run them; here the same
quantities come from the executed PTX instruction mix (same trip-count weighting), which is exact about
memory spaces. SM saturation lives in :mod:`kgpubench.features.occupancy`.

Power-weighted compute density ``A = N_a / N_mem`` with ``N_mem = sum_i r_i n_i`` over global (``r_0 = 1``),
shared, constant and texture accesses:

* ``N_a``: executed arithmetic instructions (mix classes ``int fp32 fp64 fp16 tensor sfu convert``).
* ``n_global``: global/generic/local loads and stores and atomics; ``n_shared``: shared loads and stores;
  ``n_constant``: constant-space loads; ``n_texture``: texture and surface instructions.
* The seed measured ``r_1..r_3`` per GPU but does not print them, so the defaults are 1.0 (A is then the
  plain arithmetic-to-memory ratio); pass factors measured by the power suite to weight them. With no
  memory access at all the denominator is taken as 1.

Branch density: executed branch instructions (``bra``, ``brx``, ``call``) / executed instructions.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgpubench.errors import PowerFactorError

__all__ = ["ARITHMETIC_CLASSES", "DEFAULT_POWER_FACTORS", "branch_density", "compute_density", "memory_counts"]

#: Memory-space power factors r (global is the reference and must stay 1).
DEFAULT_POWER_FACTORS: dict[str, float] = {"global": 1.0, "shared": 1.0, "constant": 1.0, "texture": 1.0}
ARITHMETIC_CLASSES = ("int", "fp32", "fp64", "fp16", "tensor", "sfu", "convert")


def memory_counts(mix: Mapping[str, float]) -> dict[str, float]:
    """Accesses per space (``global``, ``shared``, ``constant``, ``texture``) from an instruction mix."""
    g = sum(mix.get(c, 0.0) for c in ("ld_global", "st_global", "ld_local", "st_local", "atomic"))
    return {"global": g, "shared": mix.get("ld_shared", 0.0) + mix.get("st_shared", 0.0),
            "constant": mix.get("ld_const", 0.0), "texture": mix.get("texture", 0.0)}


def compute_density(mix: Mapping[str, float], factors: Mapping[str, float] | None = None) -> float:
    """Seed-002 power-weighted compute density ``A = N_a / N_mem`` (see the module doc).

    Parameters
    ----------
    mix : mapping
        Executed instruction mix (:data:`kgpubench.features.isa.MIX_CLASSES` -> count).
    factors : mapping, optional
        Power factors by space; missing spaces take :data:`DEFAULT_POWER_FACTORS`.
    """
    r = dict(DEFAULT_POWER_FACTORS)
    for space, value in (factors or {}).items():
        if space not in r or value < 0:
            raise PowerFactorError(f"power factor {space}={value!r}: expected a non-negative factor for one of "
                                   f"{', '.join(r)}.")
        r[space] = float(value)
    if r["global"] != 1.0:
        raise PowerFactorError(f"power factor global={r['global']}: global accesses are the reference (r_0 = 1); "
                               "scale the other factors instead.")
    n_a = sum(mix.get(c, 0.0) for c in ARITHMETIC_CLASSES)
    n_mem = sum(r[space] * count for space, count in memory_counts(mix).items())
    return n_a / n_mem if n_mem > 0 else n_a


def branch_density(mix: Mapping[str, float]) -> float:
    """Executed branch instructions over all executed instructions (0 for an empty kernel)."""
    total = sum(mix.values())
    return mix.get("branch", 0.0) / total if total > 0 else 0.0
