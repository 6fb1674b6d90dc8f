"""The figures DATASET_CARD.md states about the data, computed from the store's rows.

Every number the card gives about the rows (counts, GPUs, medians, shares, dates, file sizes) is in a generated
block whose text one function here writes from the store at ``kgpubench card`` time; ``kgpubench card --check``
compares each block with the data (kgpubench.store.card). The card's hand-written text carries no such number.
:data:`FIGURE_BLOCKS` maps each block's name (``figures:<name>``) to its function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from kgpubench.schema import TABLES
from kgpubench.sources import BENCHMARK_HUB
from kgpubench.store.view import StoreView

NO_ROWS = "No rows yet.\n"


def read_frame(store: StoreView, config: str, columns: Iterable[str]) -> pd.DataFrame:
    """The rows of one config (every part file of the manifest), the named columns only; a column a part lacks
    (written under an older schema) is all null there."""
    columns = list(columns)
    parts = []
    for entry in store.files(config):
        path = store.path / entry["path"]
        have = set(pq.read_schema(path).names)
        frame = pq.read_table(path, columns=[c for c in columns if c in have]).to_pandas()
        parts.append(frame.reindex(columns=columns))
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)


def count(n: float) -> str:
    """An integer with thousands separators: 12,231."""
    return f"{int(n):,}"


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a whole percentage: "38 %"."""
    return f"{100 * part / whole:.0f} %" if whole else "-"


def day(value) -> str:
    """The UTC date of a timestamp: 2026-11-23."""
    return pd.Timestamp(value).tz_convert("UTC").strftime("%Y-%m-%d") if pd.notna(value) else "-"


def days(series: pd.Series) -> str:
    """The distinct UTC dates of a timestamp column, sorted, comma-separated."""
    return listed({day(v) for v in pd.unique(series.dropna())})


def listed(values: Iterable, sep: str = ", ") -> str:
    """Distinct non-null values, sorted (numbers by value), joined by ``sep`` (``-`` when there is none)."""
    if isinstance(values, pd.Series):
        distinct = set(values.dropna().unique().tolist())
    else:
        distinct = {v for v in values if pd.notna(v)}
    try:
        out = [str(v) for v in sorted(distinct)]
    except TypeError:
        out = sorted(str(v) for v in distinct)
    return sep.join(out) or "-"


def counts_of(series: pd.Series) -> str:
    """``value n`` per distinct value, sorted by value: "ok 7,738, launch_error 12"."""
    return ", ".join(f"{k} {count(n)}" for k, n in series.value_counts().sort_index().items())


def values_on(series: pd.Series) -> str:
    """``value on n rows`` per distinct non-null value, sorted by value: "100 on 7,738 rows"."""
    return ", ".join(f"{k} on {count(n)} rows" for k, n in series.dropna().value_counts().sort_index().items()) or "-"


