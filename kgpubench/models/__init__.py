"""The models layer: a model (a baseline or a submission) runs on a task's folds and leaves a result record.

:mod:`~kgpubench.models.evaluation` (one model on the folds of a ``TaskData``, in the sandbox; its ``Result``),
:mod:`~kgpubench.models.submission` (a stranger's model file or predictions, scored) and
:mod:`~kgpubench.models.model_checks` (``kgpubench check-model``: a model file's contract on a sample of a
task). Model code itself only ever runs in :mod:`kgpubench.sandbox`, the layer below. This ``__init__``
imports nothing.
"""
