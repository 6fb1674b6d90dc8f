"""Hatch build hook: record the project's git commit in the wheel as ``kgpubench/_commit.txt``.

An installed wheel has no ``.git``; :func:`kgpubench.buildinfo.project_commit` reads this file there. Builds
from a tree without git (an sdist) record nothing.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CommitHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if version == "editable":  # an editable install reads the checkout's git directly
            return
        try:
            head = subprocess.run(["git", "-C", self.root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                  timeout=10, check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", self.root, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=30, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return
        tmp = Path(tempfile.mkdtemp()) / "_commit.txt"
        tmp.write_text(head + ("+dirty" if dirty else "") + "\n")
        build_data["force_include"][str(tmp)] = "kgpubench/_commit.txt"
