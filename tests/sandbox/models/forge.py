"""Attack fixture: tries to fake a result instead of predicting (MODE picks how)."""

import atexit
import json
import os
import struct
import sys

import numpy as np

MODE = "__MODE__"
TARGET = "__TARGET__"


def forge_file():
    try:
        with open(TARGET, "w") as fh:
            json.dump({"forged": True, "aggregate": {"mape": {"mean": 0.0}}}, fh)
    except OSError:
        pass


if MODE == "atexit":
    forge_file()
    atexit.register(forge_file)


def forge_frame():
    """A well-formed 'predictions' frame written to every descriptor that might be the protocol."""
    header = json.dumps({"type": "predictions", "blobs": [0]}).encode()
    frame = struct.pack("<IQ", len(header), 0) + header
    for fd in range(3, 12):
        try:
            os.write(fd, frame)
        except OSError:
            pass


class Forger:
    def fit(self, X, y):
        if MODE == "frame":
            forge_frame()
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        if MODE == "sys-exit":
            sys.exit(0)
        if MODE == "os-exit":
            os._exit(0)
        return np.full(len(X), self.mean_)


def make_model(task, seed):
    return Forger()
