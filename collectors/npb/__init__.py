"""The NPB suite: EP, CG, MG and FT on CUDA with per-kernel threads per block (seed 001).

Modules: ``suite`` (the suite object, :data:`SUITE`), ``spec`` (classes, verification values, NPB-GPU kernels
and defaults), ``randlc`` (the NPB generator), ``ref_ep``/``ref_cg``/``ref_mg``/``ref_ft`` (NumPy references
that reproduce the official verification values), ``kernels/*.cu`` (our CUDA kernels, one per NPB-GPU kernel
role), ``sources`` (assignments -> defines), ``apps`` (the applications on the GPU), ``driver`` (the plan, whole
runs and rows), ``measure`` (one planned row for the harness), ``npbgpu`` (the adapter for a user's own NPB-GPU
checkout).

``kgpubench collect --suite npb`` finds :data:`SUITE` and collects it with the harness's run loop, like every
suite: each planned row is a case, and :meth:`NpbSuite.measure` measures it (``measures_itself``: the unit of
work is an application's runs and the replays of their recorded calls, not one kernel launch).
"""
from .suite import SUITE, NpbSuite

__all__ = ["SUITE", "NpbSuite"]
