"""Adapter for a user's own checkout of GMAP's NPB-GPU (``kgpubench collect --suite npb --npb-gpu-src DIR``).

For every threads-per-block setting: write ``config/gpu.config`` (``KEY = value`` lines), keep the empty
``timer.flag`` (per-kernel timers on), ``make <bench> CLASS=<c>``, run ``bin/<bench>.<C>`` a few times and
parse its report (the ``Completed`` block with ``Class``, ``Time in seconds``, ``Verification``, then the
tab-separated "GPU Kernel / Threads Per Block" table with per-kernel seconds and percentage). Rows are the
npb table's, variant ``npb-gpu``; NPB-GPU reports no call counts, so its kernel rows' timing columns hold the
kernel's time **per run** (``repeats`` = runs) and ``calls_per_run`` stays null. No NPB-GPU code is here.
"""

from __future__ import annotations

import re
import statistics
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgpubench.errors import DataFileNotFoundError, SuiteError
from kgpubench.measure.timing import summarize

from .spec import BENCHMARKS, KERNELS, TPB_CHOICES, check_benchmark, check_class, default_tpb, uniform_tpb


class NpbGpuError(SuiteError, RuntimeError):
    """The NPB-GPU checkout could not be built or run, or printed something we cannot read."""


@dataclass
class NpbGpuReport:
    """What one NPB-GPU run printed."""

    benchmark: str
    npb_class: str
    time_s: float
    verification: str  # SUCCESSFUL, UNSUCCESSFUL or NOT PERFORMED
    kernels: dict[str, dict[str, float]] = field(default_factory=dict)  # name -> tpb, time_s, percent

    @property
    def verified(self) -> bool:
        return self.verification == "SUCCESSFUL"


def cuda_dir(src: Path) -> Path:
    """The NPB-GPU CUDA folder: ``src`` itself or ``src/CUDA`` (the one holding ``config/``)."""
    src = Path(src)
    for d in (src / "CUDA", src):
        if (d / "config").is_dir():
            return d
    raise DataFileNotFoundError(f"--npb-gpu-src {src}: no config/ folder in it or in its CUDA/ subfolder; pass the "
                                "root (or the CUDA folder) of a GMAP NPB-GPU checkout.")


def gpu_config_text(assignments: Mapping[str, Mapping[str, int]] | None = None) -> str:
    """The ``gpu.config`` text: every key of the four benchmarks, defaults unless ``assignments`` names it."""
    lines = []
    for bench in BENCHMARKS:
        tpb = {**default_tpb(bench), **dict((assignments or {}).get(bench, {}))}
        lines += [f"{k.config_key} = {int(tpb[k.name])}" for k in KERNELS[bench]]
    return "\n".join(lines) + "\n"


def prepare(cuda: Path, benchmark: str, assignment: Mapping[str, int]) -> None:
    """Write ``config/gpu.config`` for ``assignment`` of ``benchmark`` and make sure ``timer.flag`` exists."""
    (cuda / "config" / "gpu.config").write_text(gpu_config_text({check_benchmark(benchmark): assignment}))
    (cuda / "timer.flag").touch()


_NUM = r"[-+]?\d+(?:\.\d*)?(?:[eEdD][-+]?\d+)?"


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def kernel_name(benchmark: str, printed: str) -> str:
    """Our kernel name for a name in NPB-GPU's table (matched on its tail); the normalised name otherwise."""
    n = _norm(printed)
    for k in sorted(KERNELS[check_benchmark(benchmark)], key=lambda k: -len(k.name)):
        if n == k.name or n.endswith("_" + k.name) or n == _norm(k.config_key):
            return k.name
    return n


def parse_report(text: str) -> NpbGpuReport:
    """Parse the report NPB-GPU prints at the end of a run (see the module doc for the format)."""
    m_name = re.search(r"^\s*(\w+)\s+Benchmark Completed", text, re.MULTILINE)
    m_class = re.search(r"^\s*Class\s*=\s*(\w)", text, re.MULTILINE)
    m_time = re.search(rf"^\s*Time in seconds\s*=\s*({_NUM})", text, re.MULTILINE)
    m_ver = re.search(r"^\s*Verification\s*=\s*(SUCCESSFUL|UNSUCCESSFUL|NOT PERFORMED)", text, re.MULTILINE)
    missing = [w for w, m in (("'<NAME> Benchmark Completed'", m_name), ("'Class ='", m_class),
                              ("'Time in seconds ='", m_time), ("'Verification ='", m_ver)) if m is None]
    if missing:
        raise NpbGpuError(f"the NPB-GPU output lacks {', '.join(missing)}; expected the report NPB-GPU prints at "
                          "the end of a run (did the binary crash? its output is shown above).")
    bench = check_benchmark(m_name.group(1))
    report = NpbGpuReport(bench, check_class(m_class.group(1)), float(m_time.group(1)), m_ver.group(1))
    lines = text[m_ver.end():].splitlines()
    head = next((i for i, ln in enumerate(lines) if "GPU Kernel" in ln and "Threads Per Block" in ln), None)
    for ln in lines[head + 1 :] if head is not None else []:
        cells = [c.strip() for c in re.split(r"\t+|\s{2,}", ln.strip()) if c.strip()]
        if len(cells) < 2 or not re.fullmatch(r"\d+", cells[1]):
            if report.kernels:
                break
            continue
        entry = {"tpb": float(cells[1])}
        if len(cells) >= 3 and re.fullmatch(_NUM, cells[2]):
            entry["time_s"] = float(cells[2].replace("D", "e").replace("d", "e"))
        if len(cells) >= 4 and re.fullmatch(_NUM, cells[3].rstrip("%")):
            entry["percent"] = float(cells[3].rstrip("%"))
        report.kernels[kernel_name(bench, cells[0])] = entry
    return report


