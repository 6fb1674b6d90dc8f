"""``kgpubench features``: static features of one kernel configuration."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from kgpubench.cli.failure import debug_enabled, escape, fail
from kgpubench.errors import DataFileNotFoundError, KgpubenchError, OptionError


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not name.strip() or (option != "-D" and not sep):
            raise OptionError(f"{option} {item!r}: expected NAME=VALUE.")
        out[name.strip()] = value.strip()
    return out


def _dims(text: str, option: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.replace("x", ",").split(",") if x.strip())
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise OptionError(f"{option} {text!r}: expected 1 to 3 positive integers such as 256 or 16,16,1.")
    return dims


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


FILE_ARG = typer.Argument(None, help="CUDA source (.cu); optional with --ptx.")
KERNEL_OPT = typer.Option(..., "--kernel", "-k", help="Kernel function name (plain or mangled).")
SIZE_OPT = typer.Option(None, "--size", help="Size variable NAME=VALUE (repeatable).")
TRIP_OPT = typer.Option(None, "--trip", help="Loop trip count LOOP=EXPR, LOOP being L1, a PTX header label "
                        "or line:N (repeatable).")
PTX_OPT = typer.Option(None, "--ptx", help="Analyse this PTX instead of compiling.")
DEFINE_OPT = typer.Option(None, "-D", help="Macro K=V (repeatable).")


def features(
    file: Path | None = FILE_ARG,
    kernel: str = KERNEL_OPT,
    define: list[str] | None = DEFINE_OPT,
    arch: str = typer.Option("sm_90", "--arch", help="Target architecture (sm_75 ... sm_90)."),
    grid: str = typer.Option("1,1,1", "--grid", help="Blocks X,Y,Z."),
    block: str = typer.Option("1,1,1", "--block", help="Threads per block X,Y,Z."),
    size: list[str] | None = SIZE_OPT,
    trip: list[str] | None = TRIP_OPT,
    static_counts: bool = typer.Option(False, "--static-counts", help="Loops without --trip count once."),
    n: str | None = typer.Option(None, "--n", help="Seed-000 input size n (number or expression)."),
    s: str | None = typer.Option(None, "--s", help="Seed-000 problem size s (number or expression)."),
    cpx: str | None = typer.Option(None, "--cpx", help="Seed-000 complexity cpx (number or expression)."),
    sm_count: int | None = typer.Option(None, "--sm-count", help="SMs of the GPU (for sm_saturation)."),
    dynamic_smem: int = typer.Option(0, "--dynamic-smem", help="Dynamic shared memory per block (bytes)."),
    ptx: Path | None = PTX_OPT,
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the feature cache."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Static features (seed 000 and 002, instruction mix, occupancy) of one kernel configuration."""
    try:
        result = _run(file, kernel, define, arch, grid, block, size, trip, static_counts, n, s, cpx, sm_count,
                      dynamic_smem, ptx, no_cache)
    except KgpubenchError as exc:
        if debug_enabled():
            raise
        fail(escape(str(exc)))
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, sort_keys=True, default=_json_default))
        return
    _print_table(result)


def _json_default(value):
    return None if isinstance(value, float) and not math.isfinite(value) else str(value)


def _run(file, kernel, define, arch, grid, block, size, trip, static_counts, n, s, cpx, sm_count, dynamic_smem,
         ptx, no_cache):
    from kgpubench.features import extract_features

    if file is None and ptx is None:
        raise OptionError("give a CUDA source FILE or --ptx FILE.ptx.")
    if file is not None and not file.is_file():
        raise DataFileNotFoundError(f"CUDA source {file} does not exist.")
    sizes = {k: float(_number(v)) if isinstance(_number(v), float) else v for k, v in _pairs(size, "--size").items()}
    bad = [k for k, v in sizes.items() if not isinstance(v, float)]
    if bad:
        raise OptionError(f"--size {bad[0]}={sizes[bad[0]]!r}: expected a number.")
    trips = {k: _number(v) for k, v in _pairs(trip, "--trip").items()}
    return extract_features(file, kernel, arch=arch, defines=_pairs(define, "-D"), grid=_dims(grid, "--grid"),
                            block=_dims(block, "--block"), sizes=sizes, trip_counts=trips,
                            static_counts=static_counts, n=n, s=s, cpx=cpx, sm_count=sm_count,
                            dynamic_smem_bytes=dynamic_smem, ptx=ptx, use_cache=not no_cache)


def _print_table(result) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{result.kernel} ({result.entry}) for {result.arch}")
    table.add_column("feature")
    table.add_column("value", justify="right")
    for name, value in result.as_columns().items():
        table.add_row(name, "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value))
    console = Console()
    console.print(table)
    if result.loops:
        loops = Table(title="loops")
        for col in ("id", "label", "line", "depth", "parent", "instructions", "trip count"):
            loops.add_column(col)
        for lp in result.loops:
            loops.add_row(lp["id"], lp["label"] or "", str(lp["line"] or ""), str(lp["depth"]), lp["parent"] or "",
                          str(lp["instructions"]), f"{lp['trip_count']:g}")
        console.print(loops)


def register(app: typer.Typer) -> None:
    """Add the ``features`` command to ``app``."""
    app.command("features")(features)
