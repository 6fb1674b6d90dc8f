"""ProblemCache (one problem at a time, freed after its last planned case) and BoundedCache (LRU by bytes)."""

from __future__ import annotations

import numpy as np

from kgpubench.measure.problems import BoundedCache, ProblemCache, nbytes


def test_problem_cache_builds_once_per_problem_and_frees_after_the_last_case():
    cache = ProblemCache()
    cache.plan(["a", "a", "a", "b", "b"])
    built = []

    def build(tag):
        return lambda: built.append(tag) or {"x": np.zeros(4)}

    first = cache.get("a", build("a"))
    assert cache.get("a", build("a")) is first and built == ["a"]
    cache.done("a")
    cache.done("a")
    assert cache.key == "a"
    cache.done("a")  # the third and last case of "a"
    assert cache.key is None and cache.value is None
    cache.get("b", build("b"))
    cache.get("b", build("b"), where="cupy")  # another array module: built again
    assert built == ["a", "b", "b"] and cache.builds == 3
    cache.get("c", build("c"))  # not planned: replaces "b" when it arrives
    assert cache.key == "c" and built[-1] == "c"
    cache.done("c")
    assert cache.key == "c"  # unplanned problems stay until the next one or clear()
    cache.clear()
    assert cache.value is None


def test_bounded_cache_drops_least_recently_used_beyond_budget():
    cache = BoundedCache(max_bytes=3 * 800)
    arrays = {k: np.zeros(100) for k in "abcd"}  # 800 bytes each
    for k in "abc":
        cache.get(k, lambda k=k: (arrays[k], {"y": np.zeros(0)}))
    assert len(cache) == 3 and cache.builds == 3
    cache.get("a", lambda: None)  # a hit makes "a" the most recent
    cache.get("d", lambda: arrays["d"])  # over budget: "b" (least recent) goes
    assert len(cache) == 3 and cache.builds == 4
    assert cache.get("a", lambda: "rebuilt") is not None and cache.builds == 4
    assert cache.get("b", lambda: "rebuilt") == "rebuilt" and cache.builds == 5
    assert nbytes({"p": [np.zeros(2), (np.zeros(3, dtype=np.float32),)]}) == 16 + 12
