"""The ahead-of-time compile cache: keys, hits and misses, corruption, failures, the parallel fan-out, and the
real NVRTC path (through ctypes and the features extra's wheel) where it is installed."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
from compile_fakes import (
    BarrierCompiler,
    CountingCompiler,
    DriverCachingCompiler,
    OptionRejectingCompiler,
    call_count,
)

import kgpubench.features as api
from kgpubench.errors import ToolchainError
from kgpubench.measure.backends.base import CompileFailed
from kgpubench.measure.backends.fake import FAKE_DEVICE
from kgpubench.measure.compile_cache import (
    STD_OPTION,
    CompileCache,
    CtypesNvrtc,
    CupyNvrtc,
    FeatureDevice,
    Variant,
    cache_root,
    precompile,
)
from kgpubench.measure.features_link import RESOURCE_COLUMNS, _from_ptx
from kgpubench.measure.suite import Case, KernelSource
from kgpubench.measure.suites import load_suite

KERNEL = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = K; }\n'


def _source(folder: Path, text: str = KERNEL, name: str = "k.cu", **defines) -> KernelSource:
    path = folder / name
    path.write_text(text)
    return KernelSource(path, "k", defines=defines)


def _case(source: KernelSource, nt: int = 32) -> Case:
    return Case(key={"kernel": "k"}, columns={}, source=source, grid=(1, 1, 1), block=(nt, 1, 1))


@pytest.fixture
def counting(tmp_path):
    calls = tmp_path / "calls"
    return CompileCache(tmp_path / "cache", compiler=CountingCompiler(calls)), calls


def test_variant_options_and_key_inputs(tmp_path):
    src = _source(tmp_path, K=2, A=1)
    v = Variant.of(src, "sm_90")
    assert v.options == ("-DA=1", "-DK=2", STD_OPTION)
    assert v.nvrtc_options() == ["-DA=1", "-DK=2", STD_OPTION, "--gpu-architecture=sm_90", "--generate-line-info",
                                 "-Xptxas=-v", "--no-cache"]
    base = v.key("nvrtc 13.0")
    assert len(base) == 64 and base == Variant.of(src, "sm_90").key("nvrtc 13.0")
    # Every input of the compilation changes the key: defines, arch, compiler version, source text, options.
    others = {Variant.of(_source(tmp_path, K=3, A=1), "sm_90").key("nvrtc 13.0"), v.key("nvrtc 12.9"),
              Variant.of(src, "sm_80").key("nvrtc 13.0"),
              Variant.of(_source(tmp_path, KERNEL + "// x\n", "k2.cu", K=2, A=1), "sm_90").key("nvrtc 13.0"),
              Variant.of(KernelSource(src.path, "k", dict(src.defines), ("--use_fast_math",)), "sm_90")
              .key("nvrtc 13.0")}
    assert len(others) == 5 and base not in others


def test_miss_then_hit_compiles_once(counting, tmp_path):
    cache, calls = counting
    v = Variant.of(_source(tmp_path, K=1), "sm_90")
    art, hit = cache.get(v)
    assert not hit and call_count(calls) == 1
    assert art.cubin.read_bytes().startswith(b"\x7fELF") and art.ptx_text().startswith("// fake ptx")
    again, hit = cache.get(v)
    assert hit and call_count(calls) == 1 and again.cubin == art.cubin
    meta = json.loads(art.cubin.with_suffix(".json").read_text())
    assert meta["key"] == cache.key(v) and meta["cubin_bytes"] == len(art.cubin.read_bytes())
    # A fresh cache object on the same folder (the next run) hits too; no temp files are left behind.
    assert CompileCache(cache.root, compiler=cache.compiler).lookup(v) is not None
    assert not [p for p in cache.root.rglob("*") if p.name.startswith(".")]


@pytest.mark.parametrize("damage", ["truncate_cubin", "edit_ptx", "bad_json", "drop_meta", "other_key"])
def test_corrupt_entry_is_recompiled_not_trusted(counting, tmp_path, damage):
    cache, calls = counting
    v = Variant.of(_source(tmp_path, K=1), "sm_90")
    art, _ = cache.get(v)
    good_cubin = art.cubin.read_bytes()
    meta = art.cubin.with_suffix(".json")
    if damage == "truncate_cubin":
        art.cubin.write_bytes(good_cubin[:3])
    elif damage == "edit_ptx":
        art.ptx.write_text("// something else\n")
    elif damage == "bad_json":
        meta.write_text("{not json")
    elif damage == "drop_meta":
        meta.unlink()
    else:
        doc = json.loads(meta.read_text())
        doc["key"] = "0" * 64
        meta.write_text(json.dumps(doc))
    assert cache.lookup(v) is None
    art2, hit = cache.get(v)
    assert not hit and call_count(calls) == 2 and art2.cubin.read_bytes() == good_cubin
    assert cache.lookup(v) is not None


def test_compile_error_raises_and_stores_nothing(counting, tmp_path):
    cache, calls = counting
    v = Variant.of(_source(tmp_path, "#error nope\n" + KERNEL, K=1), "sm_90")
    with pytest.raises(CompileFailed) as err:
        cache.get(v)
    assert err.value.status == "compile_error" and "k.cu -DK=1" in err.value.detail
    assert "error: the source says #error" in err.value.detail
    assert not list(cache.root.rglob("*.json"))
    with pytest.raises(CompileFailed):
        cache.get(v)
    assert call_count(calls) == 2  # failures are compiled again (not cached)


def _options_taken(art) -> list[str]:
    """The NVRTC options an artefact's metadata records (those NVRTC compiled it with)."""
    return json.loads(art.cubin.with_suffix(".json").read_text())["options"]


