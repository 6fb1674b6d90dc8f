"""Run a submitted model file in a sandbox and get back nothing but checked predictions.

The maintainer runs strangers' code (``docs/SECURITY.md``). A :class:`ModelSession` holds one model file for
one task and is fed fold by fold: training features (Arrow IPC), training targets (``.npy``), test features.
A child process imports the model, fits, predicts and sends the predictions back; it never holds test
targets, the store, the package data or the evaluator's objects. Each fold gets a fresh child (forked in
~0.1 s from a zygote with the common libraries imported), so nothing learnt from one fold's training
targets survives to a fold that tests those rows. The parent alone checks the predictions
(:func:`kgpubench.sandbox.checks.checked_predictions`), scores, hashes and writes results.

:class:`ModelSession` is the sandbox's public entry point: ``kgpubench.models.evaluation.evaluate`` (the
leaderboard, ``submit``, ``verify``, and each fold task of the Ray path) feeds it, and reads back every fold's
checked predictions (:attr:`ModelSession.predictions`) and their hash (:attr:`ModelSession.predictions_sha256`,
:func:`predictions_sha256`, with which the Ray path joins folds run apart).

On Linux the child runs in new user, mount, network, PID, IPC and UTS namespaces
(:mod:`kgpubench.sandbox.linux`): a read-only view of the interpreter, site-packages, ``/usr`` and the
kgpubench code (package data masked), a private size-limited ``/tmp``, no home, no repository, no network,
and every descendant dies with the child. rlimits cap its address space, CPU time, processes and file
size; its output is kept up to a cap; one time budget covers every wait on it (all folds). Where the kernel
does not allow this, :class:`ModelSession` refuses unless ``trust=True`` (``--trust``).

>>> with ModelSession("baselines/median.py", "kernel-time") as session:  # doctest: +SKIP
...     session.fit(X_train, y_train)
...     pred = session.predict(X_test)
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import signal
import site
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgpubench.buildinfo import PACKAGE_DIR
from kgpubench.errors import MeasurementError, SandboxError, SandboxUnavailableError, SubmissionError
from kgpubench.sandbox.checks import checked_predictions
from kgpubench.sandbox.child import SETUP_EXIT, array_to_npy, frame_to_ipc, npy_to_array
from kgpubench.sandbox.limits import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
from kgpubench.sandbox.model_file import MAX_MODEL_BYTES, read_model_file
from kgpubench.sandbox.process import SMALL_PAYLOAD, Child, OutputLog, Stop
from kgpubench.tasks import Task, get_task

TRUST_ENV = "KGPUBENCH_TRUST"  # "1": as if --trust were given everywhere (the test suite on hosts without namespaces)
TRUST_HINT = "pass --trust (trust=True) only for code you trust, to run it unisolated"
__all__ = ["DEFAULT_MEMORY_GB", "DEFAULT_TIMEOUT_S", "MAX_MODEL_BYTES", "FitInfo", "Limits", "ModelSession",
           "PredictionsDigest", "RemoteModel", "SandboxError", "checked_predictions", "isolation_support",
           "predictions_sha256", "sandbox_plan"]


# --------------------------------------------------------------------------------------------- the view


def _inside(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def sandbox_plan(hide=(), limits: Limits | None = None) -> dict:
    """What the isolated child sees: read-only binds, masks over package data and ``hide``, symlinks, sizes."""
    limits = limits or Limits()
    package = os.path.realpath(PACKAGE_DIR)
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "/usr", package,
              *site.getsitepackages()}
    if site.ENABLE_USER_SITE and site.getusersitepackages() in sys.path:
        wanted.add(site.getusersitepackages())
    real = sorted({os.path.realpath(p) for p in wanted if os.path.exists(p)})
    binds = [p for i, p in enumerate(real) if not _inside(p, real[:i])]
    if os.path.isfile("/etc/ld.so.cache"):
        binds.append("/etc/ld.so.cache")
    symlinks = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            symlinks.append([path, os.readlink(path)])
        elif os.path.isdir(path) and not _inside(path, binds):
            binds.append(path)
    for path in sorted({*sys.path, sys.prefix, sys.base_prefix, sys.executable}):
        if path and os.path.isabs(path) and os.path.exists(path) and not _inside(path, binds) \
                and _inside(os.path.realpath(path), binds) and not _inside(path, [s[0] for s in symlinks]):
            symlinks.append([path, os.path.realpath(path)])
    masks = [os.path.realpath(p) for p in (os.path.join(package, "data"), os.path.join(package, "_bundled"), *hide)]
    masks = sorted({m for m in masks if os.path.exists(m) and _inside(m, binds)})
    return {"binds": binds, "masks": masks, "symlinks": symlinks, "tmp_mb": max(1, int(limits.disk_mb)),
            "shm_mb": max(1, min(256, int(limits.disk_mb)))}


# ------------------------------------------------------------------------------------------- the digest


class PredictionsDigest:
    """sha256 over folds' checked predictions, in the order they were made: for each, ``"<fold index>:<rows>:"``
    and the values as little-endian float64 (results record it as ``predictions_sha256``)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.folds = 0

    def update(self, pred: np.ndarray) -> None:
        """Add the next fold's predictions (a float64 vector, as :func:`checked_predictions` gives)."""
        self._hash.update(f"{self.folds}:{len(pred)}:".encode())
        self._hash.update(np.asarray(pred, dtype="<f8").tobytes())
        self.folds += 1

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def predictions_sha256(predictions: Iterable[np.ndarray]) -> str:
    """:class:`PredictionsDigest` of ``predictions`` (one array per fold, in fold order): what one session over
    all these folds reports as :attr:`ModelSession.predictions_sha256`."""
    digest = PredictionsDigest()
    for pred in predictions:
        digest.update(pred)
    return digest.hexdigest()


