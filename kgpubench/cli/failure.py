"""How the command line fails: one red line on stderr and an exit code, or the traceback when ``KGPUBENCH_DEBUG``
asks for it. Below the command modules, so a command can fail the same way without importing the others."""

from __future__ import annotations

import os
import re

DEBUG_ENV = "KGPUBENCH_DEBUG"


def debug_enabled() -> bool:
    """Whether ``KGPUBENCH_DEBUG`` asks for tracebacks (1, true, yes or on; 0, false, no, off or unset do not)."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def fail(message: str, code: int = 1) -> None:
    """Print one red line on stderr (``message`` is rich markup: :func:`escape` text first) and exit with ``code``."""
    from rich.console import Console  # rich only when failing: `import kgpubench.cli` stays light

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}", markup=True)
    raise SystemExit(code)


def one_line(text: str) -> str:
    """``text`` with its line breaks (and the blanks around them) as one space."""
    return re.sub(r"\s*[\r\n]+\s*", " ", text).strip()


def escape(text: str) -> str:
    """``text`` with rich's markup escaped."""
    from rich.markup import escape as _escape

    return _escape(text)
