"""The `convolutions` table: MIOpen convolution solvers timed on one problem on one AMD GPU (MIOpen's find-db).

One row is one solver (an implementation MIOpen can run a convolution with) timed on one convolution problem on
one GPU, as MIOpen's Find() measured it when AMD built the find database it ships (``<arch><CUs>.<backend>.fdb.txt``,
imported by :mod:`kgpubench.importers.miopen`). Two labels per problem: each solver's time (regression) and the
fastest solver (selection); ``problem_id`` groups the rows of one problem, the same on every GPU.

**Shapes in forward terms.** MIOpen writes a backward problem (``B`` = backward data, ``W`` = backward weights)
with its tensors swapped: the key's "input" is then the forward output (dy). Every row here is stated in terms of
the forward convolution y = conv(x, w), whatever the direction: ``in_*`` is x (channels C, spatial D, H, W),
``out_*`` is y (channels K, spatial Do, Ho, Wo), ``filter_*`` is w, and ``direction`` says which of the three
products was computed (F: y from x and w; B: dx from dy and w; W: dw from x and dy). 2-D problems have null
depth columns (``in_d``, ``out_d``, ``filter_d``, ``pad_d``, ``stride_d``, ``dilation_d``).

**The GPU is inferred.** Upstream names a file by ISA target and compute-unit count (``gfx942130`` = gfx942 with
0x130 = 304 CUs), never by product: ``gpu_name`` is the product :func:`kgpubench.hardware.amd_product` maps that
pair to, and ``gpu_inferred_from`` says so on every row; a pair with no single product keeps a name made of the
pair ("AMD gfx1030 (36 CUs)") and null catalogue figures.

``time_ms`` is not a median: it is the one figure Find() recorded (a short warm-up and a few timed runs; upstream
does not document the count), so this table does not carry the common timing group (``time_statistic`` names
the rule). ``flops`` and ``bytes_min`` are nominal figures from the problem alone; see
:mod:`kgpubench.importers.miopen` for the formulas and the import rules.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import MAX_MS, MISSING_TEXT, NAME, common_head, provenance_columns

DIRECTIONS = ("F", "B", "W")
TIME_STATISTICS = ("miopen-find",)
ENTRY_FORMATS = ("solver-first", "algorithm-first")
BACKENDS = ("HIP", "OpenCL")
# No GPU has a terabyte of memory (the largest, 256 GB, is 2**38 B): a larger workspace cannot be allocated.
MAX_WORKSPACE_BYTES = 2**40
OK = ("status", "ok")
# A layout token: N, C, the spatial letters, optionally a vector suffix `c` (MIOpen's NCHWc, CHWNc).
_LAYOUT = r"[NCDHW]{4,5}c?"
_DTYPE = r"FP32|FP16|BF16|FP64|INT8|INT32|FP8|BFP8"


def _size(name: str, doc: str, *, minimum: int = 1, depth: bool = False) -> Column:
    return Column(name, "int64", doc + (" Null for 2-D problems." if depth else ""), min=minimum,
                  nullable=depth, key=True)


def _specific() -> list[Column]:
    return [
        Column("gpu_arch", "string", "AMD ISA target the upstream file is named by (e.g. gfx90a, gfx942).",
               nullable=False, key=True, pattern=r"gfx[0-9]{2,3}[0-9a-f]"),
        Column("gpu_target_features", "string", "Target features of MIOpen's database id between the ISA and "
               "the CU count (`sramecc`, `nosramecc`, `xnack`, joined by `_`); null when the name has none.",
               key=True, pattern=r"(no)?sramecc(_xnack)?|xnack"),
        Column("gpu_compute_units", "int32", "Compute units, from the file name (hex when glued to the ISA, "
               "decimal after `_`, as MIOpen names its databases).", nullable=False, key=True, min=1),
        Column("gpu_inferred_from", "string", "How gpu_name was inferred: `inferred from gfx942 with 304 CUs` "
               "(kgpubench.hardware.amd_product maps the pair to one product), or `no single product has gfx1030 "
               "with 36 CUs` (gpu_name is then made of the pair and the catalogue columns are null).",
               nullable=False, pattern=NAME),
        Column("backend", "string", "MIOpen backend the database was built for (from the file name).",
               nullable=False, key=True, values=BACKENDS),
        Column("direction", "string", "F: forward (y from x, w); B: backward data (dx from dy, w); W: backward "
               "weights (dw from x, dy).", nullable=False, key=True, values=DIRECTIONS),
        Column("spatial_dims", "int32", "2 (NCHW-like) or 3 (NCDHW-like) spatial dimensions.", nullable=False,
               min=2, max=3),
        _size("batch", "Batch size N."),
        _size("in_channels", "Channels C of the forward input x."),
        _size("in_d", "Depth of x.", depth=True),
        _size("in_h", "Height of x."),
        _size("in_w", "Width of x."),
        _size("out_channels", "Channels K of the forward output y (filters)."),
        _size("out_d", "Depth of y.", depth=True),
        _size("out_h", "Height of y."),
        _size("out_w", "Width of y."),
        _size("filter_d", "Filter depth.", depth=True),
        _size("filter_h", "Filter height."),
        _size("filter_w", "Filter width."),
        _size("pad_d", "Zero padding in depth, each side.", minimum=0, depth=True),
        _size("pad_h", "Zero padding in height, each side.", minimum=0),
        _size("pad_w", "Zero padding in width, each side.", minimum=0),
        _size("stride_d", "Stride in depth.", depth=True),
        _size("stride_h", "Stride in height."),
        _size("stride_w", "Stride in width."),
        _size("dilation_d", "Dilation in depth.", depth=True),
        _size("dilation_h", "Dilation in height."),
        _size("dilation_w", "Dilation in width."),
        _size("groups", "Groups (the key's `_g<n>` suffix; 1 without it). Depthwise when groups = C = K."),
        Column("bias", "int32", "MIOpen's bias flag of the problem (0 or 1).", nullable=False, key=True, min=0,
               max=1),
        Column("layout", "string", "Tensor layout: one token when x, w and y share it (NCHW, NHWC, NCDHW, "
               "NDHWC), else the three joined by `/` in the order x/w/y.", nullable=False, key=True,
               pattern=rf"{_LAYOUT}(/{_LAYOUT}/{_LAYOUT})?"),
        Column("dtype", "string", "Element type (MIOpen's names: FP32, FP16, BF16, INT8, ...): one name when x, w "
               "and y share it, else the three joined by `/` in the order x/w/y.", nullable=False, key=True,
               pattern=rf"({_DTYPE})(/({_DTYPE})/({_DTYPE}))?"),
        Column("cast_types", "string", "The key's optional cast suffix as MIOpen writes it (`ci<type>`, `cw<type>`, "
               "`co<type>` joined by `_`; its in/out are the key's tensors, i.e. dy/x for B and W); null without.",
               key=True, pattern=r"(c[iwo](FP32|FP16|BF16|FP64|INT8|INT32|FP8|BFP8))(_c[iwo]\w+)*"),
        Column("solver", "string", "MIOpen solver (e.g. ConvBinWinogradRxSf2x3, GemmFwdRest).", nullable=False,
               key=True, pattern=NAME, not_values=MISSING_TEXT),
        Column("algorithm", "string", "The solver's algorithm family as upstream names it (e.g. "
               "miopenConvolutionFwdAlgoWinograd).", nullable=False, pattern=NAME, not_values=MISSING_TEXT),
        Column("problem_id", "string", "Hash of the device-independent problem (every shape column, groups, bias, "
               "layout, dtype, cast_types, direction): the same problem has the same id on every GPU, so tasks "
               "can group and split by problem.", nullable=False, pattern=r"[0-9a-f]{16}"),
        Column("solvers_in_problem", "int32", "Solver entries the upstream line lists for this problem on this "
               "GPU (1: a time, but no choice), dropped zero-time entries included.", nullable=False, min=1),
        Column("flops", "float64", "Nominal operations of the problem, the same for F, B and W: 2 N K (C/groups) "
               "Do Ho Wo FD FH FW (depth factors 1 for 2-D).", unit="FLOP", min=0),
        Column("bytes_min", "float64", "Nominal minimum bytes: x, w and y each read or written once, times their "
               "element sizes (N C D H W + K (C/groups) FD FH FW + N K Do Ho Wo elements).", unit="B", min=0),
        Column("workspace_bytes", "int64", "Device workspace the solver needs for this problem (upstream).",
               unit="B", min=0, max=MAX_WORKSPACE_BYTES, required_when=OK),
        Column("time_ms", "float64", "Time of one call of the solver on the problem, as MIOpen's Find() measured "
               "it (see time_statistic).", unit="ms", min=0, min_exclusive=True, max=MAX_MS, required_when=OK),
        Column("time_statistic", "string", "How time_ms was measured: `miopen-find` = the figure MIOpen's Find() "
               "stored (a short warm-up and a few timed runs; upstream does not document the count).",
               values=TIME_STATISTICS, required_when=OK),
        Column("entry_format", "string", "Which upstream entry format the row came from: `solver-first` "
               "(`Solver:time,workspace,algorithm`) or `algorithm-first` (older: "
               "`algorithm:Solver,time,workspace,kernel-cache algorithm,kernel-cache config`).",
               nullable=False, values=ENTRY_FORMATS),
        Column("source_line", "int64", "Line of the upstream file (1-based) the row was read from.", min=1),
        Column("source_format", "string", "Format of the imported file.", values=("miopen-fdb",), pattern=NAME,
               not_values=MISSING_TEXT),
    ]


TABLE = Table(
    name="convolutions",
    version="1.0.0",
    description="MIOpen convolution solvers timed on one problem (2-D or 3-D, forward or backward) on one AMD GPU, "
    "from MIOpen's find-db; the GPU product is inferred from the file's ISA target and CU count.",
    columns=tuple(common_head() + _specific() + provenance_columns()),
    changelog=(("1.0.0", "First declaration (issue 39): MIOpen's find-db."),),
)
