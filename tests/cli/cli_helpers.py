"""The CLI run in-process, shared by every test that calls ``kgpubench`` without a child process (the tests that
test the process boundary start ``python -m kgpubench`` themselves)."""

from __future__ import annotations

import sys

import pytest

from kgpubench.cli import main


def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args) -> tuple[int, str, str]:
    """Run ``kgpubench ARGS`` through :func:`kgpubench.cli.main` in this process, as ``python -m kgpubench`` runs
    it (``KGPUBENCH_DEBUG`` unset: an error is one line, no traceback): (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["kgpubench", *map(str, args)])
    monkeypatch.delenv("KGPUBENCH_DEBUG", raising=False)
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code, out, err
