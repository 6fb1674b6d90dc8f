"""Our kernel times (measurement protocol 2) against Nsight Compute's ``gpu__time_duration``, per kernel.

For each of the :data:`PICKS` (at least 12 configurations from the regular, power and stencil suites, from
about 1 us to over 10 ms), the script

1. prepares and verifies the case exactly as ``kgpubench collect`` does, and times it with the harness
   (``kgpubench.measure.runner.time_unit``, the suite's L2 policy);
2. runs a child process of itself under ``ncu --metrics gpu__time_duration.sum --clock-control none`` (never
   touching the clocks) with ``--cache-control all`` for a flushed suite and ``none`` for a warm one; the
   child prepares the same case and launches its unit :data:`NCU_LAUNCHES` times; ncu's median per kernel
   launch is the reference;
3. prints ours, ncu's, the ratio and the difference. Target: within 3 % for kernels of 5 us and more, within
   0.5 us below that.

Flushed picks can be timed several ways against the one ncu reference: ``--flush-modes write,read`` (the L2
flush) and ``--cold-timers events,cupti,cupti-drained`` (the event pair around each launch, CUPTI's kernel
timestamps, :mod:`kgpubench.measure.backends.cupti_clock`, or those with a spin of ``DRAIN_US`` between the flush
and the unit). ``--choose FILE`` writes which cold timer met the target on most flushed kernels and whether it is
proven (all of them, at least :data:`MIN_PROOF_KERNELS`, no errors, and no CUPTI sample longer than its own event
pair): the flushed suites are collected with that timer, and only when it is proven (``scripts/gpu_session.sh``).

Diagnostics of the CUPTI timers (issue 44; H200, 2026-11-29: CUPTI read about 0.9 us below ncu on six flushed
kernels and 1.5 to 16 us above it, and above the event timer's separate round, on four that write large outputs):

* same samples: every CUPTI-timed sample is read by its own event pair too; each flushed row of a CUPTI timer
  gets ``same_samples`` (both medians of the same executions, how many CUPTI spans are longer than their own event
  pair: impossible when both read the same execution, so a sign of records that are not the unit's, and the
  median gap from the flush kernel's end to the unit's first start), over every sample the sampler ran (its
  warm-up samples too, so its CUPTI median can differ slightly from the row's ``ours_us``);
* the empty kernel under ncu with the same options: the JSON's ``empty_kernel`` gives ncu's reading, each timer's
  floor and their difference (for a CUPTI timer, the part of ncu's interval that CUPTI's kernel span lacks), and
  ``offset`` says, per CUPTI timer, on which picks CUPTI's shortfall against ncu equals that difference (within
  :data:`OFFSET_TOLERANCE_US`) and which would meet the target with it added (a diagnosis, never applied to rows);
* the flush tail: ``flush_tail`` in the JSON sets, per pick timed by both, ``cupti`` beside ``cupti-drained`` (a
  spin after the flush: do lines the flush evicted still go back to memory while the unit runs?) and ncu, with
  each one's flush gap.

Needs an NVIDIA GPU, CuPy and ``ncu`` (Nsight Compute); without them it prints one line and exits 2.

    PYTHONPATH=. python benchmarks/timing_agreement.py [--json OUT.json] [--only NAME ...] [--flushed-only]
        [--flush-modes read] [--cold-timers events,cupti] [--choose CHOICE.json]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NCU_LAUNCHES = 12
NCU_SKIP = 2
MIN_PROOF_KERNELS = 5  # issue 29: at least 5 kernels across sizes before a timer's labels are trusted
OFFSET_TOLERANCE_US = 0.25  # a CUPTI shortfall "equals" ncu's empty-kernel offset within this
EMPTY_NAME = "empty kernel"  # the child name of the empty kernel under ncu


@dataclass(frozen=True)
class Pick:
    """One configuration: a name, its suite, and how to find its case among the suite's full sweep."""

    name: str
    suite: str
    kernel: str
    match: dict

    def find(self, suite):
        for case in suite.cases(quick=False, kernels=[self.kernel]):
            if all(_lookup(case, k) == v for k, v in self.match.items()):
                return case
        raise LookupError(f"{self.name}: no {self.suite} case matches {self.match}")


