"""Submissions by pull request: a folder under ``leaderboard/submissions/``, re-run by CI, added by a maintainer.

A submission folder ``leaderboard/submissions/<name>/`` holds ``submission.yaml`` (who, what, and the task and
scheme pairs to score) and either

- ``model.py``: a model file defining ``make_model(task, seed)`` (see SUBMITTING.md); CI trains and scores it
  with its code in the sandbox (:mod:`kgpubench.sandbox`), exactly as ``kgpubench submit`` does; or
- ``predictions/<task>--<scheme>.parquet`` (or ``.csv``): predictions made elsewhere, one per test row of every
  fold (``kgpubench score``); ``url`` must then say where the code that made them lives.

:func:`read_submission` checks a folder without running anything, :func:`run_submission` is the CI job (it
writes one result file per pair into an output folder), :func:`accept` is the maintainer's step: it checks
that each result was made from the folder's files as they are now, copies it into the board's results and
re-renders the board.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError, SchemaValidationError
from kgpubench.evaluation import SubmissionError, file_sha256, result_json

META = "submission.yaml"
MODEL = "model.py"
PREDICTIONS = "predictions"
PREDICTION_SUFFIXES = (".parquet", ".csv")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{1,48}")
REQUIRED = ("name", "authors", "description", "runs")
OPTIONAL = ("url", "license")


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


def _runs(folder: Path, value) -> tuple[tuple[str, str], ...]:
    from kgpubench.tasks import get_task

    if not isinstance(value, list) or not value:
        raise _bad(folder, "`runs` must be a list of {task: ..., scheme: ...} entries")
    out = []
    for i, entry in enumerate(value, 1):
        if not isinstance(entry, dict) or set(entry) != {"task", "scheme"}:
            raise _bad(folder, f"runs entry {i} must have exactly the keys task and scheme, got {entry!r}")
        task = get_task(str(entry["task"]))  # unknown names: one line with "did you mean"
        if entry["scheme"] not in task.evaluated_schemes:
            raise _bad(folder, f"runs entry {i}: scheme {entry['scheme']!r} is not on the board for {task.name} "
                               f"(one of {', '.join(task.evaluated_schemes)})")
        out.append((task.name, str(entry["scheme"])))
    if len(set(out)) != len(out):
        raise _bad(folder, "runs lists a task and scheme twice")
    return tuple(out)


def read_submission(folder: Path | str) -> Submission:
    """Check a submission folder without running anything; one line naming the file and the fix otherwise."""
    import yaml

    from kgpubench.submission import check_factory, declared_tasks, read_predictions

    folder = Path(folder)
    meta_path = folder / META
    if not meta_path.is_file():
        raise DataFileNotFoundError(f"{folder}: no {META}; a submission folder holds {META} and {MODEL} or "
                                    f"{PREDICTIONS}/ (see leaderboard/SUBMITTING.md).")
    try:
        meta = yaml.safe_load(meta_path.read_text())
    except yaml.YAMLError as exc:
        raise _bad(folder, f"not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(meta, dict):
        raise _bad(folder, "must be a mapping of name, authors, description, runs")
    missing = [k for k in REQUIRED if k not in meta]
    unknown = sorted(set(meta) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise _bad(folder, f"missing {missing}" if missing else f"unknown key(s) {unknown}")
    name = str(meta["name"])
    if not NAME.fullmatch(name) or name != folder.name:
        raise _bad(folder, f"name {name!r} must equal the folder's name and use a-z, 0-9, '-' and '_' "
                           f"(folder: {folder.name!r})")
    from kgpubench.leaderboard import baseline_files

    if name in {p.stem for p in baseline_files()} or name == "oracle":
        raise _bad(folder, f"name {name!r} is taken by a baseline; choose another")
    authors = meta["authors"]
    if isinstance(authors, str):
        authors = [authors]
    if not isinstance(authors, list) or not authors or not all(isinstance(a, str) and a.strip() for a in authors):
        raise _bad(folder, "`authors` must be a non-empty list of names")
    if not isinstance(meta["description"], str) or len(meta["description"].strip()) < 10:
        raise _bad(folder, "`description` must say in a sentence what the model is")
    url = meta.get("url")
    if url is not None and not (isinstance(url, str) and re.fullmatch(r"https?://\S+", url)):
        raise _bad(folder, f"`url` must be an http(s) address, got {url!r}")
    sub = Submission(folder, name, tuple(authors), meta["description"].strip(), _runs(folder, meta["runs"]),
                     url=meta.get("url"), license=meta.get("license"))
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
            if not any((folder / PREDICTIONS / n).is_file() for n in names):
                raise DataFileNotFoundError(f"{folder / PREDICTIONS}: no {names[0]} (or .csv) for the run "
                                            f"{task}/{scheme} listed in {META}.")
            read_predictions(sub.file_for(task, scheme))
    return sub


def result_file(root: Path, sub: Submission, task: str, scheme: str) -> Path:
    from kgpubench.leaderboard import result_path

    return result_path(root, task, scheme, sub.name)


def _label(path: Path) -> str:
    """The file's path as a result names it: relative to the project, else to the working folder (CI runs in
    the repository root, where both agree)."""
    from kgpubench.leaderboard import project_root

    for root in (project_root(), Path.cwd()):
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


def run_submission(folder: Path | str, out_dir: Path | str, *, data_dir: Path | str | None = None,
                   timeout_s: float | None = None, memory_gb: float | None = None, threads: int = 1,
                   trust: bool = False, progress=None) -> list[Path]:
    """The CI job: score every run of the submission and write ``<out_dir>/<task>/<scheme>/<name>.json``.

    A model runs with its code in the sandbox (a fresh child per fold, no network, limits); predictions are
    scored as given. Returns the files written, one per run, in the order of ``runs``.
    """
    from kgpubench.evaluation import evaluate
    from kgpubench.sandbox import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
    from kgpubench.shards import atomic_write_bytes
    from kgpubench.submission import score_predictions

    sub = read_submission(folder)
    limits = Limits(timeout_s=timeout_s or DEFAULT_TIMEOUT_S, memory_gb=memory_gb or DEFAULT_MEMORY_GB,
                    threads=threads)
    written = []
    for task, scheme in sub.runs:
        if progress:
            progress(f"{sub.name}: {task}/{scheme}")
        path = sub.file_for(task, scheme)
        if sub.kind == "model":
            result = evaluate(path, task, scheme, data_dir=data_dir, limits=limits, trust=trust)
        else:
            result = score_predictions(path, task, scheme, data_dir=data_dir)
        result.update(model=sub.name, model_file=_label(path), submission=sub.record())
        out = result_file(Path(out_dir), sub, task, scheme)
        atomic_write_bytes(out, result_json(result).encode())
        written.append(out)
    return written


def accept(folder: Path | str, results: Path | str, *, board: Path | str | None = None,
           force: bool = False, render: bool = True) -> list[Path]:
    """The maintainer's step: copy the CI results of a submission into the board's results folder ``board``
    (default ``leaderboard/results``) and re-render the board next to it.

    Each result must exist, be for this submission and pair, and have been made from the folder's files as they
    are now (sha256); an existing result of the same name is replaced only with ``force``. Returns the result
    files written.
    """
    from kgpubench.leaderboard import load_results, results_dir
    from kgpubench.shards import atomic_write_bytes

    sub = read_submission(folder)
    board = Path(board or results_dir())
    results = Path(results)
    plan = []
    for task, scheme in sub.runs:
        src = result_file(results, sub, task, scheme)
        if not src.is_file():
            raise DataFileNotFoundError(f"{src}: no result for {sub.name} on {task}/{scheme}; run `kgpubench "
                                        f"submission run {folder} --out {results}` (the CI job) first.")
        res = json.loads(src.read_text())
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
        dest = result_file(board, sub, task, scheme)
        if dest.exists() and not force:
            raise SubmissionError(f"{dest}: a result of {sub.name} is already on the board; pass --force to "
                                  "replace it.")
        plan.append((src, dest))
    for src, dest in plan:
        atomic_write_bytes(dest, src.read_bytes())
    if render:
        from kgpubench.site import render_all

        render_all(load_results(board), board.parent)
    return [dest for _, dest in plan]