@functools.cache
def isolation_support() -> tuple[bool, str]:
    """Whether this machine can run the isolated child, and if not why (probed once per process)."""
    if not sys.platform.startswith("linux"):
        return False, f"kernel isolation needs Linux namespaces; this is {sys.platform}"
    child = Child({"isolate": True, "probe": True, "plan": sandbox_plan(), "limits": Limits().child_limits()},
                  threads=1, timeout_s=60.0, output_bytes=1 << 20, warm=False)  # no zygote for a probe
    try:
        header, _ = child.channel.recv(time.monotonic() + child.remaining)
    except Stop:
        code = child.finished(1.0)
        child.channel.drain_log(0.2)
        return False, child.setup_failure() or f"the probe exited with code {code}"
    finally:
        child.stop()
    return (True, "") if header.get("type") == "hello" and header.get("isolated") else (False, "no hello")


# ------------------------------------------------------------------------------------------- the session


@dataclass(frozen=True)
class FitInfo:
    """What the child reported about the fitted model (as the parent reads it, after the fit)."""

    uses_measurements: bool
    predicts_target: bool


class ModelSession:
    """A sandboxed child holding one model file for one task; fed fold by fold (see the module docstring).

    Parameters
    ----------
    model : path
        The model file (``make_model(task, seed)``); its bytes are hashed as sent (:attr:`model_sha256`).
    task : Task or str
        The task handed to ``make_model``.
    seed : int
        Seed handed to ``make_model``.
    limits : Limits, optional
        Time, memory, threads, processes, disk, output.
    trust : bool
        Run without kernel isolation where it is unavailable (still a separate, limited process); also
        given by ``KGPUBENCH_TRUST=1`` in the environment.
    hide : iterable of path
        More paths to mask if the child's view would include them (a store passed with ``--data``).
    name : str, optional
        How errors name the model (default: the file name).
    isolate : bool, optional
        None (default): isolate where the kernel allows it, else refuse unless ``trust``. False: never
        isolate (needs ``trust``; for code you trust, or to show what an escape does unconfined). True: isolate
        or refuse, whatever ``trust`` says.
    fresh_folds : bool
        A new child for every :meth:`fit` (default). Every row is a training row of some other fold, so a
        child that lived through several folds could keep one fold's training targets (in memory, in its
        ``/tmp``, in a process) and look them up when a later fold tests those rows; a fresh child, forked
        from the zygote in a fresh sandbox, starts with nothing. False keeps one child for all folds.

    Attributes
    ----------
    model_sha256 : str
        sha256 of the model file's bytes, as sent to the child.
    predictions : list of numpy.ndarray
        Every fold's checked predictions (float64, one per test row), in the order :meth:`predict` made them.
    predictions_sha256 : str
        Their hash (:class:`PredictionsDigest`).
    cpu_s : float
        CPU seconds the session's sandboxed processes used, summed over the children stopped so far
        (:func:`kgpubench.sandbox.process.tree_cpu_seconds`; complete once the session is closed).
    """

    def __init__(self, model: Path | str, task: Any, *, seed: int = 0, limits: Limits | None = None,
                 trust: bool = False, hide=(), name: str | None = None, isolate: bool | None = None,
                 fresh_folds: bool = True) -> None:
        model_file = read_model_file(model)
        self.path = model_file.path
        self.source = model_file.source
        self.model_sha256 = model_file.sha256
        self.task = task if isinstance(task, Task) else get_task(task)
        self.seed = seed
        self.limits = limits or Limits()
        self.trust = trust
        self.hide = tuple(str(h) for h in hide if h)
        self.name = name or self.path.name
        self.isolate = isolate
        self.isolated = False
        self.declared_tasks: tuple[str, ...] | None = None
        self.fresh_folds = fresh_folds
        self._child: Child | None = None
        self._next: Child | None = None  # fresh folds: the next fold's child, started while this one fits
        self._ready = False  # whether the current child has imported the model
        self._child_fits = 0  # fits made by the current child
        self._remaining = self.limits.timeout_s  # the time budget: seconds left to wait on children
        self._ended = False
        self._plan: dict | None = None
        self.predictions: list[np.ndarray] = []
        self._digest = PredictionsDigest()
        self.cpu_s = 0.0  # CPU seconds of the children stopped so far (Child.cpu_s)

    # -- lifecycle
    def __enter__(self) -> ModelSession:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Launch the child, send the model and wait until it is imported (errors name the file)."""
        try:
            self._child, self._child_fits = self._launch(), 0
            self._await_ready()
        except BaseException:
            self.close()
            raise

    def _launch(self) -> Child:
        """A new child with the model sent (not waited for: it boots while the parent works)."""
        trust = self.trust or os.environ.get(TRUST_ENV) == "1"
        if self.isolate is False:
            if not trust:
                raise SandboxUnavailableError(f"refusing to run {self.name} unisolated without trust; {TRUST_HINT}.")
            isolate = False
        else:
            isolate, why = isolation_support()
            if not isolate and (self.isolate or not trust):
                raise SandboxUnavailableError(f"refusing to run {self.name}: this machine cannot isolate model code "
                                              f"({why}); {TRUST_HINT}.")
        cfg = {"isolate": isolate, "limits": self.limits.child_limits()}
        if isolate:
            if self._plan is None:
                self._plan = sandbox_plan(self.hide, self.limits)
            cfg["plan"] = self._plan
        child = Child(cfg, threads=self.limits.threads, timeout_s=self._remaining,
                      output_bytes=int(self.limits.output_mb * 2**20))
        stem = re.sub(r"\W", "_", self.path.stem) or "model"
        child.channel.send({"type": "init", "name": f"{stem}.py", "task": asdict(self.task), "seed": self.seed,
                            "threads": self.limits.threads}, [self.source])
        child.isolate = isolate
        return child

    def _await_ready(self) -> None:
        """Wait until the current child has built its sandbox and imported the model."""
        isolate = self._child.isolate
        self._ready = False
        hello = self._recv("starting", {"hello"}, setup=isolate)
        self.isolated = bool(hello.get("isolated"))
        if isolate and not self.isolated:
            self._fail("protocol", "the child did not report isolation")
        reply = self._recv("importing the model", {"ready", "error"})
        if reply["type"] == "error":
            self._fail("import", f"importing the model failed: {str(reply.get('message'))[:600]}")
        tasks = reply.get("tasks")
        self.declared_tasks = tuple(str(t) for t in tasks) if isinstance(tasks, list) else None
        self._ready = True

    def close(self) -> None:
        """Stop the children and everything they started; the session is over (idempotent)."""
        self._ended = True
        self._retire()
        if self._next is not None:
            self._next.stop()
            self.cpu_s += self._next.cpu_s
            self._next = None

    def _retire(self) -> None:
        """Stop the current child (the time it used stays spent)."""
        if self._child is not None and not self._child.stopped:
            self._child.channel.drain_log(0.0)
            self._child.stop()
            self.cpu_s += self._child.cpu_s

    @property
    def token(self) -> str | None:
        """The current child's random id: every process of it is named ``kgpb-<token[:10]>`` (for audits)."""
        return self._child.token if self._child else None

    @property
    def log(self) -> str:
        """The head and tail of what the model printed (in the current child)."""
        return self._child.channel.log.text() if self._child else ""

    @property
    def predictions_sha256(self) -> str:
        """sha256 over every fold's checked predictions (float64, in the order they were made:
        :class:`PredictionsDigest`)."""
        return self._digest.hexdigest()

    # -- folds
    def fit(self, X, y) -> FitInfo:
        """A new estimator from ``make_model(task, seed)``, fitted on ``X`` (DataFrame) and ``y``."""
        if self.fresh_folds and self._child is not None and self._child_fits and not self._ended:
            self._retire()  # a new fold gets a new child: the one started during the last fit, if any
            self._child, self._next, self._child_fits, self._ready = self._next, None, 0, False
        self._require()
        if not self._ready:
            self._await_ready()
        self._child_fits += 1
        self._child.channel.send({"type": "fit", "n": len(X)},
                                 [self._features(X), array_to_npy(np.asarray(y, dtype=np.float64))])
        if self.fresh_folds and self._next is None:
            self._next = self._launch()  # boots on another core while this fold fits
        reply = self._recv("fit()", {"fitted", "error"})
        if reply["type"] == "error":
            self._model_error("fit()", reply.get("message"))
        flags = (reply.get("uses_measurements"), reply.get("predicts_target"))
        if not all(isinstance(f, bool) for f in flags):
            self._fail("protocol", "it sent a malformed fit reply")
        return FitInfo(*flags)

    def predict(self, X, problems=None) -> np.ndarray:
        """Checked predictions (:func:`kgpubench.sandbox.checks.checked_predictions`: float64, one finite value
        per row) for the rows of ``X``; ``problems`` (the real problems of the task's oracle) are described to the
        child and their ``measure`` served and counted here. Each fold's predictions are also appended to
        :attr:`predictions` and hashed into :attr:`predictions_sha256`."""
        self._require()
        described = None if problems is None else [p.describe() for p in problems]
        self._child.channel.send({"type": "predict", "n": len(X), "problems": described}, [self._features(X)])
        n = len(X)
        while True:
            reply = self._recv("predict()", {"measure", "predictions", "invalid", "error"},
                               max_payload=16 * n + SMALL_PAYLOAD)
            if reply["type"] != "measure":
                break
            self._child.channel.send(_serve_measure(reply, problems))
        if reply["type"] == "error":
            self._model_error("predict()", reply.get("message"))
        if reply["type"] == "invalid":
            self._fail("invalid-output", f"refused, {str(reply.get('message'))[:300]}; expected a 1-D array of {n} "
                                         "numbers", fatal=False)
        if len(reply["_blobs"]) != 1:
            self._fail("protocol", "it sent predictions without an array")
        try:
            arr = npy_to_array(reply["_blobs"][0])
        except (ValueError, OSError, EOFError) as exc:
            self._fail("invalid-output", f"refused, its predictions are not a numeric .npy array ({exc})")
        pred = checked_predictions(arr, n, self.name)
        self.predictions.append(pred)
        self._digest.update(pred)
        return pred

    def factory(self, task=None, seed=None) -> RemoteModel:
        """A ``make_model``-like callable's result: an estimator whose fit/predict run in this session."""
        return RemoteModel(self)

    # -- internals
    def _features(self, X) -> memoryview:
        try:
            return frame_to_ipc(X)
        except (TypeError, ValueError) as exc:  # pyarrow's ArrowInvalid/ArrowTypeError are ValueError/TypeError
            raise SubmissionError(f"{self.name}: the features cannot be sent to the sandbox ({exc}).") from None

    def _require(self) -> None:
        if self._child is None and not self._ended:
            self._child, self._child_fits = self._launch(), 0
        elif self._ended or self._child.stopped or not self._child.channel.r_open:
            raise SandboxError(f"{self.name}: the session has ended; start a new one.", "protocol")

    def _recv(self, step: str, allowed: set[str], max_payload: int = SMALL_PAYLOAD, setup: bool = False) -> dict:
        child = self._child
        start = time.monotonic()
        try:
            header, blobs = child.channel.recv(start + self._remaining, max_payload)
        except Stop as stop:
            self._stopped(stop, step, setup)
        finally:
            self._remaining -= time.monotonic() - start
        if header["type"] not in allowed:
            self._fail("protocol", f"it sent {header['type']!r} while {step} (expected {', '.join(sorted(allowed))})")
        header["_blobs"] = blobs
        return header

    def _stopped(self, stop: Stop, step: str, setup: bool) -> None:
        child = self._child
        if stop.kind == "closed":
            code = child.finished(1.0)
            child.channel.drain_log(0.2)
            if setup and code == SETUP_EXIT and child.setup_failure():
                self.close()
                raise SandboxUnavailableError(f"refusing to run {self.name}: the sandbox could not be built "
                                              f"({child.setup_failure()}); {TRUST_HINT}.")
            self._fail(*_crash(code, child.channel.log, self.limits, step))
        if stop.kind == "timeout":
            self._fail("timeout", f"refused, it exceeded the time limit of {self.limits.timeout_s:g} s while {step}; "
                                  "make the model faster or raise --timeout")
        self._fail(stop.kind, f"refused, {stop.detail} while {step}")

    def _fail(self, kind: str, message: str, fatal: bool = True) -> None:
        """Raise :class:`SandboxError`; a fatal failure also stops the child (a refused output or an exception
        in the model's own code leaves it answering, as the parent may go on to the next fold)."""
        log = self.log
        if fatal:
            self.close()
        raise SandboxError(f"{self.name}: {message.rstrip('.')}.", kind, log)

    def _model_error(self, step: str, message: Any) -> None:
        message = str(message)[:600]
        if message.startswith("MemoryError"):
            self._fail("memory", f"ran out of memory in {step} (limit {self.limits.memory_gb:g} GiB of address space; "
                                 f"{message}); raise --memory-gb or use less", fatal=False)
        self._fail("model-error", f"{step} failed: {message}", fatal=False)


