"""The one check of a model's predictions: numbers, one per test row, all finite.

Used where predictions arrive: the sandboxed child (:func:`not_numbers`, before it serialises them), the
parent (:class:`kgpubench.sandbox.session.ModelSession`, on what it receives), trusted in-process runs
(``kgpubench.models.evaluation.fit_predict``) and predictions made elsewhere (``kgpubench score``). Every
refusal is one line: ``<where>: refused, <what>; <the fix>.``
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kgpubench.errors import SandboxError

NUMBER_KINDS = "iuf"  # numpy dtype kinds a prediction may have: signed, unsigned, float (not bool, complex, text)
SAID = "predict() returned"


def not_numbers(pred: Any, arr: np.ndarray, said: str = SAID) -> str | None:
    """Why ``arr`` (``np.asarray(pred)``) is not an array of numbers, e.g. ``predict() returned list of <U3, not
    numbers``; ``None`` when it is one."""
    if arr.dtype.kind in NUMBER_KINDS:
        return None
    if arr.dtype.kind == "O":
        got = f"{type(pred).__name__} holding {sorted({type(v).__name__ for v in arr.ravel()[:1000]})}"
    else:
        got = f"{type(pred).__name__} of {arr.dtype}"
    return f"{said} {got}, not numbers"


def refusal(where: str, why: str, n: int) -> SandboxError:
    """The one-line error for predictions that are not numbers (``why`` from :func:`not_numbers`)."""
    return SandboxError(f"{where}: refused, {why}; expected a 1-D array of {n} numbers.", "invalid-output")


def checked_predictions(arr: Any, n: int, where: str = "model", *, said: str = SAID,
                        row_names: Sequence[Any] | None = None) -> np.ndarray:
    """``arr`` as a float64 vector of ``n`` finite values, or a one-line :class:`SandboxError` (a
    ``SubmissionError``; ``kind`` ``"invalid-output"``).

    Parameters
    ----------
    arr : numpy.ndarray
        The predictions (anything else is refused: convert a model's output with ``np.asarray`` first).
    n : int
        Test rows, so values expected.
    where : str
        What the message names first (the model or predictions file).
    said : str
        How the message introduces the values (``"predict() returned"``).
    row_names : sequence, optional
        How the message names the test rows (e.g. their ``row_id``); default their position, from 0.
    """
    if not isinstance(arr, np.ndarray):
        raise refusal(where, f"{said} {type(arr).__name__}, not numbers", n)
    why = not_numbers(arr, arr, said)
    if why:
        raise refusal(where, why, n)
    if arr.shape != (n,):
        raise SandboxError(f"{where}: refused, {said} shape {arr.shape}, expected ({n},): one value per test row "
                           "(use .ravel() on a column vector).", "invalid-output")
    out = arr.astype(np.float64)
    bad = ~np.isfinite(out)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        name = first if row_names is None else row_names[first]
        raise SandboxError(f"{where}: refused, {said} {int(bad.sum())} NaN/inf value(s) (first at row {name}); "
                           "every test row needs a finite prediction.", "invalid-output")
    return out
