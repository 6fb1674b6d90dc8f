"""The sandbox's child side: ``python -m kgpubench.sandbox.child TOKEN CONFIG_JSON``, or forked by the zygote
(``python -m kgpubench.sandbox.child zygote FD``, :func:`zygote`), which has the common libraries imported.

Started by :class:`kgpubench.sandbox.session.ModelSession`, never by hand. With isolation, the process tree is::

    launcher (outside, writes the id maps, reports the exit code on STATUS_FD)
      stage 1 (new namespaces; dies with the launcher)
        stage 2 = PID 1 of the new PID namespace (builds the root, drops privileges, reaps; dies with stage 1)
          server (rlimits; imports the model, fits and predicts on what the parent sends)

Killing the launcher kills stage 1, which kills PID 1, and the kernel then kills every process left in the
namespace, ``setsid`` or not. Without isolation (``--trust``) the server is the launcher's child.

The protocol is frames on the server's stdin/stdout (see :func:`frame_parts`); what the model prints goes
to stderr, which the parent keeps only the head and tail of. The server never receives test targets: the
parent sends training features and targets, test features, and, for a measuring task, problem descriptions
whose ``measure()`` is answered (and counted) by the parent.
"""

from __future__ import annotations

import fcntl
import functools
import importlib
import io
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import traceback

from kgpubench.errors import MeasurementError
from kgpubench.sandbox import linux as lx
from kgpubench.sandbox.model_file import module_from_source

# Standard library and kgpubench modules of the same kind only, at module level: the parent, the launcher and
# the isolation probe import this module too, and the launcher must stay small and single-threaded until it
# has built the sandbox. numpy, pandas, pyarrow, threadpoolctl and kgpubench.tasks (which imports them) are
# imported inside the functions of the server that use them; the zygote has them imported already
# (:data:`PRELOAD`), so a forked session finds them in ``sys.modules``.

FRAME = struct.Struct("<IQ")  # JSON header length, payload length
SETUP_EXIT = 71  # the sandbox could not be built (the message is the stderr line starting with SETUP_PREFIX)
SETUP_PREFIX = "kgpubench-sandbox: "
STATUS_FD = 3  # the launcher writes the session's exit code here
PRELOAD = ("numpy", "pandas", "pyarrow", "pyarrow.ipc", "threadpoolctl", "kgpubench.sandbox.checks",
           "kgpubench.tasks", "kgpubench.tasks.npb",
           "kgpubench.tasks.preprocess", "sklearn.base", "sklearn.utils.validation", "sklearn.pipeline",
           "sklearn.compose", "sklearn.impute", "sklearn.preprocessing", "sklearn.tree", "sklearn.ensemble",
           "sklearn.neighbors", "sklearn.linear_model", "sklearn.svm", "sklearn.neural_network", "scipy.optimize",
           "lightgbm", "xgboost", "pyseccomp")
MODEL_DIR = "kgpubench_model"


def frame_parts(header: dict, blobs=()) -> list:
    """A frame as buffers to write: 12-byte prefix, JSON header (with the blob lengths), the blobs."""
    blobs = [memoryview(b).cast("B") for b in blobs]
    raw = json.dumps({**header, "blobs": [len(b) for b in blobs]}, separators=(",", ":")).encode()
    return [FRAME.pack(len(raw), sum(len(b) for b in blobs)), raw, *blobs]


def split_blobs(header: dict, payload: memoryview) -> list[memoryview]:
    out, start = [], 0
    for size in header["blobs"]:
        out.append(payload[start:start + size])
        start += size
    return out


