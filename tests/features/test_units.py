"""Instruction classes, expressions, occupancy, source features, ptxas reports, toolchain discovery."""

from __future__ import annotations

import pytest

from kgpubench.errors import ToolchainError
from kgpubench.features import ExpressionError, evaluate, isa, occupancy, parse_ptx, sm_saturation
from kgpubench.features.power import PowerFactorError, compute_density
from kgpubench.features.source import source_features
from kgpubench.features.toolchain import find_toolchain, parse_ptxas_report


def one(text: str):
    module = parse_ptx(f".version 8.0\n.target sm_90\n.visible .entry k()\n{{\n{text}\n}}\n")
    return module.entry("k").instructions[0]


@pytest.mark.parametrize("text, seed, mix", [
    ("ld.global.f64 %fd1, [%rd1];", "lmr", "ld_global"),          # fp64 load is memory
    ("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", "ldpu", "fp64"),
    ("sqrt.rn.f64 %fd1, %fd2;", "ldpu", "fp64"),                  # fp64 sqrt: DPU, not SFU
    ("rcp.rn.f64 %fd1, %fd2;", "ldpu", "fp64"),
    ("cvt.rn.f32.f64 %f1, %fd1;", "ldpu", "fp64"),
    ("mov.f64 %fd1, %fd2;", "lc", "move"),
    ("sqrt.approx.f32 %f1, %f2;", "lsfu", "sfu"),
    ("ex2.approx.ftz.f32 %f1, %f2;", "lsfu", "sfu"),
    ("div.rn.f32 %f1, %f2, %f3;", "lsfu", "sfu"),
    ("div.s32 %r1, %r2, %r3;", "lc", "int"),
    ("ld.param.f64 %fd1, [k_param_0];", "lc", "ld_param"),
    ("ld.const.u32 %r1, [c];", "lc", "ld_const"),
    ("ld.u32 %r1, [%rd1];", "lmr", "ld_global"),                  # generic counts as global
    ("ld.local.u32 %r1, [%rd1];", "lmr", "ld_local"),
    ("st.local.u32 [%rd1], %r1;", "lmw", "st_local"),
    ("ld.shared.v2.f32 {%f1, %f2}, [%r1];", "lshr", "ld_shared"),
    ("atom.global.add.f32 %f1, [%rd1], %f2;", "lmw", "atomic"),
    ("red.shared.add.u32 [%r1], %r2;", "lshw", "atomic"),
    ("bar.sync 0;", "ls", "sync"),
    ("membar.gl;", "ls", "sync"),
    ("cp.async.ca.shared.global [%r1], [%rd1], 16;", "lmr", "ld_global"),
    ("cp.async.wait_all;", "ls", "sync"),
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {%f5, %f6}];", "lmr", "texture"),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", "lshr", "ld_shared"),
    (("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
      "{%f5,%f6,%f7,%f8};"), "lc", "tensor"),
    ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1,%fd2}, {%fd3}, {%fd4}, {%fd5,%fd6};", "ldpu", "tensor"),
    ("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", "lc", "warp"),
    ("add.rn.f16x2 %r1, %r2, %r3;", "lc", "fp16"),
    ("fma.rn.f32 %f1, %f2, %f3, %f4;", "lc", "fp32"),
    ("@%p1 bra $L1;", "lc", "branch"),
])
def test_instruction_classes(text, seed, mix):
    if "bra" in text:
        text = text + "\n$L1:\n ret;"
    ins = one(text)
    assert isa.seed_class(ins) == seed
    assert isa.mix_class(ins) == mix


def test_registers_read_and_written():
    ins = one("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;")
    assert ins.writes == ("%r1", "%p1") and ins.reads == ("%r2",)
    ins = one("st.global.v2.f32 [%rd1+8], {%f1, %f2};")
    assert ins.writes == () and ins.reads == ("%rd1", "%f1", "%f2")
    ins = one("@!%p3 ld.global.v4.f32 {%f1, _, %f3, %f4}, [%rd2];")
    assert ins.guard == "!%p3" and ins.writes == ("%f1", "%f3", "%f4") and ins.reads == ("%p3", "%rd2")


