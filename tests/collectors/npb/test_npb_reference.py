"""The NumPy references reproduce the official NPB verification values (class S; W behind `slow`)."""

import importlib

import numpy as np
import pytest


def _mod(npb, name):
    return importlib.import_module(f"{npb.__name__}.{name}")


@pytest.mark.slow
def test_ep_class_s_official_sums(npb):
    ep = _mod(npb, "ref_ep")
    res = ep.ep_reference("S")
    assert abs(res.sx - (-3.247834652034740e3)) <= 1e-8 * 3.247834652034740e3
    assert abs(res.sy - (-6.958407078382297e3)) <= 1e-8 * 6.958407078382297e3
    assert res.gaussian_pairs == 13176389  # NPB EP class S "Number of Gaussian pairs"
    assert ep.ep_verify("S", res.sx, res.sy)[0]


def test_ep_verify_rejects_a_perturbed_sum(npb):
    ep = _mod(npb, "ref_ep")
    ok, err = ep.ep_verify("S", -3.247834652034740e3 * (1 + 2e-8), -6.958407078382297e3)
    assert not ok and err == pytest.approx(2e-8, rel=1e-6)


def test_ep_batch_seeds_jump_ahead(npb):
    ep = _mod(npb, "ref_ep")
    seeds = ep.batch_seeds(18)  # 4 batches of 2^16 pairs = 2^17 draws each
    step = pow(1220703125, 1 << 17, 1 << 46)
    assert seeds.tolist() == [(271828183 * pow(step, k, 1 << 46)) % (1 << 46) for k in range(4)]


def test_cg_class_s_official_zeta(npb):
    cg = _mod(npb, "ref_cg")
    zeta, norms = cg.cg_reference("S")
    assert abs(zeta - 8.5971775078648) <= 1e-10 * 8.5971775078648
    assert len(norms) == 15 and norms[-1] < 1e-10


def test_cg_matrix_is_symmetric_with_shifted_diagonal(npb):
    cg = _mod(npb, "ref_cg")
    a = cg.makea("S")
    dense = np.zeros((a.n, a.n))
    rows = np.repeat(np.arange(a.n), np.diff(a.rowptr))
    dense[rows, a.colidx] = a.values
    # symmetric up to rounding: NPB forms v_a * (size * v_b), so (a, b) and (b, a) may differ in the last bit
    assert a.n == 1400 and np.allclose(dense, dense.T, rtol=1e-14, atol=0)
    assert np.array_equal(dense != 0, dense.T != 0)
    assert np.all(np.diff(a.colidx[a.rowptr[0]:a.rowptr[1]]) > 0)  # sorted, no duplicates in row 0
    # row 1 of NPB (index 0) gets 0.5 * 0.5 * size(=1) from its own vector plus rcond - shift = 0.1 - 10,
    # and only vectors with element 1 add more; the diagonal is therefore at least 0.25 - 9.9 = -9.65
    assert dense[0, 0] >= -9.65 - 1e-12
    assert np.all(np.diag(dense) < 0)  # the shift dominates every diagonal


def test_mg_class_s_official_norm(npb):
    mg = _mod(npb, "ref_mg")
    l2 = mg.mg_reference("S")
    assert abs(l2 - 0.5307707005734e-04) <= 1e-8 * 0.5307707005734e-04


def test_mg_right_hand_side_has_ten_charges_of_each_sign(npb):
    mg = _mod(npb, "ref_mg")
    v = mg.zran3(8)
    inner = v[1:-1, 1:-1, 1:-1]
    assert (inner == 1.0).sum() == 10 and (inner == -1.0).sum() == 10 and (inner != 0).sum() == 20
    assert np.array_equal(v[0], v[-2]) and np.array_equal(v[:, :, -1], v[:, :, 1])  # periodic ghosts


def test_mg_restriction_and_prolongation_weights(npb):
    mg = _mod(npb, "ref_mg")
    fine = np.zeros((6, 6, 6))  # level 2 (4 interior points); a single 1 at fine (2, 2, 2)
    fine[2, 2, 2] = 1.0
    coarse = np.zeros((4, 4, 4))
    mg.rprj3(fine, coarse)
    assert coarse[1, 1, 1] == 0.5 and coarse[2, 2, 2] == 0.0  # centre weight 1/2, neighbours too far
    fine[...] = 0.0
    fine[3, 2, 2] = 1.0  # a face neighbour of coarse (1,1,1)'s fine point (2,2,2)
    mg.rprj3(fine, coarse)
    assert coarse[1, 1, 1] == 0.25 and coarse[2, 1, 1] == 0.25
    z = np.zeros((4, 4, 4))
    z[1, 1, 1] = 8.0
    u = np.zeros((6, 6, 6))
    mg.interp(z, u)
    assert u[2, 2, 2] == 8.0 and u[3, 2, 2] == 4.0 and u[3, 3, 2] == 2.0 and u[3, 3, 3] == 1.0


def test_ft_class_s_every_official_checksum(npb):
    ft = _mod(npb, "ref_ft")
    sums = ft.ft_reference("S")
    official = [(554.6087004964, 484.5363331978), (554.6385409189, 486.5304269511),
                (554.6148406171, 488.3910722336), (554.5423607415, 490.1273169046),
                (554.4255039624, 491.7475857993), (554.2683411902, 493.2597244941)]
    assert len(sums) == 6
    for got, (re, im) in zip(sums, official):
        assert abs(got - complex(re, im)) <= 1e-12 * abs(complex(re, im))


def test_ft_verify_rejects_a_missing_step_and_a_small_error(npb):
    ft = _mod(npb, "ref_ft")
    good = [complex(554.6087004964, 484.5363331978)] * 5
    assert ft.ft_verify("S", good) == (False, float("inf"))
    official = [complex(*c) for c in importlib.import_module(f"{npb.__name__}.spec").FT_CHECKSUMS["S"]]
    off = [official[0] * (1 + 1e-11)] + official[1:]
    ok, err = ft.ft_verify("S", off)
    assert not ok and err == pytest.approx(1e-11, rel=1e-3)


def test_ft_checksum_indices(npb):
    ft = _mod(npb, "ref_ft")
    k, j, i = ft.checksum_indices(64, 64, 64)
    assert (k[0], j[0], i[0]) == (5, 3, 1) and (k[12], j[12], i[12]) == (1, 39, 13)


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["EP", "CG", "MG", "FT"])
def test_class_w_official_values(npb, bench):
    if bench == "EP":
        ep = _mod(npb, "ref_ep")
        r = ep.ep_reference("W")
        assert ep.ep_verify("W", r.sx, r.sy)[0]
    elif bench == "CG":
        cg = _mod(npb, "ref_cg")
        assert cg.cg_verify("W", cg.cg_reference("W")[0])[0]
    elif bench == "MG":
        mg = _mod(npb, "ref_mg")
        assert mg.mg_verify("W", mg.mg_reference("W"))[0]
    else:
        ft = _mod(npb, "ref_ft")
        assert ft.ft_verify("W", ft.ft_reference("W"))[0]
