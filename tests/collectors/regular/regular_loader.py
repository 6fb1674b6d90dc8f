"""Load ``collectors/regular`` as ``kgpubench collect`` does (by file path)."""

from __future__ import annotations

from kgpubench.measure.suites import load_suite


def regular():
    """The suite object; its modules are ``kgpubench_collectors.regular.*``."""
    return load_suite("regular")


def modules():
    import sys

    regular()
    return (sys.modules["kgpubench_collectors.regular.spec"], sys.modules["kgpubench_collectors.regular.reference"],
            sys.modules["kgpubench_collectors.regular.prepare"])
