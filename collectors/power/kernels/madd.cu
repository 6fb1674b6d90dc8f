// Element-wise matrix multiply-add d = a * b + c over an n x n row-major matrix
// (seed 002 "Madd" / "Dmadd": single- and double-precision variants, FP64=1 for double).
#ifndef FP64
#define FP64 0
#endif
#if FP64
typedef double real_t;
#else
typedef float real_t;
#endif

extern "C" __global__ void madd(const real_t *__restrict__ a, const real_t *__restrict__ b,
                                const real_t *__restrict__ c, real_t *__restrict__ d, long long count)
{
    long long stride = (long long)gridDim.x * blockDim.x;
#pragma unroll 1
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        d[i] = a[i] * b[i] + c[i];
    }
}
