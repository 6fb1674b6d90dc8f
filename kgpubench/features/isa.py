"""Instruction classes of PTX instructions: the seed-000 classes, a wider mix, bytes and flops.

Seed-000 class (exactly one per instruction, so ``l = lc + lshr + lshw + lmr + lmw + ls + ldpu + lsfu``
holds by construction). The first rule that applies wins:

1. **memory** by state space. Reads from global, generic (assumed global), local, texture or surface
   memory are ``lmr`` (``ld``, ``ldu``, ``prefetch``, ``tex``, ``tld4``, ``suld``, ``wmma.load``, a
   ``cp.async``/``cp.async.bulk`` whose source is global); writes to them are ``lmw`` (``st``,
   ``sust``, ``sured``, ``wmma.store``, bulk copies to global, and atomics/reductions ``atom``/``red``,
   which write). The same operations on shared memory are ``lshr``/``lshw`` (``ldmatrix`` reads,
   ``stmatrix``, ``atom.shared`` and copies into shared from shared write). Parameter and constant
   space (``ld.param``, ``st.param``, ``ld.const``) stay on chip and are ``lc``.
   A double-precision load or store is memory, never ``ldpu``.
2. **synchronisation** ``ls``: ``bar``, ``barrier``, ``membar``, ``fence``, ``mbarrier.*``,
   ``griddepcontrol``, ``cp.async.commit_group``/``wait_group``/``wait_all``/``mbarrier.arrive``,
   ``cp.async.bulk.commit_group``/``wait_group``, ``wgmma.fence``/``commit_group``/``wait_group``.
3. **double precision** ``ldpu``: an arithmetic, compare or conversion instruction with an ``f64``
   type (``add sub mul fma mad div rcp sqrt rsqrt abs neg min max setp set cvt testp copysign``, and
   ``mma``/``wmma.mma`` on f64). fp64 ``sqrt``, ``rcp``, ``rsqrt`` and ``div`` are ``ldpu``, not
   ``lsfu``: they run on the double-precision units. ``mov``/``selp`` of 64-bit values are ``lc``.
4. **special function** ``lsfu``: ``sin cos ex2 lg2 rsqrt rcp sqrt tanh`` on f32/f16/bf16, and
   floating-point ``div`` on f32/f16 (it is built on the SFU reciprocal).
5. everything else is **compute** ``lc`` (integer, fp32, fp16, moves, conversions, predicates,
   branches, calls, warp shuffles and votes, tensor-core ``mma``).
"""

from __future__ import annotations

import re

from kgpubench.features.ptx import Instruction

__all__ = ["MIX_CLASSES", "SEED_CLASSES", "flops", "global_bytes", "mix_class", "seed_class", "space"]

SEED_CLASSES = ("lc", "lmr", "lmw", "lshr", "lshw", "ls", "ldpu", "lsfu")
MIX_CLASSES = ("int", "fp32", "fp64", "fp16", "tensor", "sfu", "ld_global", "st_global", "ld_shared",
               "st_shared", "ld_local", "st_local", "ld_const", "ld_param", "st_param", "texture", "atomic",
               "sync", "branch", "warp", "move", "convert", "other")

TYPE_BYTES = {
    "b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "e4m3x2": 2, "e5m2x2": 2,
    "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "s64": 8, "u64": 8, "f64": 8, "b128": 16,
}
_HALF = {"f16", "f16x2", "bf16", "bf16x2", "e4m3", "e5m2", "e4m3x2", "e5m2x2"}
_FP_ARITH = {"add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt", "abs", "neg", "min", "max",
             "ex2", "lg2", "sin", "cos", "tanh", "setp", "set", "cvt", "testp", "copysign"}
