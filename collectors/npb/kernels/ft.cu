// NPB FT on CUDA (kgpubench's own kernels), one kernel per NPB-GPU kernel role. Complex values are double2;
// a field u[(k * ny + j) * nx + i] has N = nx ny nz elements. The 1-D FFT along an axis of length n and
// stride st runs in three kernels: _1 gathers the N / n lines into scratch laid out [position][line] (so
// that consecutive threads touch consecutive lines), _2 runs a radix-2 Stockham FFT per line (one thread
// per line, ping-pong between two scratch buffers), _3 scatters back. Line l starts at
// (l % st) + (l / st) * st * n. Threads per block: compile-time defines named like NPB-GPU's keys.
#ifndef FT_THREADS_PER_BLOCK_ON_FFTX_1
#define FT_THREADS_PER_BLOCK_ON_FFTX_1 1024
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTX_2
#define FT_THREADS_PER_BLOCK_ON_FFTX_2 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTX_3
#define FT_THREADS_PER_BLOCK_ON_FFTX_3 256
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTY_1
#define FT_THREADS_PER_BLOCK_ON_FFTY_1 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTY_2
#define FT_THREADS_PER_BLOCK_ON_FFTY_2 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTY_3
#define FT_THREADS_PER_BLOCK_ON_FFTY_3 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTZ_1
#define FT_THREADS_PER_BLOCK_ON_FFTZ_1 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTZ_2
#define FT_THREADS_PER_BLOCK_ON_FFTZ_2 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_FFTZ_3
#define FT_THREADS_PER_BLOCK_ON_FFTZ_3 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_CHECKSUM
#define FT_THREADS_PER_BLOCK_ON_CHECKSUM 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_COMPUTE_INDEXMAP
#define FT_THREADS_PER_BLOCK_ON_COMPUTE_INDEXMAP 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_COMPUTE_INITIAL_CONDITIONS
#define FT_THREADS_PER_BLOCK_ON_COMPUTE_INITIAL_CONDITIONS 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_EVOLVE
#define FT_THREADS_PER_BLOCK_ON_EVOLVE 32
#endif
#ifndef FT_THREADS_PER_BLOCK_ON_INIT_UI
#define FT_THREADS_PER_BLOCK_ON_INIT_UI 32
#endif
#define NPB_MASK46 0x3FFFFFFFFFFFULL
#define NPB_R46 1.4210854715202004e-14

__device__ __forceinline__ long long ft_line_base(long long l, long long st, long long n) {
    return (l % st) + (l / st) * st * n;
}

__device__ __forceinline__ void ft_gather(const double2* src, double2* y, long long total, int n, long long st) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const long long lines = total / n;
    const long long p = t / lines, l = t % lines;
    y[t] = src[ft_line_base(l, st, n) + p * st];
}

__device__ __forceinline__ void ft_scatter(const double2* y, double2* dst, long long total, int n, long long st) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const long long lines = total / n;
    const long long p = t / lines, l = t % lines;
    dst[ft_line_base(l, st, n) + p * st] = y[t];
}

// Stockham radix-2 FFT of line l stored at y[p * lines + l]; w[k] = exp(sign 2 pi i k / n), k < n / 2.
// After log2(n) passes the result is in y0 when log2(n) is even, else in y1.
__device__ __forceinline__ void ft_stockham(double2* y0, double2* y1, const double2* w, int n, long long lines) {
    const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= lines) return;
    double2* x = y0;
    double2* y = y1;
    for (int len = n, s = 1; len > 1; len >>= 1, s <<= 1) {
        const int m = len >> 1;
        for (int p = 0; p < m; p++) {
            const double2 wp = w[p * s];
            for (int q = 0; q < s; q++) {
                const double2 a = x[(long long)(q + s * p) * lines + l];
                const double2 b = x[(long long)(q + s * (p + m)) * lines + l];
                const double dr = a.x - b.x, di = a.y - b.y;
                y[(long long)(q + s * 2 * p) * lines + l] = make_double2(a.x + b.x, a.y + b.y);
                y[(long long)(q + s * (2 * p + 1)) * lines + l] =
                    make_double2(dr * wp.x - di * wp.y, dr * wp.y + di * wp.x);
            }
        }
        double2* tmp = x;
        x = y;
        y = tmp;
    }
}

extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTX_1)
fftx_1(const double2* src, double2* y, long long total, int n, long long st) { ft_gather(src, y, total, n, st); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTX_2)
fftx_2(double2* y0, double2* y1, const double2* w, int n, long long lines) { ft_stockham(y0, y1, w, n, lines); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTX_3)
fftx_3(const double2* y, double2* dst, long long total, int n, long long st) { ft_scatter(y, dst, total, n, st); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTY_1)
ffty_1(const double2* src, double2* y, long long total, int n, long long st) { ft_gather(src, y, total, n, st); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTY_2)
ffty_2(double2* y0, double2* y1, const double2* w, int n, long long lines) { ft_stockham(y0, y1, w, n, lines); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTY_3)
ffty_3(const double2* y, double2* dst, long long total, int n, long long st) { ft_scatter(y, dst, total, n, st); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTZ_1)
fftz_1(const double2* src, double2* y, long long total, int n, long long st) { ft_gather(src, y, total, n, st); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTZ_2)
fftz_2(double2* y0, double2* y1, const double2* w, int n, long long lines) { ft_stockham(y0, y1, w, n, lines); }
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_FFTZ_3)
fftz_3(const double2* y, double2* dst, long long total, int n, long long st) { ft_scatter(y, dst, total, n, st); }

// checksum: sum of u[5j mod nz][3j mod ny][j mod nx], j = 1..1024; per-block partials (re, im).
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_CHECKSUM)
checksum(const double2* u, int nx, int ny, int nz, double* partial) {
    __shared__ double sr[FT_THREADS_PER_BLOCK_ON_CHECKSUM];
    __shared__ double si[FT_THREADS_PER_BLOCK_ON_CHECKSUM];
    const int tid = threadIdx.x;
    const int j = blockIdx.x * blockDim.x + tid + 1;
    double2 v = make_double2(0.0, 0.0);
    if (j <= 1024) v = u[((long long)((5 * j) % nz) * ny + (3 * j) % ny) * nx + j % nx];
    sr[tid] = v.x;
    si[tid] = v.y;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (tid < w) {
            sr[tid] += sr[tid + w];
            si[tid] += si[tid + w];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[2 * blockIdx.x] = sr[0];
        partial[2 * blockIdx.x + 1] = si[0];
    }
}

// compute_indexmap: factor[k][j][i] = exp(ap (i'^2 + j'^2 + k'^2)), i' = (i + nx/2) mod nx - nx/2.
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_COMPUTE_INDEXMAP)
compute_indexmap(double* factor, int nx, int ny, int nz, double ap) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)nx * ny * nz) return;
    const int i = (int)(t % nx), j = (int)((t / nx) % ny), k = (int)(t / ((long long)nx * ny));
    const int ii = (i + nx / 2) % nx - nx / 2, jj = (j + ny / 2) % ny - ny / 2, kk = (k + nz / 2) % nz - nz / 2;
    factor[t] = exp(ap * (double)(ii * ii + jj * jj + kk * kk));
}

// compute_initial_conditions: x line l (nx complex values) from its start state seeds[l]: 2 nx draws.
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_COMPUTE_INITIAL_CONDITIONS)
compute_initial_conditions(double2* u, const unsigned long long* seeds, unsigned long long a, int nx,
                           long long lines) {
    const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= lines) return;
    unsigned long long x = seeds[l];
    double2* row = u + l * nx;
    for (int i = 0; i < nx; i++) {
        x = (x * a) & NPB_MASK46;
        const double re = (double)x * NPB_R46;
        x = (x * a) & NPB_MASK46;
        row[i] = make_double2(re, (double)x * NPB_R46);
    }
}

// evolve: u0 *= factor; u1 = u0.
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_EVOLVE)
evolve(double2* u0, double2* u1, const double* factor, long long total) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const double f = factor[t];
    const double2 v = make_double2(u0[t].x * f, u0[t].y * f);
    u0[t] = v;
    u1[t] = v;
}

// init_ui: zero the spectral field, the work field and the factors.
extern "C" __global__ void __launch_bounds__(FT_THREADS_PER_BLOCK_ON_INIT_UI)
init_ui(double2* u0, double2* u1, double* factor, long long total) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    u0[t] = make_double2(0.0, 0.0);
    u1[t] = make_double2(0.0, 0.0);
    factor[t] = 0.0;
}
