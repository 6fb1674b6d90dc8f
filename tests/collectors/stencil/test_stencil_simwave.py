"""Optional: our NumPy reference operator reproduces Simwave's CPU solver (skipped without simwave).

Simwave (GPL-3.0) is a test-only, optional dependency: the package never imports it and no dependency list
names it. The comparison excludes what our kernel does not have: no damping layer (``damping_length=0``),
no boundary condition, and the points near the source (where Simwave injects the wavelet with Kaiser-windowed
sinc weights) are left out. Everywhere else, three consecutive saved wavefields must obey our update.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kgpubench.measure.suites import load_suite

simwave = pytest.importorskip("simwave")

load_suite("stencil")
reference = importlib.import_module("kgpubench_collectors.stencil.reference")

N, H, ORDER, WINDOW = 31, 10.0, 4, 4


def _simwave_wavefields():
    vel = np.full((N, N, N), 2000.0)
    space = simwave.SpaceModel(bounding_box=(0, H * (N - 1)) * 3, grid_spacing=(H, H, H), velocity_model=vel,
                               space_order=ORDER, dtype=np.float64)
    space.config_boundary(damping_length=0, boundary_condition="none")
    time = simwave.TimeModel(space_model=space, tf=0.06, saving_stride=1)
    centre = H * (N // 2)
    source = simwave.Source(space, coordinates=[(centre, centre, centre)], window_radius=WINDOW)
    receiver = simwave.Receiver(space, coordinates=[(centre, centre, centre)], window_radius=WINDOW)
    wavelet = simwave.RickerWavelet(25.0, time)
    compiler = simwave.Compiler(cc="gcc", language="c", cflags="-O2 -fPIC -std=c99 -shared")
    solver = simwave.Solver(space_model=space, time_model=time, sources=source, receivers=receiver,
                            wavelet=wavelet, compiler=compiler)
    u_full, _ = solver.forward()
    return np.asarray(u_full, dtype=np.float64), float(time.dt), vel


def test_reference_step_matches_simwave_away_from_the_source():
    u, dt, vel = _simwave_wavefields()
    assert u.shape[1:] == (N, N, N) and u.shape[0] >= 10
    s = u.shape[0] - 2
    ours = reference.step(u[s - 1], u[s], vel, dt, (H, H, H), ORDER)
    r = ORDER // 2
    keep = np.zeros((N, N, N), dtype=bool)
    keep[r:N - r, r:N - r, r:N - r] = True
    c = N // 2
    keep[c - WINDOW - 1:c + WINDOW + 2, c - WINDOW - 1:c + WINDOW + 2, c - WINDOW - 1:c + WINDOW + 2] = False
    theirs = u[s + 1]
    scale = np.abs(theirs[keep]).max()
    assert scale > 1e-3 * np.abs(theirs).max()  # the wave has left the source region: not a trivial check
    np.testing.assert_allclose(ours[keep], theirs[keep], rtol=0, atol=1e-9 * scale)
