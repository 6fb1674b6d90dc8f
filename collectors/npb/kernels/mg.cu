// NPB MG on CUDA (kgpubench's own kernels), one kernel per NPB-GPU kernel role: comm3, interp, norm2u3,
// psinv, resid, rprj3, zero3. A grid of level k is stored with one ghost layer per side as
// u[(i3 * n2 + i2) * n1 + i1] (n = 2^k + 2 per axis). Every kernel maps one thread to one output point
// (or ghost pair, or coarse point) over a 1-D grid; threads per block are compile-time defines.
#ifndef MG_THREADS_PER_BLOCK_ON_COMM3
#define MG_THREADS_PER_BLOCK_ON_COMM3 1024
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_INTERP
#define MG_THREADS_PER_BLOCK_ON_INTERP 32
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_NORM2U3
#define MG_THREADS_PER_BLOCK_ON_NORM2U3 32
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_PSINV
#define MG_THREADS_PER_BLOCK_ON_PSINV 1024
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_RESID
#define MG_THREADS_PER_BLOCK_ON_RESID 512
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_RPRJ3
#define MG_THREADS_PER_BLOCK_ON_RPRJ3 512
#endif
#ifndef MG_THREADS_PER_BLOCK_ON_ZERO3
#define MG_THREADS_PER_BLOCK_ON_ZERO3 128
#endif

#define MG_AT(a, i3, i2, i1) (a)[((long long)(i3) * n2 + (i2)) * n1 + (i1)]

// Sums of the 6 face, 12 edge and 8 corner neighbours of (i3, i2, i1).
__device__ __forceinline__ void mg_neighbours(const double* u, int n1, int n2, int i3, int i2, int i1,
                                              double* face, double* edge, double* corner) {
    double f = 0.0, e = 0.0, c = 0.0;
    for (int d3 = -1; d3 <= 1; d3++) {
        for (int d2 = -1; d2 <= 1; d2++) {
            for (int d1 = -1; d1 <= 1; d1++) {
                const int dist = (d3 != 0) + (d2 != 0) + (d1 != 0);
                const double v = MG_AT(u, i3 + d3, i2 + d2, i1 + d1);
                if (dist == 1) f += v;
                else if (dist == 2) e += v;
                else if (dist == 3) c += v;
            }
        }
    }
    *face = f;
    *edge = e;
    *corner = c;
}

// Interior point t of an n1 x n2 x n3 grid (ghosts excluded) -> (i3, i2, i1) with ghost offset.
__device__ __forceinline__ bool mg_interior(long long t, int n1, int n2, int n3, int* i3, int* i2, int* i1) {
    const long long m1 = n1 - 2, m2 = n2 - 2, m3 = n3 - 2;
    if (t >= m1 * m2 * m3) return false;
    *i1 = (int)(t % m1) + 1;
    *i2 = (int)((t / m1) % m2) + 1;
    *i3 = (int)(t / (m1 * m2)) + 1;
    return true;
}

// comm3: periodic ghost cells of one axis (1, 2 or 3); called once per axis, in that order.
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_COMM3)
comm3(double* u, int n1, int n2, int n3, int axis) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (axis == 1) {  // over interior (i3, i2)
        if (t >= (long long)(n2 - 2) * (n3 - 2)) return;
        const int i2 = (int)(t % (n2 - 2)) + 1, i3 = (int)(t / (n2 - 2)) + 1;
        MG_AT(u, i3, i2, 0) = MG_AT(u, i3, i2, n1 - 2);
        MG_AT(u, i3, i2, n1 - 1) = MG_AT(u, i3, i2, 1);
    } else if (axis == 2) {  // over interior i3, all i1
        if (t >= (long long)n1 * (n3 - 2)) return;
        const int i1 = (int)(t % n1), i3 = (int)(t / n1) + 1;
        MG_AT(u, i3, 0, i1) = MG_AT(u, i3, n2 - 2, i1);
        MG_AT(u, i3, n2 - 1, i1) = MG_AT(u, i3, 1, i1);
    } else {  // over all (i2, i1)
        if (t >= (long long)n1 * n2) return;
        const int i1 = (int)(t % n1), i2 = (int)(t / n1);
        MG_AT(u, 0, i2, i1) = MG_AT(u, n3 - 2, i2, i1);
        MG_AT(u, n3 - 1, i2, i1) = MG_AT(u, 1, i2, i1);
    }
}

