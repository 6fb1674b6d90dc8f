import importlib

import numpy as np
import pytest


@pytest.fixture(scope="module")
def rl(npb):
    return importlib.import_module(npb.__name__ + ".randlc")


def test_multiplier_is_five_to_the_thirteenth(rl):
    assert rl.A == 1220703125


def test_stream_matches_exact_integer_recurrence(rl):
    # x_{k+1} = a x_k mod 2^46 computed with Python ints, step by step
    x, expected = 271828183, []
    for _ in range(6):
        x = (x * 1220703125) % (1 << 46)
        expected.append(x)
    assert rl.stream(271828183, 6).tolist() == expected
    # the first state, worked out by hand: 271828183 * 1220703125 = 331821512451171875
    assert expected[0] == 331821512451171875 % (1 << 46)


def test_mulmod_array_is_exact_near_the_top_of_the_range(rl):
    vals = [(1 << 46) - 1, (1 << 46) - 3, 123456789012345, 1]
    b = (1 << 46) - 5
    got = rl.mulmod_array(np.array(vals, dtype=np.uint64), b).tolist()
    assert got == [(v * b) % (1 << 46) for v in vals]


def test_powers_and_uniforms(rl):
    assert rl.powers(3, 5).tolist() == [3, 9, 27, 81, 243]
    # 2^45 / 2^46 = 0.5: one step of a = 2^44 from x = 2 is exactly half
    assert rl.uniforms(2, 1, a=1 << 44).tolist() == [0.5]


def test_scalar_generator_crosses_block_boundaries(rl):
    g = rl.Randlc(314159265, block=4)
    draws = [g() for _ in range(10)]
    ref = [(314159265 * pow(1220703125, k, 1 << 46)) % (1 << 46) / 2.0**46 for k in range(1, 11)]
    assert draws == ref
    assert g.state == (314159265 * pow(1220703125, 10, 1 << 46)) % (1 << 46)