def _lookup(case, key):
    if key == "block":
        return tuple(case.block)
    if key == "grid_x":
        return case.grid[0]
    if key in case.sizes:
        return case.sizes[key]
    return case.key.get(key, case.columns.get(key))


PICKS = (
    Pick("vector_add n=2^12", "regular", "vector_add", {"n": 4096, "block": (256, 1, 1), "grid_x": 16}),
    Pick("vector_add n=2^20", "regular", "vector_add", {"n": 1 << 20, "block": (256, 1, 1), "grid_x": 4096}),
    Pick("vector_add n=2^26", "regular", "vector_add", {"n": 1 << 26, "block": (256, 1, 1), "grid_x": 262144}),
    Pick("euclid n=2^16", "regular", "euclid", {"n": 1 << 16, "block": (128, 1, 1), "grid_x": 512}),
    Pick("euclid n=2^24", "regular", "euclid", {"n": 1 << 24, "block": (512, 1, 1), "grid_x": 32768}),
    Pick("srad_cuda_1 1024^2", "regular", "srad_cuda_1", {"rows": 1024, "block": (16, 16, 1)}),
    Pick("srad_cuda_2 8192^2", "regular", "srad_cuda_2", {"rows": 8192, "block": (32, 8, 1)}),
    Pick("calculate_temp 2048^2", "regular", "calculate_temp", {"rows": 2048, "iters": 2, "block": (16, 16, 1)}),
    Pick("matrix_mul 512", "regular", "matrix_mul", {"n": 512, "block": (16, 16, 1)}),
    Pick("matrix_mul 4096", "regular", "matrix_mul", {"n": 4096, "block": (16, 16, 1)}),
    Pick("fan2 4096", "regular", "fan2", {"n": 4096, "t": 0, "block": (16, 16, 1)}),
    Pick("madd fp32", "power", "madd", {"variant": "fp32", "block": (256, 1, 1)}),
    Pick("madd fp64", "power", "madd", {"variant": "fp64", "block": (256, 1, 1)}),
    Pick("dotp n=2^25", "power", "dotp", {"n": 1 << 25, "block": (256, 1, 1)}),
    Pick("stencil 200^3 f32 o2 (1,1,1)", "stencil", "thread-tile",
         {"grid_nx": 200, "dtype": "float32", "space_order": 2, "tile_b1": 1, "tile_b2": 1, "tile_b3": 1}),
    Pick("stencil 256^3 f32 o8 (1,1,4)", "stencil", "thread-tile",
         {"grid_nx": 256, "dtype": "float32", "space_order": 8, "tile_b1": 1, "tile_b2": 1, "tile_b3": 4}),
    Pick("stencil 512^3 f64 o16 (1,1,1)", "stencil", "thread-tile",
         {"grid_nx": 512, "dtype": "float64", "space_order": 16, "tile_b1": 1, "tile_b2": 1, "tile_b3": 1}),
)


def judge(ours_us: float, ncu_us: float) -> bool:
    """The target: within 3 % at 5 us and more, within 0.5 us below."""
    if ncu_us >= 5.0:
        return abs(ours_us / ncu_us - 1.0) <= 0.03
    return abs(ours_us - ncu_us) <= 0.5


def parse_ncu_csv(text: str) -> list[float]:
    """``gpu__time_duration.sum`` values (us) from ``ncu --csv --print-units base`` output, in launch order."""
    start = text.find('"ID"')
    if start < 0:
        return []
    out = []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            value = float(row["Metric Value"].replace(",", ""))
            unit = row.get("Metric Unit", "nsecond")
            out.append(value / 1000.0 if unit in ("nsecond", "ns") else value * {"usecond": 1, "msecond": 1e3,
                                                                                    "second": 1e6}.get(unit, 1))
    return out