def _crash(code: int | None, log: OutputLog, limits: Limits, step: str) -> tuple[str, str]:
    text = log.text()
    last = log.last_line()
    said = f" (its last output: {last})" if last else ""
    if "MemoryError" in text or "bad_alloc" in text or "Cannot allocate memory" in text:
        return "memory", (f"ran out of memory while {step} (limit {limits.memory_gb:g} GiB of address space); "
                          f"raise --memory-gb or use less{said}")
    signals = {signal.SIGXCPU: f"CPU time limit of {limits.child_limits()['cpu_s']} s",
               signal.SIGXFSZ: f"file size limit of {limits.disk_mb:g} MiB", signal.SIGKILL: "SIGKILL",
               signal.SIGSEGV: "segmentation fault", signal.SIGABRT: "abort"}
    if code is None:
        return "exit", f"closed its output while {step} without answering{said}"
    if code > 128:
        name = signals.get(code - 128, f"signal {code - 128}")
        return "crash", f"the model process was killed ({name}) while {step}{said}"
    return "exit", f"the model process exited with code {code} while {step}, without answering{said}"


def _serve_measure(request: dict, problems) -> dict:
    """Answer one ``measure`` request from the real problem (which counts it), or say why not."""
    index, assignment = request.get("problem"), request.get("assignment")
    if problems is None or type(index) is not int or not 0 <= index < len(problems) or not isinstance(
            assignment, dict) or not all(isinstance(k, str) and type(v) is int for k, v in assignment.items()):
        return {"type": "measure_error", "message": "malformed measure request"}
    try:
        got = problems[index].measure(assignment)
    except MeasurementError as exc:
        return {"type": "measure_error", "message": str(exc)}
    return {"type": "measurement", **got.to_wire()}


class RemoteModel:
    """The estimator :meth:`ModelSession.factory` returns: fit and predict run in the session's child."""

    def __init__(self, session: ModelSession) -> None:
        self.session = session
        self.uses_measurements = False
        self.predicts_target = True

    def fit(self, X, y) -> RemoteModel:
        info = self.session.fit(X, y)
        self.uses_measurements, self.predicts_target = info.uses_measurements, info.predicts_target
        return self

    def predict(self, X, problems=None) -> np.ndarray:
        return self.session.predict(X, problems=problems)
