// NPB CG on CUDA (kgpubench's own kernels), one kernel per NPB-GPU kernel role (one .. eleven).
// The matrix is CSR (0-based, sorted columns). Dot products write one partial sum per block; the host adds
// them (as NPB-GPU does) and passes alpha, beta and the norm back as arguments. Threads per block of each
// kernel: a compile-time define named like NPB-GPU's gpu.config key.
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_ONE
#define CG_THREADS_PER_BLOCK_ON_KERNEL_ONE 1024
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_TWO
#define CG_THREADS_PER_BLOCK_ON_KERNEL_TWO 256
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_THREE
#define CG_THREADS_PER_BLOCK_ON_KERNEL_THREE 64
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_FOUR
#define CG_THREADS_PER_BLOCK_ON_KERNEL_FOUR 256
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_FIVE
#define CG_THREADS_PER_BLOCK_ON_KERNEL_FIVE 64
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_SIX
#define CG_THREADS_PER_BLOCK_ON_KERNEL_SIX 256
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_SEVEN
#define CG_THREADS_PER_BLOCK_ON_KERNEL_SEVEN 512
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_EIGHT
#define CG_THREADS_PER_BLOCK_ON_KERNEL_EIGHT 64
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_NINE
#define CG_THREADS_PER_BLOCK_ON_KERNEL_NINE 512
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_TEN
#define CG_THREADS_PER_BLOCK_ON_KERNEL_TEN 256
#endif
#ifndef CG_THREADS_PER_BLOCK_ON_KERNEL_ELEVEN
#define CG_THREADS_PER_BLOCK_ON_KERNEL_ELEVEN 512
#endif

// Tree sum over a power-of-two block; every thread gets the total.
__device__ double cg_block_sum(double v, double* s) {
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

// q = A v for rows row of a CSR matrix (one thread per row).
__device__ __forceinline__ double cg_row_dot(int row, const int* rowptr, const int* colidx, const double* val,
                                             const double* v) {
    double sum = 0.0;
    for (int k = rowptr[row]; k < rowptr[row + 1]; k++) sum += val[k] * v[colidx[k]];
    return sum;
}

// one: q = z = 0, r = p = x
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_ONE)
kernel_one(int n, const double* x, double* q, double* z, double* r, double* p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[i] = 0.0;
        z[i] = 0.0;
        const double xi = x[i];
        r[i] = xi;
        p[i] = xi;
    }
}

// two: partial sums of r.r (rho before the CG steps)
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_TWO)
kernel_two(int n, const double* r, double* partial) {
    __shared__ double s[CG_THREADS_PER_BLOCK_ON_KERNEL_TWO];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double v = i < n ? r[i] * r[i] : 0.0;
    const double total = cg_block_sum(v, s);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// three: q = A p
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_THREE)
kernel_three(int n, const int* rowptr, const int* colidx, const double* val, const double* p, double* q) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = cg_row_dot(i, rowptr, colidx, val, p);
}

// four: partial sums of p.q
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_FOUR)
kernel_four(int n, const double* p, const double* q, double* partial) {
    __shared__ double s[CG_THREADS_PER_BLOCK_ON_KERNEL_FOUR];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double v = i < n ? p[i] * q[i] : 0.0;
    const double total = cg_block_sum(v, s);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// five: z += alpha p, r -= alpha q
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_FIVE)
kernel_five(int n, double alpha, const double* p, const double* q, double* z, double* r) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] += alpha * p[i];
        r[i] -= alpha * q[i];
    }
}

// six: partial sums of r.r (rho inside the CG steps)
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_SIX)
kernel_six(int n, const double* r, double* partial) {
    __shared__ double s[CG_THREADS_PER_BLOCK_ON_KERNEL_SIX];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double v = i < n ? r[i] * r[i] : 0.0;
    const double total = cg_block_sum(v, s);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// seven: p = r + beta p
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_SEVEN)
kernel_seven(int n, double beta, const double* r, double* p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = r[i] + beta * p[i];
}

// eight: r = A z
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_EIGHT)
kernel_eight(int n, const int* rowptr, const int* colidx, const double* val, const double* z, double* r) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) r[i] = cg_row_dot(i, rowptr, colidx, val, z);
}

// nine: partial sums of (x - r)^2
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_NINE)
kernel_nine(int n, const double* x, const double* r, double* partial) {
    __shared__ double s[CG_THREADS_PER_BLOCK_ON_KERNEL_NINE];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = 0.0;
    if (i < n) {
        const double d = x[i] - r[i];
        v = d * d;
    }
    const double total = cg_block_sum(v, s);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// ten: partial sums of x.z and z.z (interleaved: partial[2b], partial[2b + 1])
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_TEN)
kernel_ten(int n, const double* x, const double* z, double* partial) {
    __shared__ double s[CG_THREADS_PER_BLOCK_ON_KERNEL_TEN];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double zi = i < n ? z[i] : 0.0;
    const double xz = cg_block_sum(i < n ? x[i] * zi : 0.0, s);
    const double zz = cg_block_sum(zi * zi, s);
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = xz;
        partial[2 * blockIdx.x + 1] = zz;
    }
}

// eleven: x = norm z
extern "C" __global__ void __launch_bounds__(CG_THREADS_PER_BLOCK_ON_KERNEL_ELEVEN)
kernel_eleven(int n, double norm, const double* z, double* x) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = norm * z[i];
}
