"""Facts of the NPB suite: problem classes, official verification values, and NPB-GPU's kernels and defaults.

The numbers are the public NPB specification (NAS report and the verification tables of every port); the
kernel roles, ``gpu.config`` keys and shipped threads-per-block defaults are those of GMAP's NPB-GPU, which
our own kernels mirror one for one.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgpubench.errors import SuiteError, did_you_mean

BENCHMARKS = ("EP", "CG", "MG", "FT")
CLASSES = ("S", "W", "A", "B", "C")
TPB_CHOICES = (32, 64, 128, 256, 512, 1024)


class NpbSpecError(SuiteError, ValueError):
    """An NPB benchmark, class or kernel name that does not exist."""


# ---------------------------------------------------------------- EP
EP_CLASSES = {  # M: 2^M pairs; sx, sy
    "S": (24, -3.247834652034740e3, -6.958407078382297e3),
    "W": (25, -2.863319731645753e3, -6.320053679109499e3),
    "A": (28, -4.295875165629892e3, -1.580732573678431e4),
    "B": (30, 4.033815542441498e4, -2.660669192809235e4),
    "C": (32, 4.764367927995374e4, -8.084072988043731e4),
}
EP_SEED = 271828183
EP_MK = 16  # NPB batches: 2^MK pairs each
EP_NQ = 10
EP_EPSILON = 1e-8

# ---------------------------------------------------------------- CG
CG_CLASSES = {  # na, nonzer, niter, shift, zeta
    "S": (1400, 7, 15, 10.0, 8.5971775078648),
    "W": (7000, 8, 15, 12.0, 10.362595087124),
    "A": (14000, 11, 15, 20.0, 17.130235054029),
    "B": (75000, 13, 75, 60.0, 22.712745482631),
    "C": (150000, 15, 75, 110.0, 28.973605592845),
}
CG_SEED = 314159265
CG_RCOND = 0.1
CG_CGITMAX = 25
CG_EPSILON = 1e-10

# ---------------------------------------------------------------- MG
MG_CLASSES = {  # n (grid n^3), nit, L2 norm
    "S": (32, 4, 0.5307707005734e-04),
    "W": (128, 4, 0.6467329375339e-05),
    "A": (256, 4, 0.2433365309069e-05),
    "B": (256, 20, 0.1800564401355e-05),
    "C": (512, 20, 0.5706732285740e-06),
}
MG_SEED = 314159265
MG_A = (-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0)
MG_C_SWA = (-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0)
MG_C_BIG = (-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0)
MG_EPSILON = 1e-8


def mg_smoother(npb_class: str) -> tuple[float, float, float, float]:
    """The psinv coefficients of a class (S, W, A use one set, larger classes the other)."""
    return MG_C_SWA if npb_class in ("S", "W", "A") else MG_C_BIG


# ---------------------------------------------------------------- FT
FT_CLASSES = {  # (nx, ny, nz), niter
    "S": ((64, 64, 64), 6),
    "W": ((128, 128, 32), 6),
    "A": ((256, 256, 128), 6),
    "B": ((512, 256, 256), 20),
    "C": ((512, 512, 512), 20),
}
FT_SEED = 314159265
FT_ALPHA = 1e-6
FT_EPSILON = 1e-12
# Official per-step checksums (re, im) of NPB's FT `verify`.
FT_CHECKSUMS = {
    "S": [(554.6087004964, 484.5363331978), (554.6385409189, 486.5304269511), (554.6148406171, 488.3910722336),
          (554.5423607415, 490.1273169046), (554.4255039624, 491.7475857993), (554.2683411902, 493.2597244941)],
    "W": [(567.3612178944, 529.3246849175), (563.1436885271, 528.2149986629), (559.4024089970, 527.0996558037),
          (556.0698047020, 526.0027904925), (553.0898991250, 524.9400845633), (550.4159734538, 523.9212247086)],
    "A": [(504.6735008193, 511.4047905510), (505.9412319734, 509.8809666433), (506.9376896287, 509.8144042213),
          (507.7892868474, 510.1336130759), (508.5233095391, 510.4914655194), (509.1487099959, 510.7917842803)],
    "B": [(517.7643571579, 507.7803458597), (515.4521291263, 508.8249431599), (514.6409228649, 509.6208912659),
          (514.2378756213, 510.1023387619), (513.9626667737, 510.3976610617), (513.7423460082, 510.5948019802),
          (513.5547056878, 510.7404165783), (513.3910925466, 510.8576573661), (513.2470705390, 510.9577278523),
          (513.1197729984, 511.0460304483), (513.0070319283, 511.1252433800), (512.9070537032, 511.1968077718),
          (512.8182883502, 511.2616233064), (512.7393733383, 511.3203605551), (512.6691062020, 511.3735928093),
          (512.6064276004, 511.4218460548), (512.5504076570, 511.4656139760), (512.5002331720, 511.5053595966),
          (512.4551951846, 511.5415130407), (512.4146770029, 511.5744692211)],
    "C": [(519.5078707457, 514.9019699238), (515.5422171134, 512.7578201997), (514.4678022222, 512.2251847514),
          (514.0150594328, 512.1090289018), (513.7550426810, 512.1143685824), (513.5811056728, 512.1496764568),
          (513.4569343165, 512.1870921893), (513.3651975661, 512.2193250322), (513.2955192805, 512.2454735794),
          (513.2410471738, 512.2663649603), (513.1971141679, 512.2830879827), (513.1605205716, 512.2965869718),
          (513.1290734194, 512.3075927445), (513.1012720314, 512.3166486553), (513.0760908195, 512.3241541685),
          (513.0528295923, 512.3304037599), (513.0310107773, 512.3356167976), (513.0103090133, 512.3399592211),
          (512.9905029333, 512.3435588985), (512.9714421109, 512.3465164008)],
}


# ---------------------------------------------------------------- NPB-GPU kernels
@dataclass(frozen=True)
class NpbKernel:
    """One NPB-GPU kernel role: our kernel name, its ``gpu.config`` key and the shipped default TPB."""

    benchmark: str
    name: str
    config_key: str
    default_tpb: int
    role: str


_CG_ROLES = ("q = z = 0, r = p = x", "rho = r.r (partial sums)", "q = A p (CSR mat-vec)", "d = p.q (partial sums)",
             "z += alpha p, r -= alpha q", "rho = r.r (partial sums)", "p = r + beta p", "r = A z (CSR mat-vec)",
             "sum (x - r)^2 (partial sums)", "x.z and z.z (partial sums)", "x = z / ||z||")
_CG_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")
_CG_DEFAULTS = (1024, 256, 64, 256, 64, 256, 512, 64, 512, 256, 512)
_MG = (("comm3", 1024, "periodic ghost cells of one axis"), ("interp", 32, "trilinear prolongation"),
       ("norm2u3", 32, "L2 and max norm (partial sums)"), ("psinv", 1024, "smoother u += S r"),
       ("resid", 512, "r = v - A u"), ("rprj3", 512, "27-point restriction"), ("zero3", 128, "u = 0"))
_FT = (("fftx_1", 1024, "x lines to scratch"), ("fftx_2", 32, "1-D FFT of x lines"),
       ("fftx_3", 256, "scratch to x lines"), ("ffty_1", 32, "y lines to scratch"),
       ("ffty_2", 32, "1-D FFT of y lines"), ("ffty_3", 32, "scratch to y lines"),
       ("fftz_1", 32, "z lines to scratch"), ("fftz_2", 32, "1-D FFT of z lines"),
       ("fftz_3", 32, "scratch to z lines"), ("checksum", 32, "checksum (partial sums)"),
       ("compute_indexmap", 32, "evolution factors exp(-4 alpha pi^2 |k|^2)"),
       ("compute_initial_conditions", 32, "random initial field (NPB generator)"),
       ("evolve", 32, "u0 *= factors, u1 = u0"), ("init_ui", 32, "zero the work arrays"))

KERNELS: dict[str, tuple[NpbKernel, ...]] = {
    "EP": (NpbKernel("EP", "ep", "EP_THREADS_PER_BLOCK", 32, "Gaussian pairs of a batch range (partial sums)"),),
    "CG": tuple(NpbKernel("CG", f"kernel_{w}", f"CG_THREADS_PER_BLOCK_ON_KERNEL_{w.upper()}", d, r)
                for w, d, r in zip(_CG_WORDS, _CG_DEFAULTS, _CG_ROLES)),
    "MG": tuple(NpbKernel("MG", n, f"MG_THREADS_PER_BLOCK_ON_{n.upper()}", d, r) for n, d, r in _MG),
    "FT": tuple(NpbKernel("FT", n, f"FT_THREADS_PER_BLOCK_ON_{n.upper()}", d, r) for n, d, r in _FT),
}


def check_benchmark(benchmark: str) -> str:
    """Return the upper-case benchmark name or raise :class:`NpbSpecError`."""
    b = str(benchmark).upper()
    if b not in BENCHMARKS:
        raise NpbSpecError(f"unknown NPB benchmark {benchmark!r};{did_you_mean(b, BENCHMARKS)} expected one of "
                           f"{', '.join(BENCHMARKS)}.")
    return b


def check_class(npb_class: str) -> str:
    """Return the upper-case class or raise :class:`NpbSpecError`."""
    c = str(npb_class).upper()
    if c not in CLASSES:
        raise NpbSpecError(f"unknown NPB class {npb_class!r}; expected one of {', '.join(CLASSES)}.")
    return c


def kernel_names(benchmark: str) -> list[str]:
    """Our kernel names for a benchmark, in NPB-GPU order."""
    return [k.name for k in KERNELS[check_benchmark(benchmark)]]


def default_tpb(benchmark: str) -> dict[str, int]:
    """NPB-GPU's shipped threads-per-block assignment of a benchmark."""
    return {k.name: k.default_tpb for k in KERNELS[check_benchmark(benchmark)]}


def uniform_tpb(benchmark: str, tpb: int) -> dict[str, int]:
    """Every kernel of a benchmark at the same threads per block (the Max and Warp strategies)."""
    return {k.name: int(tpb) for k in KERNELS[check_benchmark(benchmark)]}
