"""Size-independent analysis of one kernel entry (cached), and trip-count weighting.

A :class:`KernelAnalysis` holds, for every set of loops a block can sit in, the summed class counts of
those blocks; with trip counts, the executed counts are ``sum over groups of (product of the group's trip
counts) x counts``. It is what the disk cache stores per (source, kernel, defines, arch, toolchain).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from kgpubench.errors import TripCountError
from kgpubench.features import isa
from kgpubench.features.cfg import build_cfg, dpc
from kgpubench.features.expr import evaluate
from kgpubench.features.ptx import PtxEntry
from kgpubench.features.source import SourceFeatures
from kgpubench.features.toolchain import Resources

__all__ = ["VECTOR_FIELDS", "KernelAnalysis", "LoopInfo", "TripCountError", "analyse_entry"]

VECTOR_FIELDS = (tuple(isa.SEED_CLASSES) + tuple(f"mix_{c}" for c in isa.MIX_CLASSES)
                 + ("global_bytes_read", "global_bytes_written", "flops", "flops_fp64"))
_SEED = {c: k for k, c in enumerate(isa.SEED_CLASSES)}
_MIX = {f"mix_{c}": len(isa.SEED_CLASSES) + k for k, c in enumerate(isa.MIX_CLASSES)}
_TAIL = len(isa.SEED_CLASSES) + len(isa.MIX_CLASSES)


@dataclass(frozen=True)
class LoopInfo:
    """A loop of the entry as callers see it (see :mod:`kgpubench.features.cfg` for the names)."""

    id: str
    label: str | None
    line: int | None
    depth: int
    parent: str | None
    ptx_line: int
    instructions: int

    @property
    def names(self) -> tuple[str, ...]:
        """The names a trip-count mapping may use: ``L<k>``, the header label, ``line:N``."""
        out = [self.id] + ([self.label] if self.label else []) + ([f"line:{self.line}"] if self.line else [])
        return tuple(out)

    def describe(self) -> str:
        """``L2 ($L__BB0_4, line 12, depth 2 in L1)``."""
        bits = [b for b in (self.label, f"line {self.line}" if self.line else None,
                            f"depth {self.depth}" + (f" in {self.parent}" if self.parent else "")) if b]
        return f"{self.id} ({', '.join(bits)})"


@dataclass(frozen=True)
class KernelAnalysis:
    """Static analysis of one entry: counts grouped by enclosing loops, dpc, resources, source features."""

    kernel: str
    entry: str
    arch: str
    toolchain_version: str | None
    instructions: int
    dpc: float
    loops: tuple[LoopInfo, ...]
    groups: tuple[tuple[tuple[str, ...] | None, tuple[float, ...]], ...]
    resources: Resources | None
    source: SourceFeatures | None

    def to_json(self) -> dict:
        """A JSON-able dict (the cache's form)."""
        d = asdict(self)
        d["groups"] = [[list(k) if k is not None else None, list(v)] for k, v in self.groups]
        return d

    @classmethod
    def from_json(cls, d: dict) -> KernelAnalysis:
        """Inverse of :meth:`to_json`."""
        return cls(kernel=d["kernel"], entry=d["entry"], arch=d["arch"], toolchain_version=d["toolchain_version"],
                   instructions=d["instructions"], dpc=d["dpc"],
                   loops=tuple(LoopInfo(**x) for x in d["loops"]),
                   groups=tuple((tuple(k) if k is not None else None, tuple(v)) for k, v in d["groups"]),
                   resources=Resources(**d["resources"]) if d["resources"] else None,
                   source=SourceFeatures(**d["source"]) if d["source"] else None)

    def resolve_trip_counts(self, trip_counts: Mapping[str, str | float] | None, env: Mapping[str, float],
                            *, static_counts: bool = False) -> dict[str, float]:
        """Map each loop id to its trip count evaluated in ``env``.

        Raises
        ------
        TripCountError
            A key names no loop (or an ambiguous ``line:N``), two keys name one loop, a value is negative,
            or a loop has no trip count and ``static_counts`` is false.
        """
        names: dict[str, str] = {}
        ambiguous: dict[str, list[str]] = {}
        for lp in self.loops:
            for name in lp.names:
                if name in names and names[name] != lp.id:
                    ambiguous.setdefault(name, [names[name]]).append(lp.id)
                names.setdefault(name, lp.id)
        listing = "; ".join(lp.describe() for lp in self.loops) or "(no loops)"
        result: dict[str, float] = {}
        for key, value in (trip_counts or {}).items():
            key = str(key).strip()
            if key in ambiguous:
                raise TripCountError(f"kernel {self.kernel}: loop name {key!r} fits loops {', '.join(ambiguous[key])}; "
                                     f"name them by id. Loops: {listing}.")
            if key not in names:
                raise TripCountError(f"kernel {self.kernel}: trip count given for {key!r}, which names no loop. "
                                     f"Loops: {listing}.")
            loop_id = names[key]
            if loop_id in result:
                raise TripCountError(
                    f"kernel {self.kernel}: two trip counts given for loop {loop_id} (one as {key!r}).")
            count = evaluate(value, env, what=f"trip count of loop {loop_id} of kernel {self.kernel}")
            if count < 0 or not math.isfinite(count):
                raise TripCountError(f"kernel {self.kernel}: trip count of loop {loop_id} is {count} ({value!r}); "
                                     "expected a finite number >= 0.")
            result[loop_id] = count
        missing = [lp for lp in self.loops if lp.id not in result]
        if missing and not static_counts:
            raise TripCountError(f"kernel {self.kernel}: no trip count for loop "
                                 f"{', '.join(lp.describe() for lp in missing)}. Give one per loop (by id, header "
                                 f"label or line:N), or ask for static counts (--static-counts). Loops: {listing}.")
        for lp in missing:
            result[lp.id] = 1.0
        return result

    def executed(self, trips: Mapping[str, float]) -> dict[str, float]:
        """Executed counts per :data:`VECTOR_FIELDS` name for the given loop trip counts."""
        total = [0.0] * len(VECTOR_FIELDS)
        for loops, vec in self.groups:
            if loops is None:
                continue  # unreachable blocks never run
            weight = math.prod(trips[x] for x in loops)
            for k, v in enumerate(vec):
                total[k] += weight * v
        return dict(zip(VECTOR_FIELDS, total))


def analyse_entry(entry: PtxEntry, *, kernel: str, arch: str, toolchain_version: str | None,
                  resources: Resources | None, source: SourceFeatures | None) -> KernelAnalysis:
    """Build the :class:`KernelAnalysis` of a parsed entry."""
    cfg = build_cfg(entry)
    groups: dict[tuple[str, ...] | None, list[float]] = {}
    loop_sizes = {lp.id: 0 for lp in cfg.loops}
    for block in cfg.blocks:
        in_loops = tuple(lp.id for lp in cfg.loops_of(block.id)) if block.id in cfg.reachable else None
        vec = groups.setdefault(in_loops, [0.0] * len(VECTOR_FIELDS))
        for ins in entry.instructions[block.start:block.end]:
            if not ins.counted:
                continue
            for lp in in_loops or ():
                loop_sizes[lp] += 1
            vec[_SEED[isa.seed_class(ins)]] += 1
            vec[_MIX["mix_" + isa.mix_class(ins)]] += 1
            rd, wr = isa.global_bytes(ins)
            fl, fl64 = isa.flops(ins)
            vec[_TAIL] += rd
            vec[_TAIL + 1] += wr
            vec[_TAIL + 2] += fl
            vec[_TAIL + 3] += fl64
    loops = tuple(LoopInfo(id=lp.id, label=lp.label, line=lp.line, depth=lp.depth, parent=lp.parent,
                           ptx_line=lp.ptx_line, instructions=loop_sizes[lp.id]) for lp in cfg.loops)
    return KernelAnalysis(kernel=kernel, entry=entry.name, arch=arch, toolchain_version=toolchain_version,
                          instructions=sum(1 for x in entry.instructions if x.counted), dpc=dpc(entry.instructions),
                          loops=loops, groups=tuple((k, tuple(v)) for k, v in groups.items()),
                          resources=resources, source=source)