def frame_to_ipc(frame) -> memoryview:
    """A pandas DataFrame as an Arrow IPC stream (column names, dtypes and nulls survive the trip)."""
    import pyarrow as pa  # heavy: see the note on imports at the top

    table = pa.Table.from_pandas(frame, preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return memoryview(sink.getvalue())


def ipc_to_frame(data):
    """The DataFrame of :func:`frame_to_ipc`: numeric columns as sent, every other column ``object``."""
    import pandas as pd  # heavy: see the note on imports at the top
    import pyarrow as pa

    frame = pa.ipc.open_stream(pa.py_buffer(data)).read_all().to_pandas()
    strings = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    return frame.astype(dict.fromkeys(strings, object)).reset_index(drop=True)


def array_to_npy(array) -> bytes:
    import numpy as np  # heavy: see the note on imports at the top

    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def npy_to_array(data):
    import numpy as np  # heavy: see the note on imports at the top

    return np.load(io.BytesIO(bytes(data)), allow_pickle=False)


# ----------------------------------------------------------------------------------------------- server


class _Pipe:
    """Blocking frame I/O on the server's protocol descriptors."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out

    def _read_exact(self, n: int) -> memoryview | None:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            chunk = os.readv(self.fd_in, [view[got:]])
            if chunk == 0:
                return None
            got += chunk
        return view

    def recv(self) -> tuple[dict, list[memoryview]] | None:
        head = self._read_exact(FRAME.size)
        if head is None:
            return None
        hlen, plen = FRAME.unpack(head)
        raw = self._read_exact(hlen)
        payload = self._read_exact(plen) if plen else memoryview(b"")
        if raw is None or payload is None:
            return None
        header = json.loads(bytes(raw))
        return header, split_blobs(header, payload)

    def send(self, header: dict, blobs=()) -> None:
        for stream in (sys.stdout, sys.stderr):  # the model's output reaches the parent before the reply
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        for part in frame_parts(header, blobs):
            view = memoryview(part).cast("B")
            while view:
                view = view[os.write(self.fd_out, view):]


def _where(exc: BaseException, model_file: str) -> str:
    """`` (model.py line N)`` for the innermost traceback frame in the model file, else ''."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == model_file]
    return f" ({os.path.basename(model_file)} line {frames[-1].lineno})" if frames else ""


def _describe(exc: BaseException, model_file: str) -> str:
    if isinstance(exc, SystemExit):
        return f"the model called sys.exit({exc.code!r}){_where(exc, model_file)}"
    text = " ".join(str(exc).split())
    if len(text) > 400:
        text = text[:400] + "..."
    return f"{type(exc).__name__}: {text}{_where(exc, model_file)}"


def _task_from(fields: dict):
    from kgpubench.tasks import Task  # imports numpy and pyarrow: see the note on imports at the top

    def tup(v):
        return tuple(tup(x) for x in v) if isinstance(v, list) else v

    return Task(**{k: tup(v) for k, v in fields.items()})


class Server:
    """Imports the model sent by the parent and answers ``fit``, ``predict`` and ``close`` frames."""

    def __init__(self, pipe: _Pipe) -> None:
        self.pipe = pipe
        self.model = None
        self.model_file = ""

    def run(self) -> int:
        first = self.pipe.recv()
        if first is None or first[0].get("type") != "init":
            return 2
        header, blobs = first
        self._threads(int(header["threads"]))
        try:
            self.task = _task_from(header["task"])
            self.seed = header["seed"]
            self.factory, tasks = self._import(header["name"], blobs[0])
        except BaseException as exc:  # anything the model's import raises, SystemExit included
            self.pipe.send({"type": "error", "stage": "import", "message": _describe(exc, self.model_file)})
            return 0
        self.pipe.send({"type": "ready", "tasks": tasks})
        while True:
            frame = self.pipe.recv()
            if frame is None or frame[0].get("type") == "close":
                return 0
            header, blobs = frame
            stage = header.get("type")
            try:
                reply, out = (self._fit if stage == "fit" else self._predict)(header, blobs)
            except BaseException as exc:
                self.pipe.send({"type": "error", "stage": stage, "message": _describe(exc, self.model_file)})
                continue
            self.pipe.send(reply, out)

    @staticmethod
    def _threads(n: int) -> None:
        try:
            from threadpoolctl import threadpool_limits  # optional here, and heavy: see the note at the top
        except ImportError:
            return
        threadpool_limits(limits=n)

    def _import(self, name: str, source) -> tuple:
        """Run the model's source as module ``kgpubench_model_<stem>`` (from memory: nothing is written, so
        unisolated sessions cannot overwrite each other's files; tracebacks still show its lines)."""
        self.model_file = f"/{MODEL_DIR}/{name}"
        module = module_from_source(f"kgpubench_model_{name[:-3]}", bytes(source), self.model_file)
        factory = getattr(module, "make_model", None)
        if not callable(factory):
            raise LookupError("the module defines no callable make_model(task, seed)")
        tasks = getattr(module, "TASKS", None)
        tasks = [t for t in tasks if isinstance(t, str)] if isinstance(tasks, (list, tuple)) else None
        return factory, tasks

    def _fit(self, header: dict, blobs: list) -> tuple[dict, list]:
        X, y = ipc_to_frame(blobs[0]), npy_to_array(blobs[1])
        self.model = None
        model = self.factory(task=self.task, seed=self.seed)
        model.fit(X, y)
        self.model = model
        return {"type": "fitted", "uses_measurements": bool(getattr(model, "uses_measurements", False)),
                "predicts_target": bool(getattr(model, "predicts_target", True))}, []

    def _predict(self, header: dict, blobs: list) -> tuple[dict, list]:
        import numpy as np  # heavy: see the note on imports at the top

        from kgpubench.sandbox.checks import not_numbers  # imports numpy

        if self.model is None:
            raise RuntimeError("predict before a successful fit")
        X = ipc_to_frame(blobs[0])
        if header.get("problems") is None:
            pred = self.model.predict(X)
        else:
            problems = _remote_problems(self.pipe, self.task, header["problems"])
            pred = self.model.predict(X, problems=problems)
        arr = np.asarray(pred)
        why = not_numbers(pred, arr)  # the parent checks again what it receives (checked_predictions)
        if why:
            return {"type": "invalid", "message": why}, []
        return {"type": "predictions"}, [array_to_npy(arr)]


def _remote_problems(pipe: _Pipe, task, described: list) -> list:
    """The problems of ``task``'s measurement oracle, rebuilt from what the parent described; each ``measure``
    asks the parent (which measures and counts) through :func:`_ask_parent`."""
    from kgpubench.tasks.scoring import remote_oracle_of  # loaded with the Task already

    rebuild = remote_oracle_of(task)
    return [rebuild(d, functools.partial(_ask_parent, pipe, i)) for i, d in enumerate(described)]


def _ask_parent(pipe: _Pipe, index: int, assignment: dict) -> dict:
    """The parent's answer to measuring ``assignment`` on problem ``index``; the parent going away ends the child,
    and a refusal is the :class:`MeasurementError` the model sees."""
    pipe.send({"type": "measure", "problem": index, "assignment": assignment})
    reply = pipe.recv()
    if reply is None:
        raise SystemExit(0)
    if reply[0].get("type") != "measurement":
        raise MeasurementError(str(reply[0].get("message")))
    return reply[0]


def _apply_limits(limits: dict, isolated: bool) -> None:
    def cap(which: int, soft: int, hard: int | None = None) -> None:
        hard = soft if hard is None else hard
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))

    cap(resource.RLIMIT_AS, limits["memory_bytes"])
    cap(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 5)
    cap(resource.RLIMIT_FSIZE, limits["file_bytes"])
    cap(resource.RLIMIT_CORE, 0)
    if isolated:  # outside a user namespace the count would be every process of the caller's user
        cap(resource.RLIMIT_NPROC, limits["processes"])
        for name, value in lx.RLIMITS.items():  # per-user accounting shared with other sandboxes
            cap(getattr(resource, name), value)


