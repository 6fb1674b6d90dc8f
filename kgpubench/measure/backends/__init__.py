"""Backends that launch and time kernels: ``base`` (the :class:`Backend` contract), ``cupy_backend`` and
``cupy_timing`` (a real GPU through CuPy), ``fake`` (NumPy, for tests) and ``registry`` (``get_backend``).
This ``__init__`` imports nothing."""
