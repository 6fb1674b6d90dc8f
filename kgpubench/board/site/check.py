"""Structural check of a rendered board site, without a browser: every page parses, has a title, navigation
and its tables (each in a horizontally scrolling box), carries no script, every image is a file holding an SVG
(or PNG) and every relative link reaches a file of the site and, with a ``#fragment``, an element with that id.

Used by the tests on every render and on the committed board; :func:`check_site` returns the problems found.
"""

from __future__ import annotations

import html.parser
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit


@dataclass
class PageInfo:
    """What one HTML page holds: element ids, link targets, image sources, table count, title and more."""

    ids: set[str] = field(default_factory=set)
    duplicate_ids: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (src, alt)
    stylesheets: list[str] = field(default_factory=list)
    tables: int = 0
    scripts: int = 0
    title: str = ""
    has_main: bool = False
    has_nav: bool = False
    handlers: list[str] = field(default_factory=list)  # on* attributes (inline JavaScript)
    ragged: list[str] = field(default_factory=list)  # tables whose rows hold different numbers of cells
    unwrapped: list[str] = field(default_factory=list)  # tables outside a scroll box (<div class="scroll">)


class _Parser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.info = PageInfo()
        self._in_title = False
        self._tables: list[list[int]] = []  # cells per row of each open table
        self._divs: list[bool] = []  # each open <div>: whether it is a scroll box

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        info = self.info
        if "id" in a:
            if a["id"] in info.ids:
                info.duplicate_ids.append(a["id"])
            info.ids.add(a["id"])
        info.handlers += [f"<{tag} {k}>" for k in a if k.startswith("on")]
        if tag == "a" and "href" in a:
            info.links.append(a["href"])
        elif tag == "img":
            info.images.append((a.get("src", ""), a.get("alt", "")))
        elif tag == "link" and a.get("rel") == "stylesheet":
            info.stylesheets.append(a.get("href", ""))
        elif tag == "div":
            self._divs.append("scroll" in a.get("class", "").split())
        elif tag == "table":
            info.tables += 1
            self._tables.append([])
            if not any(self._divs):
                info.unwrapped.append(f"table {info.tables} is not inside a <div class=\"scroll\"> (a wide table "
                                      "would widen the page on a phone)")
        elif tag == "tr" and self._tables:
            self._tables[-1].append(0)
        elif tag in ("td", "th") and self._tables and self._tables[-1]:
            self._tables[-1][-1] += int(a.get("colspan") or 1)
        elif tag == "script":
            info.scripts += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "main":
            info.has_main = True
        elif tag == "nav":
            info.has_nav = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "div" and self._divs:
            self._divs.pop()
        elif tag == "table" and self._tables:
            rows = self._tables.pop()
            if len(set(rows)) > 1:
                self.info.ragged.append(f"table {self.info.tables} has rows of {sorted(set(rows))} cells")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.info.title += data


def parse_page(text: str) -> PageInfo:
    """The ids, links, images, tables and title of one HTML page."""
    parser = _Parser()
    parser.feed(text)
    parser.close()
    return parser.info


def _local(ref: str) -> tuple[str, str] | None:
    """(path, fragment) of a relative link, or None for an absolute URL or a mail link."""
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc:
        return None
    return unquote(parts.path), unquote(parts.fragment)


def _image_ok(path: Path) -> str | None:
    if path.suffix == ".svg":
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            return f"not well-formed SVG ({exc})"
        return None if root.tag.endswith("svg") else f"root element <{root.tag}>, not <svg>"
    if path.suffix == ".png":
        return None if path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" else "not a PNG file"
    return f"unexpected image type {path.suffix!r}"


def check_site(folder: Path, *, min_tables: dict[str, int] | None = None) -> list[str]:
    """Every problem of the site in ``folder`` as one line naming the page (empty when it is sound).

    ``min_tables`` maps a page name to the number of tables it must hold at least (default: the overview
    table on index.html, the schemes and metrics tables on a task page, the metric table on metrics.html).
    """
    folder = Path(folder).resolve()
    pages = sorted(folder.glob("*.html"))
    if not pages:
        return [f"{folder}: no HTML page (run `kgpubench leaderboard render`)"]
    infos = {p.name: parse_page(p.read_text(encoding="utf-8")) for p in pages}
    problems = []
    for name, info in infos.items():
        where = f"{name}:"
        if not info.title.strip():
            problems.append(f"{where} no <title>")
        if not (info.has_main and info.has_nav):
            problems.append(f"{where} no <main> or no <nav>")
        problems += [f"{where} {r}" for r in info.ragged + info.unwrapped]
        if info.duplicate_ids:
            problems.append(f"{where} duplicate ids {', '.join(sorted(set(info.duplicate_ids))[:5])}")
        if info.scripts or info.handlers:
            problems.append(f"{where} holds JavaScript ({info.scripts} <script>, {', '.join(info.handlers[:3])})")
        need = (min_tables or {}).get(name, _tables_needed(name))
        if info.tables < need:
            problems.append(f"{where} {info.tables} table(s), expected at least {need}")
        if not info.stylesheets:
            problems.append(f"{where} no style sheet")
        for src, alt in info.images:
            target = _resolve(folder, name, src)
            if target is None:
                problems.append(f"{where} image {src!r} is not a file of the site")
                continue
            if not target.is_file():
                problems.append(f"{where} image {src} does not exist")
                continue
            bad = _image_ok(target)
            if bad:
                problems.append(f"{where} image {src}: {bad}")
            if not alt.strip():
                problems.append(f"{where} image {src} has no alt text")
        for ref in [*info.links, *info.stylesheets]:
            problems += _check_link(folder, name, ref, infos)
    return problems


def _tables_needed(page: str) -> int:
    if page.startswith("task-"):
        return 2
    return 1 if page in ("index.html", "metrics.html") else 0


def _resolve(folder: Path, page: str, ref: str) -> Path | None:
    local = _local(ref)
    if local is None:
        return None
    path = PurePosixPath(page).parent / local[0] if local[0] else PurePosixPath(page)
    target = (folder / path).resolve()
    return target if target.is_relative_to(folder) else None


def _check_link(folder: Path, page: str, ref: str, infos: dict[str, PageInfo]) -> list[str]:
    local = _local(ref)
    if local is None:
        return []
    path, fragment = local
    target = _resolve(folder, page, ref)
    if target is None:
        return [f"{page}: link {ref!r} leaves the site folder (a static host serves only the folder)"]
    if not target.exists():
        return [f"{page}: link {ref!r} points to a missing file"]
    if target.is_dir():
        return [f"{page}: link {ref!r} is a folder (static hosts list no folders)"]
    rel = target.relative_to(folder).as_posix()
    if fragment and rel in infos and fragment not in infos[rel].ids:
        return [f"{page}: link {ref!r}: no element with id {fragment!r} in {rel}"]
    return []
