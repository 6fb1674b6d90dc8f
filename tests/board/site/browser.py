"""Headless Chromium (Debian's package) driven by Playwright, for the site's browser test.

The browser runs with a fresh profile folder, no GPU, no background networking; pages are served by a
local HTTP server on 127.0.0.1 (a static host, as GitHub Pages would serve them).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = os.environ.get("KGPUBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (`make test` installs it with the dev extra)"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return (f"{CHROMIUM} not found (`make test` run as root installs Debian's chromium package; otherwise "
                "`apt-get install chromium` as root, or point KGPUBENCH_CHROMIUM at a Chromium binary)")
    return None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no request log on stderr
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on an ephemeral port of 127.0.0.1; yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def browser(profile: Path) -> Iterator[object]:
    """A headless Chromium context with a fresh user-data-dir at ``profile``, JavaScript off (the site needs
    none)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS, java_script_enabled=False,
            viewport={"width": 1280, "height": 900})
        try:
            yield context
        finally:
            context.close()
