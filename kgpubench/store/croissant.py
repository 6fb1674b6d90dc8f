"""Croissant metadata (``croissant.json``, MLCommons Croissant 1.0 with the Responsible-AI vocabulary) of a
store, generated from the schema declarations and the manifest: one record set per table with a typed,
described field per column, the parquet parts as the distribution (each with its sha256), the licence, how to
cite and the RAI fields. ``kgpubench merge`` writes it next to README.md; ``kgpubench validate`` reports it
when it no longer describes the manifest.

``mlcroissant.Dataset(jsonld="<store>/croissant.json").records("<config>")`` reads the rows.
"""

from __future__ import annotations

import json

import pyarrow as pa

from kgpubench.schema import TABLES, Column
from kgpubench.store.view import StoreView

CROISSANT = "croissant.json"
PARQUET = "application/x-parquet"
LICENSE = "https://creativecommons.org/licenses/by/4.0/"
CITATION = ("@misc{kgpubench,\n  title  = {kgpubench: an open benchmark for learning GPU kernel performance},\n"
            "  author = {{kgpubench contributors}},\n  note   = {Dataset version %s}\n}")

CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

# Responsible-AI fields: what the data are, how they were made, what they are for and what they are not.
RAI = {
    "rai:dataCollection": (
        "Measured rows: kgpubench's collectors compile each kernel configuration (NVRTC), verify its output "
        "against a NumPy reference, then time it with CUDA events (and, for the power suite, read the NVML energy "
        "counter over windows of at least 1 s) on one NVIDIA GPU, recording clocks, temperature and throttle "
        "reasons around each measurement. Imported rows: public auto-tuning measurements (Kernel Tuner cache "
        "files and the T4 format) converted by `kgpubench import`, with their upstream file, commit and licence."),
    "rai:dataCollectionType": ["Experiments", "Secondary Data Analysis"],
    "rai:dataCollectionMissingData": (
        "Configurations that fail to compile, launch or verify are kept as rows with a `status` other than `ok` "
        "and no timing; optional measurements a GPU cannot provide (an energy counter, locked clocks) are null."),
    "rai:dataCollectionRawData": (
        "Per-sample timings are summarised (median, min, mean, std, count, relative standard error) on the row; "
        "imported rows keep the upstream repeat statistics."),
    "rai:dataPreprocessingProtocol": (
        "Every shard is validated against the declared schema (types, units, ranges, required provenance) before "
        "it is merged; static features of the exact compiled configuration (PTX instruction mix, registers, "
        "occupancy) are computed by kgpubench. No value is imputed or smoothed."),
    "rai:dataLimitations": (
        "Few GPUs: measured rows come from the GPUs contributors ran kgpubench on (see the card's GPU table), "
        "and imported rows from the GPUs the upstream studies used; models trained here may not transfer to other "
        "architectures, drivers or clock settings. Rows of measurement protocol 1 time single launches (small "
        "times are upper bounds). Times depend on driver and toolkit versions, which every row records."),
    "rai:dataBiases": (
        "The kernels are the seed studies' benchmark suites (regular CUDA kernels, NPB, a 3-D stencil and the "
        "auto-tuning hub's kernels), not a sample of production workloads; NVIDIA GPUs dominate the measured rows."),
    "rai:dataUseCases": (
        "Training and comparing models that predict GPU kernel run time or power, or that choose launch, tile or "
        "tuning configurations, on the fixed splits of the kgpubench leaderboard. Not a hardware ranking or a "
        "certified performance figure."),
    "rai:dataSocialImpact": (
        "Better performance models can cut the GPU time and energy spent on auto-tuning; no people are measured."),
    "rai:personalSensitiveInformation": (
        "None. The data describe kernels and GPUs; the GPU UUID is stored only as a hash and host names are never "
        "recorded."),
    "rai:dataReleaseMaintenancePlan": (
        "Versioned releases (semantic version in manifest.json and the card's changelog); measurements are only "
        "added, never changed; a corrected GPU catalogue figure replaces the rows it describes in a new version "
        "whose changelog names the rows and columns; new GPUs arrive as contributed shards merged by the "
        "maintainers."),
}


