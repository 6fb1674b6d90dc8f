"""What measuring one case gives the run loop: a :class:`CaseOutcome`, one typed record.

It is made by the harness (:func:`kgpubench.measure.runner.measure_case`) or by a suite that measures itself
(``SuiteBase.measure``, npb), and read by the run loop (:func:`kgpubench.measure.runner.collect_suite`), which
puts :meth:`CaseOutcome.row_columns` into the row and keeps the rest (registers, GPU time, throttle reasons,
a sticky error) for itself: nothing meant for the harness travels among the row's columns.

A plain record at the bottom of the harness: it imports only :mod:`kgpubench.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kgpubench.errors import CaseFailure, ContractError, LaunchFailed

DETAIL_CHARS = 500  # a failure's status_detail is cut to this many characters


@dataclass(frozen=True)
class CaseOutcome:
    """The outcome of measuring one case.

    Parameters
    ----------
    status : str
        The row's ``status``: ``ok`` or a failure status (``compile_error``, ``infeasible``, ``launch_error``,
        ``verification_failed``).
    detail : str, optional
        The row's ``status_detail`` (``None``: the row has none).
    columns : mapping
        The row's measurement columns other than ``status`` and ``status_detail``: timing, protocol, power,
        conditions, and any other column of the table the measurement gives.
    nreg : int, optional
        Registers per thread of the compiled kernel, for the ``nreg`` column when the static features have none.
    measured_ms : float
        GPU time spent measuring the case (ms), for the collection's summary.
    reasons_seen : int
        NVML throttle-reason bits seen while timing (they feed the ``throttled`` column).
    sticky : bool
        The case left a sticky CUDA error: its row is written, then the collection stops.
    """

    status: str
    detail: str | None = None
    columns: Mapping[str, Any] = field(default_factory=dict)
    nreg: int | None = None
    measured_ms: float = 0.0
    reasons_seen: int = 0
    sticky: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", dict(self.columns))  # its own copy
        bad = sorted(k for k in self.columns if k in ("status", "status_detail") or k.startswith("_"))
        if bad:
            raise ContractError(f"CaseOutcome.columns may not hold {bad}: status and detail are fields, and "
                             "what is for the harness has its own fields (nreg, measured_ms, reasons_seen, sticky)")

    @classmethod
    def failed(cls, status: str, detail: str) -> CaseOutcome:
        """A failure outcome: ``status`` and its detail (cut to :data:`DETAIL_CHARS` characters)."""
        return cls(status=status, detail=detail[:DETAIL_CHARS])

    @classmethod
    def of_failure(cls, failure: CaseFailure) -> CaseOutcome:
        """The outcome of a classified failure; a sticky launch error is marked :attr:`sticky`."""
        out = cls.failed(failure.status, failure.detail)
        if isinstance(failure, LaunchFailed) and failure.sticky:
            out = replace(out, sticky=True)
        return out

    @classmethod
    def of_columns(cls, columns: Mapping[str, Any], **fields: Any) -> CaseOutcome:
        """The outcome of a row's measurement columns that hold ``status`` (and maybe ``status_detail``), with
        the other ``fields`` (``measured_ms``, ``reasons_seen``...)."""
        rest = dict(columns)
        status = rest.pop("status")
        detail = rest.pop("status_detail", None)
        return cls(status=status, detail=detail, columns=rest, **fields)

    @property
    def ok(self) -> bool:
        """Whether the case was measured (``status == "ok"``)."""
        return self.status == "ok"

    def with_columns(self, columns: Mapping[str, Any]) -> CaseOutcome:
        """A copy with ``columns`` added to (or replacing) :attr:`columns`."""
        return replace(self, columns={**self.columns, **columns})

    def row_columns(self) -> dict[str, Any]:
        """The columns this outcome gives the row: ``status``, ``status_detail`` (when there is one) and
        :attr:`columns`."""
        out: dict[str, Any] = {"status": self.status}
        if self.detail is not None:
            out["status_detail"] = self.detail
        out.update(self.columns)
        return out


__all__ = ["DETAIL_CHARS", "CaseOutcome"]
