"""The board's results of one task as one object: a :class:`ResultSet` over its
:class:`~kgpubench.results.result.BoardEntry` items, with the views the README (:mod:`kgpubench.board.render`), the
site (:mod:`kgpubench.board.site`) and ``evaluate``'s summary (:mod:`kgpubench.board.summary`) all read: the
standings and the ranked order of a scheme (:mod:`kgpubench.board.ranking`, the one rule), the per-GPU scores of the
leave-one-GPU-out scheme, and the stale entries.

Every view takes ``scheme`` (None: the entries as given, whatever their schemes: the renderer hands one scheme's
entries at a time).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kgpubench.board.ranking import Standing, role, standings
from kgpubench.board.ranking import best as best_of
from kgpubench.board.ranking import ranked as ranked_models
from kgpubench.results.result import BoardEntry, Record, Result
from kgpubench.tasks import Task

BY_GPU = "by-gpu"  # the leave-one-GPU-out scheme: each fold is a held-out GPU


def records(entries: Iterable[BoardEntry]) -> list[Record]:
    """The records of ``entries`` (results, failures and skip statuses), in order."""
    return [e.record for e in entries]


def scored(entries: Iterable[BoardEntry]) -> list[Result]:
    """The scored results (``status == "ok"``) of ``entries``, in order."""
    return [e.record for e in entries if e.record.status == "ok"]


def of_status(entries: Iterable[BoardEntry], status: str) -> list[BoardEntry]:
    """The entries whose record has ``status`` (``ok``, ``failed`` or ``skipped``), in order."""
    return [e for e in entries if e.record.status == status]


@dataclass(frozen=True)
class ResultSet:
    """The board entries of one task (results, failures and skip statuses), in the order given.

    Parameters
    ----------
    task : Task
        Whose results these are (its primary metric ranks them).
    entries : tuple of BoardEntry
        The records as the board holds them (with their files and whether they are stale).
    """

    task: Task
    entries: tuple[BoardEntry, ...]

    @classmethod
    def of(cls, task: Task, entries: Iterable[BoardEntry]) -> ResultSet:
        """The entries of ``task`` among ``entries`` (of any tasks)."""
        return cls(task, tuple(e for e in entries if e.record.task == task.name))

    @classmethod
    def of_records(cls, task: Task, records: Iterable[Record]) -> ResultSet:
        """The records of ``task`` among ``records`` as entries without a file, not stale (``evaluate``'s board)."""
        return cls.of(task, (BoardEntry(r) for r in records))

    def of_scheme(self, scheme: str | None = None) -> list[BoardEntry]:
        """The entries under ``scheme`` (None: all), in order."""
        return [e for e in self.entries if scheme is None or e.record.scheme == scheme]

    def records(self, scheme: str | None = None) -> list[Record]:
        """The records (results, failures and skip statuses), in order."""
        return records(self.of_scheme(scheme))

    def scored(self, scheme: str | None = None) -> list[Result]:
        """The scored results (``status == "ok"``), in order."""
        return scored(self.of_scheme(scheme))

    def of_status(self, status: str, scheme: str | None = None) -> list[BoardEntry]:
        """The entries whose record has ``status`` (``ok``, ``failed`` or ``skipped``), in order."""
        return of_status(self.of_scheme(scheme), status)

    def standings(self, scheme: str | None = None) -> list[tuple[Standing, BoardEntry]]:
        """:func:`kgpubench.board.ranking.standings` of the scheme's records (the references, the strategies that
        measure the target, the ranked models, the unscored), each standing with its entry (for the stale mark)."""
        entries = self.of_scheme(scheme)
        by_record = {id(e.record): e for e in entries}
        return [(st, by_record[id(st.result)]) for st in standings(self.task, [e.record for e in entries])]

    def ranked(self, scheme: str | None = None) -> list[Result]:
        """Scored results of the scheme in the board's order: the ranked learned models best first, then the
        strategies that measure the target (unranked); the oracle reference left out (the upper bound, shown
        apart)."""
        records = self.records(scheme)
        order = ranked_models(self.task, records)
        return order + [r for r in self.scored(scheme) if role(r) == "measures"]

    def best(self, scheme: str | None = None) -> list[Result]:
        """The model(s) holding rank 1 under the scheme (ties), empty when none."""
        return best_of(self.task, self.records(scheme))

    def per_gpu(self, scheme: str | None = BY_GPU, *, limit: int | None = None) -> dict[str, dict[str, float]]:
        """``model -> fold -> primary metric`` of the scheme's results (under :data:`BY_GPU` each fold is a
        held-out GPU), in :meth:`ranked` order, for the best ``limit`` models plus the task's
        :attr:`~kgpubench.tasks.Task.gpu_baseline` when it ran; models without a value on any fold left out."""
        metric = self.task.primary_metric
        models = self.ranked(scheme)
        base = self.task.gpu_baseline
        chosen = [r for r in models if r.model != base][:limit] if limit else models
        transfer = next((r for r in models if base is not None and r.model == base), None)
        if transfer is not None and transfer not in chosen:
            chosen.append(transfer)
        out = {}
        for r in chosen:
            vals = {fold: f.score(metric) for fold, f in r.folds.items() if f.score(metric) is not None}
            if vals:
                out[r.model] = vals
        return out

    def stale(self, scheme: str | None = None) -> list[BoardEntry]:
        """The entries made from other task rows than the store holds now (the board marks them)."""
        return [e for e in self.of_scheme(scheme) if e.stale]
