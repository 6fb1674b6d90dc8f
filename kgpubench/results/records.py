"""The typed parts of a result record: one fold's scores (:class:`FoldScores`), one metric's aggregate over the
folds (:class:`Aggregate`) and what the rows were read from (:class:`DatasetRef`).

Each is parsed once, when a :class:`~kgpubench.results.result.Result` is built or read
(:func:`~kgpubench.results.result.read_record`), with one line naming the file and the key for a malformed value,
and serialised back with :meth:`to_dict` to the very keys and values it was read from (keys a record does not
declare are kept in ``extra``), so a committed file reads and re-serialises to the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from kgpubench.errors import SchemaValidationError


class _Absent:
    """Marks a field that a record of this kind does not carry (left out of its file)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def present(values: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """A record's JSON object: its ``values`` without the :data:`ABSENT` ones, then the ``extra`` keys it was read
    with (every record of a result file serialises through this)."""
    return {**{k: v for k, v in values.items() if v is not ABSENT}, **extra}


def declared(record: Any) -> dict[str, Any]:
    """A dataclass record's declared fields (``extra`` left out), by name."""
    return {f.name: getattr(record, f.name) for f in fields(record) if f.name != "extra"}


def _refuse(where: str, key: str, found: Any, expected: str) -> SchemaValidationError:
    shown = repr(found)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return SchemaValidationError(f"{where}: {key} is {shown}, expected {expected}; rewrite the result with "
                                 "`kgpubench leaderboard run`.")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int(data: Mapping, name: str, where: str, key: str) -> int:
    """A whole number, or :data:`ABSENT` when the object has no such key."""
    value = data.get(name, ABSENT)
    if value is ABSENT:
        return ABSENT
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _refuse(where, f"{key}.{name}", value, "a whole number, 0 or more")
    return value


def _object(value: Any, where: str, key: str) -> dict:
    if not isinstance(value, dict):
        raise _refuse(where, key, value, "a JSON object")
    return value


@dataclass(frozen=True, kw_only=True)
class FoldScores:
    """One test fold's scores (``folds[<name>]`` of a result file).

    Parameters
    ----------
    name : str
        The fold: a GPU under ``by-gpu``, a kernel under ``by-kernel``, a bucket number under a hash scheme.
    n_train, n_test : int
        Rows trained on and scored (:data:`ABSENT` in a hand-made record without them; every file the board
        writes has them).
    scores : dict
        Metric -> value (None where the metric has no value on this fold).
    problems : dict
        Per test problem, the chosen and best times (tasks that record them); :data:`ABSENT` otherwise.
    extra : dict
        Keys of the fold's object that no field declares (kept, so a round trip loses nothing).
    """

    name: str
    scores: dict[str, float | None]
    n_train: int = ABSENT
    n_test: int = ABSENT
    problems: dict = ABSENT
    extra: dict = field(default_factory=dict)

    def score(self, metric: str) -> float | None:
        """The fold's value of ``metric`` (None without one)."""
        return self.scores.get(metric)

    def to_dict(self) -> dict[str, Any]:
        return present({"n_train": self.n_train, "n_test": self.n_test, "scores": self.scores,
                        "problems": self.problems}, self.extra)

    @classmethod
    def from_dict(cls, name: str, data: Any, *, where: str = "result") -> FoldScores:
        """A fold's object as read (``where`` names the file in the one line a malformed value gives)."""
        key = f"folds.{name}"
        data = _object(data, where, key)
        scores = _object(data.get("scores", ABSENT), where, f"{key}.scores")
        for metric, value in scores.items():
            if value is not None and not _is_number(value):
                raise _refuse(where, f"{key}.scores.{metric}", value, "a number or null")
        problems = data.get("problems", ABSENT)
        if problems is not ABSENT:
            _object(problems, where, f"{key}.problems")
        known = ("n_train", "n_test", "scores", "problems")
        return cls(name=str(name), n_train=_int(data, "n_train", where, key), n_test=_int(data, "n_test", where, key),
                   scores=scores, problems=problems, extra={k: v for k, v in data.items() if k not in known})


@dataclass(frozen=True, kw_only=True)
class Aggregate:
    """One metric's figures over the folds (``aggregate[<metric>]`` of a result file;
    :func:`kgpubench.models.evaluation.aggregate`).

    Parameters
    ----------
    mean : float
        Over the folds that have a value: the board's headline (:mod:`kgpubench.board.ranking`).
    std, median : float
        Over the same folds (population std).
    folds : int
        How many folds have a value.
    ci95 : tuple of two floats, or None
        The 95 % bootstrap interval of the mean (None under two folds).

    Every field but ``mean`` is :data:`ABSENT` in a hand-made record without it (every file the board writes has
    them all).
    extra : dict
        Keys no field declares.
    """

    mean: float
    std: float = ABSENT
    median: float = ABSENT
    folds: int = ABSENT
    ci95: tuple[float, float] | None = ABSENT
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ci = self.ci95 if self.ci95 is None or self.ci95 is ABSENT else list(self.ci95)
        return present({"mean": self.mean, "std": self.std, "median": self.median, "folds": self.folds, "ci95": ci},
                       self.extra)

    @classmethod
    def from_dict(cls, metric: str, data: Any, *, where: str = "result") -> Aggregate:
        """A metric's aggregate object as read (``where`` names the file)."""
        key = f"aggregate.{metric}"
        data = _object(data, where, key)
        values = {}
        for name in ("mean", "std", "median"):
            value = data.get(name, ABSENT)
            if value is ABSENT and name != "mean":
                continue
            if not _is_number(value) or not math.isfinite(value):
                raise _refuse(where, f"{key}.{name}", "missing" if value is ABSENT else value, "a finite number")
            values[name] = value
        ci = data.get("ci95", ABSENT)
        if ci is not None and ci is not ABSENT:
            if not isinstance(ci, (list, tuple)) or len(ci) != 2 or not all(_is_number(v) for v in ci):
                raise _refuse(where, f"{key}.ci95", ci, "[low, high] or null")
            ci = (ci[0], ci[1])
        known = ("mean", "std", "median", "folds", "ci95")
        return cls(**values, folds=_int(data, "folds", where, key), ci95=ci,
                   extra={k: v for k, v in data.items() if k not in known})


@dataclass(frozen=True, kw_only=True)
class DatasetRef:
    """What a result's rows were read from (``dataset`` of a result file; built by
    :func:`kgpubench.tasks.data.task_data`). Every field is :data:`ABSENT` in a record that read no rows (a model
    that failed first, a scheme skipped on a task without rows).

    Parameters
    ----------
    config, version : str
        The store config and its version.
    manifest_sha256 : str
        The store manifest's hash.
    rows : int
        The task's rows.
    rows_sha256, task_sha256, files_sha256, inputs_sha256 : str
        What ``leaderboard run --reuse`` and the board's staleness compare (:mod:`kgpubench.tasks.data`).
    selection : dict
        The selection report.
    extra : dict
        Keys no field declares.
    """

    config: str = ABSENT
    version: str = ABSENT
    manifest_sha256: str = ABSENT
    rows: int = ABSENT
    rows_sha256: str = ABSENT
    task_sha256: str = ABSENT
    files_sha256: str = ABSENT
    inputs_sha256: str = ABSENT
    selection: dict = ABSENT
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return present(declared(self), self.extra)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "result") -> DatasetRef:
        """A dataset object as read (``where`` names the file)."""
        data = _object(data, where, "dataset")
        values = {}
        for f in fields(cls):
            if f.name == "extra" or f.name not in data:
                continue
            value = data[f.name]
            if f.name == "rows":
                ok, expected = isinstance(value, int) and not isinstance(value, bool), "a whole number"
            elif f.name == "selection":
                ok, expected = isinstance(value, dict), "a JSON object"
            else:
                ok, expected = isinstance(value, str), "a string"
            if not ok:
                raise _refuse(where, f"dataset.{f.name}", value, expected)
            values[f.name] = value
        return cls(**values, extra={k: v for k, v in data.items() if k not in values})


def parse_folds(value: Any, where: str) -> dict[str, FoldScores]:
    """``folds`` of a result as :class:`FoldScores` records (records given are kept)."""
    if isinstance(value, dict) and all(isinstance(v, FoldScores) for v in value.values()):
        return value
    return {name: (rec if isinstance(rec, FoldScores) else FoldScores.from_dict(name, rec, where=where))
            for name, rec in _object(value, where, "folds").items()}


def parse_aggregate(value: Any, where: str) -> dict[str, Aggregate | None]:
    """``aggregate`` of a result as :class:`Aggregate` records (None kept: a metric no fold has a value of)."""
    return {metric: agg if agg is None or isinstance(agg, Aggregate) else Aggregate.from_dict(metric, agg, where=where)
            for metric, agg in _object(value, where, "aggregate").items()}


def parse_dataset(value: Any, where: str) -> DatasetRef:
    """``dataset`` of a record as a :class:`DatasetRef`."""
    return value if isinstance(value, DatasetRef) else DatasetRef.from_dict(value, where=where)


def plain(value: Any) -> Any:
    """A record (or a dict of records) as plain data, for the JSON."""
    if isinstance(value, (FoldScores, Aggregate, DatasetRef)):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