def serve(cfg: dict, isolated: bool, has_proc: bool = False) -> int:
    """Become the server: protocol on private descriptors, model output to stderr, limits, then the loop."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _apply_limits(cfg["limits"], isolated)
    pipe = _Pipe(fd_in, fd_out)
    pipe.send({"type": "hello", "isolated": isolated, "proc": has_proc, "uid": os.getuid()})
    if cfg.get("probe"):
        return 0
    return Server(pipe).run()


# ----------------------------------------------------------------------------------------------- launcher


def _setup_failed(message: str) -> int:
    os.write(2, f"{SETUP_PREFIX}{' '.join(message.split())}\n".encode(errors="replace"))
    return SETUP_EXIT


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _close_stdio() -> None:
    """Leave the protocol pipes to the server: a waiting stage must not keep them open."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)


def _stage2(cfg: dict) -> int:
    """PID 1 of the sandbox: build the root, drop privileges, run the server as a child and reap."""
    lx.prctl(lx.PR_SET_PDEATHSIG, signal.SIGKILL)
    has_proc = lx.build_root(cfg["plan"])
    lx.set_hostname("kgpubench-sandbox")
    server = os.fork()
    if server == 0:
        try:
            lx.drop_privileges(cfg["model_uid"])
            lx.install_seccomp()
            os._exit(serve(cfg, isolated=True, has_proc=has_proc))
        except BaseException:  # noqa: B036 - the server process must never return into the launcher
            traceback.print_exc()
            os._exit(1)
    lx.drop_privileges()
    _close_stdio()
    while True:
        pid, status = os.wait()
        if pid == server:
            return _exit_code(status)


