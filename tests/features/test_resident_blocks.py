"""``kgpubench.features.occupancy.resident_blocks``: a launch's resident blocks per SM under its architecture
family's limits, as the per-kernel scaling baselines count waves. launch_transfer calls it; kernel_scaling (whose
file is hashed into its committed results, so left as it is) holds the same rule inline, and both must agree."""

from __future__ import annotations

import itertools

import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.features.occupancy import FAMILY_CC, LIMITS, resident_blocks
from kgpubench.models.evaluation import load_model_module


@pytest.mark.parametrize("family, threads, registers, smem, blocks", [
    ("hopper", 256, 32, 0, 8),  # 2048 threads per SM / 256
    ("Hopper", 1024, 64, 0, 1),  # 65,536 registers / (64 x 1024): any case of the name
    ("kepler", 128, 16, 0, 16),  # Kepler's 16 resident blocks bind first
    ("maxwell2", 64, 32, 48 * 1024, 2),  # 96 KB per SM / 48 KB per block
    ("pascal", 2048, 32, 0, 1),  # a block of more threads than allowed: counted as one (it ran)
    ("rdna2", 128, 16, 0, 16),  # outside the table: Maxwell 2's limits (32 blocks, 2048 threads)
    ("turing", 0, -5, -1, 16),  # no thread, negative counts: one thread, none of either
])
def test_known_launches(family, threads, registers, smem, blocks):
    assert resident_blocks(family, threads, registers, smem) == blocks


def test_every_family_has_limits():
    assert set(FAMILY_CC.values()) <= set(LIMITS)


def test_it_agrees_with_kernel_scaling_s_inline_rule():
    module = load_model_module(next(p for p in baseline_files() if p.stem == "kernel_scaling"))
    for family, threads, registers, smem in itertools.product(
            [*FAMILY_CC, "unknown"], (32, 96, 256, 1024), (0, 24, 64, 255), (0, 4096, 40_000)):
        assert resident_blocks(family, threads, registers, smem) == module.resident_blocks(family, threads, registers,
                                                                                          smem), (family, threads)