def data_type(t: pa.DataType) -> str:
    """The schema.org type of a scalar arrow type (``sc:Text``, ``sc:Integer``, ``sc:Float``, ...)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "sc:Text"
    if pa.types.is_integer(t):
        return "sc:Integer"
    if pa.types.is_floating(t):
        return "sc:Float"
    if pa.types.is_boolean(t):
        return "sc:Boolean"
    if pa.types.is_timestamp(t):
        return "sc:DateTime"
    if pa.types.is_date(t):
        return "sc:Date"
    raise TypeError(f"no Croissant type for {t}")


def _description(column: Column) -> str:
    text = column.doc
    if column.unit:
        text += f" Unit: {column.unit}."
    rule = column.rule_text()
    if rule:
        text += f" Rules: {rule}."
    return text


def field(config: str, column: Column, files_id: str) -> dict:
    """A record set field for one column: typed, described, read from the config's parquet parts. A list of
    ``{name, value}`` pairs is a repeated field with two sub-fields; a list of numbers a repeated number."""
    base = {"@type": "cr:Field", "@id": f"{config}/{column.name}", "name": column.name,
            "description": _description(column)}
    source = {"fileSet": {"@id": files_id}, "extract": {"column": column.name}}
    t = column.arrow_type
    if pa.types.is_list(t) and pa.types.is_struct(t.value_type):
        subs = [{"@type": "cr:Field", "@id": f"{config}/{column.name}/{f.name}", "name": f.name,
                 "dataType": data_type(f.type),
                 "source": {"fileSet": {"@id": files_id}, "extract": {"column": column.name},
                            "transform": {"jsonPath": f.name}}} for f in t.value_type]
        return {**base, "repeated": True, "subField": subs, "source": source}
    if pa.types.is_list(t):
        return {**base, "dataType": data_type(t.value_type), "repeated": True, "source": source}
    return {**base, "dataType": data_type(t), "source": source}


def metadata(store: StoreView) -> dict:
    """The Croissant JSON-LD document of ``store`` (pure: schema and manifest in, a dict out)."""
    manifest = store.manifest()
    history = manifest.get("changelog", [])
    distribution, record_sets = [], []
    for config in sorted(TABLES):
        decl = TABLES[config]
        files = store.files(config)
        files_id = f"{config}-parquet"
        for entry in files:
            distribution.append({"@type": "cr:FileObject", "@id": entry["path"], "name": entry["path"],
                                 "description": f"{entry['rows']} rows of the {config} table.",
                                 "contentUrl": entry["path"], "encodingFormat": PARQUET, "sha256": entry["sha256"]})
        distribution.append({"@type": "cr:FileSet", "@id": files_id, "name": files_id,
                             "description": f"The parquet parts of the {config} table ({len(files)} listed in "
                                            "manifest.json with their sha256 above).",
                             "encodingFormat": PARQUET, "includes": f"{config}/part-*.parquet"})
        record_sets.append({
            "@type": "cr:RecordSet", "@id": config, "name": config,
            "description": f"{decl.description} Schema version {decl.version}; {store.rows(config)} rows in "
                           f"dataset version {store.version}.",
            "key": [{"@id": f"{config}/row_id"}, {"@id": f"{config}/run_id"}],
            "field": [field(config, c, files_id) for c in decl.columns]})
    doc = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": "kgpubench",
        "description": ("An open benchmark dataset for learning how GPU kernels perform: run time, power and the "
                        "best launch or tile configuration, measured with provenance on every row, in four tables "
                        "(kernels, npb, stencil, autotune). Measured rows are CC BY 4.0; imported rows keep their "
                        "upstream licence (columns source_license, source_doi, source_commit)."),
        "license": LICENSE,
        "citeAs": CITATION % store.version,
        "version": store.version,
        "creator": {"@type": "sc:Organization", "name": "kgpubench contributors"},
        "keywords": ["GPU", "CUDA", "performance modeling", "auto-tuning", "benchmark"],
        "isLiveDataset": True,
        "distribution": distribution,
        "recordSet": record_sets,
        **RAI,
    }
    if history:
        doc["datePublished"] = history[-1]["date"]
    return doc


def render(store: StoreView) -> str:
    """``croissant.json`` as text (sorted keys, stable bytes for the same manifest)."""
    return json.dumps(metadata(store), indent=1, ensure_ascii=False) + "\n"
