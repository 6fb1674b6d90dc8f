"""The board layer: the leaderboard is run, ranked and rendered.

Result records live in :mod:`kgpubench.results` and the models that make them (evaluation, submission, model
checks) in :mod:`kgpubench.models`; here: ``leaderboard`` (run, reuse, verify), ``ranking`` (the one ranking
rule), ``fewshot`` and ``budget`` (the curves the board shows), ``summary``, ``render`` and ``site/`` (the README
board and the static site), ``pull_request``, ``predict``. This ``__init__`` imports nothing.
"""
