"""The result of evaluating one model (or the oracle, or scored predictions) on one task and scheme, and the
record of a scheme that cannot be evaluated.

A :class:`Result` is built once (:func:`kgpubench.models.evaluation.evaluate`,
:func:`~kgpubench.models.evaluation.failure_record`, :func:`kgpubench.models.submission.score_predictions`) and
serialised once (:meth:`Result.to_json`); a scheme that cannot be evaluated on the data is a :class:`Skipped`
(:func:`kgpubench.board.leaderboard.run_job`) with its reason, written as ``<task>/<scheme>/_status.json``. The
board and ``leaderboard verify`` read committed files back through :func:`read_record` (one or the other, by
``status``). The file format is unchanged (``format`` 2): a field a kind of record never had is left out of its
file (:data:`ABSENT`), so committed files read and re-serialise to the same bytes.

The board reads each file as a :class:`BoardEntry`: the record with its file and whether it is stale.

This module sits below evaluation, submission and the leaderboard (it imports none of them), so the three
share it without importing each other.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from kgpubench.buildinfo import package_versions
from kgpubench.errors import ImportFormatError, ResultFormatError, SchemaValidationError
from kgpubench.foundation.capped import loads_json
from kgpubench.resources import bundled_path
from kgpubench.results.records import (
    ABSENT,
    Aggregate,
    DatasetRef,
    FoldScores,
    declared,
    parse_aggregate,
    parse_dataset,
    parse_folds,
    plain,
    present,
)

if TYPE_CHECKING:
    from kgpubench.tasks.data import Unusable

RESULT_FORMAT = 2
Status = Literal["ok", "failed"]
Kind = Literal["model", "reference", "predictions"]




@dataclass(frozen=True, kw_only=True)
class Result:
    """One result record (``leaderboard/results/<task>/<scheme>/<model>.json``).

    Parameters
    ----------
    status : {"ok", "failed"}
        ``failed``: the model raised or was refused (``message``). (A scheme that cannot be evaluated on the
        data is a :class:`Skipped`, not a result.)
    task, scheme : str
        What was evaluated.
    kind : {"model", "reference", "predictions"}
        A model file run in the sandbox, the oracle reference, or predictions scored as sent.
    model, model_file : str
        The model's name and its file relative to the project root.
    model_sha256, predictions_sha256 : str or None
        The model file as sent and the predictions as received (None for the oracle).
    dataset : DatasetRef
        Config, store version and manifest hash, task rows and their hash, the selection report.
    split_sha256 : str or None
        Hash of the folds (:func:`kgpubench.tasks.splits.split_digest`).
    folds : dict of str to FoldScores
        Per fold: ``n_train``, ``n_test``, ``scores`` (and ``problems`` for tasks that record them).
    aggregate : dict of str to Aggregate or None
        Per score (None: no fold has one): mean, std, median and fold count over the folds, and ``ci95``: the 95 %
        bootstrap interval of the mean that the board and ``evaluate``'s summary print (``(low, high)``; None with
        fewer than two folds; :func:`kgpubench.models.evaluation.aggregate`).
    samples : list
        Up to 400 (measured, predicted) pairs for the plots.
    seed : int or None
        Seed handed to the model factory.
    train_subsample, limits, packages, date, wall_time_s, cpu_time_s, message
        As their names say (times in seconds; ``cpu_time_s`` is this process's CPU time and that of the sandboxed
        processes that ran the model); any of them may be :data:`ABSENT` for a kind of result that does not carry
        it.
    extra : dict
        Keys of a read file that no field declares (kept, so a round trip loses nothing).
    """

    status: Status
    task: str
    scheme: str
    format: int = ABSENT
    kind: Kind = ABSENT
    model: str = ABSENT
    model_file: str = ABSENT
    model_sha256: str | None = ABSENT
    predictions_sha256: str | None = ABSENT
    dataset: DatasetRef = ABSENT
    split_sha256: str | None = ABSENT
    train_subsample: int | None = ABSENT
    folds: dict[str, FoldScores] = ABSENT
    aggregate: dict[str, Aggregate | None] = ABSENT
    samples: list = ABSENT
    seed: int | None = ABSENT
    limits: dict = ABSENT
    packages: dict = ABSENT
    date: str = ABSENT
    wall_time_s: float = ABSENT
    cpu_time_s: float = ABSENT
    message: str = ABSENT
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in ("ok", "failed"):
            raise SchemaValidationError(f"result {self.task}/{self.scheme}: status {self.status!r}; expected ok or "
                                        "failed (a skipped scheme is a Skipped record)")
        _typed(self, f"result {self.where}")

    @classmethod
    def new(cls, *, status: Status, task: str, scheme: str, **values: Any) -> Result:
        """A fresh record: ``format``, the installed ``packages`` and today's ``date`` filled in."""
        return cls(status=status, task=task, scheme=scheme, format=RESULT_FORMAT, packages=package_versions(),
                   date=_dt.date.today().isoformat(), **values)

    @property
    def where(self) -> str:
        """``task/scheme/model``, as errors name a result."""
        return f"{self.task}/{self.scheme}/{self.model or '-'}"

    @property
    def rows_sha256(self) -> str | None:
        """The hash of the task rows the result was made with (``dataset.rows_sha256``)."""
        value = self.dataset.rows_sha256 if self.dataset else ABSENT
        return None if value is ABSENT else value

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (absent fields left out, ``extra`` keys merged in)."""
        return present({name: plain(value) for name, value in declared(self).items()}, self.extra)

    def to_json(self) -> str:
        """The one serialisation: sorted keys, floats rounded to 6 significant digits, trailing newline."""
        return result_json(self.to_dict())

    def rounded(self) -> Result:
        """The result as its file reads back (floats rounded as :meth:`to_json` rounds them)."""
        return Result.from_dict(round_floats(self.to_dict()), where=self.where)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "result") -> Result:
        """Read a result (a committed file's JSON or a fresh dict); unknown keys go to ``extra``.

        Raises :class:`~kgpubench.errors.SchemaValidationError` naming ``where`` when ``task`` or ``scheme`` is
        missing or the status is not ``ok`` or ``failed`` (:func:`read_record` also reads a skipped scheme).
        """
        record = read_record(data, where=where)
        if isinstance(record, Skipped):
            raise SchemaValidationError(f"{where}: a skipped scheme ({record.reason}), not a result; read it with "
                                        "kgpubench.results.result.read_record.")
        return record


@dataclass(frozen=True, kw_only=True)
class Skipped:
    """A scheme that cannot be evaluated on the data, with why (``leaderboard/results/<task>/<scheme>/_status.json``).

    One file per task and scheme, whichever model's job found it: it names no model.

    Parameters
    ----------
    task, scheme : str
        What could not be evaluated.
    reason : str
        Why, in one line (no rows, one GPU for a leave-one-GPU-out scheme, ...).
    dataset : DatasetRef
        What the rows were read from, as in a :class:`Result` (no field set when the task has no rows);
        :data:`ABSENT` when a read file has none.
    extra : dict
        Keys of a read file that no field declares.
    """

    status: ClassVar[str] = "skipped"
    task: str
    scheme: str
    reason: str
    dataset: DatasetRef = ABSENT
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        _typed(self, f"status {self.where}")

    @property
    def where(self) -> str:
        """``task/scheme``, as errors name it."""
        return f"{self.task}/{self.scheme}"

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (``status`` included; absent fields left out, ``extra`` keys merged in)."""
        return present({"status": self.status, "task": self.task, "scheme": self.scheme, "reason": self.reason,
                        "dataset": plain(self.dataset)}, self.extra)

    def to_json(self) -> str:
        """The one serialisation, as :meth:`Result.to_json`."""
        return result_json(self.to_dict())

    @classmethod
    def of(cls, unusable: Unusable) -> Skipped:
        """The record of a scheme that :func:`kgpubench.tasks.data.usable_task_data` found unusable."""
        return cls(task=unusable.task, scheme=unusable.scheme, reason=unusable.reason, dataset=unusable.dataset)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "status file") -> Skipped:
        """Read a skipped scheme's record (:class:`~kgpubench.errors.SchemaValidationError` naming ``where``
        when it is not one)."""
        record = read_record(data, where=where)
        if not isinstance(record, Skipped):
            raise SchemaValidationError(f"{where}: status {record.status!r}, not a skipped scheme's record.")
        return record


