"""The site's plots and pages as a user on a phone meets them (issue 41, item 7), without a browser: one model has
one colour on every plot of the site, two models of one plot never share one, the committed plots are drawn in
those colours, legends sit outside the axes (they cover no bar, line or point), and every table of every
committed page scrolls inside its own box. tests/board/site/test_browser.py checks the widths in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.render import BOARD_KEY
from kgpubench.board.site import plots, site_pages
from kgpubench.board.site.check import parse_page
from kgpubench.board.site.data import plot_labels
from kgpubench.board.site.html import markdown
from kgpubench.tasks import list_tasks
from kgpubench.tasks.extras import load_board_tables, load_extras

ROOT = Path(__file__).parents[3]
BOARD = ROOT / "leaderboard"


def test_the_colour_map_is_one_colour_per_label_and_distinct_within_a_plot():
    groups = [("lgbm", "median", "xgb"), ("lgbm", "transfer"), ("median", "transfer", "knn", "lgbm")]
    got = plots.colour_map(groups)
    assert set(got) == {"lgbm", "median", "xgb", "transfer", "knn"}
    for group in groups:
        assert len({got[m] for m in group}) == len(group), group
    assert plots.colour_map(list(reversed(groups))) == got  # the order of the plots does not matter
    assert all(c in plots.PALETTE for c in got.values())
    # a label alone takes the strong colour its name hashes to; labels that never share a plot may share one
    alone = plots.colour_map([("a",), ("b",)])
    assert alone == {"a": plots._preferred("a")[0], "b": plots._preferred("b")[0]}
    assert set(alone.values()) <= set(plots.PALETTE[:plots.STRONG])


def test_a_change_to_one_tasks_models_does_not_recolour_the_others():
    """Issue-41 colours, made stable (2026-11-29): a render after one task's models changed recoloured plots of
    unrelated tasks. A label's colour now depends on its name and its plot-mates only."""
    site = [("lgbm", "median", "xgb"), ("transfer", "knn", "median"), ("oracle", "roofline", "xgb", "knn")]
    before = plots.colour_map(site)
    # a task's plot gains models that share no plot with the others: nobody else changes colour
    after = plots.colour_map([*site, ("new_model", "another_new", "third_new")])
    assert {k: after[k] for k in before} == before
    # a plot loses a model: the labels of other plots keep theirs (none of them follows a changed one in name
    # order on a shared plot here)
    dropped = plots.colour_map([("lgbm", "median"), *site[1:]])
    changed = {"lgbm", "median", "xgb"}
    assert {k: v for k, v in dropped.items() if k not in changed} == \
        {k: v for k, v in before.items() if k not in changed}
    many = [tuple(f"m{i}" for i in range(12))]
    assert len(set(plots.colour_map(many).values())) == 12  # more labels than strong colours: still distinct


def test_a_label_off_the_changed_plot_is_recoloured_only_after_an_earlier_plot_mate():
    """The property behind the stability, over 200 random sites where one plot gains a model: a label outside that
    plot changes colour only when a plot-mate before it in name order changed colour first. (The colouring before
    2026-11-29, most plot-mates first, broke this: a label could move because another's count of mates grew.)"""
    import random

    rng = random.Random(0)
    names = [f"model{i:02d}" for i in range(25)]
    recoloured = 0
    for _ in range(200):
        site = [tuple(rng.sample(names, rng.randint(2, 8))) for _ in range(15)]
        i = rng.randrange(len(site))
        grown = [*site[:i], site[i] + (rng.choice([n for n in names if n not in site[i]]),), *site[i + 1:]]
        before, after = plots.colour_map(site), plots.colour_map(grown)
        moved = {k for k in before if before[k] != after[k]}
        mates = {k: {m for g in grown if k in g for m in g if m != k} for k in before}
        for label in moved - set(grown[i]):
            assert any(m < label for m in mates[label] & moved), (label, site, grown)
        recoloured += len(moved - set(grown[i]))
    assert recoloured > 0  # the cascade exists and is checked, not vacuous


