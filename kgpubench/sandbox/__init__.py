"""The sandbox: model code that is not ours runs only in a child process isolated here.

One of each: :mod:`~kgpubench.sandbox.limits` (the one ``Limits``: time, memory, threads, processes, disk,
output), :mod:`~kgpubench.sandbox.model_file` (the one reader of a model file: size cap, bytes, sha256, parse,
run from source) and :mod:`~kgpubench.sandbox.checks` (the one check of predictions). ``linux`` (namespaces,
seccomp, rlimits) and ``process`` (the child, its channel and the zygote) sit below ``session``, the parent's
side and the public entry point: :class:`~kgpubench.sandbox.session.ModelSession` (``fit``, ``predict``, the
checked ``predictions`` of every fold and their ``predictions_sha256``), which the leaderboard and the Ray paths
both reach through ``kgpubench.models.evaluation.evaluate``. ``child`` is the program the child runs
(``python -m kgpubench.sandbox.child``). This ``__init__`` imports nothing.
"""
