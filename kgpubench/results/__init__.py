"""Result records: what a model's evaluation leaves behind, typed, and which files are kgpubench's.

:mod:`~kgpubench.results.records` (a fold's scores, a metric's aggregate and the dataset reference, as records),
:mod:`~kgpubench.results.result` (the typed :class:`~kgpubench.results.result.Result` and a skipped scheme's
``Skipped``: built once, one JSON serialisation, ``read_record`` to read; ``BoardEntry``, a record as the board
shows it) and :mod:`~kgpubench.results.ownership` (the refusal to overwrite files kgpubench did not write). Below
the models, which write these records, and the board, which reads them (what each baseline sees is declared with
the baselines, in :mod:`kgpubench.board.baselines`). This ``__init__`` imports nothing.
"""
