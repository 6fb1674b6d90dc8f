"""The parent's end of a sandbox session: launching the child, the pipes, the child's output, killing it.

:class:`Child` launches one session: forked by this process's :class:`Zygote` (a fork server with the
common libraries imported) where possible, else as a fresh interpreter; either way the launcher is
``kgpubench.sandbox.child.run_session``. :class:`Channel` moves frames under a deadline without ever blocking
on the child, and keeps only the head and tail of what it prints (:class:`OutputLog`). Used by
:mod:`kgpubench.sandbox.session`; nothing here knows about models or tasks.
"""

from __future__ import annotations

import atexit
import collections
import fcntl
import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

from kgpubench.sandbox.child import FRAME, SETUP_PREFIX, frame_parts, split_blobs
from kgpubench.sandbox.limits import thread_env

MAX_HEADER_BYTES = 1 << 20
SMALL_PAYLOAD = 1 << 16
LOG_HEAD, LOG_TAIL = 4096, 16384


def child_env(threads: int) -> dict[str, str]:
    """The whole environment of a session (nothing of the caller's but ``PYTHONPATH``, each entry made absolute
    against the caller's working directory, since the child runs in ``/``): fixed locale, hash seed and thread
    counts, ``HOME`` and ``TMPDIR`` in the private ``/tmp``."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", "USER": "sandbox", "LOGNAME": "sandbox", "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1", "MALLOC_ARENA_MAX": "2", "MPLBACKEND": "Agg",
           "JE_ARROW_MALLOC_CONF": "background_thread:false"}  # no pyarrow allocator thread: the zygote forks
    env.update(thread_env(threads))
    if os.environ.get("PYTHONPATH"):  # "" or "." is the caller's directory, as Python reads it
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(entry or os.curdir)
                                            for entry in os.environ["PYTHONPATH"].split(os.pathsep))
    return env


# ------------------------------------------------------------------------------------------- the pipes


class OutputLog:
    """The head and tail of what the child printed, and how much it printed in all."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = collections.deque()
        self.tail_bytes = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = LOG_HEAD - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk[-LOG_TAIL:])
            self.tail_bytes += len(self.tail[-1])
            while self.tail_bytes - len(self.tail[0]) >= LOG_TAIL:
                self.tail_bytes -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)[-LOG_TAIL:]
        skipped = self.total - len(self.head) - len(tail)
        middle = f"\n[... {skipped} bytes not kept ...]\n".encode() if skipped > 0 else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", "replace")

    def last_line(self) -> str:
        lines = [line.strip() for line in self.text().splitlines() if line.strip()]
        return lines[-1][:240] if lines else ""


