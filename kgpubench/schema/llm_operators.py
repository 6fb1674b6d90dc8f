"""The `llm_operators` table: LLM-serving operator calls (GEMM, context and generation attention) timed on one GPU
under one serving framework (imported from NVIDIA's AIConfigurator database).

One row is one operator call at one shape, one dtype, one kernel source and one framework version on one GPU, as
AIConfigurator's collector timed it: the whole node reserved, application clocks locked to the maximum, a few
warm-up calls, then a CUDA graph of the call replayed (GEMM graphs hold 5 calls), at least 6 replays (more for
short calls), timed with a CUDA event pair around the replays; ``time_ms`` is the mean per call with L2 warm.
Graph capture falls back to eager launches where it fails (the upstream files do not say where).

The same GEMM (GPU, dtype, m, n, k) is measured once per framework: three stacks' measurements of one problem,
which choose different kernels. The framework, its version and the kernel source are part of a row's identity;
nothing is averaged away. ``flops``, ``bytes_min`` and ``peak_tensor_tflops`` are nominal figures from the
shape, the dtype and the GPU catalogue (inputs, never outcomes): :mod:`kgpubench.importers.aiconfigurator` gives the
formulas.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import MAX_MS, MISSING_TEXT, NAME, common_head, provenance_columns

OPERATORS = ("gemm", "context_attention", "generation_attention")
# The matrix-unit operand type a call's math runs in (for the roofline): bf16, fp8, fp4 or int8.
COMPUTE_DTYPES = ("bf16", "fp8", "fp4", "int8")
TIME_STATISTICS = ("mean-per-call-cuda-graph",)
UPSTREAM_PROVENANCE = ("collected", "legacy")
OK = ("status", "ok")
GEMM = ("operator", "gemm")
ATTENTION = ("operator", r".*_attention")


def _dim(name: str, doc: str, *, when: tuple[str, str], minimum: int = 1) -> Column:
    return Column(name, "int64", doc, min=minimum, key=True, required_when=when)


def _specific() -> list[Column]:
    return [
        Column("operator", "string", "The operator: `gemm` (one matrix multiply C[m,n] = A[m,k] B[k,n] of a linear "
               "layer), `context_attention` (prefill: attention over the whole input sequence) or "
               "`generation_attention` (decode: one new token attending to a KV cache).", nullable=False, key=True,
               values=OPERATORS),
        Column("framework", "string", "Serving framework whose operator was timed, lower-cased as upstream names it: "
               "`trtllm` (TensorRT-LLM), `sglang`, `vllm`.", nullable=False, key=True,
               pattern=r"[a-z0-9][a-z0-9_.\-]*"),
        Column("framework_version", "string", "Framework version as the upstream file records it (the version "
               "folder may round it: Arc Pro B60's `0.20.0` folder holds vLLM `0.20.1.dev3+...`).", nullable=False,
               key=True, pattern=NAME, not_values=MISSING_TEXT),
        Column("kernel_source", "string", "Which implementation the framework called (upstream `kernel_source`: "
               "e.g. `torch_flow`, `deepgemm`, `trtllm_mha`, `vllm_flash_attn_fa3`).", nullable=False, key=True,
               pattern=NAME, not_values=MISSING_TEXT),
        Column("system", "string", "Upstream system folder (`b200_sxm`, `gb200`, `rtx_pro_6000_server`, ...): the "
               "machine the GPU was in.", nullable=False, pattern=r"[A-Za-z0-9][A-Za-z0-9_.\-]*"),
        Column("dtype", "string", "Upstream operand type: GEMM `gemm_dtype` (`bfloat16`, `fp8` per-tensor scaled, "
               "`fp8_block` block scaled, `nvfp4`, `int8_wo`/`int4_wo` weight-only quantised, `sq` SmoothQuant "
               "int8), attention `attn_dtype` (`bfloat16`, `fp8`).", nullable=False, key=True,
               values=("bfloat16", "fp8", "fp8_block", "nvfp4", "int8_wo", "int4_wo", "sq")),
        Column("compute_dtype", "string", "The matrix-unit type the math runs in, for the roofline: bf16 (bfloat16 "
               "and the weight-only types, dequantised to bf16), fp8 (fp8, fp8_block), fp4 (nvfp4), int8 (sq).",
               nullable=False, values=COMPUTE_DTYPES),
        Column("kv_cache_dtype", "string", "Attention: element type of the KV cache.", key=True,
               values=("bfloat16", "fp8"), required_when=ATTENTION),
        _dim("m", "GEMM rows of A and C (tokens in the batch).", when=GEMM),
        _dim("n", "GEMM columns of B and C (output features).", when=GEMM),
        _dim("k", "GEMM reduction dimension (input features).", when=GEMM),
        _dim("batch_size", "Attention: sequences in the batch.", when=ATTENTION),
        _dim("isl", "Attention: input sequence length (1 for generation).", when=ATTENTION),
        _dim("num_heads", "Attention: query heads.", when=ATTENTION),
        _dim("num_kv_heads", "Attention: key/value heads (upstream `num_key_value_heads`; fewer than num_heads for "
             "grouped-query attention).", when=ATTENTION),
        _dim("head_dim", "Attention: dimension of one head.", when=ATTENTION),
        Column("window_size", "int64", "Attention: sliding-window length, 0 for full attention; null where the "
               "upstream file has no `window_size` column (older tables: full attention).", min=0, key=True),
        _dim("beam_width", "Attention: beam width.", when=ATTENTION),
        Column("step", "int64", "Attention: upstream `step`, the KV-cache length the generation call attends to "
               "(0 for context attention).", min=0, key=True, required_when=ATTENTION),
        Column("occurrence", "int32", "0 for the first row of an identical key in its upstream file, 1, 2, ... "
               "for repeats (some older tables measured a point twice; every measurement is kept).",
               nullable=False, key=True, min=0),
        Column("flops", "float64", "Nominal floating-point (or integer) operations of the call from its shape "
               "(multiply-add = 2; attention: QK^T and PV over the attended KV length, no causal halving).",
               unit="FLOP", min=0, min_exclusive=True),
        Column("bytes_min", "float64", "Nominal minimum bytes moved to and from device memory: every operand and "
               "result read or written once at its element size (attention: Q, K, V or the KV cache, and O).",
               unit="B", min=0, min_exclusive=True),
        Column("peak_tensor_tflops", "float64", "The GPU's dense matrix-unit peak for compute_dtype (a cited "
               "vendor figure, kgpubench.hardware.tensor_peak_tflops); null when no cited figure exists.",
               unit="TFLOP/s", min=0, min_exclusive=True, derived=True),
        Column("time_ms", "float64", "Mean time of one operator call (upstream `latency`).", unit="ms", min=0,
               min_exclusive=True, max=MAX_MS, required_when=OK),
        Column("time_statistic", "string", "How time_ms was taken: the mean per call over CUDA-graph replays "
               "timed with CUDA events, L2 warm, clocks locked.", values=TIME_STATISTICS, required_when=OK),
        Column("upstream_provenance", "string", "The table folder's `collection_meta.yaml` provenance: `collected` "
               "(measured with the provenance sidecar) or `legacy` (measured before upstream kept sidecars); "
               "null without a sidecar.", values=UPSTREAM_PROVENANCE),
        Column("source_format", "string", "Format of the imported file.", values=("aiconfigurator-parquet",),
               pattern=NAME, not_values=MISSING_TEXT),
    ]


TABLE = Table(
    name="llm_operators",
    version="1.0.0",
    description="LLM-serving operator calls (GEMM; context and generation attention) timed at one shape and dtype "
    "on one GPU under TensorRT-LLM, SGLang or vLLM (imported from NVIDIA AIConfigurator).",
    columns=tuple(common_head() + _specific() + provenance_columns()),
    changelog=(("1.0.0", "First declaration (issue 39)."),),
)
