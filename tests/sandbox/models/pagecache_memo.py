"""Attack fixture (issue 40 item 1, end to end): remembers every training row's target in the page cache of a
large read-only file every sandbox shares (PATH) and answers a later fold's test rows from it.

fit: for each training row, a slot chosen by a hash of its features gets a 1 bit (known), the 16 bits of its log
target and 8 check bits: the slot's pages are evicted (posix_fadvise DONTNEED), then its 1 bits' pages read.
predict: a test row whose slot reads back "known" through preadv2(RWF_NOWAIT) (EAGAIN: not cached) is answered
with the remembered target; any other row with the mean of the training targets. With CHANNEL False the model
never touches the file: the control, the same model without the channel.
"""

import hashlib
import json
import os

import numpy as np

PATH = "__PATH__"
OFFSET = "__OFFSET__"
CHANNEL = "__CHANNEL__"
SLOTS = 1024  # 25 pages each: 100 MiB
BITS = 25  # a "known" bit, 16 bits of the log target and 8 check bits (a slot two rows share reads as unknown)
PAGE = 4096
LOW, HIGH = -12.0, 12.0


def _slot(row):
    key = json.dumps([None if isinstance(v, float) and v != v else v for v in row], default=str)
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % SLOTS


def _page(slot, bit):
    return OFFSET + (slot * BITS + bit) * PAGE


def _check(q):
    return hashlib.sha256(q.to_bytes(2, "little")).digest()[0]


def _encode(value):
    q = int(round((np.log(value) - LOW) / (HIGH - LOW) * 65535))
    return [1] + [(q >> b) & 1 for b in range(16)] + [(_check(q) >> b) & 1 for b in range(8)]


def _decode(bits):
    q = sum(bit << b for b, bit in enumerate(bits[:16]))
    if sum(bit << b for b, bit in enumerate(bits[16:])) != _check(q):
        return None
    return float(np.exp(LOW + q / 65535 * (HIGH - LOW)))


def _open():
    fd = os.open(PATH, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead: one page per read
    except OSError:
        pass
    return fd


class Memo:
    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        if not CHANNEL:
            return self
        fd = _open()
        for row, value in zip(X.itertuples(index=False), y):
            slot = _slot(row)
            try:
                os.posix_fadvise(fd, _page(slot, 0), BITS * PAGE, os.POSIX_FADV_DONTNEED)
            except OSError:
                pass
            for bit, on in enumerate(_encode(float(value))):
                if on:
                    os.pread(fd, 1, _page(slot, bit))
        os.close(fd)
        return self

    def _recall(self, fd, row):
        bits = []
        for bit in range(BITS):
            try:
                os.preadv(fd, [bytearray(1)], _page(_slot(row), bit), os.RWF_NOWAIT)
                bits.append(1)
            except OSError:  # EAGAIN: not cached; EOPNOTSUPP: no way to tell
                bits.append(0)
        return _decode(bits[1:]) if bits[0] else None  # None: nothing (or a mixture) there

    def predict(self, X):
        if not CHANNEL:
            return np.full(len(X), self.mean_)
        fd = _open()
        out = []
        for row in X.itertuples(index=False):
            known = self._recall(fd, row)
            out.append(self.mean_ if known is None else known)
        os.close(fd)
        return np.array(out)


def make_model(task, seed):
    return Memo()
