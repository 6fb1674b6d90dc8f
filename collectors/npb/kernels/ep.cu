// NPB EP on CUDA (kgpubench's own kernel). One thread draws the pairs of one chunk of the random stream:
// it jumps ahead to its chunk start (square-and-multiply on a^(2 chunk_pairs)), tallies Gaussian pairs and
// the block writes partial sums (sx, sy, q[0..9]) that the host adds. Threads per block: compile-time.
#ifndef EP_THREADS_PER_BLOCK
#define EP_THREADS_PER_BLOCK 32
#endif
#define NPB_MASK46 0x3FFFFFFFFFFFULL
#define NPB_R46 1.4210854715202004e-14
#define EP_NQ 10

// a * b mod 2^46: the unsigned 64-bit product wraps mod 2^64, whose low 46 bits are exact.
__device__ __forceinline__ unsigned long long npb_mul46(unsigned long long a, unsigned long long b) {
    return (a * b) & NPB_MASK46;
}

__device__ double ep_block_sum(double v, double* s) {
    const int tid = threadIdx.x;
    s[tid] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (tid < w) s[tid] += s[tid + w];
        __syncthreads();
    }
    double r = s[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void __launch_bounds__(EP_THREADS_PER_BLOCK)
ep(unsigned long long seed, unsigned long long chunk_multiplier, unsigned long long a, long long nchunks,
   int chunk_pairs, double* partial) {
    __shared__ double s[EP_THREADS_PER_BLOCK];
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double sx = 0.0, sy = 0.0;
    double q[EP_NQ];
    for (int l = 0; l < EP_NQ; l++) q[l] = 0.0;
    if (g < nchunks) {
        unsigned long long x = seed, t = chunk_multiplier;
        for (long long k = g; k > 0; k >>= 1) {  // x = seed * chunk_multiplier^g
            if (k & 1) x = npb_mul46(x, t);
            t = npb_mul46(t, t);
        }
        for (int i = 0; i < chunk_pairs; i++) {
            x = npb_mul46(x, a);
            const double x1 = 2.0 * ((double)x * NPB_R46) - 1.0;
            x = npb_mul46(x, a);
            const double x2 = 2.0 * ((double)x * NPB_R46) - 1.0;
            const double t1 = x1 * x1 + x2 * x2;
            if (t1 <= 1.0) {
                const double t2 = sqrt(-2.0 * log(t1) / t1);
                const double t3 = x1 * t2, t4 = x2 * t2;
                const int l = (int)fmax(fabs(t3), fabs(t4));
                if (l < EP_NQ) q[l] += 1.0;
                sx += t3;
                sy += t4;
            }
        }
    }
    double* out = partial + (long long)blockIdx.x * (EP_NQ + 2);
    double v = ep_block_sum(sx, s);
    if (threadIdx.x == 0) out[0] = v;
    v = ep_block_sum(sy, s);
    if (threadIdx.x == 0) out[1] = v;
    for (int l = 0; l < EP_NQ; l++) {
        v = ep_block_sum(q[l], s);
        if (threadIdx.x == 0) out[2 + l] = v;
    }
}