def test_bytes_and_flops():
    assert isa.global_bytes(one("ld.global.nc.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];")) == (16, 0)
    assert isa.global_bytes(one("st.global.f64 [%rd1], %fd1;")) == (0, 8)
    assert isa.global_bytes(one("ld.shared.f32 %f1, [%r1];")) == (0, 0)
    assert isa.global_bytes(one("cp.async.cg.shared.global [%r1], [%rd1], 16;")) == (16, 0)
    assert isa.flops(one("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;")) == (2.0, 2.0)
    assert isa.flops(one("fma.rn.f16x2 %r1, %r2, %r3, %r4;")) == (4.0, 0.0)
    # m16n8k16: 2*16*8*16 = 4096 flops per warp, 128 per thread.
    assert isa.flops(one("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, "
                         "{%r5,%r6}, {%f5,%f6,%f7,%f8};")) == (128.0, 0.0)
    assert isa.flops(one("add.s32 %r1, %r2, %r3;")) == (0.0, 0.0)


def test_expressions():
    assert evaluate("n / 16", {"n": 64}) == 4
    assert evaluate("ceil(log2(n)) + max(nb, 3) // 2", {"n": 1000, "nb": 7}) == 10 + 3
    assert evaluate(12) == 12.0
    with pytest.raises(ExpressionError, match="unknown name 'm'.*known names: n"):
        evaluate("m * 2", {"n": 1})
    for bad in ("__import__('os').system('true')", "n.real", "[n]", "open('x')", "lambda: 1"):
        with pytest.raises(ExpressionError):
            evaluate(bad, {"n": 1})
    with pytest.raises(ExpressionError, match="failed"):
        evaluate("n / 0", {"n": 1})


def test_occupancy_sm80_by_hand():
    # 256 threads = 8 warps; 32 regs -> 1024 regs/warp, 16384/1024 = 16 warps per sub-partition, 64 per SM
    # -> 8 blocks; warps 64/8 = 8 blocks; smem (2048 + 1024 reserved) -> 167936 // 3072 = 54 blocks.
    occ = occupancy("sm_80", threads_per_block=256, registers_per_thread=32, shared_bytes_per_block=2048)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limit_registers, occ.limit_shared) == (8, 1.0, 8, 54)
    # 64 regs -> 2048/warp, 8 warps per sub-partition, 32 per SM, 4-warp blocks -> 8 blocks = 32 warps.
    occ = occupancy("8.0", threads_per_block=128, registers_per_thread=64)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limiter) == (8, 0.5, "registers")
    # 255 regs x 1024 threads cannot run (8192 regs/warp x 32 warps > 65536).
    assert occupancy("sm_80", threads_per_block=1024, registers_per_thread=255).blocks_per_sm == 0


def test_occupancy_sm90_by_hand():
    # 72 regs -> 2304/warp, 16384 // 2304 = 7 warps per sub-partition -> 28 per SM -> 7 blocks of 4 warps;
    # 48 KiB + 1 KiB reserved = 50176 B -> 233472 // 50176 = 4 blocks: shared memory binds, 16/64 warps.
    occ = occupancy("sm_90", threads_per_block=128, registers_per_thread=72, shared_bytes_per_block=48 * 1024)
    assert (occ.blocks_per_sm, occ.limit_registers, occ.limit_shared, occ.limiter) == (4, 7, 4, "shared")
    assert occ.occupancy == 0.25
    # 96 threads = 3 warps, 40 regs -> 1280/warp, 12 warps per sub-partition, 48 per SM -> 16 blocks.
    occ = occupancy("sm_90", threads_per_block=96, registers_per_thread=40)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy) == (16, 48, 0.75)
    # cc 8.6: 1536 threads per SM -> 48 warps; 512-thread blocks -> 3 blocks.
    assert occupancy("sm_86", threads_per_block=512, registers_per_thread=16).blocks_per_sm == 3