def _stage1(cfg: dict, launcher: int, ready_w: int, go_r: int) -> int:
    if os.geteuid() == 0:
        os.setgroups([])
    lx.unshare_all()
    os.write(ready_w, b"U")
    os.close(ready_w)
    if os.read(go_r, 1) != b"M":
        return SETUP_EXIT
    os.close(go_r)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    lx.die_with_parent(launcher)
    pid1 = os.fork()
    if pid1 == 0:
        try:
            os._exit(_stage2(cfg))
        except BaseException as exc:  # noqa: B036 - report any setup failure as one line
            os._exit(_setup_failed(f"building the sandbox failed: {exc}"))
    _close_stdio()
    _, status = os.waitpid(pid1, 0)
    return _exit_code(status)


def launch(cfg: dict) -> int:
    """Start stage 1 in new namespaces, write its id maps from outside, and wait for it."""
    cfg["model_uid"] = lx.id_maps()[2]
    try:
        lx.load_seccomp()  # here, while the host's library paths are visible
    except OSError as exc:
        return _setup_failed(str(exc))
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    launcher = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        os.close(STATUS_FD)
        try:
            os._exit(_stage1(cfg, launcher, ready_w, go_r))
        except BaseException as exc:  # noqa: B036
            os._exit(_setup_failed(str(exc)))
    os.close(ready_w)
    os.close(go_r)
    _close_stdio()
    ok = os.read(ready_r, 1) == b"U"
    if ok:
        try:
            lx.write_id_maps(pid, launcher)
            os.write(go_w, b"M")
        except OSError as exc:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return _setup_failed(str(exc))
    os.close(go_w)
    _, status = os.waitpid(pid, 0)
    return _exit_code(status)


def _unconfined(cfg: dict) -> int:
    """Without isolation (``--trust``): the server is a child of the launcher, which reports its exit."""
    pid = os.fork()
    if pid == 0:
        os.close(STATUS_FD)
        try:
            os._exit(serve(cfg, isolated=False))
        except BaseException:  # noqa: B036
            traceback.print_exc()
            os._exit(1)
    _close_stdio()
    _, status = os.waitpid(pid, 0)
    return _exit_code(status)


def run_session(cfg: dict, token: str, status_fd: int = STATUS_FD) -> int:
    """The launcher of one session (fd 0/1 protocol, 2 output, STATUS_FD its exit code for the parent)."""
    if status_fd != STATUS_FD:
        os.dup2(status_fd, STATUS_FD)
        os.close(status_fd)
    try:
        lx.set_name(f"kgpb-{token[:10]}")  # inherited by every process of the session, for audits
    except OSError:
        pass
    code = launch(cfg) if cfg["isolate"] else _unconfined(cfg)
    try:
        os.write(STATUS_FD, f"{code}\n".encode())
    except OSError:
        pass
    return code


def _preload() -> None:
    """What most models import, imported once in the zygote so that each session starts warm."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional library that is absent or broken is simply not warm
            pass


def zygote(ctl: int) -> int:
    """Fork server: with the common libraries imported, fork one launcher per request on socket ``ctl``.

    A request is a JSON ``{"cfg", "env", "token"}`` with four descriptors (the session's stdin, stdout,
    stderr and status pipe); the reply is ``{"pid"}`` with a pidfd of the launcher, which the parent uses
    to kill it. The zygote never receives data; it exits when the parent closes the socket.
    """
    _preload()
    if len(os.listdir("/proc/self/task")) > 1:  # forking a threaded process is unsafe: let the parent go without
        return 3
    sock = socket.socket(fileno=ctl)
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        if not select.select([sock], [], [], 0.5)[0]:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 22, 4)
        except OSError:
            return 0
        if not msg:
            return 0
        request = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                sock.close()
                high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]  # out of the way of 0..3 first
                for target, fd in enumerate(high):
                    os.dup2(fd, target)
                os.closerange(STATUS_FD + 1, 1 << 16)
                os.setsid()
                os.environ.clear()
                os.environ.update(request["env"])
                code = run_session(request["cfg"], request["token"])
            except BaseException:  # noqa: B036 - a forked launcher must never return into the zygote
                traceback.print_exc()
            os._exit(code)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
        finally:
            os.close(pidfd)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "zygote":
        return zygote(int(argv[1]))
    return run_session(json.loads(argv[1]), argv[0], int(argv[2]))


if __name__ == "__main__":
    raise SystemExit(main())