def _prepared(pick: Pick, backend):
    from kgpubench.measure.suites import load_suite

    suite = load_suite(pick.suite)
    case = pick.find(suite)
    kernel = backend.compile(case.source)
    prepared = suite.prepare(case, kernel, backend.xp, np.random.default_rng(0))
    prepared.poison()
    prepared.launch()
    backend.synchronize()
    ok, detail = prepared.verify()
    if not ok:
        raise RuntimeError(f"{pick.name}: verification failed: {detail}")
    return suite, case, prepared


def child(name: str) -> int:
    """Under ncu: launch the pick's unit (or the empty kernel) NCU_SKIP + NCU_LAUNCHES times, synchronising after
    each."""
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("cupy")
    if name == EMPTY_NAME:
        launch = _empty_kernel()
        for _ in range(NCU_SKIP + NCU_LAUNCHES):
            launch()
            backend.synchronize()
        return 0
    pick = next(p for p in PICKS if p.name == name)
    _suite, _case, prepared = _prepared(pick, backend)
    for _ in range(NCU_SKIP + NCU_LAUNCHES):
        prepared.launch()
        backend.synchronize()
    prepared.release()
    return 0


def _uses_cupti(backend) -> bool:
    from kgpubench.measure.backends.cupy_backend import uses_cupti

    return uses_cupti(str(getattr(backend, "cold_timer", "events")))


def _time(backend, launch, policy: str, divisor: int):
    """``time_unit`` of ``launch``; with a CUPTI timer on a flushed unit, also the same-sample comparison
    (``cupti_clock.same_samples``, us per unit), else ``None``."""
    from kgpubench.measure.backends.cupti_clock import same_samples
    from kgpubench.measure.runner import time_unit

    pairs = [] if policy == "flushed" and _uses_cupti(backend) else None
    if pairs is not None:
        backend.cold_pairs = pairs  # the sampler reads every CUPTI sample by its own event pair too
    try:
        result = time_unit(backend, launch, l2_policy=policy, divisor=divisor)
    finally:
        if pairs is not None:
            backend.cold_pairs = None
    return result, (same_samples(pairs, divisor) if pairs is not None else None)


def ours_us(pick: Pick, backend) -> tuple[float, str, int, str, dict | None]:
    """Our per-launch median (us), the L2 policy, the launches per sample, the kernel's name and, for a CUPTI
    timer on a flushed pick, the same-sample comparison."""
    suite, case, prepared = _prepared(pick, backend)
    policy = getattr(suite, "l2_policy", "warm")
    try:
        result, same = _time(backend, prepared.launch, policy, max(1, case.time_divisor))
    finally:
        prepared.release()
    return result.stats.median * 1000.0, policy, result.launches, case.source.kernel, same


