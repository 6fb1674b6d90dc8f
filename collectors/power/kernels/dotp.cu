// Dot product of two float vectors (seed 002 "Dotp").
// Each block accumulates a grid-stride share of a[i] * b[i] and writes one partial sum;
// the host adds the nb partial sums (one block's result per slot, no atomics).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

extern "C" __global__ void dotp(const float *__restrict__ a, const float *__restrict__ b,
                                float *__restrict__ partial, long long n)
{
    __shared__ float cache[BLOCK_SIZE];
    float sum = 0.0f;
    long long stride = (long long)gridDim.x * BLOCK_SIZE;
#pragma unroll 1
    for (long long i = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += stride) {
        sum += a[i] * b[i];
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
        partial[blockIdx.x] = cache[0];
    }
}
