"""Real kernels compiled here (nvcc; NVRTC 12 + ptxas 12 for sm_70): ptxas figures, the l identity, the cache."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgpubench.errors import ToolchainError
from kgpubench.features import SCHEMA_COLUMNS, case_features, extract_features, find_toolchain
from kgpubench.features.toolchain import compile_to_ptx

CU = Path(__file__).parent / "data" / "kernels.cu"
KERNELS = ("tiled_matmul", "dist64", "rowsum")
TRIPS = {"tiled_matmul": {"line:13": "n / 16"}, "dist64": {}, "rowsum": {"L1": "cols"}}
SIZES = {"n": 256, "cols": 100}


def _toolchain_or_skip(arch: str):
    try:
        return find_toolchain(arch)
    except ToolchainError as exc:
        pytest.skip(f"no toolchain for {arch}: {exc}")


def _reference_ptxas(arch: str, tmp: Path) -> dict[str, tuple[int, int]]:
    """Registers and smem per entry straight from `ptxas -v` (parsed here, independently).

    nvcc toolchains: `nvcc -cubin -Xptxas -v` on the source. NVRTC toolchains (sm_70 with CUDA 13 on PATH):
    the toolchain's own ptxas (CUDA 12) run here with `-v` on the PTX that NVRTC makes of the source.
    """
    tc = _toolchain_or_skip(arch)
    if tc.nvcc is None:
        ptx = tmp / f"{arch}.ptx"
        ptx.write_text(compile_to_ptx(CU.read_text(), filename=str(CU), kernel="*", arch=arch, defines={},
                                      options=(), include_dirs=(), toolchain=tc))
        cmd = [tc.ptxas, "-v", f"-arch={arch}", "-o", str(tmp / f"{arch}.cubin"), str(ptx)]
    else:
        cmd = [tc.nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-o", str(tmp / f"{arch}.cubin"), str(CU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    out: dict[str, tuple[int, int]] = {}
    current = None
    for line in (proc.stderr + proc.stdout).splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        current = m.group(1) if m else current
        m = re.search(r"Used (\d+) registers", line)
        if m:
            smem = re.search(r"(\d+) bytes smem", line)
            out[current] = (int(m.group(1)), int(smem.group(1)) if smem else 0)
    return out


@pytest.fixture(scope="module", params=["sm_70", "sm_80", "sm_90"])
def compiled(request, tmp_path_factory):
    arch = request.param
    _toolchain_or_skip(arch)
    tmp = tmp_path_factory.mktemp(arch)
    mp = pytest.MonkeyPatch()
    mp.setenv("KGPUBENCH_CACHE_DIR", str(tmp / "cache"))
    feats = {k: extract_features(CU, k, arch=arch, grid=(16, 16), block=(16, 16), sizes=SIZES, trip_counts=TRIPS[k])
             for k in KERNELS}
    yield arch, feats, _reference_ptxas(arch, tmp)
    mp.undo()


def test_ptxas_figures_match_ptxas_v(compiled):
    arch, feats, ref = compiled
    for name, f in feats.items():
        assert f.arch == arch
        assert (f.nreg, f.shmem_bytes) == ref[f.entry], name
    # Two 16x16 float tiles: 2 * 16 * 16 * 4 bytes = 2048 bytes = 512 words.
    assert feats["tiled_matmul"].shmem_bytes == 2048 and feats["tiled_matmul"].shmem_words == 512
    assert feats["dist64"].shmem_bytes == 0


def test_dynamic_shared_memory_counts_in_shmem_words(compiled):
    arch, _feats, _ = compiled
    k = "tiled_matmul"
    f = extract_features(CU, k, arch=arch, grid=(16, 16), block=(16, 16), sizes=SIZES, trip_counts=TRIPS[k],
                         dynamic_smem_bytes=4096)
    # 2048 static bytes + 4096 dynamic = 6144 bytes = 1536 words; ptxas's static figure is unchanged
    assert (f.shmem_bytes, f.shmem_words) == (2048, 1536)


def test_identity_and_hand_counts(compiled):
    _, feats, _ = compiled
    for f in feats.values():
        assert f.l == f.lc + f.lshr + f.lshw + f.lmr + f.lmw + f.ls + f.ldpu + f.lsfu
        assert f.l == pytest.approx(sum(f.mix.values()))
    mm = feats["tiled_matmul"]  # 256 / 16 = 16 tiles; per tile 2 global loads, 2 shared stores, 2 barriers,
    assert mm.entry.startswith("_Z12tiled_matmul")  # mangled C++ name matched by its plain name
    assert (mm.lmr, mm.lshw, mm.ls, mm.lmw) == (32, 32, 32, 1)
    assert mm.lshr == 16 * 32  # the fully unrolled inner loop: 16 x 2 shared loads per tile
    assert mm.flops == 16 * 16 * 2  # 16 fma per tile
    d = feats["dist64"]  # extern "C": entry keeps its name; sub.f64, fma.rn.f64, sqrt.rn.f64
    assert d.entry == "dist64"
    assert (d.lmr, d.lmw, d.ldpu, d.lsfu) == (2, 1, 3, 0)
    assert d.global_bytes_read == 16 and d.global_bytes_written == 8
    r = feats["rowsum"]  # 100 iterations of one load and one __sinf
    assert (r.lmr, r.lsfu, r.lmw) == (100, 100, 1)


def test_trip_counts_scale_the_loop(compiled):
    arch, feats, _ = compiled
    mm = feats["tiled_matmul"]
    assert [lp["id"] for lp in mm.loops] == ["L1"] and mm.loops[0]["line"] == 13
    inside = mm.loops[0]["instructions"]
    small = extract_features(CU, "tiled_matmul", arch=arch, block=(16, 16), sizes={"n": 32},
                             trip_counts={"L1": "n / 16"})
    assert mm.l - small.l == (16 - 2) * inside


def test_cache_hit_runs_no_compiler(compiled, monkeypatch):
    arch, feats, _ = compiled

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"compiler called on a cache hit: {args[0] if args else kwargs}")

    monkeypatch.setattr("kgpubench.features.toolchain.subprocess.run", no_compiler)
    monkeypatch.setattr("kgpubench.features.toolchain._nvrtc_compile", no_compiler)  # NVRTC (sm_70)
    again = extract_features(CU, "rowsum", arch=arch, grid=(16, 16), block=(16, 16), sizes=SIZES,
                             trip_counts=TRIPS["rowsum"])
    assert again == feats["rowsum"]
    with pytest.raises(AssertionError, match="compiler called"):  # other defines: another key, a compile
        extract_features(CU, "rowsum", arch=arch, defines={"TILE": 8}, sizes=SIZES, trip_counts=TRIPS["rowsum"])


def test_case_features_for_the_harness(compiled):
    arch, _, _ = compiled
    case = SimpleNamespace(source=SimpleNamespace(path=CU, kernel="rowsum", defines={}, options=()),
                           grid=(16, 16, 1), block=(16, 16, 1), shared_mem_bytes=0, sizes=SIZES,
                           trip_counts=TRIPS["rowsum"], columns={"n": 7.0})
    cols = case_features(case, arch=arch, sm_count=1000)
    assert set(SCHEMA_COLUMNS) <= set(cols)
    assert (cols["lsfu"], cols["n"], cols["nb"], cols["nt"], cols["w"]) == (100, 7.0, 256, 256, 8)
    assert cols["sm_saturation"] == pytest.approx(256 / 1000)
    assert isinstance(cols["nreg"], int) and isinstance(cols["shmem_words"], int)
