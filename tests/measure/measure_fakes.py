"""A tiny suite for harness tests: ``double`` writes out = 2 * x (NumPy under the fake backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgpubench.measure.suite import Case, KernelSource
from kgpubench.measure.verify import compare, poison

SRC = Path("double.cu")


class DoublePrepared:
    def __init__(self, kernel, case, xp, rng):
        n = int(case.sizes["n"])
        self.x = xp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
        self.out = xp.empty(n, dtype=np.float32)
        self.expected = 2 * np.asarray(self.x)
        self.kernel, self.case, self.n = kernel, case, n
        self.released = False

    def launch(self):
        self.kernel(self.case.grid, self.case.block, (self.x, self.out, np.int32(self.n)))

    def poison(self):
        poison(self.out)

    def verify(self):
        return compare(self.out, self.expected, name="out")

    def release(self):
        self.released = True


def double_impl(grid, block, args, shared_mem):
    x, out, n = args
    out[:n] = 2 * x[:n]


class DoubleSuite:
    name = "regular"
    table = "kernels"
    collector_version = "0.0.1"

    def __init__(self, sizes=(16, 32), blocks=(32, 64), kernel="double", power=False, memory_bytes=0):
        self.sizes, self.blocks, self.kernel_name = sizes, blocks, kernel
        self.power, self.memory_bytes = power, memory_bytes
        self.prepared = []

    def kernels(self):
        return [self.kernel_name]

    def cases(self, *, quick=False, kernels=None):
        for n in self.sizes[:1] if quick else self.sizes:
            for nt in self.blocks:
                yield Case(key={"suite": "regular", "kernel": self.kernel_name, "variant": "",
                                "size_params": {"n": n}},
                           columns={"program": "test", "bound": "memory", "n": float(n), "s": float(n),
                                    "cpx": float(n)},
                           source=KernelSource(SRC, self.kernel_name), grid=(-(-n // nt), 1, 1),
                           block=(nt, 1, 1), sizes={"n": n}, power=self.power,
                           memory_bytes=self.memory_bytes)

    def prepare(self, case, kernel, xp, rng):
        p = DoublePrepared(kernel, case, xp, rng)
        self.prepared.append(p)
        return p


def no_features(case, dev):
    return {}
