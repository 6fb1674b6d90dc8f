"""The `operators` table's operator conventions, shared by the NeuSight importer and the paper's metric.

Which class each operator belongs to (``CLASS_OF``), the shape columns that key one call (``KEY_DIMS``) and the
nominal work of a call (:func:`nominal_work`): the table's ``flops`` and ``bytes_min``, computed from the shape
alone, never from an outcome. Shapes follow NeuSight's conventions (:mod:`kgpubench.schema.operators`).

Nominal work, from the shape alone (4-byte elements):

=============  ====================================  ====================================================
operator       flops                                 bytes_min
=============  ====================================  ====================================================
bmm            2 B M N K                             4 B (M N + N K + M K)
linear         2 B M N K + B M K (bias)              4 (B M N + N K + K + B M K)
conv2d         2 B Cout O^2 Cin k^2, O=(I+2p-k)/s+1  4 (B Cin I^2 + Cout Cin k^2 + B Cout O^2)
binary elem.   B H                                   12 B H (two inputs, one output)
scalar, unary  B H                                   8 B H
layernorm      8 B H                                 4 (2 B H + 2 H) (input, output, weight, bias)
softmax        5 B H                                 8 B H
=============  ====================================  ====================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

# operator -> operator_class (the table's declared classes)
CLASS_OF = {"bmm": "bmm", "linear": "linear", "conv2d": "conv", "layernorm": "layernorm", "softmax": "softmax",
            **dict.fromkeys(("add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu", "tanh"),
                            "elementwise")}
BINARY = ("add", "mul", "div", "pow")
KEY_DIMS = ("dim_b", "dim_m", "dim_n", "dim_k", "dim_h", "in_channels", "out_channels", "kernel_size",
            "input_size", "stride", "padding")
# The shape columns a call of each operator family carries (NeuSight's shape families); its other KEY_DIMS are null.
GEMM_DIMS = ("dim_b", "dim_m", "dim_n", "dim_k")
CONV_DIMS = ("dim_b", "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding")
VECTOR_DIMS = ("dim_b", "dim_h")


def shape_of(operator: str) -> tuple[str, ...] | None:
    """The shape columns a call of ``operator`` carries (None for an operator :data:`CLASS_OF` does not know)."""
    if operator not in CLASS_OF:
        return None
    return GEMM_DIMS if operator in ("bmm", "linear") else CONV_DIMS if operator == "conv2d" else VECTOR_DIMS


def call_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of one call that follow from its operator and shape, given as column values (``operator`` and
    the shape columns): ``operator_class`` (:data:`CLASS_OF`), null for each shape column the operator does not
    carry (:func:`shape_of`), and ``flops`` and ``bytes_min`` (:func:`nominal_work`) when every shape column it
    carries is a finite number of at least 0. Empty for an operator the table does not know."""
    operator = values.get("operator")
    dims = shape_of(operator) if isinstance(operator, str) else None
    if dims is None:
        return {}
    out: dict[str, Any] = {"operator_class": CLASS_OF[operator], **{c: None for c in KEY_DIMS if c not in dims}}
    shape = {}
    for c in dims:
        try:
            shape[c] = float(values.get(c))
        except (TypeError, ValueError):
            return out
        if not math.isfinite(shape[c]) or shape[c] < 0:
            return out
    flops, nbytes = nominal_work(np.asarray([operator], dtype=object),
                                 {c: np.asarray([shape.get(c, np.nan)]) for c in KEY_DIMS})
    out.update(flops=float(flops[0]), bytes_min=float(nbytes[0]))
    return out


def nominal_work(operator: np.ndarray, d) -> tuple[np.ndarray, np.ndarray]:
    """(flops, bytes_min) of every row from its operator and shape columns ``d`` (a mapping of arrays, nulls as
    NaN; the module docstring's table)."""
    B, M, N, K, H = (np.asarray(d[c], dtype=np.float64) for c in ("dim_b", "dim_m", "dim_n", "dim_k", "dim_h"))
    ci, co, k, i, s, p = (np.asarray(d[c], dtype=np.float64) for c in (
        "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding"))
    with np.errstate(invalid="ignore"):
        o = np.floor((i + 2 * p - k) / s) + 1
        conv = {"flops": 2 * B * co * o * o * ci * k * k,
                "bytes": 4 * (B * ci * i * i + co * ci * k * k + B * co * o * o)}
    flops = np.select(
        [operator == "bmm", operator == "linear", operator == "conv2d", operator == "layernorm",
         operator == "softmax"],
        [2 * B * M * N * K, 2 * B * M * N * K + B * M * K, conv["flops"], 8 * B * H, 5 * B * H], default=B * H)
    nbytes = np.select(
        [operator == "bmm", operator == "linear", operator == "conv2d", operator == "layernorm",
         np.isin(operator, BINARY)],
        [4 * B * (M * N + N * K + M * K), 4 * (B * M * N + N * K + K + B * M * K), conv["bytes"],
         4 * (2 * B * H + 2 * H), 12 * B * H], default=8 * B * H)
    return flops, nbytes
