"""How the command line fails: one red line on stderr and an exit code, or the traceback when ``KGPUBENCH_DEBUG``
asks for it. Below the command modules, so a command can fail the same way without importing the others."""

from __future__ import annotations

import os
import re

from kgpubench.errors import escape_text

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
    """``text`` with its line breaks (and the blanks around them) as one space, and every other control,
    format or bidi character written as its escape (``\\x1b``): nothing printed can drive the terminal."""
    return escape_text(re.sub(r"\s*[\r\n]+\s*", " ", text).strip())


def safe(text: object, *, markup: bool = True, max_len: int | None = None) -> str:
    """Text that came from data or model code, ready to print: control, format and bidi characters escaped
    (:func:`kgpubench.errors.escape_text`) and, for rich (``markup``), its markup escaped too."""
    text = escape_text(text, max_len)
    return escape(text) if markup else text


def escape(text: str) -> str:
    """``text`` with rich's markup escaped, and its control, format and bidi characters written as escapes."""
    from rich.markup import escape as _escape

    return _escape(escape_text(text))