Record = Result | Skipped


@dataclass(frozen=True)
class BoardEntry:
    """One record as the board shows it (:func:`kgpubench.board.leaderboard.load_results`; the renderer's and the
    site's input).

    Parameters
    ----------
    record : Result or Skipped
        The record as read from its file (:func:`read_record`).
    path : Path or None
        The file it was read from (None for a record that has none); the site links it.
    stale : bool
        Whether it was made from other task rows than the store holds now; the board marks it.
    """

    record: Record
    path: Path | None = None
    stale: bool = False
_RESULT_FIELDS = frozenset(f.name for f in fields(Result)) - {"extra"}
_SKIPPED_FIELDS = frozenset(("task", "scheme", "reason", "dataset"))


def read_record(data: dict[str, Any], *, where: str = "result") -> Record:
    """A committed file's JSON (or a fresh dict) as a :class:`Result`, or a :class:`Skipped` when its status is
    ``skipped`` (no ``status``: ``ok``); unknown keys go to ``extra``.

    Raises :class:`~kgpubench.errors.SchemaValidationError` naming ``where`` when ``task`` or ``scheme`` (or a
    skipped scheme's ``reason``) is missing or the status is unknown.
    """
    if not isinstance(data, dict):
        raise SchemaValidationError(f"{where}: a result is a JSON object, not {type(data).__name__}; rewrite it "
                                    "with `kgpubench leaderboard run`.")
    data = {"status": "ok", **data}
    skipped = data["status"] == "skipped"
    missing = [k for k in ("task", "scheme", *(("reason",) if skipped else ())) if k not in data]
    if missing or data["status"] not in ("ok", "failed", "skipped"):
        raise SchemaValidationError(
            f"{where}: not a result record (missing {missing or 'nothing'}, status {data['status']!r}); "
            "rewrite it with `kgpubench leaderboard run`.")
    if skipped:
        names = _SKIPPED_FIELDS
        return Skipped(**_parsed({k: v for k, v in data.items() if k in names}, where),
                       extra={k: v for k, v in data.items() if k not in names and k != "status"})
    names = _RESULT_FIELDS
    return Result(**_parsed({k: v for k, v in data.items() if k in names}, where),
                  extra={k: v for k, v in data.items() if k not in names})