def ncu_us(name: str, policy: str, kernel_name: str) -> float:
    """ncu's median ``gpu__time_duration`` (us) over NCU_LAUNCHES launches of the kernel of the pick called
    ``name`` (or of the empty kernel, :data:`EMPTY_NAME`)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = ["ncu", "--metrics", "gpu__time_duration.sum", "--clock-control", "none",
               "--cache-control", "all" if policy == "flushed" else "none", "--csv", "--print-units", "base",
               "--kernel-name", kernel_name, "--launch-skip", str(NCU_SKIP), "--launch-count",
               str(NCU_LAUNCHES), "--log-file", str(log), sys.executable, __file__, "--child", name]
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
        values = parse_ncu_csv(log.read_text()) if log.is_file() else []
        if res.returncode != 0 or not values:
            raise RuntimeError(f"{name}: ncu gave no gpu__time_duration (exit {res.returncode}): "
                               f"{(res.stderr or res.stdout)[-400:]}")
    return statistics.median(values)


def _policy(pick: Pick) -> str:
    from kgpubench.measure.suites import load_suite

    return getattr(load_suite(pick.suite), "l2_policy", "warm")


EMPTY_SOURCE = 'extern "C" __global__ void kg_empty() {}'


def _empty_kernel():
    import cupy

    kernel = cupy.RawKernel(EMPTY_SOURCE, "kg_empty")
    return lambda: kernel((1,), (1,), ())


def event_floor_us(backend) -> tuple[float, dict | None]:
    """Our median time (us) of an empty kernel timed as a flushed unit (what the timer itself reads), and for a
    CUPTI timer the same-sample comparison."""
    result, same = _time(backend, _empty_kernel(), "flushed", 1)
    return result.stats.median * 1000.0, same


def _label(r: dict) -> str:
    how = ", ".join(x for x in (r.get("flush"), r.get("timer")) if x)
    return r["name"] + (f" [{how}]" if how else "")


def _print(r: dict) -> None:
    print(f"{_label(r):<44} {r['l2_policy']:<8} ours {r['ours_us']:>11.3f} us  ncu {r['ncu_us']:>11.3f} us  "
          f"ratio {r['ratio']:.4f}  diff {r['diff_us']:+.3f} us  {'ok' if r['pass'] else 'MISS'}", flush=True)
    if r.get("same_samples"):
        print(same_samples_line(r["same_samples"]), flush=True)


def same_samples_line(same: dict) -> str:
    """One line of a CUPTI timer's same-sample comparison (``cupti_clock.same_samples``)."""
    if not same.get("samples"):
        return "    same samples: none recorded"
    return (f"    same samples ({same['samples']}): cupti {same['cupti_median_us']:.3f} us, their event pairs "
            f"{same['events_median_us']:.3f} us (events - cupti {same['events_minus_cupti_median_us']:+.3f} us); "
            f"cupti longer than its own event pair: {same['cupti_longer']} (max +{same['cupti_longer_max_us']:.3f}"
            f" us); flush end to unit start {same['flush_gap_median_us']:.3f} us")


def _write_json(path: Path, device: str, rows: list[dict], extra: dict | None = None) -> None:
    from kgpubench.foundation.files import atomic_write_bytes

    atomic_write_bytes(path, json.dumps({"device": device, "rows": rows, **(extra or {})}, indent=1).encode())


def empty_kernel_offsets(rows: list[dict], ncu_empty_us: float | None) -> dict:
    """ncu's empty kernel against each timer's floor: ``{"ncu_us", "floor_us": {timer: us}, "offset_us": {timer:
    ncu - floor}}`` (a CUPTI timer's offset is the part of ncu's interval its kernel span lacks)."""
    floors = {r["timer"]: r["ours_us"] for r in rows if r.get("floor") and "ours_us" in r}
    offsets = {t: ncu_empty_us - f for t, f in floors.items()} if ncu_empty_us is not None else {}
    return {"ncu_us": ncu_empty_us, "floor_us": floors, "offset_us": offsets}


def offset_check(rows: list[dict], offsets: dict[str, float], tolerance: float = OFFSET_TOLERANCE_US) -> dict:
    """Per CUPTI timer with an offset: on which flushed picks its shortfall against ncu (``ncu - ours``) equals
    ncu's empty-kernel offset within ``tolerance``, and which would meet the target with the offset added."""
    from kgpubench.measure.backends.cupy_backend import uses_cupti

    out = {}
    for timer, offset in offsets.items():
        if not uses_cupti(timer):
            continue
        mine = [r for r in rows if r.get("timer") == timer and r.get("l2_policy") == "flushed" and "ncu_us" in r]
        picks = [{"name": r["name"], "shortfall_us": r["ncu_us"] - r["ours_us"],
                  "equals_offset": abs(r["ncu_us"] - r["ours_us"] - offset) <= tolerance,
                  "pass_with_offset": judge(r["ours_us"] + offset, r["ncu_us"])} for r in mine]
        out[timer] = {"offset_us": offset, "tolerance_us": tolerance, "picks": picks,
                      "short": sum(1 for p in picks if p["shortfall_us"] > 0),
                      "equal_to_offset": sum(p["equals_offset"] for p in picks),
                      "pass_with_offset": sum(p["pass_with_offset"] for p in picks), "measured": len(picks)}
    return out


