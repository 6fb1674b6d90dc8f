"""What the configurations of one problem share: inputs, references and their device copies.

A suite sweeps many launch or tile configurations of the same problem (kernel, sizes, dtype). Drawing the
inputs, computing the CPU reference and copying both to the device once per problem, instead of once per
configuration, is most of what a collection spends outside the kernels. Two helpers:

- :class:`ProblemCache` holds one problem at a time (the suites visit their cases problem by problem). Given
  the measuring order (:meth:`ProblemCache.plan`), it frees a problem right after its last case, so the next
  problem's feasibility check does not count the previous one's device memory; otherwise it frees it when a
  case of another problem arrives, and at the end of a suite (``drop_caches``).
- :class:`BoundedCache`: small values by key (e.g. the references of small verification grids that recur
  across problems), least recently used dropped first beyond a byte budget.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ProblemCache(Generic[T]):
    """The shared data of the current problem (built on the first case of a problem, then reused)."""

    def __init__(self) -> None:
        self.key: Hashable | None = None
        self.where: Hashable = None
        self.value: T | None = None
        self.builds = 0
        self._left: Counter = Counter()

    def plan(self, keys: Iterable[Hashable]) -> None:
        """The problem key of every case in measuring order; a problem is dropped after its last case."""
        self._left = Counter(keys)

    def get(self, key: Hashable, build: Callable[[], T], *, where: Hashable = None) -> T:
        """The data of problem ``key``, built with ``build()`` unless it is the current problem (``where``: the
        array module or device it lives on; another one builds it again)."""
        if key != self.key or where != self.where or self.value is None:
            self.clear()  # first: the previous problem's arrays may be large
            self.value = build()
            self.key, self.where = key, where
            self.builds += 1
        return self.value

    def done(self, key: Hashable) -> None:
        """One case of problem ``key`` is finished (released)."""
        if key in self._left:
            self._left[key] -= 1
            if self._left[key] <= 0:
                del self._left[key]
                if key == self.key:
                    self.clear()

    def clear(self) -> None:
        """Drop the current problem's data."""
        self.key, self.where, self.value = None, None, None


def nbytes(value: Any) -> int:
    """Bytes held by the arrays in ``value`` (an array, or a tuple/list/dict of them)."""
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v) for v in value)
    return int(getattr(value, "nbytes", 0))


class BoundedCache(Generic[T]):
    """Values by key, least recently used dropped first once they hold more than ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self.builds = 0
        self._items: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value of ``key``, built with ``build()`` if absent."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key][0]
        value = build()
        self.builds += 1
        size = nbytes(value)
        self._items[key] = (value, size)
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._items) > 1:
            _key, (_value, dropped) = self._items.popitem(last=False)
            self._bytes -= dropped
        return value

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0
