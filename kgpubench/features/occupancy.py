"""Theoretical occupancy and SM saturation from per-SM limits of compute capability 3.0 to 9.0.

The limits are NVIDIA's published figures (CUDA C++ Programming Guide, "Technical Specifications per
Compute Capability", and the allocation rules of the CUDA Occupancy Calculator / ``cuda_occupancy.h``):
registers are allocated per warp in units of 256, and each of the 4 SM sub-partitions holds a quarter
of the register file; shared memory is allocated per block in units of 256 bytes (cc 7.x) or 128 bytes
(cc 8.0 and later), and the CUDA driver reserves 1 KB of shared memory per block from cc 8.0 on.
The shared memory per SM used is the largest carveout (the default when the kernel does not ask for a
smaller one). Kepler, Maxwell and Pascal (3.x-6.x, the GPUs of the Rodinia profiles): the same guide's table
(2048 threads per SM; 16 resident blocks on 3.x, 32 on 5.x-6.x; 64 K registers per SM, 63 per thread on 3.0;
shared memory 48 KB per SM on 3.x, 64 KB on 5.0 and 6.0, 96 KB on 5.2 and 6.1, 48 KB per block), shared memory
in units of 256 bytes, registers per warp in units of 256 over 4 sub-partitions (2 on 6.0, cuda_occupancy.h).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from kgpubench.errors import unknown_name

__all__ = ["FAMILY_CC", "LIMITS", "Occupancy", "SmLimits", "limits_for", "occupancy", "resident_blocks",
           "sm_saturation"]

KB = 1024


@dataclass(frozen=True)
class SmLimits:
    """Per-SM and per-block limits of one compute capability."""

    cc: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_unit: int
    sub_partitions: int
    smem_per_sm: int
    max_smem_per_block: int
    smem_unit: int
    smem_reserved_per_block: int
    warp_size: int = 32

    @property
    def max_warps_per_sm(self) -> int:
        """Resident warps per SM."""
        return self.max_threads_per_sm // self.warp_size


def _limits(cc, threads, blocks, smem_sm_kb, smem_block_kb, unit, reserved, *, regs_per_thread=255,
            sub_partitions=4) -> SmLimits:
    return SmLimits(cc=cc, max_threads_per_sm=threads, max_blocks_per_sm=blocks, max_threads_per_block=1024,
                    registers_per_sm=65536, max_registers_per_block=65536, max_registers_per_thread=regs_per_thread,
                    register_unit=256, sub_partitions=sub_partitions, smem_per_sm=smem_sm_kb * KB,
                    max_smem_per_block=smem_block_kb * KB, smem_unit=unit, smem_reserved_per_block=reserved)


#: Limits by compute capability (Kepler, Maxwell, Pascal, V100, Xavier, Turing, A100, GA10x, Orin, Ada, H100).
LIMITS: dict[str, SmLimits] = {
    "3.0": _limits("3.0", 2048, 16, 48, 48, 256, 0, regs_per_thread=63),
    "3.5": _limits("3.5", 2048, 16, 48, 48, 256, 0),
    "5.0": _limits("5.0", 2048, 32, 64, 48, 256, 0),
    "5.2": _limits("5.2", 2048, 32, 96, 48, 256, 0),
    "6.0": _limits("6.0", 2048, 32, 64, 48, 256, 0, sub_partitions=2),
    "6.1": _limits("6.1", 2048, 32, 96, 48, 256, 0),
    "7.0": _limits("7.0", 2048, 32, 96, 96, 256, 0),
    "7.2": _limits("7.2", 2048, 32, 96, 96, 256, 0),
    "7.5": _limits("7.5", 1024, 16, 64, 64, 256, 0),
    "8.0": _limits("8.0", 2048, 32, 164, 163, 128, KB),
    "8.6": _limits("8.6", 1536, 16, 100, 99, 128, KB),
    "8.7": _limits("8.7", 2048, 16, 164, 163, 128, KB),
    "8.9": _limits("8.9", 1536, 24, 100, 99, 128, KB),
    "9.0": _limits("9.0", 2048, 32, 228, 227, 128, KB),
}


def limits_for(cc_or_arch: str) -> SmLimits:
    """Limits for ``"8.0"``, ``"sm_80"`` or ``"80"``.

    Raises
    ------
    UnknownNameError
        A compute capability outside the table.
    """
    text = cc_or_arch.strip().removeprefix("sm_").removeprefix("compute_").rstrip("af")
    cc = text if "." in text else f"{text[:-1]}.{text[-1:]}"
    if cc not in LIMITS:
        raise unknown_name("compute capability", cc, LIMITS)
    return LIMITS[cc]


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM, with the limit of each resource, and the occupancy they give."""

    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float
    limit_blocks: int
    limit_warps: int
    limit_registers: int
    limit_shared: int
    limiter: str


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(cc_or_arch: str, *, threads_per_block: int, registers_per_thread: int,
              shared_bytes_per_block: int = 0, dynamic_shared_bytes: int = 0) -> Occupancy:
    """Theoretical occupancy of a launch on one SM.

    Parameters
    ----------
    cc_or_arch : str
        Compute capability (``"8.0"``) or architecture (``"sm_80"``).
    threads_per_block : int
        Block size.
    registers_per_thread : int
        From ptxas.
    shared_bytes_per_block, dynamic_shared_bytes : int
        Static (ptxas) and dynamic (launch) shared memory per block.

    Returns
    -------
    Occupancy
        ``blocks_per_sm = 0`` when the block cannot run at all (too many threads, registers or shared
        memory per block); ``limiter`` names the resource that binds (``blocks``, ``warps``,
        ``registers``, ``shared`` or ``block_size``).
    """
    lim = limits_for(cc_or_arch)
    warps = math.ceil(threads_per_block / lim.warp_size)
    big = lim.max_blocks_per_sm  # a resource the block does not use limits nothing beyond this
    limit_blocks = lim.max_blocks_per_sm
    limit_warps = lim.max_warps_per_sm // warps if warps else 0
    regs_warp = _round_up(registers_per_thread * lim.warp_size, lim.register_unit)
    if registers_per_thread > lim.max_registers_per_thread or regs_warp * warps > lim.max_registers_per_block \
            or regs_warp * _round_up(warps, lim.sub_partitions) > lim.max_registers_per_block:
        limit_regs = 0
    elif regs_warp == 0:
        limit_regs = big
    else:
        per_part = (lim.registers_per_sm // lim.sub_partitions) // regs_warp
        limit_regs = per_part * lim.sub_partitions // warps
    smem = shared_bytes_per_block + dynamic_shared_bytes
    if smem > lim.max_smem_per_block:
        limit_smem = 0
    elif smem == 0:
        limit_smem = big
    else:
        limit_smem = lim.smem_per_sm // _round_up(smem + lim.smem_reserved_per_block, lim.smem_unit)
    limits = {"blocks": limit_blocks, "warps": limit_warps, "registers": limit_regs, "shared": limit_smem}
    if threads_per_block < 1 or threads_per_block > lim.max_threads_per_block:
        limits["block_size"] = 0
    limiter = min(limits, key=lambda k: limits[k])
    blocks = max(0, min(limits.values()))
    return Occupancy(blocks_per_sm=blocks, warps_per_sm=blocks * warps,
                     occupancy=blocks * warps / lim.max_warps_per_sm, limit_blocks=limit_blocks,
                     limit_warps=limit_warps, limit_registers=limit_regs, limit_shared=limit_smem,
                     limiter=limiter)


# An architecture family as the GPU catalogue names it (``gpu_architecture``) -> the compute capability whose limits
# its launches' occupancy uses (the family's most common one).
FAMILY_CC = {"kepler": "3.5", "maxwell": "5.0", "maxwell2": "5.2", "pascal": "6.0", "volta": "7.0", "turing": "7.5",
             "ampere": "8.0", "ada": "8.9", "hopper": "9.0"}


@functools.cache
def resident_blocks(family: str, threads: int, registers: int, shared_bytes: int, fallback_cc: str = "5.2") -> int:
    """Resident blocks per SM of a launch (threads per block, registers per thread, static shared memory per
    block) under the limits of the architecture ``family`` (:data:`FAMILY_CC`, any case; a family outside it:
    ``fallback_cc``'s), at least 1: a launch the limits refuse, or inputs they cannot take, count one block per SM
    (it ran, so it fitted). Negative counts are read as 0, a block of no thread as 1."""
    cc = FAMILY_CC.get(str(family).lower(), fallback_cc)
    try:
        blocks = occupancy(cc, threads_per_block=max(threads, 1), registers_per_thread=max(registers, 0),
                           shared_bytes_per_block=max(shared_bytes, 0)).blocks_per_sm
    except ValueError:
        blocks = 1
    return max(int(blocks), 1)


def sm_saturation(blocks: int, sm_count: int, blocks_per_sm: int) -> float:
    """Seed-002 SM saturation Sa: active SMs / SMs, averaged over the launch's waves.

    Blocks are assumed to be spread breadth first (one per SM before a second) and waves to take equal
    time: the launch runs ``ceil(blocks / (sm_count * blocks_per_sm))`` waves; full waves keep every SM
    busy, the last wave ``min(sm_count, rest)`` of them. 0 when the block cannot run (``blocks_per_sm`` 0).
    """
    if blocks <= 0 or sm_count <= 0 or blocks_per_sm <= 0:
        return 0.0
    per_wave = sm_count * blocks_per_sm
    waves = math.ceil(blocks / per_wave)
    rest = blocks - (waves - 1) * per_wave
    return ((waves - 1) + min(sm_count, rest) / sm_count) / waves
