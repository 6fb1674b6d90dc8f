"""Submissions by pull request: a folder under ``leaderboard/submissions/``, re-run by CI, added by a maintainer.

A submission folder ``leaderboard/submissions/<name>/`` holds ``submission.yaml`` (who, what, and the task and
scheme pairs to score) and either

- ``model.py``: a model file defining ``make_model(task, seed)`` (see SUBMITTING.md); CI trains and scores it
  with its code in the sandbox (:mod:`kgpubench.sandbox.session`), exactly as ``kgpubench submit`` does; or
- ``predictions/<task>--<scheme>.parquet`` (or ``.csv``): predictions made elsewhere, one per test row of every
  fold (``kgpubench score``); ``url`` must then say where the code that made them lives.

:func:`read_submission` reads and checks a folder; :func:`check_submission` (``submission check``) makes every
check the CI job makes before it runs model code (the folder, each run's data, each predictions file against the
test rows, the result files), and with ``--model-checks`` :func:`check_submission_model` runs the model's contract
checks in the sandbox; :func:`run_submission` is the CI job: it calls :func:`check_submission` first, then
writes one result file per pair into an output folder; :func:`accept` is the maintainer's step: it checks
that each result was made from the folder's files as they are now, copies it into the board's results and
re-renders the board.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from kgpubench.board.leaderboard import baseline_files, load_results, project_root, result_path, results_dir
from kgpubench.board.site import render_all
from kgpubench.errors import DataFileNotFoundError, NoDataError, SchemaValidationError, UnknownNameError
from kgpubench.foundation.files import atomic_write_bytes, check_writable, refuse_stdout
from kgpubench.models.evaluation import (
    SubmissionError,
    attach_predictions,
    attached_predictions,
    evaluate,
    file_sha256,
    predictions_path,
    rescore_problem,
    store_predictions,
)
from kgpubench.models.model_checks import CheckOutcome, refusal, run_model_checks
from kgpubench.models.submission import (
    check_factory,
    declared_tasks,
    prediction_folds,
    read_predictions,
    score_predictions,
)
from kgpubench.results.result import Result, read_result_json, result_json
from kgpubench.sandbox.limits import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
from kgpubench.tasks import get_task
from kgpubench.tasks.data import TaskData, scheme_problem, task_data
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.splits import EXCLUDED

META = "submission.yaml"
DEFAULT_OUT = Path("build/submission-results")  # where the CI job writes its result files
MODEL = "model.py"
PREDICTIONS = "predictions"
PREDICTION_SUFFIXES = (".parquet", ".csv")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{1,48}")
REQUIRED = ("name", "authors", "description", "runs")
OPTIONAL = ("url", "license")
# Bounds on submission.yaml: a real one is a few hundred bytes and two levels deep.
META_MAX_BYTES = 64 * 1024
META_MAX_DEPTH = 4
META_MAX_NODES = 2000
MAX_AUTHORS = 50
MAX_RUNS = 100
TEXT_MAX = {"author": 200, "description": 2000, "url": 500}
LICENSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-() ]{0,99}")  # an SPDX expression, e.g. "MIT OR Apache-2.0"


@dataclass(frozen=True)
class Submission:
    """A checked submission folder."""

    folder: Path
    name: str
    authors: tuple[str, ...]
    description: str
    runs: tuple[tuple[str, str], ...]  # (task, scheme)
    url: str | None = None
    license: str | None = None

    @property
    def kind(self) -> str:
        """``model`` (a model file CI re-runs) or ``predictions`` (scored as given)."""
        return "model" if (self.folder / MODEL).is_file() else "predictions"

    def file_for(self, task: str, scheme: str) -> Path:
        """The file scored for one pair: the model file, or that pair's predictions file."""
        if self.kind == "model":
            return self.folder / MODEL
        return next(p for p in (self.folder / PREDICTIONS / f"{task}--{scheme}{s}" for s in PREDICTION_SUFFIXES)
                    if p.is_file())

    def record(self) -> dict:
        """What a result file says about the submission."""
        return {"name": self.name, "authors": list(self.authors), "description": self.description,
                "url": self.url, "license": self.license}


