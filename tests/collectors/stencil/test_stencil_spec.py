"""The sweep: tile sets, counts, launch shapes, verification grids, harness cases."""

from __future__ import annotations

import importlib

import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.measure.suites import load_suite

SUITE = load_suite("stencil")
spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")


def test_tile_set_size_by_hand():
    # Tiles 2^a x 2^b x 2^c with a, b, c in 0..6 and a + b + c <= 9 (B1 B2 B3 <= 512). The number with
    # a + b + c = s is symmetric about 9, so #(<= 9) = (343 + #(= 9)) / 2, and #(= 9) = C(11, 2) - 3 C(4, 2)
    # = 55 - 18 = 37 (solutions of a + b + c = 9 minus those with one part >= 7) -> (343 + 37) / 2 = 190.
    tiles = spec.train_tiles()
    assert len(tiles) == 190
    assert tiles[0] == (1, 1, 1)
    assert (64, 8, 1) in tiles and (64, 8, 2) not in tiles and (8, 8, 8) in tiles


def test_eval_tiles_are_the_35_small_tiles_plus_the_seed_examples():
    # B1 B2 B3 <= 16: a + b + c <= 4 -> C(7, 3) = 35; plus (8,1,4), (64,2,1), (2,16,4), (16,2,1).
    tiles = spec.eval_tiles()
    assert len(tiles) == 39
    assert tiles[-4:] == [(8, 1, 4), (64, 2, 1), (2, 16, 4), (16, 2, 1)]


def test_shared_tile_selection_by_hand():
    # (4, 4, 8): 128 points; order 2 float32 padded box 6 * 6 * 10 * 4 B = 1440 B -> kept.
    assert (4, 4, 8) in spec.shared_tiles(2, "float32")
    # (4, 4, 4): 64 points < one per thread of a 128-thread block -> not kept.
    assert (4, 4, 4) not in spec.shared_tiles(2, "float32")
    # (8, 8, 8), order 16, float64: 24^3 * 8 B = 110592 B > 96 KiB -> not kept; in float32 55296 B -> kept.
    assert spec.shared_box_bytes((8, 8, 8), 16, "float64") == 110592
    assert (8, 8, 8) not in spec.shared_tiles(16, "float64")
    assert (8, 8, 8) in spec.shared_tiles(16, "float32")


def test_full_sweep_counts():
    counts = spec.sweep_counts()
    assert counts["train/thread-tile"] == 3 * 2 * 3 * 190 == 3420
    assert counts["eval/thread-tile"] == 19 * 2 * 3 * 39 == 4446
    shared = sum(len(spec.shared_tiles(o, d)) for o in (2, 8, 16) for d in ("float32", "float64"))
    assert counts["train/shared-tile"] == 3 * shared
    assert counts["total"] == 3420 + 4446 + 3 * shared == 9420
    assert spec.EVAL_GRIDS[0] == 200 and spec.EVAL_GRIDS[-1] == 1100 and len(spec.EVAL_GRIDS) == 19


def test_quick_sweep_is_one_small_grid_and_a_handful_of_tiles():
    cfgs = list(spec.sweep(quick=True))
    assert len(cfgs) == 10
    assert {c.grid for c in cfgs} == {(64, 64, 64)}
    assert sum(c.tile == (1, 1, 1) for c in cfgs) == 2  # the baseline, once per dtype


def test_launch_shape_and_memory():
    cfg = spec.StencilConfig((256, 256, 256), "float64", 16, (8, 1, 4))
    # Interior 256 - 16 = 240 per axis: tiles 30 x 240 x 60 = 432000 threads -> 3375 blocks of 128.
    assert cfg.tiles == (30, 240, 60)
    assert cfg.launch_grid == (3375, 1, 1)
    shared = spec.StencilConfig((256, 256, 256), "float32", 2, (4, 4, 8), "shared-tile")
    # Interior 254: tiles 64 x 64 x 32 (last partial) -> one block each.
    assert shared.launch_grid == (64 * 64 * 32, 1, 1)
    assert shared.shared_mem_bytes == 6 * 6 * 10 * 4
    assert spec.StencilConfig((1024,) * 3, "float64", 2, (1, 1, 1)).memory_bytes == 3 * 8 * 2**30


def test_verification_grid_has_three_full_tiles_and_a_partial_one():
    cfg = spec.StencilConfig((512,) * 3, "float32", 8, (16, 1, 4))
    # B=16: 48 + 8 = 56; B=1: max(4, 12) = 12; B=4: max(14, 12) = 14; plus 2R = 8.
    assert cases.verification_grid(cfg) == (64, 20, 22)
    assert spec.StencilConfig((64, 20, 22), "float32", 8, (16, 1, 4)).tiles == (4, 12, 4)


def test_case_of_a_configuration():
    cfg = spec.StencilConfig((200,) * 3, "float32", 8, (2, 16, 4), group="eval")
    case = cases.make_case(cfg)
    assert case.source.kernel == "stencil_thread_tile"
    assert case.source.define_options() == ("-DKG_B1=2", "-DKG_B2=16", "-DKG_B3=4", "-DKG_BLOCK=128",
                                            "-DKG_REAL=float", "-DKG_SPACE_ORDER=8")
    assert case.time_divisor == spec.STEPS == 1  # one step per unit: protocol 2 samples many
    assert case.key["variant"] == "thread-tile" and case.columns["sweep_group"] == "eval"
    # Interior 192: tiles 96 x 12 x 48 = 55296 threads -> 432 blocks.
    assert case.grid == (432, 1, 1) and case.block == (128, 1, 1)
    from kgpubench.features.expr import evaluate
    env = {**case.sizes, "nt": 128.0}
    line_j = cases.loop_lines()["tile_j"]
    # Interior 192 along j in 12 tiles: 16 per tile.
    assert evaluate(case.trip_counts[f"line:{line_j}"], env) == pytest.approx(16.0)


def test_unknown_variant_is_named():
    with pytest.raises(UnknownNameError, match="shared-tile"):
        list(SUITE.cases(quick=True, kernels=["shared_tile"]))
    only = list(SUITE.cases(quick=True, kernels=["shared-tile"]))
    assert len(only) == 2 and all(c.source.kernel == "stencil_shared_tile" for c in only)


def test_a_case_gives_back_its_configuration():
    stencil = importlib.import_module("kgpubench_collectors.stencil")
    cfg = spec.StencilConfig((512,) * 3, "float64", 16, (64, 2, 1), "thread-tile", steps=10, group="train")
    case = cases.make_case(cfg)
    assert stencil.config_of(case) == cfg
    # 3 arrays of 512^3 float64 plus 3 arrays of the verification grid: (3*64 + 32 + 16, max(7, 12) + 16, 12 + 16).
    assert case.memory_bytes == 3 * 8 * 512**3 + 3 * 8 * (240 * 28 * 28)
