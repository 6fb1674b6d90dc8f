"""The oracle: the one reference every task's board shows beside its models.

It is no model file: every test row's measured target is its prediction (``kgpubench.models.evaluation.evaluate``
with ``ORACLE.name`` as the model), so it is the upper bound of every metric, shown apart and never ranked
(``kgpubench.board.ranking``); on the tuning-budget curves it is the strategy that orders the configurations by
their measured times. Its result has ``kind == "reference"`` and ``model == ORACLE.name``; a submission may not
take the name. Not to be confused with a task's measurement oracle (``Task.oracle``,
``kgpubench.tasks.scoring.ORACLES``), which lets a strategy measure the test problems.

Every module asks :data:`ORACLE` (``ORACLE.name``, ``ORACLE.is_oracle(model)``, ``ORACLE.names(record)``) rather
than comparing names itself (``tests/tasks/test_oracle_reference.py`` looks for a comparison elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from typing import Final


@dataclass(frozen=True)
class Reference:
    """A reference that is no model file (the oracle), known by its name.

    Parameters
    ----------
    name : str
        Its model name: in results, jobs, board rows and budget curves alike.
    kind : str
        The ``kind`` of its result records.
    """

    name: str
    kind: str = "reference"

    def __str__(self) -> str:
        return self.name

    def is_oracle(self, model: str | PathLike | None) -> bool:
        """Whether ``model`` (a model name, a job's model path or name, or a strategy's name) is this reference."""
        return model is not None and str(model) == self.name

    def names(self, record: object) -> bool:
        """Whether a result record is this reference's: its ``kind`` is the reference's, or its ``model`` is the
        name (records without the field count as not)."""
        return getattr(record, "kind", None) == self.kind or self.is_oracle(getattr(record, "model", None))


ORACLE: Final = Reference("oracle")