def _bad(folder: Path, what: str) -> SchemaValidationError:
    return SchemaValidationError(f"{folder / META}: {what} (see leaderboard/SUBMITTING.md).")


def _text(folder: Path, what: str, value, max_len: int) -> str:
    """``value`` as checked text: a string of printable characters (no newline, no NUL), 1 to ``max_len`` long."""
    if not isinstance(value, str) or not value.strip() or len(value) > max_len or not value.isprintable():
        shown = repr(value)[:60] if isinstance(value, str) else f"a {type(value).__name__}"
        raise _bad(folder, f"{what} must be one line of printable text, 1 to {max_len} characters, got {shown}")
    return value.strip()


def _runs(folder: Path, value) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value or len(value) > MAX_RUNS:
        raise _bad(folder, f"`runs` must be a list of 1 to {MAX_RUNS} {{task: ..., scheme: ...}} entries")
    out = []
    for i, entry in enumerate(value, 1):
        if not isinstance(entry, dict) or set(entry) != {"task", "scheme"}:
            shown = sorted(map(str, entry))[:5] if isinstance(entry, dict) else f"a {type(entry).__name__}"
            raise _bad(folder, f"runs entry {i} must have exactly the keys task and scheme, got {shown}")
        name = _text(folder, f"runs entry {i}: task", entry["task"], 100)
        scheme = _text(folder, f"runs entry {i}: scheme", entry["scheme"], 100)
        try:
            task = get_task(name)
        except UnknownNameError as exc:  # one line with "did you mean", naming the file
            raise UnknownNameError(f"{folder / META}: runs entry {i}: {exc}") from None
        if scheme not in task.evaluated_schemes:
            raise _bad(folder, f"runs entry {i}: scheme {scheme!r} is not on the board for {task.name} "
                               f"(one of {', '.join(task.evaluated_schemes)})")
        out.append((task.name, scheme))
    if len(set(out)) != len(out):
        raise _bad(folder, "runs lists a task and scheme twice")
    return tuple(out)


def _no_link(folder: Path, path: Path) -> None:
    """A submission's files are its own: a symbolic link (which could point at a host file whose content would
    then be read, and shown in an error) is refused unread."""
    if path.is_symlink():
        raise SchemaValidationError(f"{path}: is a symbolic link; a submission folder holds plain files only "
                                    "(copy the file in) (see leaderboard/SUBMITTING.md).")


