"""Static features of 50 kernel variants with a cold and a warm cache; seconds per variant.

Each variant is one (kernel, defines) pair of the source below, so each cold extraction compiles (nvcc
``-ptx`` plus ptxas ``-v``); the warm pass must run no compiler at all (target: cold bounded by the
compiler, warm < 10 ms per variant). The reference for "bounded by the compiler" is one bare ``nvcc -ptx``
of the same file, timed in the same run.

    python benchmarks/features_bench.py [--variants 50] [--arch sm_90]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

SOURCE = r"""
#ifndef TILE
#define TILE 16
#endif
__global__ void tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    #pragma unroll 1
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc * SCALE;
}
extern "C" __global__ void rowsum(const float* a, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    #pragma unroll 1
    for (int c = 0; c < cols; ++c) s += __sinf(a[r * cols + c]) * SCALE;
    out[r] = s;
}
"""
KERNELS = {"tiled": {"L1": "n / tile"}, "rowsum": {"L1": "n"}}


def variants(count: int) -> list[tuple[str, dict[str, str], dict[str, float]]]:
    out = []
    tiles = (4, 8, 16, 32)
    for i in range(count):
        kernel = ("tiled", "rowsum")[i % 2]
        tile = tiles[(i // 2) % len(tiles)]
        out.append((kernel, {"TILE": str(tile), "SCALE": f"{1 + i}.0f"}, {"n": 1024.0, "tile": float(tile)}))
    return out


def run_pass(path: Path, arch: str, items) -> list[float]:
    from kgpubench.features import extract_features

    times = []
    for kernel, defines, sizes in items:
        start = time.perf_counter_ns()
        extract_features(path, kernel, arch=arch, defines=defines, grid=(64, 64), block=(16, 16), sizes=sizes,
                         trip_counts=KERNELS[kernel])
        times.append((time.perf_counter_ns() - start) / 1e9)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=50)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    from kgpubench.features import find_toolchain
    from kgpubench.features.toolchain import compile_to_ptx

    with tempfile.TemporaryDirectory(prefix="kgpubench-features-bench-") as tmp:
        os.environ["KGPUBENCH_CACHE_DIR"] = str(Path(tmp) / "cache")
        path = Path(tmp) / "variants.cu"
        path.write_text(SOURCE)
        tc = find_toolchain(args.arch)
        bare = float("inf")
        for _ in range(3):  # best of three bare compiles (no cache) through the same toolchain
            start = time.perf_counter_ns()
            compile_to_ptx(SOURCE, filename=path.name, kernel="", arch=args.arch, defines={"SCALE": "1.0f"},
                           options=(), include_dirs=(), toolchain=tc)
            bare = min(bare, (time.perf_counter_ns() - start) / 1e9)
        items = variants(args.variants)
        cold = run_pass(path, args.arch, items)
        warm = run_pass(path, args.arch, items)
    n = len(items)
    print(f"toolchain {tc.kind} {tc.version} ({tc.nvcc or tc.nvrtc}), arch {args.arch}, {n} variants")
    print(f"bare compile to PTX (reference): {bare:8.4f} s")
    print(f"cold cache, seconds per variant: {sum(cold) / n:8.4f} s  (max {max(cold):.4f}; "
          f"{sum(cold) / n / bare:.2f}x one bare compile)")
    print(f"warm cache, seconds per variant: {sum(warm) / n:8.6f} s  (max {max(warm):.6f}; target < 0.010)")
    print(f"cold / warm: {sum(cold) / max(sum(warm), 1e-12):.0f}x")


if __name__ == "__main__":
    main()