_SFU = {"sin", "cos", "ex2", "lg2", "rsqrt", "rcp", "sqrt", "tanh"}
_FLOP1 = {"add", "sub", "mul", "div", "rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "tanh"}
_SYNC_BASES = {"bar", "barrier", "membar", "fence", "mbarrier", "griddepcontrol"}
_SYNC_MODS = {"commit_group", "wait_group", "wait_all", "fence", "wait_group_read"}
_READ_BASES = {"ld", "ldu", "prefetch", "prefetchu", "tex", "tld4", "suld", "ldmatrix"}
_WRITE_BASES = {"st", "sust", "sured", "stmatrix", "atom", "red"}
_WARP = {"shfl", "vote", "match", "redux", "activemask", "elect"}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


def space(ins: Instruction) -> str:
    """State space named by the opcode: global, shared, local, const, param, or generic (none named)."""
    for part in ins.parts[1:]:
        name = part.split("::", 1)[0]
        if name in ("global", "shared", "local", "const", "param"):
            return name
    return "generic"


def _spaces(ins: Instruction) -> list[str]:
    return [p.split("::", 1)[0] for p in ins.parts[1:] if p.split("::", 1)[0] in ("global", "shared", "local")]


def _is_sync(ins: Instruction) -> bool:
    parts = ins.parts
    if ins.base in _SYNC_BASES:
        return True
    if ins.base in ("cp", "wgmma") and (set(parts) & _SYNC_MODS or "mbarrier" in parts[1:3]):
        return ins.base == "wgmma" or "async" in parts
    return False


def _memory(ins: Instruction) -> tuple[str, str] | None:
    """Return (direction 'r'/'w', space 'off'/'shared'/'onchip') for memory instructions, else None."""
    base, parts = ins.base, ins.parts
    if base == "cp":
        if _is_sync(ins):
            return None
        spaces = _spaces(ins)  # destination first, then source
        if "global" in spaces[1:] or (len(spaces) == 1 and "prefetch" in parts):
            return "r", "off"
        if spaces and spaces[0] == "global":
            return "w", "off"
        return "w", "shared"
    if base == "wmma" and len(parts) > 1 and parts[1] in ("load", "store"):
        direction = "r" if parts[1] == "load" else "w"
    elif base == "multimem":
        direction = "r" if "ld_reduce" in parts else "w"
    elif base in _READ_BASES:
        direction = "r"
    elif base in _WRITE_BASES:
        direction = "w"
    else:
        return None
    if base in ("tex", "tld4", "suld", "sust", "sured", "multimem"):
        return direction, "off"
    sp = space(ins)
    if sp in ("param", "const"):
        return direction, "onchip"
    return direction, "shared" if sp == "shared" else "off"


def _is_fp64(ins: Instruction) -> bool:
    if "f64" not in ins.parts:
        return False
    if ins.base in _FP_ARITH or ins.base == "mma":
        return True
    return ins.base == "wmma" and "mma" in ins.parts


def _is_sfu(ins: Instruction) -> bool:
    parts = set(ins.parts)
    if "f64" in parts:
        return False
    if ins.base in _SFU:
        return True
    return ins.base == "div" and bool(parts & ({"f32"} | _HALF))


def seed_class(ins: Instruction) -> str:
    """Return the seed-000 class of ``ins`` (one of :data:`SEED_CLASSES`, precedence in the module doc)."""
    mem = _memory(ins)
    if mem is not None and mem[1] != "onchip":
        direction, where = mem
        if where == "shared":
            return "lshr" if direction == "r" else "lshw"
        return "lmr" if direction == "r" else "lmw"
    if mem is None and _is_sync(ins):
        return "ls"
    if mem is None and _is_fp64(ins):
        return "ldpu"
    if mem is None and _is_sfu(ins):
        return "lsfu"
    return "lc"


def mix_class(ins: Instruction) -> str:
    """Return the instruction-mix class of ``ins`` (one of :data:`MIX_CLASSES`).

    Precedence: atomics (``atom``, ``red``), texture/surface, loads and stores by space (generic counts
    as global; ``cp.async`` from global counts as a global load), synchronisation, branches (``bra``,
    ``brx``, ``call``), tensor-core (``mma``, ``wmma.mma``, ``wgmma.mma_async``, ``tcgen05``), warp
    (``shfl vote match redux activemask elect``), special function, fp64, ``mov`` (move), ``cvt``/
    ``cvta`` (convert), then by operand type: fp16/bf16/fp8, fp32, integer/bit; ``other`` for the rest.
    """
    base, parts = ins.base, set(ins.parts)
    if base in ("atom", "red") or (base == "multimem" and "red" in parts):
        return "atomic"
    if base in ("tex", "tld4", "suld", "sust", "sured"):
        return "texture"
    mem = _memory(ins)
    if mem is not None:
        sp = "global" if base == "cp" and mem[1] == "off" else space(ins)
        if base == "cp" and mem[1] == "shared":
            sp = "shared"
        sp = {"generic": "global"}.get(sp, sp)
        if sp == "const" and mem[0] == "w":
            sp = "global"
        return ("ld_" if mem[0] == "r" else "st_") + sp
    if _is_sync(ins):
        return "sync"
    if base in ("bra", "brx", "call"):
        return "branch"
    if base in ("mma", "wgmma", "tcgen05") or (base == "wmma" and "mma" in parts):
        return "tensor"
    if base in _WARP:
        return "warp"
    if _is_sfu(ins):
        return "sfu"
    if _is_fp64(ins):
        return "fp64"
    if base in ("mov", "movmatrix"):
        return "move"
    if base in ("cvt", "cvta"):
        return "convert"
    if parts & _HALF:
        return "fp16"
    if parts & {"f32", "tf32"}:
        return "fp32"
    if parts & {"s8", "u8", "b8", "s16", "u16", "b16", "s32", "u32", "b32", "s64", "u64", "b64", "pred"} \
            or base in ("lop3", "shf", "prmt", "bfe", "bfi", "popc", "clz", "brev", "bfind", "dp4a", "dp2a"):
        return "int"
    return "other"


def _width(ins: Instruction, type_index: int = -1) -> int:
    types = [p for p in ins.parts if p in TYPE_BYTES]
    if not types:
        return 0
    vec = 1
    for part in ins.parts:
        if re.fullmatch(r"v(2|4|8)", part):
            vec = int(part[1:])
    return vec * TYPE_BYTES[types[type_index]]


def global_bytes(ins: Instruction) -> tuple[int, int]:
    """Bytes of global (device) memory one execution reads and writes, per thread.

    Loads/stores to global or generic space count their width (vector count x type size); texture and
    surface reads count the destination width; ``cp.async`` counts its copy size when it is an immediate;
    atomics and reductions count their operand size as written. Local, shared, constant and parameter
    spaces, bulk (TMA) copies and ``wmma`` fragments count 0.
    """
    base = ins.base
    mem = _memory(ins)
    if mem is None or mem[1] != "off":
        return 0, 0
    if base == "cp":
        if mem[0] == "r" and ins.operands and re.fullmatch(r"\d+", ins.operands[-1].strip()) \
                and "bulk" not in ins.parts:
            return int(ins.operands[-1]), 0
        return 0, 0
    if base in ("wmma", "multimem", "prefetch", "prefetchu"):
        return 0, 0
    if base in ("tex", "tld4", "suld"):
        return _width(ins, 0), 0
    if base in ("ld", "ldu", "st", "atom", "red", "sust", "sured") and space(ins) in ("global", "generic"):
        width = _width(ins)
        return (width, 0) if mem[0] == "r" else (0, width)
    return 0, 0


def flops(ins: Instruction) -> tuple[float, float]:
    """Floating-point operations of one execution per thread: ``(all precisions, fp64 only)``.

    ``fma``/``mad`` count 2, ``add sub mul div rcp sqrt rsqrt sin cos ex2 lg2 tanh`` count 1, packed
    ``x2`` types twice; compares, conversions, min/max/abs/neg count 0. Tensor-core ``mma``/``wmma.mma``
    count ``2 m n k / 32`` per thread (``2 m n k / 128`` for the warpgroup ``wgmma``).
    """
    parts = set(ins.parts)
    base = ins.base
    if base in ("mma", "wgmma") or (base == "wmma" and "mma" in parts):
        shape = next((m for p in ins.parts if (m := _SHAPE.fullmatch(p))), None)
        if not shape:
            return 0.0, 0.0
        m, n, k = (int(x) for x in shape.groups())
        value = 2.0 * m * n * k / (128 if base == "wgmma" else 32)
        return value, value if "f64" in parts else 0.0
    float_types = parts & ({"f32", "f64", "tf32"} | _HALF)
    if not float_types or base not in (_FLOP1 | {"fma", "mad"}):
        return 0.0, 0.0
    value = 2.0 if base in ("fma", "mad") else 1.0
    if parts & {"f16x2", "bf16x2"}:
        value *= 2
    return value, value if "f64" in parts else 0.0