def flush_tail(rows: list[dict], plain: str = "cupti", drained: str = "cupti-drained") -> list[dict]:
    """Per flushed pick timed by both CUPTI timers: each one's reading, the drained minus the plain, ncu, and the
    median flush gap of each (does a wait after the flush bring a kernel down to ncu?)."""
    def of(timer):
        return {r["name"]: r for r in rows if r.get("timer") == timer and "ncu_us" in r}

    a, b = of(plain), of(drained)
    out = []
    for name in (n for n in a if n in b):
        gaps = [(r.get("same_samples") or {}).get("flush_gap_median_us") for r in (a[name], b[name])]
        x, y = a[name]["ours_us"], b[name]["ours_us"]
        out.append({"name": name, "ncu_us": a[name]["ncu_us"], plain + "_us": x, drained + "_us": y,
                    "drained_minus_plain_us": y - x, "flush_gap_us": gaps})
    return out


def flush_tail_lines(tail: list[dict], plain: str = "cupti", drained: str = "cupti-drained") -> list[str]:
    """What the proof prints about the wait after the flush."""
    def gap(v):
        return "-" if v is None else f"{v:.3f}"

    return [f"flush tail {t['name']}: {plain} {t[plain + '_us']:.3f} us, {drained} {t[drained + '_us']:.3f} us "
            f"({t['drained_minus_plain_us']:+.3f} us), ncu {t['ncu_us']:.3f} us; flush end to unit start "
            f"{gap(t['flush_gap_us'][0])} -> {gap(t['flush_gap_us'][1])} us" for t in tail]


def offset_lines(empty: dict, checks: dict) -> list[str]:
    """What the proof prints about the empty-kernel offset."""
    if empty.get("ncu_us") is None:
        return ["empty kernel: no ncu reference (see its error row)"]
    lines = [f"empty kernel: ncu {empty['ncu_us']:.3f} us; " + "; ".join(
        f"{t} floor {f:.3f} us (ncu - floor {empty['offset_us'][t]:+.3f} us)" for t, f in empty["floor_us"].items())]
    for timer, c in checks.items():
        lines.append(f"{timer}: ncu - ours equals ncu's empty-kernel offset ({c['offset_us']:+.3f} us, within "
                     f"{c['tolerance_us']} us) on {c['equal_to_offset']} of {c['measured']} flushed picks "
                     f"({c['short']} read below ncu); with the offset added {c['pass_with_offset']} of "
                     f"{c['measured']} would be within target")
    return lines


def choose_cold_timer(rows: list[dict], timers: list[str], minimum: int = MIN_PROOF_KERNELS) -> dict:
    """Which cold timer the flushed suites should be collected with, from the flushed rows against ncu.

    The timer with the most kernels within the target wins (a tie goes to the earlier timer in ``timers``);
    it is ``proven`` when it met the target on every flushed kernel it measured, at least ``minimum`` of them,
    no flushed pick failed to measure with it, and (a CUPTI timer) none of its samples was longer than its own
    event pair (``impossible``: records that were not the unit's).
    """
    per: dict[str, dict] = {}
    for timer in timers:
        mine = [r for r in rows if r.get("l2_policy") == "flushed" and r.get("timer") == timer and "ncu_us" in r]
        errors = sum(1 for r in rows if r.get("timer") == timer and "error" in r)
        impossible = sum((r.get("same_samples") or {}).get("cupti_longer", 0) for r in mine)
        per[timer] = {"measured": len(mine), "passed": sum(bool(r["pass"]) for r in mine), "errors": errors,
                      "impossible": impossible}
    best = max(timers, key=lambda t: (per[t]["passed"], -timers.index(t)))
    got = per[best]
    proven = (got["measured"] >= minimum and got["passed"] == got["measured"] and got["errors"] == 0
              and got["impossible"] == 0)
    return {"timer": best, "proven": proven, "minimum": minimum, "per_timer": per}


