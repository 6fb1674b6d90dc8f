"""Submissions by pull request: a folder under ``leaderboard/submissions/``, re-run by CI, added by a maintainer.

A submission folder ``leaderboard/submissions/<name>/`` holds ``submission.yaml`` (who, what, and the task and
scheme pairs to score) and either

- ``model.py``: a model file defining ``make_model(task, seed)`` (see SUBMITTING.md); CI trains and scores it
  with its code in the sandbox (:mod:`kgpubench.sandbox.session`), exactly as ``kgpubench submit`` does; or
- ``predictions/<task>--<scheme>.parquet`` (or ``.csv``): predictions made elsewhere, one per test row of every
  fold (``kgpubench score``); ``url`` must then say where the code that made them lives.

:func:`read_submission` checks a folder without running anything, :func:`run_submission` is the CI job (it
writes one result file per pair into an output folder), :func:`accept` is the maintainer's step: it checks
that each result was made from the folder's files as they are now, copies it into the board's results and
re-renders the board.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from kgpubench.board.evaluation import SubmissionError, file_sha256, result_json
from kgpubench.errors import DataFileNotFoundError, SchemaValidationError

META = "submission.yaml"
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
    from kgpubench.tasks import get_task

    if not isinstance(value, list) or not value or len(value) > MAX_RUNS:
        raise _bad(folder, f"`runs` must be a list of 1 to {MAX_RUNS} {{task: ..., scheme: ...}} entries")
    out = []
    for i, entry in enumerate(value, 1):
        if not isinstance(entry, dict) or set(entry) != {"task", "scheme"}:
            shown = sorted(map(str, entry))[:5] if isinstance(entry, dict) else f"a {type(entry).__name__}"
            raise _bad(folder, f"runs entry {i} must have exactly the keys task and scheme, got {shown}")
        name = _text(folder, f"runs entry {i}: task", entry["task"], 100)
        scheme = _text(folder, f"runs entry {i}: scheme", entry["scheme"], 100)
        task = get_task(name)  # unknown names: one line with "did you mean"
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
    from kgpubench.board.submission import check_factory, declared_tasks, read_predictions

    folder = Path(folder)
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
    from kgpubench.board.leaderboard import baseline_files

    if name in {p.stem for p in baseline_files()} or name == "oracle":
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
    from kgpubench.board.leaderboard import result_path

    return result_path(root, task, scheme, sub.name)


def _label(path: Path) -> str:
    """The file's path as a result names it: relative to the project, else to the working folder (CI runs in
    the repository root, where both agree)."""
    from kgpubench.board.leaderboard import project_root

    for root in (project_root(), Path.cwd()):
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


def run_submission(folder: Path | str, out_dir: Path | str, *, data_dir: Path | str | None = None,
                   timeout_s: float | None = None, memory_gb: float | None = None, threads: int = 1,
                   trust: bool = False, progress=None, force: bool = False) -> list[Path]:
    """The CI job: score every run of the submission and write ``<out_dir>/<task>/<scheme>/<name>.json``.

    Every result file is checked before anything runs: one that exists is refused unless ``force``.

    A model runs with its code in the sandbox (a fresh child per fold, no network, limits); predictions are
    scored as given. Returns the files written, one per run, in the order of ``runs``.
    """
    from kgpubench.board.evaluation import evaluate
    from kgpubench.board.submission import score_predictions
    from kgpubench.sandbox.session import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
    from kgpubench.store.shards import atomic_write_bytes, check_writable, refuse_stdout

    refuse_stdout(out_dir, "a folder of result files")
    sub = read_submission(folder)
    for task, scheme in sub.runs:
        check_writable(result_file(Path(out_dir), sub, task, scheme), force=force)
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
        result = replace(result, model=sub.name, model_file=_label(path),
                         extra={**result.extra, "submission": sub.record()})
        out = result_file(Path(out_dir), sub, task, scheme)
        atomic_write_bytes(out, result_json(result).encode(), overwrite=force)
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
    from kgpubench.board.leaderboard import load_results, results_dir
    from kgpubench.board.result import read_result_json
    from kgpubench.store.shards import atomic_write_bytes

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
        dest = result_file(board, sub, task, scheme)
        if dest.exists() and not force:
            raise SubmissionError(f"{dest}: a result of {sub.name} is already on the board; pass --force to "
                                  "replace it.")
        plan.append((src, dest))
    for src, dest in plan:
        atomic_write_bytes(dest, src.read_bytes())
    if render:
        from kgpubench.board.site import render_all

        render_all(load_results(board, mark_stale=True), board.parent, results_dir=board)
    return [dest for _, dest in plan]


