"""The `operators` table: framework operator calls timed at one shape on one GPU (imported NeuSight data).

One row is one call of a deep-learning framework operator (``torch.bmm``, ``nn.Linear``, ``nn.Conv2d``,
``nn.LayerNorm``, softmax, an elementwise operator) at one input shape on one GPU, in FP32. Its time covers every
kernel the call launched plus the launch overhead. The upstream figure is not a median: ``time_ms`` is the mean of
the ``calls_kept`` fastest of ``calls_timed`` back-to-back calls, each timed with CUDA events around one call
(``time_statistic`` names the rule), so this table does not carry the common timing group.

Shapes follow NeuSight's conventions (``kgpubench.importers.neusight``):

- ``bmm``: ``torch.bmm([B,M,N], [B,N,K])`` -> [B,M,K]; **N is the reduction dimension**.
- ``linear``: input [B,M,N] through ``nn.Linear(N, K, bias=True)``: N is in_features (the reduction dimension),
  K out_features.
- ``conv2d``: ``nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)`` on a
  [B, in_channels, input_size, input_size] input (``dim_b`` = B).
- vector operators (``layernorm``, ``softmax``, elementwise): a [B,H] tensor (``dim_b``, ``dim_h``); LayerNorm
  and softmax reduce over H.

``flops`` and ``bytes_min`` are nominal figures computed from the shape alone (inputs, never outcomes): see
:func:`kgpubench.schema.operator_work.nominal_work` for the formulas.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import MAX_MS, MISSING_TEXT, NAME, common_head, provenance_columns

OPERATORS = ("bmm", "linear", "conv2d", "layernorm", "softmax", "add", "addu", "mul", "mulu", "div", "divu",
             "pow", "powu", "relu", "gelu", "tanh")
OPERATOR_CLASSES = ("bmm", "linear", "conv", "elementwise", "softmax", "layernorm")
SHAPE_SETS = ("train", "test")
TIME_STATISTICS = ("mean-of-5-fastest-of-25",)
TIMED_UNITS = ("operator-call",)
OK = ("status", "ok")


def _dim(name: str, doc: str) -> Column:
    return Column(name, "int64", doc, min=1, key=True)


def _specific() -> list[Column]:
    return [
        Column("operator", "string", "The framework operator called: bmm, linear, conv2d, layernorm, softmax; "
               "elementwise add, mul, div, pow (two tensors), addu, mulu, divu, powu (a tensor and a scalar), "
               "relu, gelu, tanh (unary).", nullable=False, key=True, values=OPERATORS),
        Column("operator_class", "string", "Class of the operator (NeuSight's grouping): bmm, linear (FC), conv, "
               "elementwise, softmax, layernorm.", nullable=False, values=OPERATOR_CLASSES),
        Column("shape_set", "string", "Which upstream shape list the row belongs to: `train` (NeuSight's random "
               "grid shapes, `train/collect`) or `test` (shapes of real transformer layers, `test/`). A split by "
               "shape, not by GPU.", nullable=False, key=True, values=SHAPE_SETS),
        Column("occurrence", "int32", "0 for the first measurement of an identical key (GPU, operator, shape set, "
               "shape) in its upstream file, 1, 2, ... for repeats (the shape generator repeated some points; "
               "every measurement is kept).", nullable=False, key=True, min=0),
        _dim("dim_b", "Batch B: bmm/linear/conv batch, or rows of the [B,H] tensor of a vector operator."),
        _dim("dim_m", "bmm/linear M: rows of the left operand per batch."),
        _dim("dim_n", "bmm/linear N: the reduction dimension (bmm inner size; linear in_features)."),
        _dim("dim_k", "bmm/linear K: columns of the output (bmm right-operand columns; linear out_features)."),
        _dim("dim_h", "Vector operators: H, the row length of the [B,H] tensor (LayerNorm/softmax reduce over it)."),
        _dim("in_channels", "conv2d input channels."),
        _dim("out_channels", "conv2d output channels."),
        _dim("kernel_size", "conv2d square kernel size."),
        _dim("input_size", "conv2d square input height = width."),
        _dim("stride", "conv2d stride."),
        Column("padding", "int64", "conv2d zero padding on each side.", min=0, key=True),
        Column("dtype", "string", "Element type of the tensors.", nullable=False, values=("float32",)),
        Column("flops", "float64", "Nominal floating-point operations of the call, from the shape alone "
               "(multiply-add = 2; see the card for each operator's formula).", unit="FLOP", min=0),
        Column("bytes_min", "float64", "Nominal minimum bytes moved to and from device memory: every input and "
               "output tensor read or written once (4-byte elements), from the shape alone.", unit="B", min=0),
        Column("framework", "string", "Deep-learning framework that issued the call.", nullable=False,
               values=("pytorch",)),
        Column("framework_version", "string", "Framework version (upstream `p2.1.0` -> `2.1.0`).",
               pattern=r"\d+(\.\d+)*"),
        Column("cudnn_version", "string", "cuDNN version as the framework reports it (e.g. `8902` = 8.9.2); null "
               "when not recorded (AMD rows).", pattern=r"\d+"),
        Column("kernel_name", "string", "Name of the first launched kernel matching the operator's pattern "
               "(PyTorch profiler). A run-time fact, not an input."),
        Column("kernels", "list<string>", "Every kernel the call launched, lower-cased, in launch order; null when "
               "the upstream file does not record them."),
        Column("grid_x", "int64", "Grid x of kernel_name's launch (AMD Tensile GEMMs: apparently work-items).",
               min=0),
        Column("grid_y", "int64", "Grid y of kernel_name's launch.", min=0),
        Column("grid_z", "int64", "Grid z of kernel_name's launch.", min=0),
        Column("block_x", "int64", "Block x of kernel_name's launch.", min=0),
        Column("block_y", "int64", "Block y of kernel_name's launch.", min=0),
        Column("block_z", "int64", "Block z of kernel_name's launch.", min=0),
        Column("warps_per_sm", "float64", "Grid blocks x threads per block / 32 / SMs the runtime reports "
               "(NVIDIA rows only).", min=0),
        Column("blocks_per_sm", "float64", "Grid blocks / SMs the runtime reports (NVIDIA rows only).", min=0),
        Column("time_ms", "float64", "Time of one operator call: the upstream `Latency` (see time_statistic).",
               unit="ms", min=0, min_exclusive=True, max=MAX_MS, required_when=OK),
        Column("calls_timed", "int32", "Back-to-back calls timed, each with CUDA events around the one call.",
               min=1, required_when=OK),
        Column("calls_kept", "int32", "Fastest calls averaged into time_ms.", min=1, required_when=OK),
        Column("time_statistic", "string", "How time_ms was reduced from the timed calls.",
               values=TIME_STATISTICS, required_when=OK),
        Column("timed_unit", "string", "What one timing covers: `operator-call` = every kernel of one framework "
               "call plus launch overhead.", values=TIMED_UNITS, required_when=OK),
        Column("source_format", "string", "Format of the imported file.", values=("neusight-csv",),
               pattern=NAME, not_values=MISSING_TEXT),
    ]


TABLE = Table(
    name="operators",
    version="1.0.0",
    description="Framework operator calls (bmm, linear, conv2d, LayerNorm, softmax, elementwise) timed at one "
    "shape on one GPU, in FP32 (imported from NeuSight, ASPLOS '25).",
    columns=tuple(common_head() + _specific() + provenance_columns()),
    ordered=(("calls_kept", "calls_timed"),),
    changelog=(("1.0.0", "First declaration (issue 26)."),),
)
