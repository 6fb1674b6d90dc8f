"""The board's site in a real browser: headless Chromium (Debian's ``chromium`` package) driven by Playwright,
JavaScript off, pages served over HTTP as a static host serves them. Every page loads with no console error
and no failed request, shows its tables, and every image is decoded; a full-page screenshot of each is saved
(under ``$KGPUBENCH_SCREENSHOTS`` when set, to look at them)."""

from __future__ import annotations

import os
from pathlib import Path

import browser
import pytest

from kgpubench.board.site.check import parse_page

WHY = browser.missing()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"browser test needs headless Chromium: {WHY}")


@pytest.mark.slow
def test_every_page_loads_in_chromium(rendered_site, tmp_path):
    folder, _ = rendered_site
    shots = Path(os.environ.get("KGPUBENCH_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    pages = sorted(p.name for p in folder.glob("*.html"))
    problems: list[str] = []
    with browser.serve(folder) as url, browser.browser(tmp_path / "profile") as context:
        page = context.new_page()
        current = [""]
        page.on("console", lambda m: problems.append(f"{current[0]}: console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"{current[0]}: page error {e}"))
        page.on("requestfailed", lambda r: problems.append(f"{current[0]}: request failed {r.url}"))
        page.on("response", lambda r: problems.append(f"{current[0]}: HTTP {r.status} {r.url}")
                if r.status >= 400 else None)
        for name in pages:
            current[0] = name
            response = page.goto(url + name, wait_until="load")
            assert response is not None and response.status == 200, name
            expected = parse_page((folder / name).read_text())
            assert page.title() == expected.title, name
            assert page.locator("table").count() == expected.tables, name
            assert page.locator("header nav a").count() >= 5, name
            images = page.locator("img")
            assert images.count() == len(expected.images), name
            for i in range(images.count()):
                img = images.nth(i)
                img.scroll_into_view_if_needed()
                img.evaluate("e => e.decode()")  # waits for a lazy image to load; rejects a broken one
                width = img.evaluate("e => e.naturalWidth")
                assert width > 100, f"{name}: image {expected.images[i][0]} is {width} px wide"
            page.evaluate("window.scrollTo(0, 0)")
            shot = shots / name.replace(".html", ".png")
            page.screenshot(path=str(shot), full_page=True)
            assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 10_000, name
    assert problems == []
    assert len(pages) == 9  # 4 fixed pages and 5 task pages (tests/board/site/conftest.py)


PHONE = 390  # px: a phone's CSS width
# Elements that reach past the right edge of the screen and are not inside a box that scrolls or clips them.
OVERFLOW_JS = """() => {
  const W = document.documentElement.clientWidth, out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.getBoundingClientRect().right <= W + 0.5) continue;
    let p = e.parentElement, boxed = false;
    for (; p; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) { boxed = true; break; }
    }
    if (!boxed) out.push(e.tagName.toLowerCase() + ': ' + (e.textContent || '').trim().slice(0, 50));
  }
  return out.slice(0, 5);
}"""
TABLES_JS = """() => [...document.querySelectorAll('table')].filter(t => {
  const box = t.parentElement; return !(box && getComputedStyle(box).overflowX === 'auto'); }).length"""


@pytest.mark.slow
def test_the_committed_board_fits_a_phone_screen(tmp_path):
    """Every committed page (leaderboard/*.html) at 390 px wide: the page never scrolls sideways (a wide table
    scrolls inside its own box, long words and code wrap) and every table sits in a box that scrolls."""
    folder = Path(__file__).parents[3] / "leaderboard"
    pages = sorted(p.name for p in folder.glob("*.html"))
    if not pages:
        pytest.skip("no committed board")
    wide: list[str] = []
    with browser.serve(folder) as url, browser.browser(tmp_path / "profile") as context:
        page = context.new_page()
        page.set_viewport_size({"width": PHONE, "height": 800})
        for name in pages:
            page.goto(url + name, wait_until="load")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE:
                wide.append(f"{name}: {width} px wide ({'; '.join(page.evaluate(OVERFLOW_JS))})")
            assert page.evaluate(TABLES_JS) == 0, f"{name}: a table outside a scrolling box"
            assert page.locator("table").count() == parse_page((folder / name).read_text()).tables, name
    assert wide == []
    assert len(pages) >= 10
