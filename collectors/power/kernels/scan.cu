// Exclusive prefix sum of nrows rows of ROW_LEN unsigned ints (seed 002 "scan"), modulo 2^32.
// A block of BLOCK_SIZE threads loads a row into shared memory; each thread scans its contiguous chunk of
// ROW_LEN / BLOCK_SIZE elements serially, a Hillis-Steele scan over the chunk totals gives every chunk its
// offset, and the row is stored. Blocks walk the rows with a grid-stride loop.
#ifndef ROW_LEN
#define ROW_LEN 2048
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#define CHUNK (ROW_LEN / BLOCK_SIZE)
#if CHUNK * BLOCK_SIZE != ROW_LEN
#error "scan_rows needs ROW_LEN to be a multiple of BLOCK_SIZE"
#endif

extern "C" __global__ void scan_rows(const unsigned int *__restrict__ in, unsigned int *__restrict__ out,
                                     int nrows)
{
    __shared__ unsigned int row[ROW_LEN];
    __shared__ unsigned int totals[2][BLOCK_SIZE];
#pragma unroll 1
    for (int r = blockIdx.x; r < nrows; r += gridDim.x) {
        const unsigned int *src = in + (long long)r * ROW_LEN;
        unsigned int *dst = out + (long long)r * ROW_LEN;
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {
            row[j * BLOCK_SIZE + threadIdx.x] = src[j * BLOCK_SIZE + threadIdx.x];
        }
        __syncthreads();
        unsigned int run = 0;
        int base = threadIdx.x * CHUNK;
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) {
            unsigned int x = row[base + k];
            row[base + k] = run;
            run += x;
        }
        int cur = 0;
        totals[cur][threadIdx.x] = run;
        __syncthreads();
#pragma unroll
        for (int off = 1; off < BLOCK_SIZE; off <<= 1) {
            unsigned int x = totals[cur][threadIdx.x];
            if (threadIdx.x >= off) {
                x += totals[cur][threadIdx.x - off];
            }
            totals[1 - cur][threadIdx.x] = x;
            cur = 1 - cur;
            __syncthreads();
        }
        unsigned int offset = totals[cur][threadIdx.x] - run;
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) {
            row[base + k] += offset;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {
            dst[j * BLOCK_SIZE + threadIdx.x] = row[j * BLOCK_SIZE + threadIdx.x];
        }
        __syncthreads();
    }
}