def test_nvrtc_without_ptxas_report_option_retries_without_it(tmp_path):
    calls = tmp_path / "calls"
    cache = CompileCache(tmp_path / "cache", compiler=OptionRejectingCompiler(calls))
    art, hit = cache.get(Variant.of(_source(tmp_path, K=1), "sm_90"))
    # refused with --no-cache and -Xptxas=-v, refused with -Xptxas=-v alone, compiled with neither
    assert not hit and art.cubin.read_bytes() == b"\x7fELF-fake-nvrtc 0.9" and call_count(calls) == 3
    assert art.resources() == {}
    assert _options_taken(art) == ["-DK=1", STD_OPTION, "--gpu-architecture=sm_90", "--generate-line-info"]


def test_nvrtc_before_12_9_compiles_with_the_report_but_without_no_cache(tmp_path):
    calls = tmp_path / "calls"
    cache = CompileCache(tmp_path / "cache", compiler=OptionRejectingCompiler(calls, "--no-cache", "fake-nvrtc 12.8"))
    art, hit = cache.get(Variant.of(_source(tmp_path, K=1), "sm_90"))
    assert not hit and call_count(calls) == 2 and art.resources()["k"].registers == 12
    assert _options_taken(art)[-2:] == ["--generate-line-info", "-Xptxas=-v"]


def test_nvrtcs_own_cache_cannot_take_the_report_from_a_later_compilation(tmp_path):
    """The H200 failure (2026-11-26, 2026-11-29): the session's background precompile compiled the regular suite
    into one kgpubench cache, then the GPU test compiled the same variants into a fresh one, and NVRTC handed
    back the CUBINs its own (driver) cache held, without a ptxas report. With --no-cache the second
    compilation has the report too."""
    calls, store = tmp_path / "calls", tmp_path / "driver-cache"
    nvrtc = DriverCachingCompiler(calls, store)
    # the stand-in does what NVRTC 12.9+ does with a driver: the second compilation without --no-cache is silent
    assert nvrtc("t", "t.cu", ["-Xptxas=-v"]).log and nvrtc("t", "t.cu", ["-Xptxas=-v"]).log == ""
    cases = [_case(_source(tmp_path, K=k), nt) for k in (1, 2) for nt in (32, 64)]
    first = precompile(CompileCache(tmp_path / "background", compiler=nvrtc), "sm_90", cases, jobs=1)
    second = precompile(CompileCache(tmp_path / "test", compiler=nvrtc), "sm_90", cases, jobs=1)
    assert first.compiled == second.compiled == 2 and call_count(calls) == 2 + 2 + 2  # probe, first, second
    assert [art.resources()["k"].registers for art in second.artefacts.values()] == [12, 12]
    assert all(_options_taken(art)[-1] == "--no-cache" for art in second.artefacts.values())


