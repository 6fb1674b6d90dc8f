"""The importers' package re-exports its readers lazily, and every exported name still resolves; the capped reads
every layer uses (``foundation.capped``, the store's bundles among them) load neither an importer nor pyarrow."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kgpubench.importers as importers
from kgpubench.importers import api, common, t4


@pytest.mark.unit
def test_every_exported_name_resolves_to_its_defining_module():
    assert sorted(importers.__all__) == sorted(importers._EXPORTS)
    modules = {m.__name__: m for m in (api, common, t4)}
    for name, module in importers._EXPORTS.items():
        assert getattr(importers, name) is getattr(modules[module], name)
    with pytest.raises(AttributeError, match="no attribute 'export_t4'"):
        importers.export_t4  # noqa: B018 - the T4 export is a layer above: not re-exported


@pytest.mark.integration  # a fresh interpreter
def test_the_capped_reads_load_no_importer_and_no_pyarrow():
    code = ("import sys, kgpubench.foundation.capped\n"
            "print(sorted(m for m in sys.modules if m == 'pyarrow' or m.startswith('kgpubench.importers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