class Stop(Exception):
    """Internal: why a receive ended without a frame (``kind``, detail)."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind)
        self.kind, self.detail = kind, detail


class Channel:
    """Non-blocking frames to and from the child under one deadline; its stderr drained into an OutputLog."""

    def __init__(self, w: int, r: int, e: int, output_limit: int) -> None:
        self.w, self.r, self.e = w, r, e
        for fd in (self.w, self.r, self.e):
            os.set_blocking(fd, False)
        for fd in (self.w, self.r):
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
            except (OSError, AttributeError, ImportError):
                pass
        self.pending: collections.deque[memoryview] = collections.deque()
        self.inbuf = bytearray()
        self.log = OutputLog()
        self.output_limit = output_limit
        self.r_open = self.e_open = self.w_open = True

    def close(self) -> None:
        for fd in (self.w, self.r, self.e):
            os.close(fd)
        self.r_open = self.e_open = self.w_open = False

    def send(self, header: dict, blobs=()) -> None:
        if self.w_open:
            self.pending.extend(memoryview(p).cast("B") for p in frame_parts(header, blobs) if len(p))

    def _frame(self, max_payload: int) -> tuple[dict, list[memoryview]] | None:
        if len(self.inbuf) < FRAME.size:
            return None
        hlen, plen = FRAME.unpack_from(self.inbuf)
        if hlen > MAX_HEADER_BYTES or plen > max_payload:
            raise Stop("output", f"it sent a {hlen + plen}-byte message where at most "
                                  f"{MAX_HEADER_BYTES + max_payload} bytes were expected")
        end = FRAME.size + hlen + plen
        if len(self.inbuf) < end:
            return None
        try:
            header = json.loads(bytes(self.inbuf[FRAME.size:FRAME.size + hlen]))
            ok = isinstance(header, dict) and isinstance(header.get("type"), str) and \
                isinstance(header.get("blobs"), list) and all(type(b) is int and b >= 0 for b in header["blobs"]) \
                and sum(header["blobs"]) == plen
        except ValueError:
            ok = False
        if not ok:
            raise Stop("protocol", "it sent a malformed message")
        payload = memoryview(bytes(self.inbuf[FRAME.size + hlen:end]))
        del self.inbuf[:end]
        return header, split_blobs(header, payload)

    def _write(self) -> None:
        while self.pending:
            try:
                n = os.write(self.w, self.pending[0][: 1 << 20])
            except BlockingIOError:
                return
            except OSError:  # the child closed its end or died
                self.w_open = False
                self.pending.clear()
                return
            if n == len(self.pending[0]):
                self.pending.popleft()
            else:
                self.pending[0] = self.pending[0][n:]

    def _read_log(self) -> None:
        try:
            chunk = os.read(self.e, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.e_open = False
            return
        self.log.feed(chunk)
        if self.log.total > self.output_limit:
            raise Stop("output", f"it printed more than {self.output_limit / 2**20:g} MiB")

    def recv(self, deadline: float, max_payload: int = SMALL_PAYLOAD) -> tuple[dict, list[memoryview]]:
        """The next frame; raises :class:`Stop` on deadline, end of output, flood or a malformed frame."""
        while True:
            frame = self._frame(max_payload)
            if frame is not None:
                return frame
            if not self.r_open:
                raise Stop("closed")
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise Stop("timeout")
            poller = select.poll()
            poller.register(self.r, select.POLLIN)
            if self.e_open:
                poller.register(self.e, select.POLLIN)
            if self.pending and self.w_open:
                poller.register(self.w, select.POLLOUT)
            for fd, _ in poller.poll(max(1, math.ceil(wait * 1000))):
                if fd == self.w:
                    self._write()
                elif fd == self.e:
                    self._read_log()
                elif fd == self.r:
                    try:
                        chunk = os.read(self.r, 1 << 20)
                    except BlockingIOError:
                        continue
                    if chunk:
                        self.inbuf += chunk
                    else:
                        self.r_open = False

    def drain_log(self, seconds: float) -> None:
        """Read what is left of the child's output for a moment (never longer: a grandchild may hold it)."""
        end = time.monotonic() + seconds
        while self.e_open:
            if not select.select([self.e], [], [], max(0.0, end - time.monotonic()))[0]:
                return
            try:
                self._read_log()
            except Stop:
                return


class Zygote:
    """This process's fork server (Linux): started on first use, shared by every session, never given data.

    It has the common libraries imported (:data:`kgpubench.sandbox.child.PRELOAD`), so a session starts in
    a fork instead of a fresh interpreter; it returns a pidfd of each launcher it forks.
    """

    def __init__(self) -> None:
        self.ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "kgpubench.sandbox.child", "zygote",
                                          str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(1),
                                         cwd="/", start_new_session=True)
        finally:
            theirs.close()
        self.lock = threading.Lock()

    def spawn(self, request: dict, fds: list[int], wait_s: float) -> tuple[int, int]:
        """Fork a launcher for ``request`` with ``fds`` as its 0..3; returns (pid, pidfd). OSError if gone."""
        with self.lock:
            socket.send_fds(self.ctl, [json.dumps(request).encode()], fds)
            if not select.select([self.ctl], [], [], wait_s)[0]:
                raise OSError("the sandbox zygote did not answer")
            msg, got, _, _ = socket.recv_fds(self.ctl, 4096, 1)
        if not msg or len(got) != 1:
            for fd in got:
                os.close(fd)
            raise OSError("the sandbox zygote is gone")
        return int(json.loads(msg)["pid"]), got[0]

    def close(self) -> None:
        self.ctl.close()
        self.proc.kill()
        self.proc.wait()


_ZYGOTE: dict[str, Zygote | None] = {}
_ZYGOTE_LOCK = threading.Lock()
ZYGOTE_ENV = "KGPUBENCH_SANDBOX_ZYGOTE"


