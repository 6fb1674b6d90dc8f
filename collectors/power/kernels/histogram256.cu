// 256-bin byte histogram (seed 002 "256histogram"). The input is nwords 32-bit words, four bytes each.
// Every block of BLOCK_SIZE threads counts its grid-stride share into a shared-memory histogram with
// shared atomics and writes it to partial[blockIdx.x * 256 + bin]; the host adds the nb partial histograms.
#define BINS 256
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#define BIN_ROUNDS ((BINS + BLOCK_SIZE - 1) / BLOCK_SIZE)

extern "C" __global__ void histogram256(const unsigned int *__restrict__ data, unsigned int *__restrict__ partial,
                                        long long nwords)
{
    __shared__ unsigned int hist[BINS];
#pragma unroll
    for (int j = 0; j < BIN_ROUNDS; ++j) {
        int b = j * BLOCK_SIZE + threadIdx.x;
        if (b < BINS) {
            hist[b] = 0;
        }
    }
    __syncthreads();
    long long stride = (long long)gridDim.x * BLOCK_SIZE;
#pragma unroll 1
    for (long long i = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < nwords; i += stride) {
        unsigned int w = data[i];
        atomicAdd(&hist[w & 0xFFu], 1u);
        atomicAdd(&hist[(w >> 8) & 0xFFu], 1u);
        atomicAdd(&hist[(w >> 16) & 0xFFu], 1u);
        atomicAdd(&hist[w >> 24], 1u);
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < BIN_ROUNDS; ++j) {
        int b = j * BLOCK_SIZE + threadIdx.x;
        if (b < BINS) {
            partial[(long long)blockIdx.x * BINS + b] = hist[b];
        }
    }
}