def _table(header: list[str], rows: Iterable[Iterable]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


# -- measured rows of protocol 1 (kernels, npb, stencil without a measurement_protocol value) ----------------------
_MEASURED_CONFIGS = ("kernels", "npb", "stencil")
_MEASURED_COLUMNS = ("status", "gpu_name", "driver_version", "cuda_version", "cupy_version", "toolchain_version",
                     "collected_at", "kgpubench_version", "kgpubench_commit", "run_id", "gpu_uuid_hash",
                     "measurement_protocol", "source", "time_ms_median", "time_cv", "clock_sm_mhz_before",
                     "power_window_ms", "power_samples")
_EXTRA = {"kernels": ("suite", "kernel"), "npb": ("row_kind", "benchmark", "npb_class"),
          "stencil": ("grid_nx", "grid_ny", "grid_nz", "space_order", "dtype")}


def _measured_rows(store: StoreView, protocol: int | None, columns: tuple[str, ...] = ()) -> dict[str, pd.DataFrame]:
    """Per measured config, its measured rows of ``protocol`` (None: no ``measurement_protocol`` value, protocol 1),
    with :data:`_MEASURED_COLUMNS`, ``columns`` and the config's own."""
    out = {}
    for config in _MEASURED_CONFIGS:
        df = read_frame(store, config, _MEASURED_COLUMNS + columns + _EXTRA[config])
        mp = df["measurement_protocol"]
        out[config] = df[(df["source"] == "measured") & (mp.isna() if protocol is None else mp == protocol)]
    return out


def protocol1_rows(store: StoreView) -> dict[str, pd.DataFrame]:
    """Per measured config, its rows measured under protocol 1 (``source`` measured, no ``measurement_protocol``)."""
    return _measured_rows(store, None)


def npb_time_cv_median(store: StoreView) -> dict[str, float]:
    """Median ``time_cv`` of the protocol-1 ``npb`` kernel rows per class (S, W, A, B, ...)."""
    npb = protocol1_rows(store)["npb"]
    kernel = npb[npb["row_kind"] == "kernel"]
    return {c: float(g["time_cv"].median()) for c, g in kernel.groupby("npb_class", sort=False)}


def measured_figures(store: StoreView) -> str:
    """The first measured rows: their set-up, what the partial sweeps reached, and the figures that show the
    limits of protocol 1 (short times, npb spread, clocks, power windows, boards)."""
    rows = protocol1_rows(store)
    if not any(len(df) for df in rows.values()):
        return "No protocol-1 rows.\n"
    every = pd.concat(list(rows.values()), ignore_index=True)
    k, npb, st = rows["kernels"], rows["npb"], rows["stencil"]
    regular = k[k["suite"] == "regular"]
    power = k[k["suite"] == "power"]
    lines = [
        f"- GPU: {listed(every['gpu_name'])}; driver {listed(every['driver_version'])}, CUDA "
        f"{listed(every['cuda_version'])}, CuPy {listed(every['cupy_version'])}, toolchain "
        f"{listed(every['toolchain_version'])}; collected {days(every['collected_at'])} in "
        f"{count(every['run_id'].nunique())} run(s); status: {counts_of(every['status'])}.",
        "- Rows: `kernels` " + ", ".join(f"{s} {count(n)}" for s, n in k["suite"].value_counts().sort_index().items())
        + f"; `npb` {count(len(npb))}; `stencil` {count(len(st))}.",
        "- `kernels` regular rows per kernel: " + counts_of(regular["kernel"]) + ".",
        "- `npb` rows per benchmark and class: " + "; ".join(
            f"{b} " + ", ".join(f"{c} {count(n)}" for c, n in g["npb_class"].value_counts().items())
            for b, g in npb.groupby("benchmark", sort=True))
        + "; no rows of " + (", ".join(b for b in _npb_benchmarks() if b not in set(npb["benchmark"])) or "none")
        + ".",
        "- `stencil` grids " + listed(st["grid_nx"].astype("Int64").astype(str) + "^3" if len(st) else [])
        + ", space order " + listed(st["space_order"].astype("Int64")) + ", dtype " + listed(st["dtype"]) + ".",
    ]
    short = int((regular["time_ms_median"] < 0.020).sum())
    lines.append(f"- {count(short)} of {count(len(regular))} `regular` rows ({share(short, len(regular))}) have a "
                 "median under 20 us (0.020 ms).")
    cv = npb_time_cv_median(store)
    lines.append("- Median `time_cv` of the `npb` kernel rows, per class: "
                 + ", ".join(f"{c} {v:.2f}" for c, v in cv.items()) + ".")
    clocks = every["clock_sm_mhz_before"].dropna()
    lines.append(f"- The clock columns are filled on {count(len(clocks))} of {count(len(every))} rows (the "
                 f"`power` rows: {count(len(power))}); SM clock before a measurement: {_span(clocks)} MHz.")
    if len(power):
        lines.append(f"- `power` rows: window (`power_window_ms`) median {power['power_window_ms'].median():,.0f} "
                     f"ms; `power_samples` {values_on(power['power_samples'].astype('Int64'))}.")
    lines.append(f"- `kgpubench_version`: {listed(every['kgpubench_version'])}; `kgpubench_commit` recorded on "
                 f"{count(every['kgpubench_commit'].notna().sum())} rows.")
    for board in sorted(every["gpu_uuid_hash"].dropna().unique()):
        per = []
        for suite, sg in k[k["gpu_uuid_hash"] == board].groupby("suite", sort=True):
            per.append(f"{suite} {count(len(sg))} ({counts_of(sg['kernel'])})" if suite == "regular"
                       else f"{suite} {count(len(sg))}")
        per += [f"{c} {count((rows[c]['gpu_uuid_hash'] == board).sum())}" for c in ("npb", "stencil")
                if (rows[c]["gpu_uuid_hash"] == board).any()]
        lines.append(f"- Board `{board}` (`gpu_uuid_hash`): " + "; ".join(per) + ".")
    shared = every.groupby("run_id")["gpu_uuid_hash"].nunique()
    for run in shared[shared > 1].index:
        boards = every.loc[every["run_id"] == run, "gpu_uuid_hash"]
        lines.append(f"- `run_id` {run} spans {count(boards.nunique())} boards: " + counts_of(boards) + " rows.")
    return "\n".join(lines) + "\n"


def _npb_benchmarks() -> tuple[str, ...]:
    return next(c.values for c in TABLES["npb"].columns if c.name == "benchmark") or ()


# -- measured rows of protocol 2 ----------------------------------------------------------------------------------
_P2_COLUMNS = ("timing_method", "l2_policy", "clocks_locked", "throttled", "temperature_c_before",
               "clock_sm_mhz_after", "row_id")


def cross_board_spread(rows: pd.DataFrame) -> pd.Series:
    """Per configuration (``row_id``) measured ``ok`` on two boards or more (``gpu_uuid_hash``) with one timing
    method: ``max / min - 1`` of the boards' median times (each board's median over its runs). Same GPU model,
    other boards, other days: how far a label moves when the data come from another machine."""
    ok = rows[(rows["status"] == "ok") & rows["time_ms_median"].notna() & rows["gpu_uuid_hash"].notna()]
    if ok.empty:
        return pd.Series(dtype=float)
    per_board = ok.groupby(["row_id", "timing_method", "gpu_uuid_hash"], dropna=False)["time_ms_median"].median()
    spread = per_board.groupby(level=[0, 1], dropna=False).agg(lambda t: t.max() / t.min() - 1.0 if len(t) > 1
                                                               else float("nan"))
    return spread.dropna()


def _cross_board_line(parts: Iterable[tuple[str, pd.DataFrame]]) -> str:
    cells = []
    for name, df in parts:
        spread = cross_board_spread(df) * 100.0
        if len(spread):
            cells.append(f"`{name}` {count(len(spread))} configurations, median {spread.median():.2f} %, "
                         f"90th percentile {spread.quantile(0.9):.2f} %, maximum {spread.max():.1f} %")
    return ("  - Measured again on another board (same configuration and timing method; the boards' medians, "
            "max / min - 1): " + ("; ".join(cells) if cells else "none") + ".")


def protocol2_rows(store: StoreView) -> dict[str, pd.DataFrame]:
    """Per measured config, its rows measured under protocol 2 (``measurement_protocol`` 2)."""
    return _measured_rows(store, 2, _P2_COLUMNS)


def protocol2_figures(store: StoreView) -> str:
    """The protocol-2 rows, per GPU: set-up, boards, runs, rows per suite, what the partial sweeps reached, and
    the conditions (timing methods, spread, clocks, throttling)."""
    rows = protocol2_rows(store)
    every = pd.concat([df.assign(config=c) for c, df in rows.items()], ignore_index=True)
    if every.empty:
        return "No protocol-2 rows.\n"
    lines = []
    for gpu, g in every.groupby("gpu_name", sort=True):
        k, npb, st = (g[g["config"] == c] for c in _MEASURED_CONFIGS)
        kernel_rows = npb[npb["row_kind"] == "kernel"]
        clocks = g["clock_sm_mhz_before"].dropna()
        temps = g["temperature_c_before"].dropna()
        lines += [
            f"- **{gpu}**: driver {listed(g['driver_version'])}, CUDA {listed(g['cuda_version'])}, CuPy "
            f"{listed(g['cupy_version'])}, toolchain {listed(g['toolchain_version'])}; collected "
            f"{days(g['collected_at'])} in {count(g['run_id'].nunique())} run(s) on "
            f"{count(g['gpu_uuid_hash'].nunique())} board(s), at commit(s) "
            f"{listed(g['kgpubench_commit'].str.slice(0, 7))}; status: {counts_of(g['status'])}.",
            "  - Rows: `kernels` " + (", ".join(f"{s} {count(n)}" for s, n in
                                               k["suite"].value_counts().sort_index().items()) or "none")
            + f" ({counts_of(k['kernel']) or '-'}); `npb` {count(len(npb))}; `stencil` {count(len(st))}.",
            "  - `npb` rows per benchmark and class: " + ("; ".join(
                f"{b} " + ", ".join(f"{c} {count(n)}" for c, n in gb["npb_class"].value_counts().sort_index().items())
                for b, gb in npb.groupby("benchmark", sort=True)) or "none") + ".",
            "  - `stencil` rows per grid, space order and dtype: " + (", ".join(
                f"{int(nx)}^3 o{int(o)} {d} {count(n)}" for (nx, o, d), n in
                st.groupby(["grid_nx", "space_order", "dtype"]).size().items()) or "none") + ".",
            f"  - `timing_method`: {counts_of(g['timing_method'])}; `l2_policy`: {counts_of(g['l2_policy'])}.",
            _cross_board_line((("kernels", k), ("npb", kernel_rows), ("stencil", st))),
            "  - Median `time_cv`: " + ", ".join(
                f"`{c}` {df['time_cv'].median():.4f}" for c, df in (("kernels", k), ("npb", kernel_rows),
                                                                   ("stencil", st)) if len(df)) + ".",
            f"  - Clocks locked on {count((g['clocks_locked'] == True).sum())} of {count(len(g))} rows; SM clock "  # noqa: E712
            f"before a measurement {_span(clocks)} MHz; temperature before {_span(temps)} C; throttled on "
            f"{count((g['throttled'] == True).sum())} rows.",  # noqa: E712
        ]
    return "\n".join(lines) + "\n"


def _span(series: pd.Series) -> str:
    """``1,965 to 1,980`` (whole numbers), one value when they agree, ``-`` for none."""
    if not len(series):
        return "-"
    low, high = f"{series.min():,.0f}", f"{series.max():,.0f}"
    return low if low == high else f"{low} to {high}"


# -- imported configs --------------------------------------------------------------------------------------------
def programs_figures(store: StoreView) -> str:
    """KernelBench: rows per problem set, set-ups, GPUs, repeats, software, dates, failures."""
    df = read_frame(store, "programs", ("problem_set", "setup", "gpu_name", "framework_version", "cuda_version",
                                        "collected_at", "l2_flushed", "status", "repeats", "warmups",
                                        "time_ms_mean"))
    if df.empty:
        return NO_ROWS
    sets = "; ".join(f"`{ps}` {count(len(g))} ({count(g['setup'].nunique())} set-ups, "
                     f"{count(g['gpu_name'].nunique())} GPU models)" for ps, g in df.groupby("problem_set", sort=True))
    ok = df[df["status"] == "ok"]
    fast = ok[ok["time_ms_mean"] < 0.1]
    lines = [f"- {count(len(df))} rows: {sets}.",
             f"- `repeats` {values_on(df['repeats'].astype('Int64'))}; `warmups` "
             f"{values_on(df['warmups'].astype('Int64'))}.",
             f"- Status: {counts_of(df['status'])}.",
             f"- {count(len(fast))} of {count(len(ok))} timed rows take under 0.1 ms (`time_ms_mean`): "
             + counts_of(fast["problem_set"]) + ".", ""]
    table = []
    for (ps, setup), g in df.groupby(["problem_set", "setup"], sort=True):
        gpus = ", ".join(f"{n} {count(c)}" for n, c in g["gpu_name"].value_counts().sort_index().items())
        table.append((f"`{ps}`", f"`{setup}`", count(len(g)), gpus, listed(g["framework_version"]),
                      listed(g["cuda_version"]), days(g["collected_at"]), listed(g["l2_flushed"])))
    lines += _table(["problem set", "set-up", "rows", "GPU (rows)", "PyTorch", "CUDA", "collected_at",
                     "l2_flushed"], table)
    return "\n".join(lines) + "\n"


def tunings_figures(store: StoreView) -> str:
    """CLBlast: rows per kind, tuned devices and vendors, devices with catalogue figures, dates."""
    df = read_frame(store, "tunings", ("kind", "vendor", "device", "gpu_catalogue_name", "collected_at"))
    if df.empty:
        return NO_ROWS
    dev = df[df["kind"] == "device"]
    pairs = dev[["vendor", "device"]].drop_duplicates()
    with_figures = dev[dev["gpu_catalogue_name"].notna()][["vendor", "device"]].drop_duplicates()
    nvidia = pairs[pairs["vendor"].str.upper() == "NVIDIA"]
    nvidia_without = len(nvidia) - int((with_figures["vendor"].str.upper() == "NVIDIA").sum())
    kinds = ", ".join(f"{count(n)} {k}" for k, n in df["kind"].value_counts().items())
    lines = [f"- {count(len(df))} rows: {kinds}.",
             f"- {count(len(pairs))} tuned (vendor, device) pairs of {count(pairs['vendor'].nunique())} vendors: "
             + counts_of(pairs["vendor"]) + ".",
             f"- {count(len(with_figures))} tuned devices carry catalogue figures; "
             f"{count(len(pairs) - len(with_figures))} keep null figures ({count(nvidia_without)} of the "
             f"{count(len(nvidia))} NVIDIA devices among them).",
             f"- `collected_at`: {days(df['collected_at'])}."]
    return "\n".join(lines) + "\n"


def autotune_figures(store: StoreView) -> str:
    """The benchmark hub: rows per kernel, problem size and GPU with their outcomes and repeats, totals, the
    repeats behind the statistics, the part files and the rows with the fixed date."""
    df = read_frame(store, "autotune", ("kernel", "problem_size", "gpu_name", "gpu_architecture", "source_file",
                                        "status", "repeats", "collected_at"))
    if df.empty:
        return NO_ROWS
    df["folder"] = df["source_file"].str.split("/").str[0] + "/"
    statuses = ("ok", "compile_error", "launch_error")
    table = []
    order = df.groupby("kernel").size().sort_values(ascending=False).index
    for kernel in order:
        g = df[df["kernel"] == kernel]
        for (size, gpu, folder), h in g.groupby(["problem_size", "gpu_name", "folder"], sort=True):
            st = h["status"].value_counts()
            table.append((f"`{kernel}`", size, gpu, folder, count(len(h)), *[count(st.get(s, 0)) for s in statuses],
                          listed(h["repeats"].dropna().astype(int))))
    ok = int((df["status"] == "ok").sum())
    files = store.files("autotune")
    size = sum((store.path / f["path"]).stat().st_size for f in files)
    undated = df[df["collected_at"] == pd.Timestamp(BENCHMARK_HUB.undated)]
    lines = [f"- {count(len(df))} rows (configurations) of {count(df['kernel'].nunique())} kernels on "
             f"{count(df['gpu_name'].nunique())} GPUs of {count(df['gpu_architecture'].nunique())} architectures "
             f"({listed(df['gpu_architecture'])}); {count(ok)} timed and {count(len(df) - ok)} failed.",
             "- Rows per kernel: " + ", ".join(f"`{k}` {count(n)}" for k, n in df["kernel"].value_counts().items())
             + ".",
             f"- The statistics summarise {count(df['repeats'].sum())} repeats "
             f"({listed(df['repeats'].dropna().astype(int), ' or ')} per timed configuration).",
             f"- Stored in {count(len(files))} zstd parquet file(s) of {size / 1e6:.1f} MB ({count(size)} bytes): "
             + ", ".join(f"`{f['path']}`" for f in files) + ".",
             f"- {count(len(undated))} rows carry the fixed `collected_at` "
             f"{pd.Timestamp(BENCHMARK_HUB.undated).strftime('%Y-%m-%d %H:%M:%S.%f')} UTC: "
             + counts_of(undated["gpu_name"]) + ".", ""]
    lines += _table(["kernel", "problem size", "GPU", "upstream folder", "rows", *statuses, "repeats"], table)
    return "\n".join(lines) + "\n"


def operators_figures(store: StoreView) -> str:
    """NeuSight: rows per GPU and shape set, per operator class, the timing columns, software and shapes."""
    df = read_frame(store, "operators", ("gpu_name", "gpu_vendor", "shape_set", "operator", "operator_class",
                                         "occurrence", "calls_timed", "calls_kept", "framework_version",
                                         "cuda_version", "cudnn_version", "collected_at", "time_ms", "dim_b",
                                         "kernel_size", "stride", "padding"))
    if df.empty:
        return NO_ROWS
    per_gpu = df.groupby(["gpu_name", "shape_set"]).size().unstack(fill_value=0)
    table = [(gpu, *[count(per_gpu.loc[gpu].get(s, 0)) for s in ("train", "test")], count(per_gpu.loc[gpu].sum()))
             for gpu in per_gpu.index]
    software = "; ".join(f"{v}: PyTorch {listed(g['framework_version'])}, CUDA {listed(g['cuda_version'])}, "
                         f"cuDNN {listed(g['cudnn_version'].astype('Int64') if len(g) else [])}"
                         for v, g in df.groupby("gpu_vendor", sort=True))
    conv = df[df["operator"] == "conv2d"]
    fastest = df.groupby("gpu_name")["time_ms"].min()
    lines = [f"- {count(len(df))} rows of {count(df['operator'].nunique())} operators on "
             f"{count(df['gpu_name'].nunique())} GPUs.",
             "- Rows per operator class: " + counts_of(df["operator_class"]) + ".",
             f"- `calls_timed`: {listed(df['calls_timed'].astype('Int64'))}; `calls_kept`: "
             f"{listed(df['calls_kept'].astype('Int64'))}.",
             f"- Keys measured twice in a file (`occurrence` > 0): {count((df['occurrence'] > 0).sum())}.",
             f"- Software: {software}.",
             f"- conv2d kernel size {listed(conv['kernel_size'].astype('Int64'))}, stride "
             f"{listed(conv['stride'].astype('Int64'))}, padding {listed(conv['padding'].astype('Int64'))}; "
             f"linear `dim_b` {listed(df.loc[df['operator'] == 'linear', 'dim_b'].astype('Int64'))}.",
             f"- The fastest row of each GPU takes {fastest.min():.3f} to {fastest.max():.3f} ms.",
             f"- `collected_at`: {days(df['collected_at'])}.", ""]
    lines += _table(["GPU", "rows (train shapes)", "rows (test shapes)", "rows"], table)
    return "\n".join(lines) + "\n"


def profiles_figures(store: StoreView) -> str:
    """gpuperfpredict: rows, kernels, applications, GPUs, the rows per kernel and GPU, the counter columns, the
    shared-memory values, the first heartwall launch, the upstream GPU ids, dates."""
    df = read_frame(store, "profiles", ("gpu_name", "gpu_architecture", "application", "kernel", "launch_index",
                                        "time_ms", "static_smem_bytes", "upstream_gpu_id", "collected_at",
                                        "grid_z", "block_z", "repeats", "timed_unit"))
    if df.empty:
        return NO_ROWS
    gpus = sorted(df["gpu_name"].unique())
    per = df.groupby(["kernel", "gpu_name"]).size().unstack(fill_value=0)
    apps = df.groupby("kernel")["application"].first()
    table = [(f"`{k}` ({apps[k]})", *[count(per.loc[k, g]) if per.loc[k, g] else "missing upstream" for g in gpus])
             for k in per.index]
    table.append(("total", *[count(per[g].sum()) for g in gpus]))
    heart = df[df["application"] == "heartwall"]
    first = heart[heart["launch_index"] == 0]["time_ms"].median()
    rest = heart[heart["launch_index"] > 0]["time_ms"].median()
    ids = sorted(int(i) for i in df["upstream_gpu_id"].dropna().unique())
    gaps = [i for i in range(min(ids), max(ids) + 1) if i not in ids] if ids else []
    prof = [c.name for c in TABLES["profiles"].columns if c.name.startswith("prof_")]
    lines = [f"- {count(len(df))} rows: {count(df['kernel'].nunique())} kernels of "
             f"{count(df['application'].nunique())} applications ({listed(df['application'])}) on {count(len(gpus))} "
             f"GPUs of {count(df['gpu_architecture'].nunique())} architectures ({listed(df['gpu_architecture'])}).",
             f"- `repeats` {values_on(df['repeats'].astype('Int64'))}; `timed_unit` {listed(df['timed_unit'])}.",
             f"- {count(len(prof))} `prof_*` counter columns are declared.",
             f"- `static_smem_bytes` values: {listed(df['static_smem_bytes'].astype('Int64'))}; `grid_z` "
             f"{listed(df['grid_z'].astype('Int64'))}, `block_z` {listed(df['block_z'].astype('Int64'))}.",
             (f"- heartwall: the median first launch of an input (`launch_index` 0) takes {first:.4f} ms, about "
              f"1/{rest / first:,.0f} of the median later launch ({rest:.4f} ms)." if len(heart) and first else
              "- heartwall: no rows."),
             f"- Upstream GPU ids present: {', '.join(map(str, ids))}"
             + (f" (none with id {', '.join(map(str, gaps))})" if gaps else "") + ".",
             f"- `collected_at`: {days(df['collected_at'])}.", ""]
    lines += _table(["kernel (application)", *gpus], table)
    return "\n".join(lines) + "\n"


_LLM_COLUMNS = ("gpu_name", "system", "operator", "framework", "framework_version", "kernel_source", "dtype", "m",
                "n", "k", "time_ms", "occurrence", "upstream_provenance", "collected_at", "peak_tensor_tflops")


def llm_operators_figures(store: StoreView) -> str:
    """AIConfigurator: rows per GPU and operator, frameworks and versions per GPU, dtypes, repeats, provenance."""
    df = read_frame(store, "llm_operators", _LLM_COLUMNS)
    if df.empty:
        return NO_ROWS
    per_gpu = df.groupby(["gpu_name", "operator"]).size().unstack(fill_value=0)
    ops = ("gemm", "context_attention", "generation_attention")
    stacks = df.groupby("gpu_name").apply(
        lambda g: ", ".join(f"{fw} {listed(v['framework_version'])}" for fw, v in g.groupby("framework")),
        include_groups=False)
    table = [(gpu, df.loc[df["gpu_name"] == gpu, "system"].iloc[0], *[count(per_gpu.loc[gpu].get(o, 0)) for o in ops],
              stacks[gpu]) for gpu in per_gpu.index]
    gemm = df[df["operator"] == "gemm"]
    no_peak = sorted(df.loc[df["peak_tensor_tflops"].isna(), "gpu_name"].unique())
    lines = [f"- {count(len(df))} rows on {count(df['gpu_name'].nunique())} GPUs: " + counts_of(df["operator"]) + ".",
             "- GEMM dtypes: " + counts_of(gemm["dtype"]) + ".",
             f"- Kernel sources: {count(df['kernel_source'].nunique())}; frameworks: {listed(df['framework'])}.",
             f"- Keys measured twice in a file (`occurrence` > 0): {count((df['occurrence'] > 0).sum())}.",
             "- Upstream provenance of the rows: " + counts_of(df["upstream_provenance"].fillna("none")) + ".",
             f"- Rows without a cited tensor peak for their dtype: {count(df['peak_tensor_tflops'].isna().sum())}"
             + (f" (GPUs: {', '.join(no_peak)})" if no_peak else "") + ".",
             f"- `collected_at`: {days(df['collected_at'])}.", ""]
    lines += _table(["GPU", "system", "gemm", "context attention", "generation attention", "frameworks"], table)
    return "\n".join(lines) + "\n"


def label_floor(df: pd.DataFrame) -> pd.DataFrame:
    """How far apart the stacks' times of the same GEMM are: per GPU and dtype, over the GEMMs (m, n, k) that at
    least two frameworks measured (each framework's fastest kernel source for it), the problems compared, the
    median and 25th-75th percentile of max/min time across the frameworks, and ``male``: the mean over problems
    and framework pairs of |ln(t_a / t_b)|. ``df`` holds the GEMM rows' gpu_name, dtype, m, n, k, framework and
    time_ms."""
    best = df.groupby(["gpu_name", "dtype", "m", "n", "k", "framework"], sort=True)["time_ms"].min()
    logs = np.log(best).unstack("framework")
    logs = logs[logs.notna().sum(axis=1) >= 2]
    spread = logs.max(axis=1) - logs.min(axis=1)
    fws = list(logs.columns)
    pair_sum = pd.Series(0.0, index=logs.index)
    pair_n = pd.Series(0, index=logs.index)
    for i, a in enumerate(fws):
        for b in fws[i + 1:]:
            d = (logs[a] - logs[b]).abs()
            pair_sum += d.fillna(0.0)
            pair_n += d.notna().astype(int)
    per_problem = pd.DataFrame({"ratio": np.exp(spread), "male": pair_sum / pair_n})
    grouped = per_problem.groupby(level=["gpu_name", "dtype"])
    return pd.DataFrame({"problems": grouped.size(), "median_ratio": grouped["ratio"].median(),
                         "p25_ratio": grouped["ratio"].quantile(0.25), "p75_ratio": grouped["ratio"].quantile(0.75),
                         "male": grouped["male"].mean()})


def label_floor_figures(store: StoreView) -> str:
    """The label floor of gemm-latency: the agreement of the three stacks' times of one GEMM (:func:`label_floor`)."""
    df = read_frame(store, "llm_operators", ("gpu_name", "operator", "dtype", "m", "n", "k", "framework", "time_ms"))
    df = df[df["operator"] == "gemm"]
    if df.empty:
        return NO_ROWS
    floor = label_floor(df)
    if floor.empty:
        return "No GEMM was measured by two frameworks.\n"
    rows = [(gpu, dtype, count(r.problems), f"{r.median_ratio:.3f}", f"{r.p25_ratio:.3f}-{r.p75_ratio:.3f}",
             f"{r.male:.3f}") for (gpu, dtype), r in floor.iterrows()]
    overall = label_floor(df.assign(gpu_name="all", dtype="all"))
    lines = [f"- Over every GPU and dtype: {count(overall['problems'].iloc[0])} GEMMs measured by two or three "
             f"frameworks; median max/min time {overall['median_ratio'].iloc[0]:.3f}, male between frameworks "
             f"{overall['male'].iloc[0]:.3f}.", ""]
    lines += _table(["GPU", "dtype", "GEMMs", "median max/min", "25-75 %", "male between frameworks"], rows)
    return "\n".join(lines) + "\n"


_CONV_COLUMNS = ("gpu_name", "gpu_arch", "gpu_compute_units", "gpu_inferred_from", "problem_id", "solver",
                 "direction", "dtype", "spatial_dims", "time_ms", "entry_format", "collected_at")


def convolutions_figures(store: StoreView) -> str:
    """MIOpen: rows, problems and solvers per GPU (with how the GPU was inferred), directions, dtypes, formats."""
    df = read_frame(store, "convolutions", _CONV_COLUMNS)
    if df.empty:
        return NO_ROWS
    per_problem = df.groupby(["gpu_name", "problem_id"]).size()
    choice = (per_problem >= 2).groupby(level="gpu_name").sum()
    table = []
    for gpu, g in df.groupby("gpu_name", sort=True):
        table.append((gpu, f"{g['gpu_arch'].iloc[0]}, {count(g['gpu_compute_units'].iloc[0])} CUs",
                      g["gpu_inferred_from"].iloc[0], count(len(g)), count(g["problem_id"].nunique()),
                      count(choice.get(gpu, 0)), count(g["solver"].nunique())))
    best = df.loc[df.groupby(["gpu_name", "problem_id"])["time_ms"].idxmin(), "solver"]
    top = best.value_counts().head(5)
    lines = [f"- {count(len(df))} rows: {count(df['problem_id'].nunique())} distinct problems on "
             f"{count(df['gpu_name'].nunique())} GPUs, {count(df['solver'].nunique())} solvers.",
             "- Directions: " + counts_of(df["direction"]) + "; spatial dimensions: "
             + counts_of(df["spatial_dims"].astype("Int64")) + ".",
             "- Data types: " + counts_of(df["dtype"]) + ".",
             "- Entry formats: " + counts_of(df["entry_format"]) + ".",
             "- Fastest solver of a problem, most often: " + ", ".join(f"{k} {count(v)}" for k, v in top.items())
             + ".",
             f"- `collected_at`: {days(df['collected_at'])}.", ""]
    lines += _table(["GPU", "ISA, compute units", "how the GPU was named", "rows", "problems",
                     "problems with a choice", "solvers"], table)
    return "\n".join(lines) + "\n"


FIGURE_BLOCKS: dict[str, Callable[[StoreView], str]] = {
    "figures:measured": measured_figures,
    "figures:protocol2": protocol2_figures,
    "figures:programs": programs_figures,
    "figures:tunings": tunings_figures,
    "figures:autotune": autotune_figures,
    "figures:operators": operators_figures,
    "figures:profiles": profiles_figures,
    "figures:llm_operators": llm_operators_figures,
    "figures:label_floor": label_floor_figures,
    "figures:convolutions": convolutions_figures,
}
