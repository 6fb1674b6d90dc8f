"""NeuSight's paper metric (ASPLOS '25, per-operator-class error on whole-model layer traces), computed beside ours.

NeuSight reports, per operator class (BMM, FC, elementwise, softmax, LayerNorm), the error of the *summed*
predicted latency of that class's operators in a traced transformer layer against the summed measured latency,
averaged over the model workloads run on the unseen GPUs (H100 80GB HBM3, L4, A100 80GB PCIe). Here:

1. :func:`trace_calls` reads the layer traces ``label/<GPU folder>/<model>-inf-<seq>-<batch>.csv[.gz]`` of the
   three unseen GPUs (inference runs; the forward latency ``fw_latency`` of every node, ms) and turns every node
   that is one of the task's operators into an operator call with NeuSight's shape conventions:

   - FC (``linear``): ``addmm(bias, [M,N], [N,K])``, and every ``call_module`` that is not a LayerNorm, dropout,
     embedding or activation module (input [..., N] -> output [..., K]: M = the product of the leading dims);
   - BMM: ``matmul``/``bmm`` of two tensors of at least 3 dims ([..., M, N] x [..., N, K], B = the product of the
     leading dims); a ``matmul`` with a 2-D right operand is FC;
   - softmax: the ``softmax`` function over the last dim (B = the product of the leading dims, H = the last);
   - LayerNorm: ``call_module`` nodes named ``ln_*``, ``*LayerNorm``, ``*layer_norm``, ``ln_f``;
   - elementwise: ``add``/``sub``/``mul``/``truediv``/``pow`` (``add``, ``mul``, ``div``, ``pow`` when both
     inputs are tensors of at least 2 dims, else the scalar forms ``addu``...), ``tanh``, ``gelu`` and activation
     modules (``gelu``: GPT/BERT; ``relu``: OPT's ``activation_fn``), with [B,H] = the output's leading product and
     last dim. Nodes on scalars (shape (1,)) are bookkeeping and skipped; so are ``where``, ``masked_fill``,
     dropout and views, which are in none of the five classes.
2. :func:`class_errors` sums predicted and measured times per (workload, class) and returns, per class, the mean
   over workloads of ``100 |sum predicted - sum measured| / sum measured``.

The whole-model trace of SwitchTransformer on L4 (``switch4``, another schema) and the training runs are left out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd

from kgpubench.errors import ImportFormatError
from kgpubench.foundation.capped import open_capped_text
from kgpubench.hardware import device_name, gpu_columns
from kgpubench.schema.operator_work import CLASS_OF, KEY_DIMS, nominal_work
from kgpubench.tasks.extras import CLASSES  # the classes and the paper's figures (the board's)

UNSEEN_FOLDERS = ("NVIDIA_H100_80GB_HBM3", "NVIDIA_L4", "NVIDIA_A100_80GB_PCIe")
_LN = re.compile(r"(^|[._])(ln(_\w+)?|LayerNorm|layer_norm|final_layer_norm|self_attn_layer_norm)$")
_NOT_FC = re.compile(r"(dropout|drop$|embed|wte$|wpe$|activation|act$|act_fn$)", re.I)
_BINARY = {"add": "add", "sub": "add", "mul": "mul", "truediv": "div", "pow": "pow"}
_TRACE = re.compile(r"^(?P<model>.+)-inf-(?P<seq>\d+)-(?P<batch>\d+)\.csv(\.gz)?$")
NEEDED = ("op", "target", "input_shapes", "output_shape", "fw_latency")


def _shapes(text) -> list[list[int]]:
    try:
        value = ast.literal_eval(str(text))
    except (ValueError, SyntaxError):
        return []
    if isinstance(value, tuple):
        value = [list(value)]
    return [list(v) for v in value if isinstance(v, (list, tuple))] if isinstance(value, list) else []


def _node_call(op: str, target: str, ins: list[list[int]], out: list[int]) -> dict | None:
    """The operator call of one traced node (operator and shape columns), or None."""
    tensors = [s for s in ins if len(s) >= 2]
    name = re.sub(r" at 0x[0-9a-f]+", "", target)

    def prod(shape):
        return int(np.prod(shape)) if shape else 1

    if op == "call_module":
        if _LN.search(target) and out:
            return {"operator": "layernorm", "dim_b": prod(out[:-1]), "dim_h": out[-1]}
        if re.search(r"activation|act_fn", target) and len(out) >= 2:
            return {"operator": "gelu", "dim_b": prod(out[:-1]), "dim_h": out[-1]}
        if _NOT_FC.search(target) or not tensors or len(out) < 2:
            return None
        x = tensors[0]
        return {"operator": "linear", "dim_b": 1, "dim_m": prod(x[:-1]), "dim_n": x[-1], "dim_k": out[-1]}
    if op != "call_function" and op != "call_method":
        return None
    if "addmm" in name and len(ins) == 3 and len(ins[1]) == 2 and len(ins[2]) == 2:
        return {"operator": "linear", "dim_b": 1, "dim_m": ins[1][0], "dim_n": ins[1][1], "dim_k": ins[2][1]}
    if ("matmul" in name or "method bmm" in name) and len(ins) == 2 and len(ins[0]) >= 2:
        a, b = ins
        if len(b) == 2:
            return {"operator": "linear", "dim_b": 1, "dim_m": prod(a[:-1]), "dim_n": a[-1], "dim_k": b[-1]}
        if len(a) >= 3 and len(b) >= 3:
            return {"operator": "bmm", "dim_b": prod(a[:-2]), "dim_m": a[-2], "dim_n": a[-1], "dim_k": b[-1]}
        return None
    if len(out) < 2:
        return None
    vec = {"dim_b": prod(out[:-1]), "dim_h": out[-1]}
    if "softmax" in name:
        return {"operator": "softmax", **vec}
    if "tanh" in name:
        return {"operator": "tanh", **vec}
    if "gelu" in name:
        return {"operator": "gelu", **vec}
    m = re.search(r"built-in (function|method) (add|sub|mul|truediv|pow)( of type object)?>", name)
    if m and tensors:
        base = _BINARY[m.group(2)]
        return {"operator": base if len(tensors) >= 2 else base + "u", **vec}
    return None


def trace_calls(root: Path | str, folders=UNSEEN_FOLDERS) -> pd.DataFrame:
    """Operator calls of the inference layer traces under ``root/label/<folder>`` (see the module doc).

    Columns: ``workload`` (``<gpu folder>/<model>-inf-<seq>-<batch>``), ``gpu_name``, ``operator``,
    ``operator_class``, the shape columns, ``flops``, ``bytes_min`` and ``time_ms`` (the node's ``fw_latency``).

    Raises
    ------
    ImportFormatError
        When a trace lacks a needed column or holds a negative or non-finite latency (one line naming the file,
        row and column), or when no trace is found.
    """
    root = Path(root)
    label = root / "label" if (root / "label").is_dir() else root
    rows = []
    for folder in folders:
        for path in sorted((label / folder).glob("*-inf-*.csv*")):
            m = _TRACE.match(path.name)
            if not m:
                continue
            frame = pd.read_csv(open_capped_text(path))
            if "latency" not in frame.columns:  # the whole-model SwitchTransformer trace (another schema)
                continue
            for col in NEEDED:
                if col not in frame.columns:
                    raise ImportFormatError(f"{path}: row 0 (line 1), column {col!r}: missing; expected a NeuSight "
                                            "layer trace (torch.fx nodes with latencies).")
            lat = pd.to_numeric(frame["fw_latency"], errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(lat) | (lat < 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ImportFormatError(f"{path}: row {i + 1} (line {i + 2}), column 'fw_latency': "
                                        f"{frame['fw_latency'].iloc[i]!r}; expected a latency >= 0 ms.")
            workload = f"{folder}/{path.name.split('.csv')[0]}"
            for i, (op, target, ins, out) in enumerate(zip(frame["op"], frame["target"], frame["input_shapes"],
                                                           frame["output_shape"])):
                outs = _shapes(out)
                call = _node_call(str(op), str(target), _shapes(ins), outs[0] if outs else [])
                if call is not None and lat[i] > 0:
                    rows.append({"workload": workload, "gpu_name": device_name(folder), **call, "time_ms": lat[i]})
    if not rows:
        raise ImportFormatError(f"{label}: no inference layer traces (<GPU folder>/<model>-inf-<seq>-<batch>.csv) "
                                f"of {', '.join(folders)}; pass NeuSight's scripts/asplos folder.")
    calls = pd.DataFrame(rows)
    for col in KEY_DIMS:
        calls[col] = calls[col].astype(float) if col in calls.columns else np.nan
    calls["operator_class"] = calls["operator"].map(CLASS_OF)
    calls["flops"], calls["bytes_min"] = nominal_work(calls["operator"].to_numpy(dtype=object), calls)
    return calls


def class_errors(calls: pd.DataFrame, predicted) -> dict[str, dict]:
    """Per class: mean over workloads of ``100 |sum predicted - sum measured| / sum measured``, and the number of
    workloads (a workload without calls of a class does not count for it)."""
    frame = calls[["workload", "operator_class", "time_ms"]].copy()
    frame["pred"] = np.asarray(predicted, dtype=float)
    sums = frame.groupby(["workload", "operator_class"])[["time_ms", "pred"]].sum()
    err = (100 * (sums["pred"] - sums["time_ms"]).abs() / sums["time_ms"]).groupby(level="operator_class")
    return {c: {"error_pct": float(err.get_group(c).mean()), "workloads": int(err.get_group(c).size)}
            for c in CLASSES if c in err.groups}


def calls_with_gpu_columns(calls: pd.DataFrame) -> pd.DataFrame:
    """``calls`` with every GPU column of its GPU (the catalogue's figures, as the imported rows have)."""
    gpu = pd.DataFrame([gpu_columns(g) for g in calls["gpu_name"].unique()])
    gpu = gpu.drop(columns=["gpu_specs_source"])
    return calls.merge(gpu, on="gpu_name", how="left")
