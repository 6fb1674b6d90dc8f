"""Task `tuning-transfer` (declared scorer, outside the regression/recommendation machinery): predict the best
configuration CLBlast's tuner found for a kernel and precision on a device never seen, from the other devices.

Why not a house :class:`~kgpubench.tasks.Task`: the `tunings` table has no times, so nothing can be regressed or
ranked; the target is a whole parameter tuple. It is scored here, on its own:

- **Scheme** ``by-device`` (leave one device out, the by-gpu scheme of this table): a fold is one tuned device,
  named by (vendor, OpenCL device name); all its (kernel, precision) entries are the test rows, and every other
  device's ``kind = device`` rows are the training rows. A generic name that recurs under several architectures
  ("AMD Radeon(TM) Graphics") is one fold.
- **Scores** per test entry: ``exact`` = 1 when the predicted tuple equals the winner in every parameter, and
  ``param_agreement`` = the fraction of the winner's parameters predicted exactly. Reported as the mean over all
  test entries (``micro``) and the mean of per-device means (``macro``), per strategy.
- **Strategies** (each sees the test device's vendor, device type, CLBlast architecture and catalogue figures,
  never its own entries):

  * ``clblast-fallback``: CLBlast's own answer for an untuned device: the ``architecture_default`` row of the
    device's (vendor, type, architecture), else ``vendor_type_default``, else ``global_default``. CLBlast computed
    these defaults over every tuned device *including the held-out one*, so this baseline is optimistic (it has
    seen the answer in its average); it is the bar to beat, not a fair peer.
  * ``majority``: the tuple most training devices won with, for that kernel and precision (ties: the smallest
    canonical JSON).
  * ``nearest-device``: the training device of the same vendor and device type (if any has the entry) nearest to
    the test device: same architecture first, then the closest NVIDIA compute capability (``SMx.y``), then the
    smallest distance in standardised log catalogue figures where both devices have them (85 of 161 devices have
    all six in dataset 0.16.0), then the majority tuple among the devices still tied.

Scores are a pure function of the table: no seed, no model code. :func:`evaluate` returns them; :func:`main`
writes them as JSON (``python -m kgpubench.tasks.tuning --data STORE --out FILE``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.store.store import Store
from kgpubench.tasks.splits import split_digest, split_sha256_of

TASK = "tuning-transfer"
SCHEME = "by-device"
FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes", "gpu_clock_sm_mhz",
           "gpu_peak_fp32_gflops")
STRATEGIES = ("clblast-fallback", "majority", "nearest-device")


@dataclass(frozen=True)
class Device:
    """A tuned device: what a strategy may know about it (never its entries)."""

    vendor: str
    name: str
    device_type: str
    architecture: str
    figures: tuple  # FIGURES, None where unknown

    @property
    def fold(self) -> str:
        return f"{self.vendor}/{self.name}"


Config = tuple[tuple[str, int], ...]  # (name, value) sorted by name


def _config(params: Sequence[Mapping]) -> Config:
    return tuple(sorted((p["name"], int(p["value"])) for p in params))


def _canonical(config: Config) -> str:
    return json.dumps(config, separators=(",", ":"))


def _sm(arch: str) -> float | None:
    m = re.fullmatch(r"SM(\d+)\.(\d+)", arch or "")
    return int(m.group(1)) + int(m.group(2)) / 10 if m else None


def read_entries(table: pa.Table):
    """Tuned entries ``{(device, kernel, precision): config}`` and defaults ``{(kind, vendor, type, arch, kernel,
    precision): config}`` of a `tunings` table."""
    cols = ["kind", "vendor", "device", "device_type", "architecture", "kernel", "precision", "params", *FIGURES]
    table = table.filter(pa.compute.equal(table["status"], "ok"))
    tuned: dict[tuple, Config] = {}
    defaults: dict[tuple, Config] = {}
    devices: dict[tuple, Device] = {}
    for r in table.select(cols).to_pylist():
        cfg = _config(r["params"])
        if r["kind"] == "device":
            dev = Device(r["vendor"] or "", r["device"], r["device_type"], r["architecture"] or "",
                         tuple(r[f] for f in FIGURES))
            dev = devices.setdefault((dev.vendor, dev.name, dev.device_type, dev.architecture), dev)
            tuned[(dev, r["kernel"], r["precision"])] = cfg
        else:
            defaults[(r["kind"], r["vendor"] or "", r["device_type"], r["architecture"] or "", r["kernel"],
                      r["precision"])] = cfg
    return tuned, defaults


def _majority(configs: Sequence[Config]) -> Config | None:
    if not configs:
        return None
    counts = Counter(configs)
    return min(counts, key=lambda c: (-counts[c], _canonical(c)))


class _Scale:
    def __init__(self, devices: Sequence[Device]) -> None:
        cols = list(zip(*[d.figures for d in devices])) if devices else []
        self.center, self.spread = [], []
        for col in cols:
            logs = [math.log1p(v) for v in col if v is not None]
            mu = sum(logs) / len(logs) if logs else 0.0
            sd = math.sqrt(sum((x - mu) ** 2 for x in logs) / len(logs)) if logs else 1.0
            self.center.append(mu)
            self.spread.append(sd or 1.0)

    def distance(self, a: Device, b: Device) -> float:
        pairs = [((math.log1p(x) - c) / s, (math.log1p(y) - c) / s)
                 for x, y, c, s in zip(a.figures, b.figures, self.center, self.spread)
                 if x is not None and y is not None]
        return math.sqrt(sum((x - y) ** 2 for x, y in pairs)) if pairs else math.inf


def predictors(tuned: Mapping[tuple, Config], defaults: Mapping[tuple, Config], held_out: Device
               ) -> dict[str, Callable[[str, str], Config | None]]:
    """The strategies of one fold: ``(kernel, precision) -> predicted config`` (None: no answer)."""
    by_entry: dict[tuple, list[tuple[Device, Config]]] = defaultdict(list)
    for (dev, kernel, precision), cfg in tuned.items():
        if (dev.vendor, dev.name) != (held_out.vendor, held_out.name):
            by_entry[(kernel, precision)].append((dev, cfg))
    scale = _Scale(sorted({d for d, _, _ in tuned}, key=lambda d: (d.vendor, d.name, d.architecture)))
    d = held_out

    def fallback(kernel: str, precision: str) -> Config | None:
        for key in (("architecture_default", d.vendor, d.device_type, d.architecture),
                    ("vendor_type_default", d.vendor, d.device_type, ""), ("global_default", "", "All", "")):
            if (*key, kernel, precision) in defaults:
                return defaults[(*key, kernel, precision)]
        return None

    def majority(kernel: str, precision: str) -> Config | None:
        return _majority([cfg for _, cfg in by_entry[(kernel, precision)]])

    def nearest(kernel: str, precision: str) -> Config | None:
        cands = by_entry[(kernel, precision)]
        same = [(o, c) for o, c in cands if (o.vendor, o.device_type) == (d.vendor, d.device_type)]
        cands = same or cands
        if not cands:
            return None
        sm = _sm(d.architecture)

        def rank(o: Device) -> tuple:
            osm = _sm(o.architecture)
            return (o.architecture != d.architecture, abs(osm - sm) if sm is not None and osm is not None else math.inf,
                    scale.distance(o, d))

        best = min(rank(o) for o, _ in cands)
        return _majority([c for o, c in cands if rank(o) == best])

    return {"clblast-fallback": fallback, "majority": majority, "nearest-device": nearest}


def score(truth: Config, predicted: Config | None) -> tuple[float, float]:
    """(exact, param_agreement) of one entry; no prediction scores 0, 0."""
    if predicted is None:
        return 0.0, 0.0
    pred = dict(predicted)
    agree = sum(pred.get(k) == v for k, v in truth)
    return float(dict(truth) == pred), agree / len(truth) if truth else 1.0


def evaluate(table: pa.Table) -> dict:
    """Leave-one-device-out scores of every strategy on a `tunings` table (see the module docstring)."""
    tuned, defaults = read_entries(table)
    folds: dict[str, list[tuple]] = defaultdict(list)
    for key in tuned:
        folds[key[0].fold].append(key)
    per_strategy = {s: {"exact": [], "param_agreement": [], "by_device": {}, "by_kernel": defaultdict(list),
                        "shared": []} for s in STRATEGIES}
    group_size = Counter((d.vendor, d.device_type, d.architecture, k, p) for d, k, p in tuned)
    for fold in sorted(folds):
        keys = folds[fold]
        preds = predictors(tuned, defaults, keys[0][0])
        for s, predict in preds.items():
            ex, ag = [], []
            for dev, kernel, precision in keys:
                e, a = score(tuned[(dev, kernel, precision)], predict(kernel, precision))
                if dev.architecture and group_size[(dev.vendor, dev.device_type, dev.architecture, kernel,
                                                    precision)] > 1:
                    per_strategy[s]["shared"].append(e)
                ex.append(e)
                ag.append(a)
                per_strategy[s]["by_kernel"][kernel].append(e)
            per_strategy[s]["exact"] += ex
            per_strategy[s]["param_agreement"] += ag
            per_strategy[s]["by_device"][fold] = (sum(ex) / len(ex), sum(ag) / len(ag))

    def mean(xs):
        return round(sum(xs) / len(xs), 6) if xs else None

    ids = split_rows(table)
    out = {"task": TASK, "scheme": SCHEME, "folds": len(folds), "test_entries": len(tuned), "strategies": {},
           "split_sha256": split_sha256_of(*zip(*ids)) if ids else None,
           "shared_architecture_entries": len(per_strategy[STRATEGIES[0]]["shared"]),
           "note": "clblast-fallback's defaults were computed by CLBlast over every tuned device, the held-out one "
                   "included; exact_shared_architecture compares the strategies on the entries whose architecture "
                   "group has another tuned device (there the default is not the held-out device's own answer)."}
    for s, acc in per_strategy.items():
        dev = list(acc["by_device"].values())
        out["strategies"][s] = {
            "exact_micro": mean(acc["exact"]), "param_agreement_micro": mean(acc["param_agreement"]),
            "exact_macro": mean([e for e, _ in dev]), "param_agreement_macro": mean([a for _, a in dev]),
            "exact_shared_architecture": mean(acc["shared"]),
            "exact_by_kernel": {k: mean(v) for k, v in sorted(acc["by_kernel"].items())},
        }
    return out


def split_rows(table: pa.Table) -> list[tuple[str, str]]:
    """(row_id, fold) of every tuned (``kind = device``) row: the fold is ``<vendor>/<device>``."""
    t = table.filter(pa.compute.and_(pa.compute.equal(table["kind"], "device"),
                                     pa.compute.equal(table["status"], "ok")))
    return [(r, f"{v or ''}/{d}") for r, v, d in zip(t["row_id"].to_pylist(), t["vendor"].to_pylist(),
                                                    t["device"].to_pylist())]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m kgpubench.tasks.tuning --data STORE --out FILE``: write :func:`evaluate`'s scores as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="store folder holding the tunings config")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--split", help="also write the by-device split file (row_id,fold) here")
    args = parser.parse_args(argv)
    table = Store(Path(args.data)).read("tunings")
    result = evaluate(table)
    atomic_write_bytes(Path(args.out), (json.dumps(result, indent=1, sort_keys=True) + "\n").encode())
    if args.split:
        atomic_write_bytes(Path(args.split), split_digest(*zip(*split_rows(table))))


if __name__ == "__main__":  # pragma: no cover
    main()
