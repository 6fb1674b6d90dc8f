"""Fakes for the Ray tests, importable by name in Ray's worker processes (the tests put this folder and
``tests/measure`` on their ``PYTHONPATH``): fake GPUs of two models, and suites that can kill their actor."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from measure_fakes import DoubleSuite, double_impl

from kgpubench.measure.backends.fake import FAKE_DEVICE, FakeBackend

H100 = replace(FAKE_DEVICE, name="Fake H100 (CPU test double)", uuid_hash="h100h100h100h100")
A100 = replace(FAKE_DEVICE, name="Fake A100 (CPU test double)", compute_capability="8.0", uuid_hash="a100a100a100a100")
SIZES = (16, 32, 64, 128, 256, 512)
BLOCKS = (32, 64)  # 12 configurations per GPU model


def backend_for(device) -> FakeBackend:
    """A fake GPU whose every launch takes 5 ms of virtual time: deterministic timings."""
    return FakeBackend(implementations={"double": double_impl}, time_ms=5.0, device_info=device)


@dataclass(frozen=True)
class FakeGpus:
    """``make_backend(slot)``: slot ``k`` gets the device ``devices[k]`` (per-slot device UUIDs differ)."""

    devices: tuple

    def __call__(self, slot: int) -> FakeBackend:
        dev = self.devices[slot]
        return backend_for(replace(dev, uuid_hash=f"{dev.uuid_hash[:12]}{slot:04d}"))


@dataclass(frozen=True)
class Suite:
    """A picklable suite reference: 12 configurations of ``double``."""

    def __call__(self) -> DoubleSuite:
        return DoubleSuite(sizes=SIZES, blocks=BLOCKS)


class KillingSuite(DoubleSuite):
    """Kills its process (as a crash would) when preparing its ``kill_at``-th case, once: the marker file
    records that it did."""

    def __init__(self, marker: str, kill_at: int) -> None:
        super().__init__(sizes=SIZES, blocks=BLOCKS)
        self.marker, self.kill_at, self.count = Path(marker), kill_at, 0

    def prepare(self, case, kernel, xp, rng):
        self.count += 1
        if self.count == self.kill_at and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)
        return super().prepare(case, kernel, xp, rng)


@dataclass(frozen=True)
class Killing:
    marker: str
    kill_at: int

    def __call__(self) -> KillingSuite:
        return KillingSuite(self.marker, self.kill_at)
