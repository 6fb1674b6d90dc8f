"""The board layer: models are scored and the leaderboard is built.

``result``/``ownership`` (the typed :class:`~kgpubench.board.result.Result` and which files are ours) ->
``evaluation`` (one model on one task's folds, through the sandbox), ``fewshot``, ``submission`` (strangers'
folders) -> ``leaderboard`` (run, reuse, verify), ``ranking`` (the one ranking rule), ``summary``, ``render``
and ``site/`` (the README board and the static site), ``pull_request``. This ``__init__`` imports nothing.
"""
