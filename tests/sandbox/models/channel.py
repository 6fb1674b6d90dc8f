"""Attack fixture (issue 30): two sandboxes running at the same time try to talk.

ROLE "send" (in fit): publishes on every channel it can open (POSIX read locks on a byte range of the venv's
read-only pyvenv.cfg, an open-file-description lock, a flock, a SysV shared-memory segment and message queue
under a fixed key, an abstract unix socket), keeps opening a shared file (for inotify) and holds them HOLD seconds.
ROLE "receive" (in predict): polls for up to WAIT seconds and reports, per slot, 1.0 if it heard the sender:
0 F_GETLK saw the lock, 1 F_OFD_GETLK saw it, 2 flock was refused (held elsewhere), 3 the shm key exists,
4 the message queue key exists, 5 the abstract socket answered, 6 inotify saw an open,
7 a nested unshare(CLONE_NEWUSER) succeeded (uid 0 inside), 8 unused.
"""

import ctypes
import fcntl
import os
import socket
import struct
import sys
import time

import numpy as np

ROLE = "__ROLE__"
HOLD = "__HOLD__"
WAIT = "__WAIT__"
KEY = 0x4B475042
START = 4242
SOCKET = b"\0kgpubench-channel-test"
F_OFD_GETLK, F_OFD_SETLK = 36, 37
CLONE_NEWUSER = 0x10000000
IN_OPEN = 0x20
libc = ctypes.CDLL(None, use_errno=True)
SHARED = os.path.join(sys.prefix, "pyvenv.cfg")
OPENED = os.path.join(os.path.dirname(np.__file__), "version.py")  # another shared file, opened for inotify


def _lock(kind, start):
    return struct.pack("hhqqi", kind, os.SEEK_SET, start, 1, 0)


def send():
    held = []
    fd = os.open(SHARED, os.O_RDONLY)
    for cmd in (fcntl.F_SETLK, F_OFD_SETLK):
        try:
            fcntl.fcntl(fd if cmd == fcntl.F_SETLK else os.open(SHARED, os.O_RDONLY), cmd,
                        _lock(fcntl.F_RDLCK, START + (cmd == F_OFD_SETLK)))
        except OSError:
            pass
    try:
        other = os.open(SHARED, os.O_RDONLY)
        fcntl.flock(other, fcntl.LOCK_SH)
        held.append(other)
    except OSError:
        pass
    libc.shmget(KEY, 4096, 0o1666)  # IPC_CREAT | 0666
    libc.msgget(KEY, 0o1666)
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(SOCKET)
        server.listen(4)
        server.settimeout(0.1)
    except OSError:
        server = None
    end = time.monotonic() + HOLD
    while time.monotonic() < end:
        try:
            os.close(os.open(OPENED, os.O_RDONLY))  # not SHARED: closing it would drop the POSIX locks
        except OSError:
            pass
        if server is not None:
            try:
                conn, _ = server.accept()
                conn.sendall(b"1")
                conn.close()
            except OSError:
                pass
        time.sleep(0.05)


def receive():
    heard = np.zeros(9)
    fd = os.open(SHARED, os.O_RDONLY)
    try:
        ino = libc.inotify_init1(os.O_NONBLOCK)
        if ino >= 0 and libc.inotify_add_watch(ino, OPENED.encode(), IN_OPEN) < 0:
            ino = -1
    except AttributeError:
        ino = -1
    end = time.monotonic() + WAIT
    while time.monotonic() < end and heard[:7].sum() < 7:
        for slot, cmd, start in ((0, fcntl.F_GETLK, START), (1, F_OFD_GETLK, START + 1)):
            try:
                got = fcntl.fcntl(fd, cmd, _lock(fcntl.F_WRLCK, start))
                heard[slot] = max(heard[slot], struct.unpack("hhqqi", got)[0] != fcntl.F_UNLCK)
            except OSError:
                pass
        try:
            probe = os.open(SHARED, os.O_RDONLY)
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                heard[2] = 1
            except OSError:
                pass
            os.close(probe)
        except OSError:
            pass
        heard[3] = max(heard[3], libc.shmget(KEY, 0, 0) >= 0)
        heard[4] = max(heard[4], libc.msgget(KEY, 0) >= 0)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(0.5)
                conn.connect(SOCKET)
                heard[5] = conn.recv(1) == b"1"
        except OSError:
            pass
        if ino >= 0:
            try:
                heard[6] = max(heard[6], len(os.read(ino, 4096)) > 0)
            except OSError:
                pass
        time.sleep(0.1)
    pid = os.fork()
    if pid == 0:
        ok = libc.unshare(CLONE_NEWUSER) == 0
        os._exit(0 if ok else 1)
    heard[7] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    return heard


def make_model(task, seed):
    class Channel:
        def fit(self, X, y):
            if ROLE == "send":
                send()
            return self

        def predict(self, X):
            out = receive() if ROLE == "receive" else np.zeros(9)
            return np.resize(out, len(X))

    return Channel()