// interp: u (fine) += trilinear prolongation of z (coarse, mm per axis); one thread per coarse point
// (i3, i2, i1) in [0, mm - 1)^3 writes the 8 fine points 2i + {0, 1}, ghosts included.
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_INTERP)
interp(const double* z, int mm1, int mm2, int mm3, double* u, int n1, int n2, int n3) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long c1 = mm1 - 1, c2 = mm2 - 1, c3 = mm3 - 1;
    if (t >= c1 * c2 * c3) return;
    const int i1 = (int)(t % c1), i2 = (int)((t / c1) % c2), i3 = (int)(t / (c1 * c2));
    double zc[2][2][2];
    for (int e3 = 0; e3 < 2; e3++)
        for (int e2 = 0; e2 < 2; e2++)
            for (int e1 = 0; e1 < 2; e1++)
                zc[e3][e2][e1] = z[((long long)(i3 + e3) * mm2 + (i2 + e2)) * mm1 + (i1 + e1)];
    for (int o3 = 0; o3 < 2; o3++) {
        for (int o2 = 0; o2 < 2; o2++) {
            for (int o1 = 0; o1 < 2; o1++) {
                double acc = 0.0;
                for (int e3 = 0; e3 <= o3; e3++)
                    for (int e2 = 0; e2 <= o2; e2++)
                        for (int e1 = 0; e1 <= o1; e1++) acc += zc[e3][e2][e1];
                const double w = 1.0 / (double)(1 << (o3 + o2 + o1));
                MG_AT(u, 2 * i3 + o3, 2 * i2 + o2, 2 * i1 + o1) += w * acc;
            }
        }
    }
}

// norm2u3: per-block partial sum of r^2 and max |r| over the interior (partial[2b], partial[2b + 1]).
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_NORM2U3)
norm2u3(const double* r, int n1, int n2, int n3, double* partial) {
    __shared__ double s[MG_THREADS_PER_BLOCK_ON_NORM2U3];
    __shared__ double m[MG_THREADS_PER_BLOCK_ON_NORM2U3];
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int i3, i2, i1;
    double v = 0.0;
    if (mg_interior(t, n1, n2, n3, &i3, &i2, &i1)) v = MG_AT(r, i3, i2, i1);
    const int tid = threadIdx.x;
    s[tid] = v * v;
    m[tid] = fabs(v);
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (tid < w) {
            s[tid] += s[tid + w];
            m[tid] = fmax(m[tid], m[tid + w]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[2 * blockIdx.x] = s[0];
        partial[2 * blockIdx.x + 1] = m[0];
    }
}

// psinv: smoother u += c0 r + c1 (faces) + c2 (edges) + c3 (corners) on the interior.
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_PSINV)
psinv(const double* r, double* u, int n1, int n2, int n3, double c0, double c1, double c2, double c3) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int i3, i2, i1;
    if (!mg_interior(t, n1, n2, n3, &i3, &i2, &i1)) return;
    double face, edge, corner;
    mg_neighbours(r, n1, n2, i3, i2, i1, &face, &edge, &corner);
    MG_AT(u, i3, i2, i1) += c0 * MG_AT(r, i3, i2, i1) + c1 * face + c2 * edge + c3 * corner;
}

// resid: r = v - (a0 u + a1 faces + a2 edges + a3 corners) on the interior (v may alias r).
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_RESID)
resid(const double* u, const double* v, double* r, int n1, int n2, int n3, double a0, double a1, double a2,
      double a3) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int i3, i2, i1;
    if (!mg_interior(t, n1, n2, n3, &i3, &i2, &i1)) return;
    double face, edge, corner;
    mg_neighbours(u, n1, n2, i3, i2, i1, &face, &edge, &corner);
    MG_AT(r, i3, i2, i1) = MG_AT(v, i3, i2, i1) - a0 * MG_AT(u, i3, i2, i1) - a1 * face - a2 * edge - a3 * corner;
}

// rprj3: full-weighting restriction of r (fine, n per axis) onto s (coarse, m per axis); coarse interior
// point j sits on fine point 2j; weights 1/2, 1/4, 1/8, 1/16 by distance class.
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_RPRJ3)
rprj3(const double* r, int n1, int n2, int n3, double* s, int m1, int m2, int m3) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int j3, j2, j1;
    if (!mg_interior(t, m1, m2, m3, &j3, &j2, &j1)) return;
    double face, edge, corner;
    mg_neighbours(r, n1, n2, 2 * j3, 2 * j2, 2 * j1, &face, &edge, &corner);
    s[((long long)j3 * m2 + j2) * m1 + j1] =
        0.5 * MG_AT(r, 2 * j3, 2 * j2, 2 * j1) + 0.25 * face + 0.125 * edge + 0.0625 * corner;
}

// zero3: u = 0 over the whole grid (ghosts included).
extern "C" __global__ void __launch_bounds__(MG_THREADS_PER_BLOCK_ON_ZERO3)
zero3(double* u, long long total) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) u[t] = 0.0;
}
