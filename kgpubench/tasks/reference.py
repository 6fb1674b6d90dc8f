"""The oracle: the one reference every task's board shows beside its models.

It is no model file: every test row's measured target is its prediction (``kgpubench.models.evaluation.evaluate``
with ``ORACLE`` as the model), so it is the upper bound of every metric, shown apart and never ranked
(``kgpubench.board.ranking``); on the tuning-budget curves it is the strategy that orders the configurations by
their measured times. Its result has ``kind == "reference"`` and ``model == ORACLE``; a submission may not take the
name. Not to be confused with a task's measurement oracle (``Task.oracle``, ``kgpubench.tasks.scoring.ORACLES``),
which lets a strategy measure the test problems.
"""

from __future__ import annotations

from typing import Final

ORACLE: Final = "oracle"  # its model name: in results, jobs, board rows and budget curves alike
