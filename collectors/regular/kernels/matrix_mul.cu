// kgpubench regular suite: C = A B for n x n row-major matrices with shared-memory tiles
// (seed 000: matrix multiply with shared-memory tiles, compute-bound).
// A block of blockDim.x x blockDim.y threads computes that many elements of C; the k dimension is walked in
// tiles of `tk`: A tile blockDim.y x tk and B tile tk x blockDim.x in dynamic shared memory
// ((blockDim.y + blockDim.x) * tk floats), loaded cooperatively by all threads of the block.
extern "C" __global__ void matrix_mul(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int n, int tk)
{
    extern __shared__ float sh[];
    const int bw = blockDim.x, bh = blockDim.y, nt = bw * bh;
    float* as = sh;
    float* bs = sh + bh * tk;
    const int tid = threadIdx.y * bw + threadIdx.x;
    const int row = blockIdx.y * bh + threadIdx.y;
    const int col = blockIdx.x * bw + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 1
    for (int k0 = 0; k0 < n; k0 += tk) {  // loop:tiles
#pragma unroll 1
        for (int e = tid; e < bh * tk; e += nt) {  // loop:load_a
            const int r = blockIdx.y * bh + e / tk, c = k0 + e % tk;
            as[e] = (r < n && c < n) ? A[r * n + c] : 0.0f;
        }
#pragma unroll 1
        for (int e = tid; e < tk * bw; e += nt) {  // loop:load_b
            const int r = k0 + e / bw, c = blockIdx.x * bw + e % bw;
            bs[e] = (r < n && c < n) ? B[r * n + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < tk; ++k) {  // loop:dot
            acc += as[threadIdx.y * tk + k] * bs[k * bw + threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}
