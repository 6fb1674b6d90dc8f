"""Measured ceilings of the GPU: device-to-device copy bandwidth and fp32/fp64 GEMM throughput (CuPy).

GPU only: without CuPy or a GPU it prints one line and exits 2. Prints a JSON object (and writes it to
``--out`` when given) with the median of repeated CUDA-event timings, beside the vendor figures of
``kgpubench.hardware`` for the same GPU when known, as ratios measured / vendor.

    python benchmarks/gpu_ceilings.py [--copy-gib 1] [--gemm-n 8192] [--repeats 10] [--out ceilings.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys


def _time_ms(cp, fn, repeats: int) -> float:
    fn()  # warm-up (and cuBLAS handle creation)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def _copy_ms(cp, nbytes: int, repeats: int) -> float:
    """Device-to-device copy of ``nbytes`` (read + write), median ms."""
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    return _time_ms(cp, lambda: dst.__setitem__(slice(None), src), repeats)


def _gemm_ms(cp, n: int, dtype: str, repeats: int) -> float:
    """n x n x n matrix product through cuBLAS, median ms."""
    a = cp.random.default_rng(0).random((n, n), dtype=dtype)
    b = cp.random.default_rng(1).random((n, n), dtype=dtype)
    return _time_ms(cp, lambda: cp.matmul(a, b), repeats)


def measure(copy_gib: float, gemm_n: int, repeats: int) -> dict:
    import cupy as cp

    nbytes = int(copy_gib * 2**30)
    copy_ms = _copy_ms(cp, nbytes, repeats)
    out = {"copy_bytes": nbytes, "copy_ms": copy_ms, "copy_gbs": 2 * nbytes / (copy_ms * 1e-3) / 1e9}
    for dtype in ("float32", "float64"):
        ms = _gemm_ms(cp, gemm_n, dtype, repeats)
        out[f"gemm_{dtype}_ms"] = ms
        out[f"gemm_{dtype}_gflops"] = 2 * gemm_n**3 / (ms * 1e-3) / 1e9
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    out.update({"gpu_name": name, "gemm_n": gemm_n, "repeats": repeats, "cupy_version": cp.__version__})
    try:
        from kgpubench.hardware import find_gpu

        spec = find_gpu(name)
    except Exception:  # noqa: BLE001 - the vendor comparison is optional
        spec = None
    if spec is not None:
        cols = spec.columns()
        out["vendor_bandwidth_gbs"] = cols["gpu_memory_bandwidth_gbs"]
        out["vendor_fp32_gflops"] = cols["gpu_peak_fp32_gflops"]
        out["copy_ratio_to_vendor"] = out["copy_gbs"] / cols["gpu_memory_bandwidth_gbs"]
        out["gemm_fp32_ratio_to_vendor"] = out["gemm_float32_gflops"] / cols["gpu_peak_fp32_gflops"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copy-gib", type=float, default=1.0)
    parser.add_argument("--gemm-n", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no CuPy, no driver or no device: one line, exit 2
        print(f"gpu_ceilings: needs CuPy and an NVIDIA GPU ({type(exc).__name__}); nothing measured.",
              file=sys.stderr)
        raise SystemExit(2) from None
    result = measure(args.copy_gib, args.gemm_n, args.repeats)
    text = json.dumps(result, indent=2, sort_keys=True)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
