"""Which configurations a dataset store already holds for a collection, so that ``kgpubench collect`` skips them.

A collection resumes from the rows of its own ``--out`` folder (:class:`kgpubench.measure.output.ShardWriter`);
this module adds the rows already merged into a store (by default the packaged one, ``kgpubench/data``), so that a
GPU session continues where the store stops instead of measuring its configurations again.

A stored row counts as there for a collection when all of these hold:

* its ``row_id`` is one of the collection's (the key columns include ``gpu_name``: the same GPU model, the same
  configuration);
* its ``measurement_protocol`` is this harness's (:data:`kgpubench.measure.timing.PROTOCOL_VERSION`): a
  protocol-1 row, or one of a part written before the column existed, never stops a protocol-2 collection;
* its ``status`` is ``ok``: a configuration stored as a failure (launch error, verification failed, infeasible,
  ...) is measured again;
* it was timed the way the collection times it (:func:`kgpubench.measure.timing.timed_alike`, the same rule that
  refuses to resume an output folder timed another way): its ``l2_policy`` is the collection's, and for a
  flushed (cold) collection a row labelled with one of the cold timers' methods is this timer's (``cold`` for
  ``--cold-timer events``, else the timer's own name, ``cupti`` or ``cupti-drained``): cold rows of the event
  timer never stop a CUPTI collection, nor the reverse (on 2026-11-26 the event timer's flushed rows read about
  2 us high and were not merged). A flushed row timed ``stream`` (a unit too long for the queue) or ``app``
  counts under every cold timer (before 2026-11-29 it counted under none and was measured again every session).
  A warm collection takes any method (``graph``, ``batch``, ``stream``, ``app``): the harness picks it per
  unit, not the user.

Reading is cheap: the manifest (:mod:`kgpubench.store.manifest`) and five columns of each listed part, with no
hash check and no import of the card's dependencies (pandas, PyYAML). The parts' sha256s are ``kgpubench
validate``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import (
    DataFileNotFoundError,
    KgpubenchError,
    ManifestError,
    SchemaValidationError,
)
from kgpubench.measure.timing import PROTOCOL_VERSION, cold_method, timed_alike
from kgpubench.store.manifest import MANIFEST, read_manifest
from kgpubench.store.shards import read_file

COLUMNS = ("row_id", "status", "measurement_protocol", "l2_policy", "timing_method")
REQUIRED = ("row_id", "status")  # every schema version has them; the protocol columns came later (null before)
FIX = "pass --store with a dataset store folder, or --remeasure-stored to measure every configuration"


@dataclass(frozen=True)
class StoredRows:
    """The row ids of one table that a store holds for a collection (see the module docstring for which count).

    Attributes
    ----------
    path : Path
        The store folder.
    version : str
        Its dataset version (``manifest.json``).
    table : str
        The table read.
    row_ids : frozenset of str
        Row ids of rows that count as there, for any GPU (a collection intersects them with its own).
    note : str
        Why nothing can be skipped (the store has no such table), else empty.
    l2_policy : str
        The L2 policy of the collection it was read for (empty: not said).
    cold_timer : str
        The cold timer of the collection it was read for (``events`` by default).
    """

    path: Path
    version: str
    table: str
    row_ids: frozenset[str]
    note: str = ""
    l2_policy: str = ""
    cold_timer: str = "events"

    def read_for(self, table: str, l2_policy: str, cold_timer: str | None) -> bool:
        """Whether these are the rows a collection of ``table`` with ``l2_policy`` and ``cold_timer`` counts."""
        return (self.table, self.l2_policy, self.cold_timer) == (table, l2_policy, cold_timer or "events")

    def line(self, suite: str, held: int, total: int, gpu_name: str, policy: str) -> str:
        """One line for the log: how many of the ``total`` configurations the store holds, skipped."""
        if self.note:
            return f"{suite}: {self.note}"
        what = f"configurations for {gpu_name} (protocol {PROTOCOL_VERSION}, {policy})"
        if not held:
            return f"{suite}: the store {self.path} (dataset {self.version}) holds none of the {total:,} {what}"
        return (f"{suite}: the store {self.path} (dataset {self.version}) holds {held:,} of {total:,} {what}; "
                "skipped (--remeasure-stored measures them again)")


def stored_rows(store: Path | str, table: str, *, l2_policy: str, cold_timer: str | None = None) -> StoredRows:
    """The row ids of ``table`` in ``store`` that count as there for a collection with ``l2_policy`` (and, when
    flushed, ``cold_timer``).

    Raises a one-line :class:`~kgpubench.errors.KgpubenchError` naming the path for a store folder that is
    missing or holds no manifest, a malformed manifest, a listed part that is missing or unreadable, or a part
    without the ``row_id`` and ``status`` columns. A store without ``table`` gives an empty set and a note.
    """
    path = Path(store)
    if not path.is_dir():
        raise DataFileNotFoundError(f"{path}: no such dataset store folder (to skip the configurations it "
                                    f"holds); {FIX}.")
    if not (path / MANIFEST).is_file():
        raise DataFileNotFoundError(f"{path}: no {MANIFEST}, so not a dataset store; {FIX}.")
    try:
        manifest = read_manifest(path)
    except KgpubenchError as exc:
        raise type(exc)(f"{exc} Or {FIX}.") from None
    version = manifest["dataset_version"]
    files = manifest["configs"].get(table, {}).get("files", [])
    read_for = {"l2_policy": l2_policy, "cold_timer": cold_timer or "events"}
    if not files:
        return StoredRows(path, version, table, frozenset(), **read_for,
                          note=f"the store {path} (dataset {version}) holds no {table} rows; nothing skipped")
    cold_method(cold_timer)  # an unknown cold timer is an error whatever the policy
    held: set[str] = set()
    for entry in files:
        held |= _held_in(path / entry["path"], l2_policy, cold_timer)
    return StoredRows(path, version, table, frozenset(held), **read_for)


def _held_in(part: Path, l2_policy: str, cold_timer: str | None) -> set[str]:
    """The row ids of one part's rows that count as there: status ``ok``, this protocol, and timed alike
    (:func:`kgpubench.measure.timing.timed_alike`, which also decides what stops a resume of an output folder)."""
    if part.is_symlink() or not part.is_file():
        raise DataFileNotFoundError(f"{part}: listed in the store's {MANIFEST} but missing; restore the store "
                                    f"(git checkout -- {part.parent}) or {FIX}.")
    try:
        data = read_file(part, columns=COLUMNS)
    except KgpubenchError as exc:
        raise SchemaValidationError(f"{exc} Restore the store (git checkout -- {part.parent}) or {FIX}.") from None
    missing = [c for c in REQUIRED if c not in data.column_names]
    if missing:
        raise ManifestError(f"{part}: no {' and no '.join(missing)} column, so not a part of a dataset store; "
                            f"restore it (git checkout -- {part.parent}) or {FIX}.")

    n = data.num_rows
    col = {name: data[name].to_pylist() if name in data.column_names else [None] * n for name in COLUMNS}
    # plain Python over a few thousand values: pyarrow's compute functions with a Python scalar import pandas
    return {rid for rid, status, protocol, policy, method in zip(*(col[c] for c in COLUMNS))
            if status == "ok" and str(protocol) == str(PROTOCOL_VERSION)
            and timed_alike(policy, method, l2_policy, cold_timer)}


__all__ = ["StoredRows", "stored_rows"]
