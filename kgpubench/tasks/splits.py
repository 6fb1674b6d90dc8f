"""Fixed cross-validation splits: a pure hash rule, committed fold files, and a splitter.

Rules (a fold is a string):

- ``random10``: ``fold = h(key) mod 10`` with ``h`` the first 8 bytes of sha256 over the scheme name and
  the key, read as a big-endian integer. The key is the ``row_id``, or, for a recommendation task, the
  problem (its ``problem_columns`` as canonical JSON) so that all configurations of a problem stay together.
- ``holdout80``: the same key; ``holdout`` when ``h(key) mod 5 == 0`` (20 %), else ``train``; only the
  ``holdout`` fold is evaluated (seed 000's 80/20).
- ``by-kernel``: leave one kernel out; the fold is the ``kernel`` value.
- ``by-gpu``: leave one GPU out; the fold is the ``gpu_name`` value.
- ``neusight``: a fixed mapping (kind ``mapping``) of a column's values to folds: NeuSight's (ASPLOS '25) own
  split of its NVIDIA GPUs: ``train`` = Tesla P4, P100, V100, T4 and A100-PCIE-40GB; ``test`` = the unseen H100
  80GB HBM3, L4 and A100 80GB PCIe. A value the mapping does not name (the AMD GPUs, a GPU added later) is in
  fold ``excluded``: neither trained on nor tested.
- ``next-generation``: a mapping of ``gpu_architecture``: ``train`` = Ampere, Ada, Hopper; ``test`` = Blackwell
  (``blackwell``, ``blackwell2``); any other architecture is ``excluded``.

A row's fold depends on nothing but its own key columns and the scheme: regenerating a file is
byte-identical, and rows added in a later dataset version never move older rows between folds.
Files: ``splits/<task>/<scheme>.csv``, header ``row_id,fold``, one line per row id, sorted by row id.
A result's ``split_sha256`` is the sha256 of exactly these bytes for the rows the evaluation used
(:func:`split_digest`), so it equals the committed file's hash on the packaged data and is right for any
other store (a GPU the packaged data does not have, say).
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import DataFileNotFoundError, SchemaValidationError, SplitError, unknown_name
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.resources import default_data_dir, package_files, source_checkout
from kgpubench.sources import seed_study
from kgpubench.store.store import Store, sha256_file
from kgpubench.tasks import Task, as_task, main_task, problem_keys, task_rows

HOLDOUT, TRAIN_ONLY, EXCLUDED = "holdout", "train", "excluded"
SPLITS = ("train", "test")


@dataclass(frozen=True)
class Scheme:
    """A split scheme: ``hash`` (k folds), ``holdout`` (one 20 % fold), ``column`` (fold = a column's value) or
    ``mapping`` (fold = ``mapping[column value]``, :data:`EXCLUDED` for a value it does not name)."""

    name: str
    kind: str
    description: str
    n_folds: int = 0
    column: str | None = None
    mapping: tuple[tuple[str, str], ...] = ()


SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("random10", "hash", "10 folds by hash of the row (of the problem, for recommendation tasks)", 10),
    Scheme("holdout80", "holdout", f"one 20 % test fold by hash ({seed_study('000').short}'s 80/20)", 5),
    Scheme("by-kernel", "column", "leave one kernel out (generalisation to unseen code)", column="kernel"),
    Scheme("by-gpu", "column", "leave one GPU out; folds are named by GPU", column="gpu_name"),
    Scheme("neusight", "mapping", "NeuSight's split (ASPLOS '25): train on Tesla P4, P100, V100, T4 and "
           "A100-PCIE-40GB; test on the unseen H100, L4 and A100 80GB; other GPUs (AMD) are not used",
           column="gpu_name", mapping=(
               *((g, TRAIN_ONLY) for g in ("Tesla P4", "Tesla P100-PCIE-16GB", "Tesla V100-PCIE-32GB", "Tesla T4",
                                           "NVIDIA A100-PCIE-40GB")),
               *((g, "test") for g in ("NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA A100 80GB PCIe")))),
    Scheme("next-generation", "mapping", "train on the Ampere, Ada and Hopper GPUs; test on every Blackwell GPU "
           "(data-centre `blackwell`, workstation and desktop `blackwell2`); other GPUs are not used",
           column="gpu_architecture", mapping=(*((a, TRAIN_ONLY) for a in ("ampere", "ada", "hopper")),
                                               *((a, "test") for a in ("blackwell", "blackwell2")))),
)}


def get_scheme(name: str) -> Scheme:
    """The scheme called ``name`` (error with suggestions when unknown)."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise unknown_name("scheme", name, SCHEMES) from None


def gpu_scheme(task) -> str | None:
    """The first of ``task.evaluated_schemes`` that leaves one GPU out (a ``column`` scheme on ``gpu_name``,
    ``by-gpu``), or None: the scheme whose best model ``kgpubench predict`` answers with, and the overview shows."""
    for s in task.evaluated_schemes:
        sch = get_scheme(s)
        if sch.kind == "column" and sch.column == "gpu_name":
            return s
    return None


def hash_bucket(key: str, scheme: str, n: int) -> int:
    """``int.from_bytes(sha256(scheme + '\\x1f' + key)[:8], 'big') mod n``."""
    digest = hashlib.sha256(f"{scheme}\x1f{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n


def assign_folds(task: Task, table: pa.Table, scheme: str) -> np.ndarray:
    """The fold of every row of ``table`` under ``scheme`` (the pure rule; no file is read)."""
    sch = get_scheme(scheme)
    if scheme not in task.schemes:
        raise unknown_name(f"scheme of task {task.name!r}", scheme, task.schemes)
    if sch.kind in ("column", "mapping"):
        if sch.column not in table.column_names:
            raise SchemaValidationError(f"scheme {scheme!r} needs column {sch.column!r}, absent from the table.")
        values = np.asarray([str(v) for v in table[sch.column].to_pylist()], dtype=object)
        if sch.kind == "column":
            return values
        mapping = dict(sch.mapping)
        return np.asarray([mapping.get(v, EXCLUDED) for v in values], dtype=object)
    keys = problem_keys(task, table) if task.group_columns else np.asarray(table["row_id"].to_pylist(), object)
    buckets = np.zeros(len(keys), dtype=np.int64)
    if len(keys):  # one hash per distinct key
        codes, uniq = pd.factorize(pd.Series(keys, dtype=object))
        per_key = np.fromiter((hash_bucket(str(k), scheme, sch.n_folds) for k in uniq), dtype=np.int64,
                              count=len(uniq))
        buckets = per_key[codes]
    if sch.kind == "holdout":
        return np.where(buckets == 0, HOLDOUT, TRAIN_ONLY).astype(object)
    return buckets.astype(str).astype(object)


def evaluated_folds(scheme: str, folds) -> list[str]:
    """The folds that serve as test folds, in order (numeric folds by number, others by name)."""
    names = sorted({str(f) for f in folds} - {TRAIN_ONLY, EXCLUDED})
    if get_scheme(scheme).kind == "hash":
        names.sort(key=int)
    return names


class FoldSplitter:
    """A cross-validation splitter over predefined folds (the idea of scikit-learn's ``PredefinedSplit``).

    Parameters
    ----------
    test_fold : array of str
        The fold of every sample; fold ``train`` is never a test fold, and fold ``excluded`` is never used.
    folds : list of str, optional
        Which folds to yield, in order (default: every test fold).
    """

    def __init__(self, test_fold, folds: list[str] | None = None) -> None:
        self.test_fold = np.asarray(test_fold, dtype=object)
        present = sorted({str(f) for f in self.test_fold} - {TRAIN_ONLY, EXCLUDED})
        self.folds = list(folds) if folds is not None else present

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return len(self.folds)

    def split(self, X=None, y=None, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train_index, test_index)`` for every fold in :attr:`folds`."""
        for fold in self.folds:
            test = self.test_fold == fold
            yield np.flatnonzero(~test & (self.test_fold != EXCLUDED)), np.flatnonzero(test)


# ----- committed files -------------------------------------------------------------------------------------
def splits_root() -> Path:
    """The committed ``splits/`` folder of a source checkout. The wheel ships no split file (they are pure
    functions of the rows, and the largest part of the package): installed, the folder does not exist and every
    fold comes from the rule (:func:`assign_folds`), which a test keeps equal to the committed files; a result's
    ``split_sha256`` records the split it used either way."""
    checkout = source_checkout()
    return checkout / "splits" if checkout is not None else package_files() / "_bundled" / "splits"


def split_path(task: str, scheme: str, root: Path | None = None) -> Path:
    """``<root>/<task name>/<scheme>.csv`` (default root: :func:`splits_root`); files are keyed by task name."""
    return Path(root or splits_root()) / task / f"{scheme}.csv"


def split_digest(row_ids, folds) -> bytes:
    """The split file's bytes for rows ``row_ids`` with folds ``folds``: header ``row_id,fold``, then the
    distinct (row id, fold) pairs sorted (by code point, row id first), written as :mod:`csv` writes them.

    Arrow removes the duplicates and sorts (UTF-8 byte order is code point order, so the order is Python's); the
    lines are joined directly unless a value needs csv quoting (a comma, a double quote or a line break), where
    :mod:`csv` writes them. :func:`split_digest_reference` is the plain definition, kept for the tests."""
    table = pa.table({"r": pa.array([str(r) for r in row_ids], pa.string()),
                      "f": pa.array([str(f) for f in folds], pa.string())})
    table = table.group_by(["r", "f"], use_threads=False).aggregate([])
    table = table.take(pc.sort_indices(table, sort_keys=[("r", "ascending"), ("f", "ascending")]))
    if any(pc.any(pc.match_substring_regex(table[c], _NEEDS_QUOTING)).as_py() for c in ("r", "f")):
        return split_digest_reference(table["r"].to_pylist(), table["f"].to_pylist())
    lines = pc.binary_join_element_wise(table["r"], table["f"], ",").to_pylist()
    return ("row_id,fold\n" + "".join(f"{line}\n" for line in lines)).encode()


_NEEDS_QUOTING = '[,"\r\n]'


def split_digest_reference(row_ids, folds) -> bytes:
    """:func:`split_digest` by its definition (a set of pairs, :func:`sorted`, :mod:`csv`): the slow reference."""
    pairs = sorted(set(zip((str(r) for r in row_ids), (str(f) for f in folds))))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["row_id", "fold"])
    writer.writerows(pairs)
    return buf.getvalue().encode()


def split_sha256_of(row_ids, folds) -> str:
    """sha256 of :func:`split_digest` (what a result records as ``split_sha256``)."""
    return hashlib.sha256(split_digest(row_ids, folds)).hexdigest()


def render_split_file(task: Task, table: pa.Table, scheme: str) -> bytes:
    """The bytes of the split file of ``task`` and ``scheme`` for the config's full ``table``."""
    rows = task_rows(task, table)
    return split_digest(rows["row_id"].to_pylist(), assign_folds(task, rows, scheme))


def write_split_files(table: pa.Table, task: Task, root: Path | None = None) -> list[Path]:
    """Write one file per scheme of ``task`` (none when the task has no rows, or derives its splits:
    ``Task.split_files`` false); returns the paths.

    Each write is atomic; an existing file is only replaced by a split file (header ``row_id,fold``).
    """
    if not task.split_files:
        return []
    rows = task_rows(task, table)
    if rows.num_rows == 0:
        return []
    out = []
    ids = rows["row_id"].to_pylist()
    for scheme in task.schemes:
        path = split_path(task.name, scheme, root)
        if path.exists() and not _is_split_file(path):
            raise SplitError(f"{path}: exists and is not a split file (header row_id,fold); move it away or "
                             "pass another --out.")
        atomic_write_bytes(path, split_digest(ids, assign_folds(task, rows, scheme)))
        out.append(path)
    return out


def _is_split_file(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.readline().rstrip(b"\r\n") == b"row_id,fold"


def read_split_file(path: Path) -> dict[str, str]:
    """``row_id -> fold`` from a committed file."""
    path = Path(path)
    if not path.exists():
        raise DataFileNotFoundError(f"{path}: no split file; write it with `kgpubench leaderboard splits`.")
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header != ["row_id", "fold"]:
            raise SplitError(f"{path}: header {header!r}, expected ['row_id', 'fold']; regenerate the file.")
        return {row[0]: row[1] for row in reader}


def split_sha256(task: str, scheme: str, root: Path | None = None) -> str | None:
    """sha256 of the committed split file (None when there is none)."""
    path = split_path(task, scheme, root)
    return sha256_file(path) if path.exists() else None


def fold_column(task: Task, table: pa.Table, scheme: str, root: Path | None = None) -> np.ndarray:
    """Folds of ``table``'s rows: the committed file's where it lists the row, the rule otherwise (a test keeps
    the committed files equal to the rule, so the two agree wherever both speak)."""
    folds = assign_folds(task, table, scheme)
    path = split_path(task.name, scheme, root)
    if path.exists() and table.num_rows:
        committed = pd.read_csv(path, dtype=str, keep_default_na=False).drop_duplicates("row_id", keep="last")
        if list(committed.columns) != ["row_id", "fold"]:
            raise SplitError(f"{path}: header {list(committed.columns)!r}, expected ['row_id', 'fold']; regenerate "
                             "the file (`kgpubench leaderboard splits`).")
        mapped = pd.Series(table["row_id"].to_pylist(), dtype=object).map(
            pd.Series(committed["fold"].to_numpy(object), index=committed["row_id"].to_numpy(object)))
        folds = np.where(mapped.isna().to_numpy(), folds, mapped.to_numpy(object)).astype(object)
    return folds


def task_folds(task: Task | str, scheme: str, data_dir: Path | str | None = None) -> list[str]:
    """The test folds of ``task`` (a :class:`Task` or its name) under ``scheme`` on a store (default: the packaged
    data), in order."""
    the_task = as_task(task)
    rows = task_rows(the_task, Store(data_dir or default_data_dir()).read(the_task.config))
    return evaluated_folds(scheme, fold_column(the_task, rows, scheme))


def select_rows(table: pa.Table, config: str, *, split: str | None, fold, scheme: str | None,
                task: Task | str | None = None, root: Path | None = None) -> pa.Table:
    """The train or test rows of one fold (what ``load_dataset(..., scheme=, fold=, split=)`` returns).

    Only the task's rows (:func:`kgpubench.tasks.task_rows`: status ok, target present, the task's filters,
    the protocol rule, complete problems) belong to a fold, so a failed row never reaches a target.
    """
    the_task = as_task(task) if task else main_task(config)
    if the_task.config != config:
        raise SplitError(f"task {the_task.name!r} belongs to config {the_task.config!r}, not {config!r}; "
                         f"pass task=None or a task of {config!r}.")
    if scheme is None:
        raise SplitError("split/fold given without scheme; pass scheme= (one of "
                         f"{', '.join(the_task.schemes)}).")
    if split not in SPLITS:
        raise SplitError(f"split={split!r}; expected 'train' or 'test' together with scheme= and fold=.")
    table = task_rows(the_task, table)
    folds = fold_column(the_task, table, scheme, root)
    if fold is None:
        if get_scheme(scheme).kind != "holdout":
            raise SplitError(f"scheme {scheme!r} needs fold= (one of {', '.join(evaluated_folds(scheme, folds))}).")
        fold = HOLDOUT
    fold = str(fold)
    known = evaluated_folds(scheme, folds)
    if fold not in known:
        raise unknown_name(f"fold of scheme {scheme!r}", fold, known)
    mask = folds == fold
    return table.filter(pa.array(mask if split == "test" else ~mask & (folds != EXCLUDED)))