_PARSERS = {"folds": parse_folds, "aggregate": parse_aggregate, "dataset": parse_dataset}


def _parsed(values: dict[str, Any], where: str) -> dict[str, Any]:
    """A record's fields with ``folds``, ``aggregate`` and ``dataset`` parsed into their records (a malformed value:
    one line naming ``where`` and the key)."""
    return {k: (_PARSERS[k](v, where) if k in _PARSERS and v is not ABSENT else v) for k, v in values.items()}


def _typed(record: Result | Skipped, where: str) -> None:
    """Parse a freshly built record's plain ``folds``, ``aggregate`` and ``dataset`` in place (records given, and
    those :func:`read_record` parsed with the file's name, are kept)."""
    for name, parse in _PARSERS.items():
        value = getattr(record, name, ABSENT)
        if value is not ABSENT:
            object.__setattr__(record, name, parse(value, where))


def round_floats(obj: Any, digits: int = 6) -> Any:
    """Round every float to ``digits`` significant digits, recursively (ints and strings unchanged)."""
    if isinstance(obj, float):
        return float(f"{obj:.{digits}g}") if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): round_floats(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [round_floats(v, digits) for v in obj]
    return obj


# A result file is a few kilobytes; one from a pull request is read with this ceiling.
RESULT_MAX_BYTES = 16 << 20


def read_result_json(path: Path | str) -> dict[str, Any]:
    """The JSON object of a result (or status) file, read as hostile input: at most :data:`RESULT_MAX_BYTES`,
    strict JSON (a key twice, nesting too deep and invalid JSON are refused), a top-level object.

    Raises
    ------
    ResultFormatError
        One line naming the file (also a ``ValueError``).
    OSError
        The file cannot be read.
    """
    path = Path(path)
    with path.open("rb") as fh:
        raw = fh.read(RESULT_MAX_BYTES + 1)
    if len(raw) > RESULT_MAX_BYTES:
        raise ResultFormatError(f"{path}: larger than {RESULT_MAX_BYTES:,} bytes; a result file is a few kilobytes "
                                "(rewrite it with `kgpubench leaderboard run`).")
    try:
        data = loads_json(raw, path, expected="a result file as `kgpubench leaderboard run` writes it")
    except ImportFormatError as exc:
        raise ResultFormatError(str(exc)) from None
    if not isinstance(data, dict):
        raise ResultFormatError(f"{path}: top level is a {type(data).__name__}, expected a result object.")
    return data


def result_json(result: Record | dict[str, Any]) -> str:
    """The record as JSON: sorted keys, floats rounded to 6 significant digits, trailing newline."""
    data = result.to_dict() if isinstance(result, (Result, Skipped)) else result
    return json.dumps(round_floats(data), indent=1, sort_keys=True) + "\n"


def project_root() -> Path:
    """The folder holding ``baselines/`` and ``leaderboard/`` (a checkout, or the wheel's ``_bundled``)."""
    return bundled_path("leaderboard").parent


def model_label(path: Path | str) -> str:
    """A model file's path relative to the project root when inside it, else its name."""
    try:
        return Path(path).resolve().relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return Path(path).name
