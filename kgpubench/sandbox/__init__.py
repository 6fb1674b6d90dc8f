"""The sandbox: model code that is not ours runs only in a child process isolated here.

``linux`` (namespaces, seccomp, rlimits) and ``process`` (the child, its channel and the zygote) sit below
``session`` (:class:`~kgpubench.sandbox.session.ModelSession`, the parent's side); ``child`` is the program
the child runs (``python -m kgpubench.sandbox.child``). This ``__init__`` imports nothing.
"""
