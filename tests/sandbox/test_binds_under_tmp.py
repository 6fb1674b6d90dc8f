"""A checkout or virtual environment under /tmp (where CI may clone) is visible inside the sandbox: the private
/tmp tmpfs once covered every bind below /tmp and the build failed with ENOENT, so no model ran isolated."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CHILD = r"""
import json, sys
import kgpubench.sandbox.session as s, kgpubench.sandbox.linux as L
extra = sys.argv[1]
plan = s.sandbox_plan()
plan["binds"].append(extra)
L.build_root(plan)
print(json.dumps({"read": open(extra + "/marker.txt").read(), "tmp_entries": sorted(__import__("os").listdir("/tmp"))}))
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_a_bind_under_tmp_is_mounted_over_the_private_tmp_not_hidden_by_it():
    folder = Path(tempfile.mkdtemp(prefix="kg-bind-", dir="/tmp"))
    try:
        (folder / "marker.txt").write_text("visible")
        (folder.parent / (folder.name + "-sibling")).mkdir()
        proc = subprocess.run(["unshare", "-rmpf", "--mount-proc", sys.executable, "-c", CHILD, str(folder)],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0 and "unshare failed" in proc.stderr:
            pytest.skip(f"no user namespaces here: {proc.stderr.strip()[:200]}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
        assert seen["read"] == "visible"
        # the private /tmp holds only the paths down to the binds (a checkout under /tmp adds its own): the
        # host's other /tmp entries, such as the sibling folder, stay out
        assert folder.name in seen["tmp_entries"] and folder.name + "-sibling" not in seen["tmp_entries"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(folder.parent / (folder.name + "-sibling"), ignore_errors=True)
