// Batched scalar products (seed 002 "scalarProd"): out[v] = sum_i a[v * len + i] * b[v * len + i]
// for nvec vector pairs of length len. One block per pair at a time, grid-stride over the pairs.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

extern "C" __global__ void scalar_prod(const float *__restrict__ a, const float *__restrict__ b,
                                       float *__restrict__ out, int nvec, int len)
{
    __shared__ float cache[BLOCK_SIZE];
#pragma unroll 1
    for (int v = blockIdx.x; v < nvec; v += gridDim.x) {
        const float *va = a + (long long)v * len;
        const float *vb = b + (long long)v * len;
        float sum = 0.0f;
#pragma unroll 1
        for (int i = threadIdx.x; i < len; i += BLOCK_SIZE) {
            sum += va[i] * vb[i];
        }
        cache[threadIdx.x] = sum;
        __syncthreads();
#pragma unroll
        for (int half = BLOCK_SIZE / 2; half > 0; half >>= 1) {
            if (threadIdx.x < half) {
                cache[threadIdx.x] += cache[threadIdx.x + half];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            out[v] = cache[0];
        }
        __syncthreads();
    }
}
