"""Central finite-difference weights of the second derivative, generated for any even order.

The weights ``c_0 .. c_R`` (``R = order / 2``) of the symmetric stencil on the points ``-R .. R`` are the
solution of the Vandermonde (moment) system: for the stencil ``sum_m w_m f(x + m h) ~ h^2 f''(x)`` to be exact
for the monomials ``1, m, m^2, ..., m^(2R)``,

    sum_{m=-R..R} w_m m^p = p! [p == 2]    for p = 0 .. 2R.

By symmetry the odd moments vanish, so with ``w_{+r} = w_{-r} = c_r`` the even moments ``p = 2q`` give
``R + 1`` equations in ``c_0 .. c_R``:

    q = 0:   c_0 + 2 sum_r c_r           = 0
    q >= 1:  2 sum_r c_r r^(2q)          = (2q)! [q == 1]

solved here exactly in rational arithmetic (Gauss-Jordan over :class:`fractions.Fraction`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from math import factorial

from kgpubench.errors import SuiteError


class StencilOrderError(SuiteError, ValueError):
    """A space order that is not a positive even integer."""


def _check_order(order: int) -> int:
    if not isinstance(order, int) or isinstance(order, bool) or order < 2 or order % 2:
        raise StencilOrderError(
            f"space order {order!r} is not supported; expected a positive even integer (2, 4, 8, 16, ...)."
        )
    return order // 2


def _solve_exact(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """Solve ``matrix @ x = rhs`` exactly (Gauss-Jordan with row pivoting on non-zero entries)."""
    n = len(rhs)
    a = [row[:] + [b] for row, b in zip(matrix, rhs)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [v / p for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col])]
    return [a[r][n] for r in range(n)]


@cache
def fd_weights(order: int) -> tuple[Fraction, ...]:
    """Exact weights ``(c_0, c_1, ..., c_R)`` of the central second derivative of accuracy ``order``.

    Parameters
    ----------
    order : int
        Space order, a positive even integer; ``R = order / 2`` is the stencil radius.

    Returns
    -------
    tuple of Fraction
        ``c_0`` (the centre weight) then ``c_1 .. c_R``; the stencil is
        ``c_0 f_0 + sum_r c_r (f_{+r} + f_{-r})``, divided by ``h^2``.

    Raises
    ------
    StencilOrderError
        If ``order`` is not a positive even integer.

    Examples
    --------
    >>> [str(c) for c in fd_weights(4)]
    ['-5/2', '4/3', '-1/12']
    """
    radius = _check_order(order)
    matrix: list[list[Fraction]] = []
    rhs: list[Fraction] = []
    for q in range(radius + 1):
        p = 2 * q
        # Column 0 is the centre point (0^0 = 1, 0^p = 0 for p > 0); columns r appear twice (+r and -r).
        row = [Fraction(1 if p == 0 else 0)] + [Fraction(2 * r**p) for r in range(1, radius + 1)]
        matrix.append(row)
        rhs.append(Fraction(factorial(p) if p == 2 else 0))
    return tuple(_solve_exact(matrix, rhs))


def fd_weights_float(order: int) -> tuple[float, ...]:
    """The weights of :func:`fd_weights` rounded to float64."""
    return tuple(float(c) for c in fd_weights(order))


def stable_dt(order: int, h: tuple[float, float, float], vmax: float) -> float:
    """Largest stable time step of the 3-D update: ``sqrt(4 / (3 sum|c|)) * min(h) / vmax``.

    ``sum|c|`` runs over all ``2R + 1`` points of the stencil (``|c_0| + 2 sum_r |c_r|``), which bounds the
    largest eigenvalue of the 1-D operator by ``sum|c| / h^2``; for order 2 this gives the classical
    ``h / (v sqrt(3))``.

    Parameters
    ----------
    order : int
        Space order.
    h : tuple of float
        Grid spacings along i, j, k.
    vmax : float
        Largest wave speed in the model.
    """
    c = fd_weights_float(order)
    total = abs(c[0]) + 2.0 * sum(abs(x) for x in c[1:])
    return (4.0 / (3.0 * total)) ** 0.5 * min(h) / vmax
