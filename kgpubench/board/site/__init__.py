"""The board as a static site: an overview, one page per task, the seed studies' protocols and the metric
definitions, with SVG plots and the provenance of every result. Plain HTML and one style sheet, no
JavaScript, relative links only: the board folder can be served as it is (GitHub Pages, any static host).

:func:`site_pages` is pure (the board's entries, :class:`~kgpubench.results.result.BoardEntry`, in; ``{file name:
text}`` and the plots to draw out); :func:`write_site` writes them; :func:`render_all` writes the Markdown board
beside them (``kgpubench leaderboard render`` and ``run`` call it).
"""

from __future__ import annotations

from pathlib import Path

from kgpubench.board.counts import problem_counts
from kgpubench.board.render import BOARD_KEY, board, render_markdown
from kgpubench.board.site import plots
from kgpubench.board.site.data import PlotSpec, extra_plot_specs, plots_for, with_colours
from kgpubench.board.site.html import STYLE, css
from kgpubench.board.site.pages import (
    INDEX,
    METRICS_PAGE,
    SEEDS,
    SUBMITTING,
    metrics_page,
    navigation,
    overview_page,
    seeds_page,
    submitting_page,
    task_page,
    task_page_name,
)
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.resources import bundled_path
from kgpubench.results.ownership import check_writable
from kgpubench.results.ownership import ours as _ours
from kgpubench.results.result import BoardEntry, project_root
from kgpubench.tasks import Task, list_tasks
from kgpubench.tasks.extras import load_board_tables, load_extras

PLOTS = "plots"


def metrics_doc() -> str | None:
    """docs/METRICS.md of the project, when this is a checkout (a wheel carries no docs/)."""
    path = project_root() / "docs" / "METRICS.md"
    return path.read_text() if path.is_file() else None


def submitting_doc() -> str | None:
    """leaderboard/SUBMITTING.md (in a checkout and in the wheel's bundled leaderboard folder)."""
    path = bundled_path("leaderboard") / "SUBMITTING.md"
    return path.read_text() if path.is_file() else None


def site_pages(results: list[BoardEntry], tasks: list[Task] | None = None, *, base: Path | None = None,
               metrics_text: str | None = None, submitting_text: str | None = None, extras: dict | None = None,
               counts: dict | None = None) -> tuple[dict[str, str], list[PlotSpec]]:
    """Every page of the site (file name -> text) and every plot to draw (pure).

    ``base`` is the board folder, to link each result's file; ``metrics_text`` and ``submitting_text`` the
    Markdown of docs/METRICS.md and leaderboard/SUBMITTING.md shown on the metrics and submitting pages;
    ``counts``: task name -> scheme -> its problems on the store (:func:`kgpubench.board.counts.problem_counts`).
    """
    tasks = tasks or list_tasks()
    grouped = board(results, tasks)
    nav = navigation(tasks)
    pages = {STYLE: css(), INDEX: overview_page(results, tasks, nav, (extras or {}).get(BOARD_KEY)),
             SEEDS: seeds_page(results, nav, tasks),
             METRICS_PAGE: metrics_page(metrics_text, nav, tasks), SUBMITTING: submitting_page(submitting_text, nav)}
    specs: list[PlotSpec] = []
    for task in tasks:
        mine = plots_for(task, grouped[task.name])
        specs += mine + extra_plot_specs((extras or {}).get(task.name))
        pages[task_page_name(task.name)] = task_page(task, grouped[task.name], mine, nav, base,
                                                     (extras or {}).get(task.name), (counts or {}).get(task.name))
    return pages, with_colours(specs)


def draw(spec: PlotSpec, board_dir: Path) -> Path:
    """Draw one plot into ``board_dir``."""
    path = Path(board_dir) / spec.name
    if spec.kind == "predicted":
        plots.predicted_vs_measured(spec.data, path, title=spec.title, **spec.options)
    elif spec.kind == "regret":
        plots.regret_cdf(spec.data, path, title=spec.title, **spec.options)
    elif spec.kind == "curves":
        plots.curves(spec.data, path, title=spec.title, **spec.options)
    else:
        plots.per_gpu_bars(spec.data, path, title=spec.title, **spec.options)
    return path


def site_files(board_dir: Path, tasks: list[Task] | None = None) -> list[Path]:
    """Files of the site that rendering may overwrite or remove: the pages and every plot in ``plots/``."""
    board_dir = Path(board_dir)
    tasks = tasks or list_tasks()
    names = [STYLE, INDEX, SEEDS, METRICS_PAGE, SUBMITTING, *(task_page_name(t.name) for t in tasks)]
    drawn = sorted(p for ext in ("*.svg", "*.png") for p in (board_dir / PLOTS).glob(ext))
    return [board_dir / n for n in names] + drawn


def write_site(results: list[BoardEntry], board_dir: Path, tasks: list[Task] | None = None,
               extras: dict | None = None, counts: dict | None = None) -> list[Path]:
    """Write the site into ``board_dir``; plots of an earlier render that this one does not draw are removed
    (only files kgpubench wrote). Returns the files written."""
    board_dir = Path(board_dir)
    pages, specs = site_pages(results, tasks, base=board_dir, metrics_text=metrics_doc(),
                               submitting_text=submitting_doc(), extras=extras, counts=counts)
    written = []
    for name, text in pages.items():
        atomic_write_bytes(board_dir / name, text.encode())
        written.append(board_dir / name)
    for spec in specs:
        written.append(draw(spec, board_dir))
    keep = {board_dir / s.name for s in specs}
    for old in site_files(board_dir, tasks):
        if old.parent == board_dir / PLOTS and old not in keep and _ours(old):
            old.unlink()
    return written


__all__ = ["PlotSpec", "draw", "site_files", "site_pages", "write_site"]


def board_files(board_dir: Path, tasks: list[Task] | None = None) -> list[Path]:
    """The files rendering may overwrite in ``board_dir``: README.md and the static site (pages, style sheet,
    plots; :func:`site_files`)."""
    board_dir = Path(board_dir)
    return [board_dir / "README.md", *site_files(board_dir, tasks)]


def render_all(results: list[BoardEntry], board_dir: Path, tasks: list[Task] | None = None, *,
               force: bool = False, results_dir: Path | None = None, data_dir: Path | None = None) -> list[Path]:
    """Write README.md (Markdown, for reading on the forge) and the static site (:mod:`kgpubench.board.site`:
    index.html, a page per task, seeds.html, metrics.html, style.css, SVG plots) into ``board_dir``; returns
    the files written.

    An existing file there that kgpubench did not write is refused (``BoardWriteError``) unless ``force``.
    Each task's extra tables are read from ``results_dir`` (default ``board_dir/results``); the problems of the
    tasks with results are counted on the store at ``data_dir`` (default: the packaged data) for the table
    captions (:mod:`kgpubench.board.counts`).
    """
    board_dir = Path(board_dir)
    tasks = tasks or list_tasks()
    check_writable(board_files(board_dir, tasks), force)
    root = Path(results_dir) if results_dir is not None else board_dir / "results"
    extras = {t.name: load_extras(t, root) for t in tasks if t.extras}
    extras[BOARD_KEY] = load_board_tables(root)
    with_results = {e.record.task for e in results if e.record.status == "ok"}
    counts = problem_counts([t for t in tasks if t.name in with_results], data_dir)
    atomic_write_bytes(board_dir / "README.md", render_markdown(results, tasks, extras, counts).encode())
    return [board_dir / "README.md", *write_site(results, board_dir, tasks, extras, counts)]