def test_occupancy_kepler_maxwell_pascal_by_hand():
    # cc 3.5: 16 blocks per SM; 64-thread blocks (2 warps), 16 regs -> 512/warp, 32 warps per sub-partition ->
    # 128 per SM -> 64 blocks; warps 64 // 2 = 32 blocks: the 16-block limit binds, 32/64 warps.
    occ = occupancy("3.5", threads_per_block=64, registers_per_thread=16)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limiter) == (16, 0.5, "blocks")
    # 3.0 runs at most 63 registers per thread.
    assert occupancy("3.0", threads_per_block=32, registers_per_thread=64).blocks_per_sm == 0
    # cc 5.2: 96 KiB per SM, 48 KiB per block: 20000 B -> 20224 B in 256-byte units -> 98304 // 20224 = 4 blocks.
    occ = occupancy("5.2", threads_per_block=256, registers_per_thread=32, shared_bytes_per_block=20000)
    assert (occ.blocks_per_sm, occ.limiter) == (4, "shared")
    assert occupancy("5.2", threads_per_block=256, shared_bytes_per_block=50 * 1024,
                     registers_per_thread=32).blocks_per_sm == 0
    # cc 6.0: two sub-partitions of 32768 registers; 40 regs -> 1280/warp -> 25 warps each -> 50 per SM -> 25 blocks
    # of 2 warps; 6.1's four sub-partitions of 16384 hold 12 warps each -> 48 -> 24 blocks.
    assert occupancy("6.0", threads_per_block=64, registers_per_thread=40).limit_registers == 25
    assert occupancy("6.1", threads_per_block=64, registers_per_thread=40).limit_registers == 24


def test_sm_saturation():
    assert sm_saturation(100, 108, 8) == pytest.approx(100 / 108)
    assert sm_saturation(300, 132, 2) == pytest.approx((1 + 36 / 132) / 2)
    assert sm_saturation(5, 108, 0) == 0.0


def test_compute_density():
    mix = {"fp32": 30.0, "int": 10.0, "ld_global": 4.0, "st_global": 1.0, "ld_shared": 10.0, "move": 99.0}
    assert compute_density(mix) == 40 / 15
    assert compute_density(mix, {"shared": 0.5}) == 40 / (5 + 5)
    with pytest.raises(PowerFactorError):
        compute_density(mix, {"global": 2.0})


def test_source_features_by_hand():
    src = """
    #define N 4
    __device__ float table[16];
    // a comment with a[i] = 1;
    __global__ void k(const float* __restrict__ a, float* out, int n) {
        __shared__ float buf[32];
        int i = blockIdx.x * blockDim.x + threadIdx.x;   /* on-chip 1 */
        float s;                                           /* declaration: neither */
        if (i < n) {                                       /* head: on-chip 2 */
            buf[threadIdx.x] = a[i] * table[i % 16];       /* global 1 */
            __syncthreads();                               /* on-chip 3 */
            s = buf[threadIdx.x] > 0.0f ? 1.0f : 2.0f;     /* on-chip 4 */
            for (int j = 0; j < N; ++j) s += 1.0f;         /* on-chip 5, 6, 7, 8 */
            out[i] = s;                                    /* global 2 */
        }
        return;
    }
    """
    f = source_features(src, "k")
    assert (f.onchip_statements, f.global_statements) == (8, 2)
    assert f.alpha == 4.0
    assert f.shared_statements == 2
    assert f.branch_statements == 3  # if, ?:, for
    assert f.source_lines == 10


def test_ptxas_report_parsing():
    report = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
ptxas info    : Function properties for _Z1kPf
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'g' for 'sm_80'
ptxas info    : Function properties for g
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 356 bytes cmem[0]
"""
    res = parse_ptxas_report(report)
    assert res["_Z1kPf"].registers == 40 and res["_Z1kPf"].shared_bytes == 4096
    assert (res["_Z1kPf"].stack_bytes, res["_Z1kPf"].spill_store_bytes, res["_Z1kPf"].spill_load_bytes) == (24, 8, 12)
    assert res["_Z1kPf"].const_bytes == 368 and res["_Z1kPf"].barriers == 1
    assert res["g"].registers == 8 and res["g"].shared_bytes == 0 and res["g"].barriers is None


def test_no_toolchain_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("kgpubench.features.toolchain._candidate_dirs", list)
    monkeypatch.setattr("kgpubench.features.toolchain._nvrtc_candidates", list)
    with pytest.raises(ToolchainError, match=r'pip install "kgpubench\[features\]"'):
        find_toolchain("sm_90")
