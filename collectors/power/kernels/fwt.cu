// Batched fast Walsh-Hadamard transform (seed 002 "fwtBatch1"): each of nvec vectors of length
// 2^LOG2_LEN is replaced by H x (natural (Hadamard) order, unnormalised). A block of BLOCK_SIZE threads
// loads one vector into shared memory, runs the LOG2_LEN butterfly stages there and stores it;
// blocks walk the vectors with a grid-stride loop.
#ifndef LOG2_LEN
#define LOG2_LEN 11
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#define LEN (1 << LOG2_LEN)
#if LEN < 2 * BLOCK_SIZE
#error "fwt_batch needs 2^LOG2_LEN >= 2 * BLOCK_SIZE"
#endif

extern "C" __global__ void fwt_batch(const float *__restrict__ in, float *__restrict__ out, int nvec)
{
    __shared__ float s[LEN];
#pragma unroll 1
    for (int v = blockIdx.x; v < nvec; v += gridDim.x) {
        const float *src = in + (long long)v * LEN;
        float *dst = out + (long long)v * LEN;
#pragma unroll
        for (int j = 0; j < LEN / BLOCK_SIZE; ++j) {
            s[j * BLOCK_SIZE + threadIdx.x] = src[j * BLOCK_SIZE + threadIdx.x];
        }
        __syncthreads();
#pragma unroll 1
        for (int h = 1; h < LEN; h <<= 1) {
#pragma unroll
            for (int j = 0; j < LEN / 2 / BLOCK_SIZE; ++j) {
                int p = j * BLOCK_SIZE + threadIdx.x;
                int lo = (p / h) * 2 * h + (p % h);
                float x = s[lo];
                float y = s[lo + h];
                s[lo] = x + y;
                s[lo + h] = x - y;
            }
            __syncthreads();
        }
#pragma unroll
        for (int j = 0; j < LEN / BLOCK_SIZE; ++j) {
            dst[j * BLOCK_SIZE + threadIdx.x] = s[j * BLOCK_SIZE + threadIdx.x];
        }
        __syncthreads();
    }
}
