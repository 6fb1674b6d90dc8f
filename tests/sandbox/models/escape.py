"""Attack fixture: tries every escape of issue 20 in predict() and reports what worked in its predictions.

The test writes this file with the placeholders filled in. Slots of the returned vector:
0 secrets read, 1 victim files written, 2 value read from a host socket (-1: none), 3 processes forked,
4 pid of a setsid grandchild that outlives the model (-1: none).
"""

import os
import socket
import time

import numpy as np

SECRETS = "__SECRETS__"
VICTIM = "__VICTIM__"
PORT = "__PORT__"
FORKS = 50


def read_secrets():
    read = 0
    for path in SECRETS:
        try:
            with open(path, "rb") as fh:
                read += bool(fh.read(64))
        except OSError:
            pass
    return read


def write_victims():
    written = 0
    for name, mode in (("manifest.json", "a"), ("results/lgbm.json", "w"), ("part-junk.parquet", "w")):
        try:
            with open(os.path.join(VICTIM, name), mode) as fh:
                fh.write("forged by escape.py\n")
            written += 1
        except OSError:
            pass
    return written


def talk():
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as conn:
            return float(conn.recv(32).decode())
    except (OSError, ValueError):
        return -1.0


def linger():
    """A grandchild in its own session that sleeps for 5 minutes holding the output pipes; its pid."""
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        return -1.0
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            time.sleep(300)
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    got = os.read(r, 32)
    return float(got) if got else -1.0


def fork_many():
    forked = 0
    for _ in range(FORKS):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        forked += 1
    return forked


class Escape:
    def fit(self, X, y):
        return self

    def predict(self, X):
        out = np.zeros(len(X))
        out[:5] = [read_secrets(), write_victims(), talk(), 0, linger()]
        out[3] = fork_many()
        return out


def make_model(task, seed):
    return Escape()
