"""The `tunings` table: the best-found kernel configuration per OpenCL device (CLBlast's tuning database).

One row = one (kernel, precision, device or default) entry: the winning parameters CLBlast's tuner found on a
device (``kind = device``), or the fallback CLBlast derives for an untuned device of an architecture, a vendor
and device type, or anything (``*_default``). There are no times: upstream keeps only the winner.

``gpu_name`` is the device the entry belongs to: for a tuned device its OpenCL name (normalised to the
kgpubench.hardware alias spelling where the alias table knows it; CPUs and accelerators keep their OpenCL name
too), for a default row ``default <kind>: <vendor or all> <device_type> <architecture>`` (no such device exists;
its catalogue figures are null).
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import common_head, provenance_columns

KINDS = ("device", "architecture_default", "vendor_type_default", "global_default")
PRECISIONS = ("Half", "Single", "ComplexSingle", "Double", "ComplexDouble")
DEVICE_TYPES = ("GPU", "CPU", "Accelerator", "All")


def _specific() -> list[Column]:
    return [
        Column("kernel", "string", "CLBlast database entry (Xgemm, XgemmDirect, Copy, ...).", nullable=False,
               key=True, pattern=r"[A-Za-z][A-Za-z0-9]*"),
        Column("precision", "string", "Half (fp16), Single (fp32), ComplexSingle, Double (fp64), ComplexDouble.",
               nullable=False, values=PRECISIONS, key=True),
        Column("kind", "string", "`device`: tuned on that device; `architecture_default` / `vendor_type_default` / "
               "`global_default`: CLBlast's fallback over the tuned devices of that group.", nullable=False,
               values=KINDS, key=True),
        Column("tuned_on_device", "bool", "Whether the parameters were found by the tuner on this device "
               "(kind = device) rather than derived.", nullable=False),
        Column("device_type", "string", "OpenCL device type (All for global defaults).", nullable=False,
               values=DEVICE_TYPES, key=True),
        Column("vendor", "string", "Vendor as CLBlast normalises it (NVIDIA, AMD, Intel, ARM, QUALCOMM, Apple, "
               "Imagination Technologies); null for global defaults.", key=True),
        Column("architecture", "string", "CLBlast architecture string (SM8.0, gfx1030, ...); null where CLBlast has "
               "none.", key=True),
        Column("device", "string", "OpenCL CL_DEVICE_NAME as CLBlast stores it (cut at 50 characters); null for "
               "default rows. A key: two spellings of one GPU (RTX 2070 SUPER / Super) are separate entries.",
               key=True),
        Column("params", "params", "The best configuration: CLBlast tuning parameter (name, integer value), sorted "
               "by name.", nullable=False),
    ]


TABLE = Table(
    name="tunings",
    version="1.0.0",
    description="Best-found OpenCL BLAS kernel configurations per device and CLBlast's fallbacks (no times).",
    columns=tuple(common_head() + _specific() + provenance_columns()),
    changelog=(("1.0.0", "First declaration (CLBlast import, issue 27)."),),
)
