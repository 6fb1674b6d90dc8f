"""The regular sweep: sizes, launches, labels, trip-count loop names (seed 000 table 7)."""

from __future__ import annotations

from collections import Counter

import pytest
from regular_loader import modules, regular

spec, _, _ = modules()
SEED_BOUND = {"vector_add": "memory", "euclid": "memory", "srad_cuda_1": "memory", "srad_cuda_2": "memory",
              "calculate_temp": "compute", "matrix_mul": "compute", "fan1": "compute", "fan2": "compute"}
TWO_D = {"srad_cuda_1", "srad_cuda_2", "calculate_temp", "matrix_mul", "fan2"}


def test_kernels_and_bound_labels_follow_seed_table():
    assert {s.kernel: s.bound for s in spec.SPECS} == SEED_BOUND


def test_two_d_block_shapes():
    shapes = spec.blocks_2d()
    assert len(shapes) == 27 and len(set(shapes)) == 27
    assert {bx * by for bx, by in shapes} == {32, 64, 128, 256, 512, 1024}


@pytest.mark.parametrize("kernel", sorted(SEED_BOUND))
def test_each_kernel_sweep(kernel):
    cases = list(regular().cases(quick=False, kernels=[kernel]))
    sizes = {tuple(sorted(c.sizes.items())) for c in cases}
    distinct_problem = {c.columns["s"] for c in cases}
    assert len(distinct_problem) >= 8, "at least 8 problem sizes"
    assert len(cases) >= 200, "hundreds of rows per kernel per GPU"
    assert {c.threads_per_block for c in cases} == {32, 64, 128, 256, 512, 1024}
    assert any(c.block[1] > 1 for c in cases) == (kernel in TWO_D)
    assert len({(c.grid, c.block, tuple(sorted(c.sizes.items()))) for c in cases}) == len(cases), "no duplicates"
    for c in cases:
        assert c.memory_bytes > 0 and c.shared_mem_bytes <= 48 * 1024
        assert c.columns["n"] > 0 and c.columns["s"] > 0 and c.columns["cpx"] >= c.columns["s"]
    assert len(sizes) >= 8


def test_matrix_mul_measures():
    cases = list(regular().cases(quick=True, kernels=["matrix_mul"]))
    c = next(c for c in cases if c.sizes["n"] == 256)
    assert (c.columns["n"], c.columns["s"], c.columns["cpx"]) == (256.0, 65536.0, 16777216.0)
    # (16 + 16) x 16 floats of dynamic shared memory for a 16 x 16 block, tk = 16
    c16 = next(c for c in cases if c.block == (16, 16, 1))
    assert c16.shared_mem_bytes == 32 * 16 * 4 and c16.grid == (16, 16, 1)


def test_hotspot_grid_counts_interior_tiles():
    c = next(c for c in regular().cases(quick=True, kernels=["calculate_temp"])
             if c.sizes["rows"] == 512 and c.block == (32, 8, 1))
    # iters = 2: a 32 x 8 block writes 28 x 4 cells -> ceil(512/28) x ceil(512/4)
    assert c.grid == (19, 128, 1) and c.shared_mem_bytes == 3 * 256 * 4


def test_one_d_grids_cover_and_cap():
    launches = spec.launches_1d(100_000, quick=False)
    by_nt = Counter(launch.block[0] for launch in launches)
    assert by_nt[1024] == 2  # ceil(100000/1024) = 98 -> 98 and 64 (512 and 4096 are not smaller)
    grids = sorted(launch.grid[0] for launch in launches if launch.block[0] == 1024)
    assert grids == [64, 98]
    # ceil(100000/32) = 3125: capped grids 64 and 512 are smaller, 4096 is not
    assert sorted(g.grid[0] for g in launches if g.block[0] == 32) == [64, 512, 3125]


def test_quick_is_small():
    cases = list(regular().cases(quick=True))
    assert len(cases) == 32 and Counter(c.key["kernel"] for c in cases) == dict.fromkeys(SEED_BOUND, 4)


def test_trip_count_names_point_at_for_lines():
    for s in spec.SPECS:
        lines = s.path.read_text().splitlines()
        for sizes in s.quick_sizes:
            for name in spec.trip_counts(s, sizes):
                n = int(name.split(":")[1])
                assert lines[n - 1].lstrip().startswith("for ("), (s.kernel, name)
