"""Fixture: reports the limits, identity and thread settings it runs under, one number per slot."""

import os
import resource

import numpy as np


def capabilities():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("CapEff:"):
                return float(int(line.split()[1], 16))
    return -1.0


def blas_threads():
    from threadpoolctl import threadpool_info

    return float(max((i["num_threads"] for i in threadpool_info()), default=-1))


def can_write(path):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        return 1.0
    except OSError:
        return 0.0


class Inspect:
    def fit(self, X, y):
        return self

    def predict(self, X):
        out = np.zeros(len(X))
        out[:11] = [resource.getrlimit(resource.RLIMIT_AS)[0], resource.getrlimit(resource.RLIMIT_CPU)[0],
                    resource.getrlimit(resource.RLIMIT_NPROC)[0], resource.getrlimit(resource.RLIMIT_FSIZE)[0],
                    resource.getrlimit(resource.RLIMIT_CORE)[0], os.geteuid(), capabilities(),
                    float(os.environ.get("OMP_NUM_THREADS", -1)), blas_threads(), can_write("/tmp/probe"),
                    can_write(np.__file__)]
        return out


def make_model(task, seed):
    return Inspect()