def test_precompile_dedups_variants_and_reports_failures(counting, tmp_path):
    cache, calls = counting
    a, b = _source(tmp_path, K=1), _source(tmp_path, K=2)
    bad = _source(tmp_path, "#error\n" + KERNEL, "bad.cu", K=1)
    cases = [_case(a, 32), _case(a, 64), _case(b, 32), _case(bad, 32), _case(a, 128), _case(b, 64)]
    extra = KernelSource(a.path, "k", {"K": 7})  # a source without a case (npb's assignments)
    done = precompile(cache, "sm_90", cases, [extra, a], jobs=1)
    assert (done.compiled, done.hits, call_count(calls)) == (3, 0, 4)
    assert len(done.artefacts) == 3 and list(done.failures.values())[0].startswith("NVRTC failed on bad.cu")
    assert done.features == [None] * 6  # no features asked for
    again = precompile(cache, "sm_90", cases, [extra], jobs=1)
    assert (again.compiled, again.hits, call_count(calls)) == (0, 3, 5)  # only the failing one again
    assert set(again.artefacts) == set(done.artefacts)
    # With features asked for, every case gets columns: {} here (the fake PTX has no entry; a warning says so)
    with_features = precompile(cache, "sm_90", cases, jobs=1, features=FeatureDevice("sm_90", 132))
    assert with_features.features == [{}] * 6


def test_precompile_fans_out_over_worker_processes(tmp_path):
    calls = tmp_path / "calls"
    cache = CompileCache(tmp_path / "cache", compiler=BarrierCompiler(calls, parties=2))
    sources = [_source(tmp_path, K=i) for i in range(4)]
    done = precompile(cache, "sm_90", [_case(s) for s in sources], jobs=2)
    # BarrierCompiler returns only once two processes compile at the same time.
    assert len(done.workers) == 2 and done.compiled == 4 and not done.failures
    assert len({p.name.split("-")[0] for p in calls.iterdir()}) == 2
    counting = CompileCache(tmp_path / "cache", compiler=CountingCompiler(tmp_path / "calls2"))
    assert counting.compiler.version == cache.compiler.version
    again = precompile(counting, "sm_90", [_case(s) for s in sources], jobs=2)
    assert again.hits == 4 and again.compiled == 0 and call_count(tmp_path / "calls2") == 0


def test_cache_root_from_environment(monkeypatch, tmp_path):
    for name in ("KGPUBENCH_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KGPUBENCH_COMPILE_CACHE", str(tmp_path / "cc"))
    assert cache_root() == tmp_path / "cc" and CompileCache().root == tmp_path / "cc"
    monkeypatch.delenv("KGPUBENCH_COMPILE_CACHE")
    assert cache_root() == Path.home() / ".cache" / "kgpubench" / "compile"


# -- the real NVRTC (ctypes, features extra) --------------------------------------------------------------------
@pytest.fixture(scope="module")
def nvrtc():
    try:
        return CtypesNvrtc.find()
    except ToolchainError as exc:
        pytest.skip(f"no NVRTC library here: {exc}")


def test_real_nvrtc_gives_cubin_ptx_with_lines_and_resources(nvrtc, tmp_path):
    suite = load_suite("regular")
    case = next(c for c in suite.cases(quick=True) if c.source.kernel == "matrix_mul")
    art, hit = CompileCache(tmp_path, compiler=nvrtc).get(Variant.of(case.source, "sm_90"))
    assert not hit and art.cubin.read_bytes()[:4] == b"\x7fELF"
    ptx = art.ptx_text()
    assert ".target sm_90" in ptx and ".entry matrix_mul" in ptx and ".loc" in ptx
    res = art.resources()["matrix_mul"]
    assert res.registers > 0 and res.barriers == 1  # __syncthreads in the tiled loop