def _variants(modes: list[str], timers: list[str]) -> list[tuple[str, str]]:
    """(flush mode, cold timer) pairs to time flushed picks with; CUPTI's samples need the read flush."""
    from kgpubench.measure.backends.cupy_backend import uses_cupti

    return [(m, t) for m in modes for t in timers if not (uses_cupti(t) and m != "read")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--only", nargs="*", help="only these pick names")
    parser.add_argument("--flushed-only", action="store_true", help="only the picks of a flushed suite")
    parser.add_argument("--flush-modes", default="read",
                        help="comma-separated L2 flush modes to time flushed picks with (write, read): one ncu "
                             "reference, ours with each mode, and each mode's event floor (an empty kernel)")
    parser.add_argument("--cold-timers", default="events",
                        help="comma-separated timers of flushed samples (events, cupti, cupti-drained): each is "
                             "timed against the same ncu reference; a timer that cannot start here is reported "
                             "and left out")
    parser.add_argument("--choose", type=Path, help="write the cold timer to collect flushed suites with (JSON: "
                                                    "timer, proven, per-timer counts) here")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    from kgpubench.measure.backends.cupy_backend import cupy_available

    ok, why = cupy_available()
    if not ok or shutil.which("ncu") is None:
        print(f"timing_agreement: nothing measured ({why or 'ncu (Nsight Compute) is not on PATH'})")
        return 2
    from kgpubench.errors import KgpubenchError
    from kgpubench.measure.backends.registry import get_backend

    modes = [m.strip() for m in args.flush_modes.split(",") if m.strip()]
    timers = [t.strip() for t in args.cold_timers.split(",") if t.strip()]
    rows: list[dict] = []
    backends = {}
    for mode, timer in _variants(modes, timers):
        try:
            backends[(mode, timer)] = get_backend("cupy", l2_flush=mode, cold_timer=timer)
        except KgpubenchError as exc:  # e.g. no CUPTI binding carried: say so, time the others
            rows.append({"name": "backend", "suite": "-", "flush": mode, "timer": timer, "error": str(exc)[:300]})
            print(f"timer {timer} with the {mode} flush cannot start: {exc}", flush=True)
    if not backends:
        print("timing_agreement: no timer could start")
        return 2
    first = next(iter(backends))
    backend = backends[first]
    for (mode, timer), b in backends.items():
        floor, same = event_floor_us(b)
        rows.append({"name": f"empty kernel (floor, flush {mode}, timer {timer})", "suite": "-", "floor": True,
                     "l2_policy": "flushed", "flush": mode, "timer": timer, "ours_us": floor,
                     **({"same_samples": same} if same else {})})
        print(f"{rows[-1]['name']:<44} ours {floor:>11.3f} us", flush=True)
        if same:
            print(same_samples_line(same), flush=True)
    ncu_empty = None
    if any(_policy(p) == "flushed" for p in PICKS if not args.only or p.name in args.only):
        try:  # the empty kernel under ncu with the flushed picks' options: the offset between the clocks
            ncu_empty = ncu_us(EMPTY_NAME, "flushed", "kg_empty")
            print(f"{'empty kernel (ncu, --cache-control all)':<44} ncu  {ncu_empty:>11.3f} us", flush=True)
        except Exception as exc:  # noqa: BLE001 - report it; the picks still run
            rows.append({"name": EMPTY_NAME, "suite": "-", "flush": None, "timer": None,
                         "error": f"{type(exc).__name__}: {exc}"[:300]})
            print(f"{EMPTY_NAME + ' (ncu)':<34} ERROR {rows[-1]['error']}", flush=True)

    def extra() -> dict:
        empty = empty_kernel_offsets([r for r in rows if r.get("flush") in (None, "read")], ncu_empty)
        return {"empty_kernel": empty, "offset": offset_check(rows, empty["offset_us"]), "flush_tail": flush_tail(rows)}
    for pick in PICKS:
        if args.only and pick.name not in args.only:
            continue
        if args.flushed_only and _policy(pick) != "flushed":
            continue
        blame = {"flush": first[0], "timer": first[1]}  # ours failed: the first timer's error
        try:
            ours, policy, launches, kernel_name, same = ours_us(pick, backend)
            blame = {"flush": None, "timer": None}  # ncu failed: no timer's error, every timer lacks the pick
            ref = ncu_us(pick.name, policy, kernel_name)
        except Exception as exc:  # noqa: BLE001 - report the pick and go on with the others
            rows.append({"name": pick.name, "suite": pick.suite, **blame,
                         "error": f"{type(exc).__name__}: {exc}"[:300]})
            print(f"{pick.name:<34} ERROR {rows[-1]['error']}", flush=True)
            continue
        per_variant = [(first, ours, launches, same)]
        for variant in list(backends)[1:] if policy == "flushed" else ():  # a warm pick has no flush or timer
            try:
                value, _policy_again, n, _kernel, same_v = ours_us(pick, backends[variant])
            except Exception as exc:  # noqa: BLE001 - this timer failed on this pick; the others stand
                rows.append({"name": pick.name, "suite": pick.suite, "flush": variant[0], "timer": variant[1],
                             "error": f"{type(exc).__name__}: {exc}"[:300]})
                print(f"{_label(rows[-1]):<44} ERROR {rows[-1]['error']}", flush=True)
                continue
            per_variant.append((variant, value, n, same_v))
        for (mode, timer), value, n, paired in per_variant:
            flushed = policy == "flushed"
            rows.append({"name": pick.name, "suite": pick.suite, "l2_policy": policy,
                         "flush": mode if flushed else None, "timer": timer if flushed else None,
                         "launches_per_sample": n, "ours_us": value, "ncu_us": ref, "ratio": value / ref,
                         "diff_us": value - ref, "pass": judge(value, ref),
                         **({"same_samples": paired} if paired else {})})
            _print(rows[-1])
        if args.json:  # after every kernel: a run stopped at its time limit keeps what it measured
            _write_json(args.json, backend.device().name, rows, extra())
    judged = [r for r in rows if "ncu_us" in r or "error" in r]  # the empty-kernel floors have no reference
    measured = [r for r in judged if "error" not in r]
    passed = sum(r["pass"] for r in measured)
    print(f"device: {backend.device().name}; {len(measured)} kernels measured, {passed} within target "
          f"(3 % at >= 5 us, 0.5 us below); {len(judged) - len(measured)} errors")
    final = extra()
    for line in flush_tail_lines(final["flush_tail"]) + offset_lines(final["empty_kernel"], final["offset"]):
        print(line)
    if args.json:
        _write_json(args.json, backend.device().name, rows, final)
    if args.choose:
        from kgpubench.foundation.files import atomic_write_bytes

        choice = choose_cold_timer(rows, [t for t in timers if any(v[1] == t for v in backends)])
        atomic_write_bytes(args.choose, json.dumps(choice, indent=1).encode())
        print(f"cold timer: {choice['timer']} ({'proven' if choice['proven'] else 'NOT proven'}: "
              f"{json.dumps(choice['per_timer'])})")
    return 0 if measured and passed == len(measured) == len(judged) else 1


if __name__ == "__main__":
    sys.exit(main())