def zygote() -> Zygote | None:
    """The fork server, or None where there is none (not Linux, no pidfd, ``KGPUBENCH_SANDBOX_ZYGOTE=0``, or
    it failed once: every session then starts its own interpreter)."""
    with _ZYGOTE_LOCK:
        if "z" in _ZYGOTE:
            z = _ZYGOTE["z"]
            if z is None or z.proc.poll() is None:
                return z
        usable = sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and os.environ.get(ZYGOTE_ENV) != "0"
        _ZYGOTE["z"] = Zygote() if usable else None
        if _ZYGOTE["z"] is not None:
            atexit.register(_ZYGOTE["z"].close)
        return _ZYGOTE["z"]


def drop_zygote() -> None:
    with _ZYGOTE_LOCK:
        z = _ZYGOTE.get("z")
        _ZYGOTE["z"] = None
    if z is not None:
        z.close()


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user and system) of process ``root`` and of every live process below it, each with the
    children it has reaped, as the host's ``/proc`` reports them (0.0 where it cannot be read: not Linux).

    A sandbox session's processes (the launcher, its namespaces' stages, the model's server and what the model
    starts) are not this process's children when the zygote forked them, so ``RUSAGE_CHILDREN`` never sees them;
    they are read here, by their parent ids, before :meth:`Child.stop` kills them."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except (OSError, ValueError, AttributeError):
        return 0.0
    below: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                text = fh.read().decode(errors="replace")
            fields = text[text.rindex(")") + 2:].split()  # after the name: state, ppid, ...
            ticks[int(name)] = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
            below.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not readable
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in ticks:
            continue
        seen.add(pid)
        total += ticks[pid]
        todo += below.get(pid, [])
    return total / tick


class Child:
    """One launched session: the launcher (forked by the zygote, else its own interpreter), pipes, deadline."""

    def __init__(self, cfg: dict, *, threads: int, timeout_s: float, output_bytes: int, warm: bool = True) -> None:
        self.token = uuid.uuid4().hex
        env = child_env(threads)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        log_r, log_w = os.pipe()
        self.status_r, status_w = os.pipe()
        theirs = [to_r, from_w, log_w, status_w]
        self.proc: subprocess.Popen | None = None
        self.pid, self.pidfd, self.code = 0, None, None
        try:
            zygote_ = zygote() if warm else None
            if zygote_ is not None:
                try:
                    self.pid, self.pidfd = zygote_.spawn({"cfg": cfg, "env": env, "token": self.token}, theirs,
                                                        min(timeout_s, 300.0))
                except OSError:
                    drop_zygote()
            if self.pidfd is None:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "kgpubench.sandbox.child", self.token, json.dumps(cfg), str(status_w)],
                    stdin=to_r, stdout=from_w, stderr=log_w, pass_fds=[status_w], env=env, cwd="/",
                    start_new_session=True)
                self.pid = self.proc.pid
        finally:
            for fd in theirs:
                os.close(fd)
        self.remaining = timeout_s  # seconds left to spend waiting on the child
        self.isolate = bool(cfg.get("isolate"))
        self.channel = Channel(to_w, from_r, log_r, output_bytes)
        self.stopped = False
        self.cpu_s = 0.0  # the session's processes' CPU seconds, read when it is stopped (tree_cpu_seconds)

    def _launcher_alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return not select.select([self.pidfd], [], [], 0)[0]

    def stop(self) -> None:
        """SIGKILL the launcher and its process group (an isolated session's namespace dies with the launcher);
        wait for the launcher only, never for the pipes; close everything. Idempotent."""
        if self.stopped:
            return
        self.stopped = True
        if self._launcher_alive():
            self.cpu_s = tree_cpu_seconds(self.pid)
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                if self.proc is not None:
                    self.proc.kill()
                else:
                    signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        else:
            select.select([self.pidfd], [], [], 5)
            os.close(self.pidfd)
        os.close(self.status_r)
        self.channel.close()

    def finished(self, seconds: float) -> int | None:
        """The session's exit code once the launcher reports it within ``seconds``, else None."""
        if self.code is None and not self.stopped and select.select([self.status_r], [], [], seconds)[0]:
            try:
                self.code = int(os.read(self.status_r, 64).decode().strip() or "-1")
            except (OSError, ValueError):
                self.code = None
        return self.code

    def setup_failure(self) -> str:
        for line in self.channel.log.text().splitlines():
            if line.startswith(SETUP_PREFIX):
                return line[len(SETUP_PREFIX):]
        return ""