def _front_end(kind: str):
    """The real NVRTC through ``kind``: ``ctypes`` (the features extra's wheel) or ``cupy`` (what a GPU machine's
    compile workers use); the test is skipped, saying why, where it cannot be loaded."""
    try:
        return CtypesNvrtc.find() if kind == "ctypes" else CupyNvrtc.find()
    except Exception as exc:  # noqa: BLE001 - no CuPy, a CuPy without NVRTC, no libnvrtc: nothing to test here
        what = ("no NVRTC library here" if kind == "ctypes"
                else "CuPy's NVRTC (cupy.cuda.nvrtc, cupy-cuda13x on the GPU machines) does not load here")
        pytest.skip(f"{what}: {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("kind", ["ctypes", "cupy"])
def test_real_nvrtc_front_ends_give_each_regular_case_its_registers(kind, tmp_path):
    """Every quick case of the regular suite gets ``nreg`` > 0 from the ptxas report of the real NVRTC's log, the
    variants compiled with ``--no-cache`` where the NVRTC is 12.9 or newer (it has the cache that drops the
    report) and without it before."""
    nvrtc = _front_end(kind)
    release = tuple(int(x) for x in re.search(r"nvrtc (\d+)\.(\d+)", nvrtc.version).groups())
    cases = list(load_suite("regular").cases(quick=True))
    cache = CompileCache(tmp_path, compiler=nvrtc)
    done = precompile(cache, "sm_90", cases, features=FeatureDevice("sm_90", 132), jobs=1)
    assert not done.failures and done.compiled == 6 and done.warnings == []
    for case, cols in zip(cases, done.features):
        art = done.artefacts[cache.key(Variant.of(case.source, "sm_90"))]
        assert cols["nreg"] > 0 and cols["nreg"] == art.resources()[case.source.kernel].registers
        assert "-Xptxas=-v" in _options_taken(art)
        assert ("--no-cache" in _options_taken(art)) == (release >= (12, 9)), (nvrtc.version, _options_taken(art))


def test_real_nvrtc_compile_error_is_a_compile_failure(nvrtc, tmp_path):
    src = _source(tmp_path, 'extern "C" __global__ void k(float *x) { x[0] = undefined_name; }\n')
    with pytest.raises(CompileFailed) as err:
        CompileCache(tmp_path / "c", compiler=nvrtc).get(Variant.of(src, "sm_90"))
    assert "undefined_name" in err.value.detail


@pytest.mark.slow
def test_worker_features_equal_the_ptx_path_of_the_harness(nvrtc, tmp_path):
    """Features computed in the workers from the artefact equal those the harness computed per case from the
    same NVRTC PTX (``features_link._from_ptx``), for every case of the regular and stencil quick sweeps."""
    dev = dataclasses.replace(FAKE_DEVICE, sm_count=132)
    cache = CompileCache(tmp_path, compiler=nvrtc)
    for name in ("regular", "stencil"):
        cases = list(load_suite(name).cases(quick=True))
        done = precompile(cache, "sm_90", cases, features=FeatureDevice("sm_90", 132), jobs=1)
        assert not done.failures
        for case, cols in zip(cases, done.features):
            ptx = done.artefacts[cache.key(Variant.of(case.source, "sm_90"))].ptx_text()
            expected = _from_ptx(api, case, dev, ptx)
            if expected["nreg"] is None:  # no ptxas binary here: compare what does not need the resources
                cols = {k: v for k, v in cols.items() if k not in RESOURCE_COLUMNS}
                expected = {k: v for k, v in expected.items() if k not in RESOURCE_COLUMNS}
            assert cols == expected and cols["l"] > 0
        if name == "regular":  # nreg comes from NVRTC's ptxas report: no ptxas binary needed
            assert all(c["nreg"] and c["occupancy"] for c in done.features)


def test_features_from_the_worker_processes_equal_those_computed_here(nvrtc, tmp_path):
    """The forkserver workers (what the GPU test's backend.precompile uses) compute the same columns, for every
    quick case of the regular suite, as this process does from the same cached artefacts."""
    cases = list(load_suite("regular").cases(quick=True))
    cache = CompileCache(tmp_path, compiler=nvrtc)
    device = FeatureDevice("sm_90", 132)
    workers = precompile(cache, "sm_90", cases, features=device, jobs=2)
    here = precompile(cache, "sm_90", cases, features=device, jobs=1)
    assert os.getpid() not in workers.workers and here.workers == {os.getpid()}
    assert workers.compiled == 6 and here.hits == 6 and here.compiled == 0
    assert workers.features == here.features and workers.warnings == here.warnings == []
    assert all(f["l"] > 0 and f["nreg"] > 0 for f in here.features)
