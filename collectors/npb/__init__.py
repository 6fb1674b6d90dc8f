"""The NPB suite: EP, CG, MG and FT on CUDA with per-kernel threads per block (seed 001).

Modules: ``spec`` (classes, verification values, NPB-GPU kernels and defaults), ``randlc`` (the NPB
generator), ``ref_ep``/``ref_cg``/``ref_mg``/``ref_ft`` (NumPy references that reproduce the official
verification values), ``kernels/*.cu`` (our CUDA kernels, one per NPB-GPU kernel role).
"""
