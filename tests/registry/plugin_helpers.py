"""A plugin package made by hand: a module and a ``*.dist-info`` folder (METADATA, entry_points.txt) in a folder
that goes on the import path; ``importlib.metadata`` finds it there as it finds a pip-installed one."""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_plugin(root: Path, dist: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]) -> Path:
    """Write the distribution ``dist`` 0.1 into ``root`` (made if missing): each module ``name -> source`` as
    ``root/name.py``, and its entry points ``group -> {name: "module:attr"}``; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    text = "".join(f"[{group}]\n" + "".join(f"{n} = {v}\n" for n, v in eps.items()) + "\n"
                   for group, eps in entry_points.items())
    (info / "entry_points.txt").write_text(text)
    return root
