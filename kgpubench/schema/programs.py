"""The `programs` table: whole-program times of small PyTorch programs under one compile mode (KernelBench).

One row = one program (a KernelBench reference ``Model``'s forward pass: all its kernels and the launch gaps
between them) x compile mode x provider set-up x GPU, as upstream timed it: statistics over ``repeats`` (100)
calls after 3 warm-up calls, each value rounded by upstream to 3 significant figures, in milliseconds per
forward call. A run that failed upstream (a ``null`` record) is a row with a non-ok status and null times.

Program facts (sizes, modules, calls, inputs) come from static parsing of the program text by the staging
step (nothing executed); numbers live in numeric columns (``constants`` as (name, value) pairs, counts and
element totals), names in string lists, so a model can use them directly.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import MAX_MS, MEASURED, NAME, common_head, power_columns, provenance_columns

PROBLEM_SETS = ("v0.1", "v0.2")
COMPILE_MODES = ("eager", "inductor-default", "inductor-reduce-overhead", "inductor-max-autotune",
                 "inductor-max-autotune-no-cudagraphs", "cudagraphs")
TIMED_UNITS = ("forward-pass",)
OK = ("status", "ok")


def _key_columns() -> list[Column]:
    return [
        Column("problem_set", "string", "KernelBench problem set: `v0.1` (Jan-Mar 2025 sizes) or `v0.2` (July 2025 "
               "resize towards > 1 ms). Programs of the same name in the two sets are different programs: never "
               "join across sets.", nullable=False, values=PROBLEM_SETS, key=True),
        Column("level", "int32", "KernelBench level: 1 single operators, 2 fused sequences, 3 whole models.",
               nullable=False, min=1, max=3, key=True),
        Column("problem", "string", "Program file name as upstream keys it (e.g. "
               "`1_Square_matrix_multiplication_.py`).",
               nullable=False, pattern=r"\d+_\S*\.py", key=True),
        Column("compile_mode", "string", "How the program ran: `eager` PyTorch, `torch.compile` with the inductor "
               "backend in mode default / reduce-overhead / max-autotune / max-autotune-no-cudagraphs, or the "
               "`cudagraphs` backend.", nullable=False, values=COMPILE_MODES, key=True),
        Column("setup", "string", "Upstream timing folder: the provider set-up (e.g. `L40S_modal`, "
               "`H100_together`); one set-up may mix GPU models (A10G_modal: A10G and A10).", nullable=False,
               pattern=NAME, key=True),
    ]


def _program_columns() -> list[Column]:
    return [
        Column("problem_id", "int32", "Leading integer of the file name: the program's id within its level.",
               nullable=False, min=1),
        Column("problem_name", "string", "File name without id and `.py`.", pattern=NAME),
        Column("constants", "params", "Numeric module-level constants of the program (the problem sizes), "
               "(name, value) sorted by name; a list constant gives `<name>_<i>` per element, a bool 0/1."),
        Column("constants_json", "string", "The module-level constants exactly as parsed upstream (JSON object)."),
        Column("nn_modules", "list<string>", "`torch.nn` classes instantiated in `Model` (e.g. Conv2d)."),
        Column("forward_calls", "list<string>", "`torch.*` / `F.*` functions called in `forward`, `@` for matrix "
               "multiply; tensor methods are not listed (a partial op list)."),
        Column("op_counts", "params", "Model-ready form of nn_modules and forward_calls: (`nn.<Class>` or the "
               "call's name, 1) for each, sorted by name."),
        Column("input_count", "int32", "Tensors `get_inputs()` builds.", min=0),
        Column("input_shapes", "list<string>", "Shape of each input as JSON (`[2048,2048]`; `?` where the static "
               "parse could not resolve an argument)."),
        Column("input_dtypes", "list<string>", "dtype each input constructor sets, `default` when none "
               "(fp32 for rand/randn, int64 for randint; tensor-method casts are not seen)."),
        Column("input_elements", "int64", "Total elements over all inputs; null when a shape is unresolved.",
               min=0),
        Column("input_max_elements", "int64", "Elements of the largest input; null when a shape is unresolved.",
               min=0),
        Column("source_bytes", "int32", "Size of the program's source file.", unit="B", min=1),
        Column("program_path", "string", "Upstream path of the program text (KernelBench repository)."),
        Column("program_commit", "string", "Upstream commit of the program text.", pattern=r"[0-9a-f]{40}"),
        Column("program_blob", "string", "git blob id of the program text (check with `git hash-object`).",
               pattern=r"[0-9a-f]{40}"),
    ]


def _timing_columns() -> list[Column]:
    def t(name: str, doc: str, **kw) -> Column:
        return Column(name, "float64", doc + " Upstream rounded it to 3 significant figures.", unit="ms",
                      max=MAX_MS, required_when=OK, **kw)

    return [
        t("time_ms_mean", "Mean time of one forward call over the repeats.", min=0, min_exclusive=True),
        t("time_ms_std", "Population standard deviation over the repeats.", min=0),
        t("time_ms_min", "Fastest repeat.", min=0, min_exclusive=True),
        t("time_ms_max", "Slowest repeat.", min=0, min_exclusive=True),
        Column("time_ms_median", "float64", "Median over the repeats: KernelBench does not report it, always "
               "null (kept so every table carries the common timing columns).", unit="ms", min=0,
               min_exclusive=True, max=MAX_MS),
        Column("repeats", "int32", "Timed calls behind the statistics (upstream num_trials).", min=1,
               required_when=OK),
        Column("warmups", "int32", "Untimed calls before the timed ones (compile time falls in them).", min=0),
        Column("time_cv", "float64", "time_ms_std / time_ms_mean (of the rounded values).", min=0),
        Column("timed_unit", "string", "What one timed call is: `forward-pass` = one `model(*inputs)` call under "
               "`torch.no_grad()`, timed with a CUDA event pair (wall time on the stream, launch gaps included).",
               values=TIMED_UNITS, required_when=OK),
        Column("l2_flushed", "bool", "Whether L2 was flushed before each timed call (the v0.2 H100_Modal timer; "
               "not the v0.1 runs nor the v0.2 Lambda run); null for a set-up kgpubench has no documented facts for."),
        Column("status_detail", "string", "Why a row is not ok (e.g. the upstream record is null)."),
        Column("framework", "string", "Deep-learning framework that ran the program.", values=("pytorch",)),
        Column("framework_version", "string", "Framework version as upstream states it; `(likely)` where only "
               "the project's pin at the timing commit says it; null where not recorded (MI250, v0.2 Lambda, a set-up "
               "kgpubench has no documented facts for)."),
    ]


def _provenance_columns() -> list[Column]:
    """The common provenance columns, but ``collected_at`` may be null on imported rows: a set-up folder that
    PROVENANCE.md does not document carries no date (its commit and software are null too)."""
    return [Column("collected_at", "timestamp", "When the row was measured (or imported); for KernelBench the "
                   "upstream commit date of the set-up's timing files, null for a set-up kgpubench has no documented "
                   "date for (the timing files carry none).", required_when=MEASURED)
            if c.name == "collected_at" else c for c in provenance_columns()]


TABLE = Table(
    name="programs",
    version="1.1.0",
    description="Whole-program forward-pass times of small PyTorch programs (KernelBench references) per compile "
                "mode and GPU.",
    columns=tuple(common_head() + _key_columns() + _program_columns() + _timing_columns() + power_columns()
                  + _provenance_columns()),
    ordered=(("time_ms_min", "time_ms_mean"), ("time_ms_mean", "time_ms_max")),
    changelog=(("1.0.0", "First declaration (KernelBench import, issue 26)."),
               ("1.1.0", "collected_at may be null on imported rows: a KernelBench set-up folder kgpubench has no "
                         "documented facts for imports with null commit, date and software (issue 39). Rows already "
                         "shipped are unchanged.")),
)