def _load_meta(folder: Path, meta_path: Path):
    """Parse submission.yaml safely: at most :data:`META_MAX_BYTES`, no anchors, aliases or tags (an alias bomb
    of a few hundred bytes expands to gigabytes), at most :data:`META_MAX_DEPTH` levels and
    :data:`META_MAX_NODES` values, no key twice in one mapping; checked event by event before anything is built."""
    import yaml

    try:
        with meta_path.open("rb") as fh:
            raw = fh.read(META_MAX_BYTES + 1)
    except OSError as exc:
        raise DataFileNotFoundError(f"{meta_path}: cannot read the file ({exc.strerror or exc}).") from None
    if len(raw) > META_MAX_BYTES:
        raise _bad(folder, f"larger than {META_MAX_BYTES:,} bytes; a submission.yaml is a few lines")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(folder, f"byte {exc.start} is not UTF-8 text") from None
    nodes = 0
    stack: list[list | None] = []  # per open collection: [keys seen, whether a key comes next] or None (a list)

    def done_value() -> None:
        if stack and stack[-1] is not None:
            stack[-1][1] = True

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise _bad(folder, "uses a YAML anchor or alias (& or *); write every value out in full")
            tag = getattr(event, "tag", None)  # None unless the file spells a tag out (!!binary, !!set, ...)
            if tag is not None and tag != "tag:yaml.org,2002:str":
                raise _bad(folder, f"uses the YAML tag {str(tag)[:40]!r}; write plain values")
            if isinstance(event, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                nodes += 1
                if nodes > META_MAX_NODES:
                    raise _bad(folder, f"holds more than {META_MAX_NODES} values")
            key_next = bool(stack) and stack[-1] is not None and stack[-1][1]
            if isinstance(event, yaml.ScalarEvent):
                if key_next:
                    if event.value in stack[-1][0]:
                        raise _bad(folder, f"the key {event.value[:40]!r} appears twice in one mapping")
                    stack[-1][0].add(event.value)
                    stack[-1][1] = False
                else:
                    done_value()
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if key_next:
                    raise _bad(folder, "uses a list or mapping as a key; keys are plain names")
                if len(stack) >= META_MAX_DEPTH:
                    raise _bad(folder, f"nests values more than {META_MAX_DEPTH} levels deep; runs entries are "
                                       "{task: ..., scheme: ...}")
                stack.append([set(), True] if isinstance(event, yaml.MappingStartEvent) else None)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                done_value()
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise _bad(folder, f"not valid YAML ({str(exc).splitlines()[0]})") from None
    if len(docs) != 1:
        raise _bad(folder, f"holds {len(docs)} YAML documents; expected one mapping")
    return docs[0]


def read_submission(folder: Path | str) -> Submission:
    """Check a submission folder without running anything; one line naming the file and the fix otherwise.

    Every field of ``submission.yaml`` is checked (type, length, printable text; see :func:`_load_meta` for the
    bounds on the file itself), so nothing unchecked reaches a result's ``submission`` record. The folder's
    files must be plain files, not symbolic links.
    """
    folder = Path(folder)
    if folder.is_symlink():
        raise SchemaValidationError(f"{folder}: is a symbolic link; a submission is a plain folder under "
                                    "leaderboard/submissions/ (move the files in) (see leaderboard/SUBMITTING.md).")
    meta_path = folder / META
    for path in (meta_path, folder / MODEL, folder / PREDICTIONS):
        _no_link(folder, path)
    if not meta_path.is_file():
        raise DataFileNotFoundError(f"{folder}: no {META}; a submission folder holds {META} and {MODEL} or "
                                    f"{PREDICTIONS}/ (see leaderboard/SUBMITTING.md).")
    meta = _load_meta(folder, meta_path)
    if not isinstance(meta, dict):
        raise _bad(folder, "must be a mapping of name, authors, description, runs")
    if not all(isinstance(k, str) for k in meta):
        raise _bad(folder, "every key must be text (name, authors, description, runs, url, license)")
    missing = [k for k in REQUIRED if k not in meta]
    unknown = sorted(set(meta) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise _bad(folder, f"missing {missing}" if missing else f"unknown key(s) {[u[:40] for u in unknown[:5]]}")
    name = meta["name"]
    if not isinstance(name, str) or not NAME.fullmatch(name) or name != folder.name:
        shown = repr(name)[:60] if isinstance(name, str) else f"a {type(name).__name__}"
        raise _bad(folder, f"name {shown} must equal the folder's name and use a-z, 0-9, '-' and '_' "
                           f"(folder: {folder.name!r})")
    if name in {p.stem for p in baseline_files()} or ORACLE.is_oracle(name):
        raise _bad(folder, f"name {name!r} is taken by a baseline; choose another")
    authors = meta["authors"]
    if isinstance(authors, str):
        authors = [authors]
    if not isinstance(authors, list) or not 0 < len(authors) <= MAX_AUTHORS:
        raise _bad(folder, f"`authors` must be a list of 1 to {MAX_AUTHORS} names")
    authors = [_text(folder, f"authors entry {i}", a, TEXT_MAX["author"]) for i, a in enumerate(authors, 1)]
    description = _text(folder, "`description`", meta["description"], TEXT_MAX["description"])
    if len(description) < 10:
        raise _bad(folder, "`description` must say in a sentence what the model is")
    url = meta.get("url")
    if url is not None:
        url = _text(folder, "`url`", url, TEXT_MAX["url"])
        if not re.fullmatch(r"https?://\S+", url):
            raise _bad(folder, f"`url` must be an http(s) address, got {url[:60]!r}")
    license_ = meta.get("license")
    if license_ is not None and not (isinstance(license_, str) and LICENSE.fullmatch(license_)):
        shown = repr(license_)[:60] if isinstance(license_, str) else f"a {type(license_).__name__}"
        raise _bad(folder, f"`license` must be an SPDX identifier or expression (e.g. MIT, Apache-2.0), got {shown}")
    sub = Submission(folder, name, tuple(authors), description, _runs(folder, meta["runs"]),
                     url=url, license=license_)
    has_model, has_preds = (folder / MODEL).is_file(), (folder / PREDICTIONS).is_dir()
    if has_model == has_preds:
        raise _bad(folder, f"give either {MODEL} (re-run by CI) or a {PREDICTIONS}/ folder, not "
                           + ("both" if has_model else "neither"))
    if has_model:
        check_factory(folder / MODEL)
        tasks = declared_tasks(folder / MODEL)
        wrong = [t for t, _ in sub.runs if tasks and t not in tasks]
        if wrong:
            raise _bad(folder, f"runs name task(s) {wrong} that {MODEL}'s TASKS {tasks} leaves out")
    else:
        if not sub.url:
            raise _bad(folder, "predictions cannot be re-run: give `url`, where the code that made them lives")
        for task, scheme in sub.runs:
            names = [f"{task}--{scheme}{s}" for s in PREDICTION_SUFFIXES]
            for n in names:
                _no_link(folder, folder / PREDICTIONS / n)
            if not any((folder / PREDICTIONS / n).is_file() for n in names):
                raise DataFileNotFoundError(f"{folder / PREDICTIONS}: no {names[0]} (or .csv) for the run "
                                            f"{task}/{scheme} listed in {META}.")
            read_predictions(sub.file_for(task, scheme))
    return sub


def result_file(root: Path, sub: Submission, task: str, scheme: str) -> Path:
    return result_path(root, task, scheme, sub.name)


def _label(path: Path) -> str:
    """The file's path as a result names it: relative to the project, else to the working folder (CI runs in
    the repository root, where both agree)."""
    for root in (project_root(), Path.cwd()):
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


@dataclass(frozen=True)
class CheckedRun:
    """One (task, scheme) pair of a checked submission: the file scored, the result file to write and the task's
    rows under the scheme."""

    task: str
    scheme: str
    file: Path
    out: Path
    data: TaskData


@dataclass(frozen=True)
class CheckedSubmission:
    """What :func:`check_submission` returns: the folder read and every run ready to run."""

    submission: Submission
    runs: tuple[CheckedRun, ...]


def _training_problem(data: TaskData) -> str | None:
    """Why no fold of ``data`` has training rows (so a model cannot be trained on any), as
    :func:`kgpubench.models.evaluation.run_folds` finds it; None when one has."""
    for fold in data.fold_names:
        if ((data.folds != fold) & (data.folds != EXCLUDED)).any():
            return None
    return f"{scheme_problem(data) or 'no fold has training rows'} (folds {data.fold_names})"


def check_submission(folder: Path | str, out_dir: Path | str = DEFAULT_OUT, *, data_dir: Path | str | None = None,
                     force: bool = False) -> CheckedSubmission:
    """Every check ``submission run`` makes before it runs model code: the one check of ``submission check`` and of
    :func:`run_submission` (which calls it first), so the two cannot disagree.

    In order: ``out_dir`` is a folder, not ``-``; the folder (:func:`read_submission`: layout, ``submission.yaml``,
    no symbolic links, the model file read as Python with a top-level ``make_model`` and ``TASKS`` covering the
    runs, or a predictions file per run with its columns, numbers and no (row_id, fold) twice); each run's result
    file can be written (an existing one only with ``force``); each run's task has rows in the store
    (``data_dir``, default the packaged data) and, for a model, a fold with training rows; each predictions file
    covers exactly the test rows of every fold with finite numbers
    (:func:`kgpubench.models.submission.prediction_folds`).
    Each failure is one line naming the file (and the fold, row or column) and the fix. What only running the
    model can find is listed in ``kgpubench submission check --help`` (``RUN_ONLY`` of :mod:`kgpubench.cli.submission`).
    """
    refuse_stdout(out_dir, "a folder of result files")
    sub = read_submission(folder)
    outs = [result_file(Path(out_dir), sub, task, scheme) for task, scheme in sub.runs]
    for out in outs:
        check_writable(out, force=force)
    runs = []
    for (task, scheme), out in zip(sub.runs, outs):
        try:
            data = task_data(task, scheme, data_dir)
        except NoDataError as exc:
            raise NoDataError(f"{sub.folder / META}: the run {task}/{scheme} has no data: {exc}") from None
        path = sub.file_for(task, scheme)
        if sub.kind == "model":
            why = _training_problem(data)
            if why:
                raise NoDataError(f"{sub.folder / META}: the run {task}/{scheme} cannot train a model: {why}; list "
                                  "another scheme under runs, or score on a store with more data (--data).")
        else:
            prediction_folds(read_predictions(path), path, data)
        runs.append(CheckedRun(task, scheme, path, out, data))
    return CheckedSubmission(sub, tuple(runs))


def check_submission_model(checked: CheckedSubmission, *, data_dir: Path | str | None = None,
                           trust: bool = False) -> list[tuple[str, CheckOutcome]]:
    """The model contract checks (:mod:`kgpubench.models.model_checks`: finite predictions, seed determinism, thread
    invariance, refit) of a checked model submission, once per task of its runs, with the model's code in the
    sandbox (``trust`` as :class:`~kgpubench.sandbox.session.ModelSession` takes it), on a sample of the store
    ``data_dir``. Returns (task, outcome) pairs; a failed check raises a one-line
    :class:`~kgpubench.errors.SubmissionError` naming the model file, the task and the checks. A predictions
    submission has no model: nothing is run, the list is empty."""
    sub = checked.submission
    if sub.kind != "model":
        return []
    out = []
    for task in dict.fromkeys(run.task for run in checked.runs):
        path = sub.file_for(task, next(r.scheme for r in checked.runs if r.task == task))
        outcomes = run_model_checks(path, task, data_dir=data_dir, trust=trust)
        why = refusal(path, task, outcomes)
        if why:
            raise SubmissionError(f"{path}: {why}")
        out += [(task, o) for o in outcomes]
    return out


def run_submission(folder: Path | str, out_dir: Path | str, *, data_dir: Path | str | None = None,
                   timeout_s: float | None = None, memory_gb: float | None = None, threads: int = 1,
                   trust: bool = False, progress=None, force: bool = False) -> list[Path]:
    """The CI job: score every run of the submission and write ``<out_dir>/<task>/<scheme>/<name>.json``.

    Before anything runs, :func:`check_submission` (what ``submission check`` runs) checks the folder, every
    run's data and predictions, and every result file: one that exists is refused unless ``force``.

    A model runs with its code in the sandbox (a fresh child per fold, no network, limits); predictions are
    scored as given. Returns the files written, one per run, in the order of ``runs``.
    """
    limits = Limits(timeout_s=timeout_s or DEFAULT_TIMEOUT_S, memory_gb=memory_gb or DEFAULT_MEMORY_GB,
                    threads=threads)
    checked = check_submission(folder, out_dir, data_dir=data_dir, force=force)
    sub = checked.submission
    written = []
    for run in checked.runs:
        if progress:
            progress(f"{sub.name}: {run.task}/{run.scheme}")
        if sub.kind == "model":
            result = evaluate(run.file, run.task, run.scheme, data=run.data, data_dir=data_dir, limits=limits,
                              trust=trust)
        else:
            result = score_predictions(run.file, run.task, run.scheme, data=run.data)
        given = attached_predictions(result)
        result = replace(result, model=sub.name, model_file=_label(run.file),
                         extra={**result.extra, "submission": sub.record()})
        if given is not None:
            result = store_predictions(attach_predictions(result, given), run.out, overwrite=force)
        atomic_write_bytes(run.out, result_json(result).encode(), overwrite=force)
        written.append(run.out)
    return written


def accept(folder: Path | str, results: Path | str, *, board: Path | str | None = None,
           force: bool = False, render: bool = True, data_dir: Path | str | None = None) -> list[Path]:
    """The maintainer's step: copy the CI results of a submission into the board's results folder ``board``
    (default ``leaderboard/results``) and re-render the board next to it.

    Each result must exist, be for this submission and pair, have been made from the folder's files as they
    are now (sha256), carry the folder's submission record, and have every fold's scores equal to what its
    predictions (the file beside it, sha256 recorded in the result) score on the data (``data_dir``, default the
    packaged data; :func:`kgpubench.models.evaluation.rescore_problem`); an existing result of the same name is
    replaced only with ``force``. Returns the result files written (their predictions files copied beside them,
    except into the committed ``leaderboard/results``, which holds none).
    """
    sub = read_submission(folder)
    board = Path(board or results_dir())
    results = Path(results)
    plan = []
    for task, scheme in sub.runs:
        src = result_file(results, sub, task, scheme)
        if not src.is_file():
            raise DataFileNotFoundError(f"{src}: no result for {sub.name} on {task}/{scheme}; run `kgpubench "
                                        f"submission run {folder} --out {results}` (the CI job) first.")
        res = read_result_json(src)
        where = f"{src}:"
        if (res.get("task"), res.get("scheme"), res.get("model")) != (task, scheme, sub.name):
            raise SubmissionError(f"{where} is for {res.get('model')} on {res.get('task')}/{res.get('scheme')}, "
                                  f"not {sub.name} on {task}/{scheme}.")
        if res.get("status", "ok") != "ok":
            raise SubmissionError(f"{where} the run {res.get('status')} ({res.get('message', '')}); fix the "
                                  "submission and let CI run it again.")
        now = file_sha256(sub.file_for(task, scheme))
        if res.get("model_sha256") != now:
            raise SubmissionError(f"{where} made from a file with sha256 {str(res.get('model_sha256'))[:12]}..., "
                                  f"but {sub.file_for(task, scheme)} is now {now[:12]}...; re-run the CI job.")
        if res.get("submission") != sub.record():
            raise SubmissionError(f"{where} its submission record is not the one {folder} holds now; re-run the CI "
                                  "job.")
        record = Result.from_dict(res, where=str(src))
        why = rescore_problem(record, src, task_data(task, scheme, data_dir))
        if why:
            raise SubmissionError(f"{where} refused, its scores are not trusted: {why}; re-run the CI job "
                                  "(`kgpubench submission run`).")
        dest = result_file(board, sub, task, scheme)
        if dest.exists() and not force:
            raise SubmissionError(f"{dest}: a result of {sub.name} is already on the board; pass --force to "
                                  "replace it.")
        plan.append((src, dest))
    committed = board.resolve() == results_dir().resolve()  # the committed board holds no predictions (size)
    for src, dest in plan:
        named = predictions_path(src)
        if named.is_file() and not named.is_symlink() and not committed:  # checked above (sha256)
            atomic_write_bytes(predictions_path(dest), named.read_bytes())
        atomic_write_bytes(dest, src.read_bytes())
    if render:
        render_all(load_results(board, mark_stale=True), board.parent, results_dir=board)
    return [dest for _, dest in plan]