def _sh(cmd: list[str], cwd: Path, timeout: float) -> str:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if res.returncode != 0:
        tail = (res.stdout + res.stderr).strip().splitlines()[-5:]
        raise NpbGpuError(f"`{' '.join(cmd)}` in {cwd} exited with {res.returncode}: {' | '.join(tail)}")
    return res.stdout


def build_and_run(cuda: Path, benchmark: str, npb_class: str, runs: int, *,
                  shell: Callable[[list[str], Path, float], str] = _sh, timeout: float = 3600) -> list[NpbGpuReport]:
    """``make`` the binary of the current ``gpu.config`` and run it ``runs`` times; the parsed reports."""
    b, c = check_benchmark(benchmark).lower(), check_class(npb_class)
    shell(["make", b, f"CLASS={c}"], cuda, timeout)
    return [parse_report(shell([f"./bin/{b}.{c}"], cuda, timeout)) for _ in range(runs)]


def _stats_ms(values_s: Sequence[float]) -> dict[str, Any]:
    s = summarize([v * 1e3 for v in values_s])
    return {"time_ms_median": s.median, "time_ms_min": s.min, "time_ms_mean": s.mean, "time_ms_std": s.std,
            "repeats": s.count, "time_cv": s.cv}


def report_rows(benchmark: str, npb_class: str, assignment_name: str, assignment: Mapping[str, int],
                reports: Sequence[NpbGpuReport], kernel: str | None = None) -> list[dict[str, Any]]:
    """Rows (without GPU and provenance columns) from the reports of one assignment's runs.

    ``kernel`` set: the one-kernel row of that kernel at ``assignment[kernel]``; else the run row.
    """
    ok = all(r.verified for r in reports) and bool(reports)
    base = {"benchmark": benchmark, "npb_class": npb_class, "variant": "npb-gpu", "runs": len(reports),
            "verified": ok, "status": "ok" if ok else "verification_failed",
            "tpb_assignment": [{"name": k, "value": float(v)} for k, v in sorted(assignment.items())]}
    if reports:
        base["app_time_s"] = statistics.median(r.time_s for r in reports)
        ktimes = [sum(e.get("time_s", 0.0) for e in r.kernels.values()) for r in reports]
        base["remainder_s"] = statistics.fmean(r.time_s for r in reports) - statistics.fmean(ktimes)
    if not ok:
        base["status_detail"] = f"NPB-GPU printed Verification = {reports[-1].verification if reports else 'nothing'}"
    if kernel is None:
        row = {**base, "row_kind": "run", "kernel": "app", "assignment": assignment_name,
               "tpb": {"max": 1024, "warp": 32}.get(assignment_name)}
        if ok:
            row.update(_stats_ms([r.time_s for r in reports]))
        return [row]
    row = {**base, "row_kind": "kernel", "kernel": kernel, "tpb": int(assignment[kernel]), "assignment": "one-kernel"}
    times = [r.kernels.get(kernel, {}).get("time_s") for r in reports]
    printed = reports[-1].kernels.get(kernel, {}).get("tpb") if reports else None
    row["tpb_effective"] = int(printed) if printed else None
    if ok and all(t is not None and t > 0 for t in times):
        row.update(_stats_ms(times), kernel_time_s=statistics.fmean(times))
    elif ok:
        row.update(status="infeasible", status_detail=f"NPB-GPU's timer table has no time for {kernel}")
    return [row]


def collect_npb_gpu(src: Path, *, benchmarks: Sequence[str] = BENCHMARKS, classes: Sequence[str] = ("S",),
                    tpbs: Sequence[int] = TPB_CHOICES, runs: int = 3,
                    shell: Callable[[list[str], Path, float], str] = _sh) -> list[dict[str, Any]]:
    """Build and run a user's NPB-GPU checkout for every setting; rows without GPU/provenance columns.

    The caller (``kgpubench collect --npb-gpu-src``) adds ``gpu_*`` and provenance columns (source
    ``measured``) and appends the rows to the ``npb`` shard. ``config/gpu.config`` is left at the defaults.
    """
    cuda = cuda_dir(src)
    config = cuda / "config" / "gpu.config"
    original = config.read_text() if config.exists() else None
    rows: list[dict[str, Any]] = []
    try:
        for bench in map(check_benchmark, benchmarks):
            for cls in map(check_class, classes):
                for name, assign in (("default", default_tpb(bench)), ("max", uniform_tpb(bench, 1024)),
                                     ("warp", uniform_tpb(bench, 32))):
                    prepare(cuda, bench, assign)
                    rows += report_rows(bench, cls, name, assign, build_and_run(cuda, bench, cls, runs, shell=shell))
                for k in KERNELS[bench]:
                    for t in tpbs:
                        assign = {**default_tpb(bench), k.name: int(t)}
                        prepare(cuda, bench, assign)
                        reports = build_and_run(cuda, bench, cls, runs, shell=shell)
                        rows += report_rows(bench, cls, "one-kernel", assign, reports, kernel=k.name)
    finally:
        if original is not None:
            config.write_text(original)
    return rows