@pytest.fixture(scope="module")
def shipped_specs():
    root = lb.results_dir()
    if not root.is_dir():
        pytest.skip("no committed leaderboard/results in this checkout")
    tasks = list_tasks()
    extras = {t.name: load_extras(t, root) for t in tasks if t.extras}
    extras[BOARD_KEY] = load_board_tables(root)
    return site_pages(lb.load_results(root), tasks, extras=extras)[1]


def test_one_model_has_one_colour_on_every_plot_of_the_shipped_site(shipped_specs):
    seen: dict[str, str] = {}
    multi = 0
    for spec in shipped_specs:
        colours = spec.options["colors"]
        labels = plot_labels(spec)
        assert set(colours) == set(labels), spec.name
        assert len(set(colours.values())) == len(labels), f"{spec.name}: two models share a colour {colours}"
        for label, colour in colours.items():
            assert seen.setdefault(label, colour) == colour, f"{label}: {seen[label]}, {colour} in {spec.name}"
        multi += len(labels) > 1
    assert multi >= 10 and len(seen) >= 10  # many plots with several models, many models


def test_the_committed_plots_are_drawn_in_the_site_s_colours(shipped_specs):
    """Each committed SVG holds the colour of every model it shows (a stale render, or a plot that ignores the
    map, does not)."""
    checked = 0
    for spec in shipped_specs:
        path = BOARD / spec.name
        if not spec.options["colors"] or not path.is_file():
            continue
        svg = path.read_text().lower()
        for label, colour in spec.options["colors"].items():
            assert colour.lower() in svg, f"{spec.name}: {label}'s colour {colour} is not drawn"
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("kind", ["per-gpu", "curves", "regret", "predicted"])
def test_legends_sit_outside_the_axes(shipped_specs, kind):
    """The legend's box on the drawn figure does not overlap the axes' box (so it covers no bar, line or point),
    for the plot of this kind with the most labels on the shipped site."""
    build = {"predicted": plots.predicted_vs_measured_figure, "regret": plots.regret_cdf_figure,
             "curves": plots.curves_figure, "per-gpu": plots.per_gpu_bars_figure}[kind]
    spec = max((s for s in shipped_specs if s.kind == kind), key=lambda s: (len(plot_labels(s)), s.name))
    fig = build(spec.data, title=spec.title, **spec.options)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (ax,) = fig.axes
        legends = fig.legends + ([ax.get_legend()] if ax.get_legend() else [])
        assert legends, spec.name
        box = ax.get_window_extent(renderer)
        for legend in legends:
            assert not legend.get_window_extent(renderer).overlaps(box), spec.name
            assert legend.get_window_extent(renderer).y0 >= 0, f"{spec.name}: the legend is cut off"
    finally:
        plots._pyplot().close(fig)


def test_every_table_of_the_committed_pages_scrolls_in_its_own_box():
    pages = sorted(BOARD.glob("*.html"))
    if not pages:
        pytest.skip("no committed board")
    tables = 0
    for page in pages:
        info = parse_page(page.read_text())
        assert info.unwrapped == [], page.name
        tables += info.tables
    assert tables > 50
    assert parse_page("<main><table><tr><td>1</td></tr></table></main>").unwrapped  # the check sees one
    assert parse_page('<div class="scroll"><table><tr><td>1</td></tr></table></div>').unwrapped == []
    # a Markdown document's tables (docs/METRICS.md on the metrics page) get the same box
    assert parse_page(str(markdown("| a | b |\n|---|---|\n| 1 | 2 |\n"))).unwrapped == []


def test_the_style_sheet_lets_nothing_widen_a_phone_page():
    css = (BOARD / "style.css").read_text()
    assert re.search(r"\.scroll \{ overflow-x: auto;", css)
    assert re.search(r"pre \{ overflow-x: auto;", css)
    assert "grid-template-columns: max-content minmax(0, 1fr)" in css  # a fact's text may shrink and wrap
    assert "minmax(min(330px, 100%), 1fr)" in css  # a card never wider than the screen
