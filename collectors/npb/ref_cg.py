"""NumPy reference of NPB CG: the ``makea`` matrix generator and the inverse power method.

``makea`` draws, for each row ``i`` (1-based), a sparse vector with ``nonzer`` distinct random positions in
``1..n`` (``sprnvc``: a value draw then a position draw ``floor(nn1 * u) + 1`` with ``nn1`` the smallest power
of two ``>= n``, positions above ``n`` or already drawn are rejected), then sets element ``i`` of it to 0.5
(``vecset``, appending it if absent). The matrix is ``A = sum_i ratio^(i-1) v_i v_i^T + (rcond - shift) I``
with ``ratio = rcond^(1/n)``, duplicates summed. One value is drawn (and discarded) before the first row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .randlc import Randlc
from .spec import CG_CGITMAX, CG_CLASSES, CG_EPSILON, CG_RCOND, CG_SEED, check_class


@dataclass(frozen=True)
class CsrMatrix:
    """A square CSR matrix with sorted column indices (0-based)."""

    n: int
    rowptr: np.ndarray  # int32, n + 1
    colidx: np.ndarray  # int32
    values: np.ndarray  # float64

    def matvec(self, x: np.ndarray) -> np.ndarray:
        prod = self.values * x[self.colidx]
        return np.add.reduceat(prod, self.rowptr[:-1]) if len(prod) else np.zeros(self.n)


def _sparse_vectors(n: int, nonzer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (0-based), values and lengths of the ``n`` generated vectors (padded to ``nonzer + 1``)."""
    rng = Randlc(CG_SEED)
    rng()  # NPB draws one value (its initial zeta) before makea
    nn1 = 1
    while nn1 < n:
        nn1 *= 2
    pos = np.zeros((n, nonzer + 1), dtype=np.int64)
    val = np.zeros((n, nonzer + 1), dtype=np.float64)
    length = np.zeros(n, dtype=np.int64)
    for row in range(n):
        ivs: list[int] = []
        vs: list[float] = []
        while len(ivs) < nonzer:
            vecelt = rng()
            i = int(nn1 * rng()) + 1
            if i > n or i in ivs:
                continue
            ivs.append(i)
            vs.append(vecelt)
        if row + 1 in ivs:
            vs[ivs.index(row + 1)] = 0.5
        else:
            ivs.append(row + 1)
            vs.append(0.5)
        k = len(ivs)
        pos[row, :k] = np.asarray(ivs) - 1
        val[row, :k] = vs
        length[row] = k
    return pos, val, length


def makea(npb_class: str = "S") -> CsrMatrix:
    """The CG matrix of ``npb_class`` in CSR form (class B: about ten seconds and 1 GB)."""
    n, nonzer, _, shift, _ = CG_CLASSES[check_class(npb_class)]
    pos, val, length = _sparse_vectors(n, nonzer)
    ratio = CG_RCOND ** (1.0 / n)
    size = np.empty(n)
    s = 1.0
    for i in range(n):  # NPB updates size by repeated multiplication; keep its rounding
        size[i] = s
        s *= ratio
    w = nonzer + 1
    valid = np.arange(w)[None, :] < length[:, None]
    scale = size[:, None] * val  # scale of element (row j = pos[., a]) ...
    entries = val[:, None, :] * scale[:, :, None]  # ... times each element (column pos[., b])
    mask = valid[:, :, None] & valid[:, None, :]
    rows = np.broadcast_to(pos[:, :, None], entries.shape)[mask]
    cols = np.broadcast_to(pos[:, None, :], entries.shape)[mask]
    vals = entries[mask]
    rows = np.concatenate([rows, np.arange(n)])
    cols = np.concatenate([cols, np.arange(n)])
    vals = np.concatenate([vals, np.full(n, CG_RCOND - shift)])
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    group = np.cumsum(first) - 1
    summed = np.zeros(int(first.sum()))
    np.add.at(summed, group, vals)
    urows, ucols = rows[first], cols[first]
    rowptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(urows, minlength=n), out=rowptr[1:])
    return CsrMatrix(n, rowptr, ucols.astype(np.int32), summed)


def conj_grad(a: CsrMatrix, x: np.ndarray) -> tuple[np.ndarray, float]:
    """25 CG steps on ``A z = x`` from ``z = 0``; returns ``z`` and ``||x - A z||``."""
    z = np.zeros_like(x)
    r = x.copy()
    p = r.copy()
    rho = float(r @ r)
    for _ in range(CG_CGITMAX):
        q = a.matvec(p)
        alpha = rho / float(p @ q)
        z += alpha * p
        r -= alpha * q
        rho0, rho = rho, float(r @ r)
        p = r + (rho / rho0) * p
    resid = x - a.matvec(z)
    return z, float(np.sqrt(resid @ resid))


def cg_reference(npb_class: str = "S", matrix: CsrMatrix | None = None) -> tuple[float, list[float]]:
    """The inverse power method: returns the final zeta and the residual norm of every outer iteration."""
    n, _, niter, shift, _ = CG_CLASSES[check_class(npb_class)]
    a = makea(npb_class) if matrix is None else matrix
    x = np.ones(n)
    zeta = 0.0
    norms = []
    for _ in range(niter):
        z, rnorm = conj_grad(a, x)
        norms.append(rnorm)
        zeta = shift + 1.0 / float(x @ z)
        x = z / np.sqrt(float(z @ z))
    return zeta, norms


def cg_verify(npb_class: str, zeta: float) -> tuple[bool, float]:
    """Official check: relative error of zeta within 1e-10. Returns (passed, relative error)."""
    ref = CG_CLASSES[check_class(npb_class)][4]
    err = abs((zeta - ref) / ref)
    return bool(err <= CG_EPSILON), float(err)
