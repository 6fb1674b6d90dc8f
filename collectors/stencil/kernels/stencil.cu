// kgpubench stencil suite: the constant-density 3-D acoustic update, one time step per launch.
//
//   nxt = 2 cur - nxt + dt2 * vel^2 * L(cur)        on i, j, k in [R, n - R)
//
// `nxt` holds u^{n-1} on entry and u^{n+1} on exit (two time levels, the older overwritten in place).
// Layout: C order, k (the last index) contiguous. `coef` holds 3 (R + 1) weights already divided by h^2:
// coef[a (R + 1) + r] = c_r / h_a^2 for the axes a = i, j, k.
//
// Compile-time parameters (-D):
//   KG_REAL         float or double
//   KG_SPACE_ORDER  even space order; R = KG_SPACE_ORDER / 2
//   KG_B1, KG_B2, KG_B3   tile extents along i, j, k
//   KG_BLOCK        threads per block (launch bound)
#ifndef KG_REAL
#define KG_REAL float
#endif
#ifndef KG_SPACE_ORDER
#define KG_SPACE_ORDER 2
#endif
#ifndef KG_B1
#define KG_B1 1
#endif
#ifndef KG_B2
#define KG_B2 1
#endif
#ifndef KG_B3
#define KG_B3 1
#endif
#ifndef KG_BLOCK
#define KG_BLOCK 128
#endif

typedef KG_REAL real;
#define KG_R (KG_SPACE_ORDER / 2)

#if KG_SPACE_ORDER < 2 || KG_SPACE_ORDER % 2 != 0
#error "KG_SPACE_ORDER must be a positive even integer"
#endif

// Tile (ti, tj, tk) of a thread or block: tiles are numbered in i, j, k order with k fastest, as the
// collapsed loops over the tile indices of `omp tile sizes(B1, B2, B3)` enumerate them.
struct Tile {
    int i0, i1, j0, j1, k0, k1;
};

__device__ __forceinline__ bool tile_of(long long t, int n1, int n2, int n3, Tile* tile) {
    const long long m1 = n1 - 2 * KG_R, m2 = n2 - 2 * KG_R, m3 = n3 - 2 * KG_R;
    const long long t1 = (m1 + KG_B1 - 1) / KG_B1;
    const long long t2 = (m2 + KG_B2 - 1) / KG_B2;
    const long long t3 = (m3 + KG_B3 - 1) / KG_B3;
    if (t >= t1 * t2 * t3) return false;
    const long long tk = t % t3;
    const long long tj = (t / t3) % t2;
    const long long ti = t / (t3 * t2);
    tile->i0 = KG_R + (int)ti * KG_B1;
    tile->j0 = KG_R + (int)tj * KG_B2;
    tile->k0 = KG_R + (int)tk * KG_B3;
    tile->i1 = min(tile->i0 + KG_B1, n1 - KG_R);
    tile->j1 = min(tile->j0 + KG_B2, n2 - KG_R);
    tile->k1 = min(tile->k0 + KG_B3, n3 - KG_R);
    return true;
}

// Variant "thread-tile": each thread walks one B1 x B2 x B3 tile of points in i, j, k order.
// With B1 = B2 = B3 = 1 this is the untiled baseline (one thread per point).
extern "C" __global__ void __launch_bounds__(KG_BLOCK)
stencil_thread_tile(const real* __restrict__ cur, real* __restrict__ nxt, const real* __restrict__ vel,
                    const real* __restrict__ coef, const real dt2, const int n1, const int n2, const int n3) {
    Tile tile;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (!tile_of(t, n1, n2, n3, &tile)) return;
    const long long s1 = (long long)n2 * n3;
    const long long s2 = n3;
    const real centre = coef[0] + coef[KG_R + 1] + coef[2 * (KG_R + 1)];
    // The tile loops are kept as loops (not unrolled) so that their trip counts are well defined for the
    // static features; the radius loop is unrolled fully.
#pragma unroll 1
    for (int i = tile.i0; i < tile.i1; ++i) {  // loop:tile_i
#pragma unroll 1
        for (int j = tile.j0; j < tile.j1; ++j) {  // loop:tile_j
#pragma unroll 1
            for (int k = tile.k0; k < tile.k1; ++k) {  // loop:tile_k
                const long long p = i * s1 + j * s2 + k;
                real lap = centre * cur[p];
#pragma unroll
                for (int r = 1; r <= KG_R; ++r) {
                    lap += coef[r] * (cur[p + r * s1] + cur[p - r * s1])
                         + coef[KG_R + 1 + r] * (cur[p + r * s2] + cur[p - r * s2])
                         + coef[2 * (KG_R + 1) + r] * (cur[p + r] + cur[p - r]);
                }
                const real v = vel[p];
                nxt[p] = (real)2 * cur[p] - nxt[p] + dt2 * v * v * lap;
            }
        }
    }
}

// Variant "shared-tile": each block computes one B1 x B2 x B3 tile; its threads first load the tile plus
// its R-wide halo (the whole padded box) into dynamic shared memory, then update the tile's points,
// both in a block-strided loop with k fastest. Shared memory: (B1 + 2R)(B2 + 2R)(B3 + 2R) values.
#define KG_P1 (KG_B1 + 2 * KG_R)
#define KG_P2 (KG_B2 + 2 * KG_R)
#define KG_P3 (KG_B3 + 2 * KG_R)

extern "C" __global__ void __launch_bounds__(KG_BLOCK)
stencil_shared_tile(const real* __restrict__ cur, real* __restrict__ nxt, const real* __restrict__ vel,
                    const real* __restrict__ coef, const real dt2, const int n1, const int n2, const int n3) {
    extern __shared__ unsigned char kg_smem_raw[];
    real* box = reinterpret_cast<real*>(kg_smem_raw);
    Tile tile;
    if (!tile_of((long long)blockIdx.x, n1, n2, n3, &tile)) return;
    const long long s1 = (long long)n2 * n3;
    const long long s2 = n3;
    // Padded extents of this (possibly partial) tile.
    const int e1 = tile.i1 - tile.i0 + 2 * KG_R;
    const int e2 = tile.j1 - tile.j0 + 2 * KG_R;
    const int e3 = tile.k1 - tile.k0 + 2 * KG_R;
    const long long base = (tile.i0 - KG_R) * s1 + (tile.j0 - KG_R) * s2 + (tile.k0 - KG_R);
#pragma unroll 1
    for (int q = threadIdx.x; q < e1 * e2 * e3; q += blockDim.x) {  // loop:load
        const int a = q / (e2 * e3), b = (q / e3) % e2, c = q % e3;
        box[(a * KG_P2 + b) * KG_P3 + c] = cur[base + a * s1 + b * s2 + c];
    }
    __syncthreads();
    const real centre = coef[0] + coef[KG_R + 1] + coef[2 * (KG_R + 1)];
    const int m1 = e1 - 2 * KG_R, m2 = e2 - 2 * KG_R, m3 = e3 - 2 * KG_R;
#pragma unroll 1
    for (int q = threadIdx.x; q < m1 * m2 * m3; q += blockDim.x) {  // loop:compute
        const int a = q / (m2 * m3) + KG_R, b = (q / m3) % m2 + KG_R, c = q % m3 + KG_R;
        const int s = (a * KG_P2 + b) * KG_P3 + c;
        real lap = centre * box[s];
#pragma unroll
        for (int r = 1; r <= KG_R; ++r) {
            lap += coef[r] * (box[s + r * KG_P2 * KG_P3] + box[s - r * KG_P2 * KG_P3])
                 + coef[KG_R + 1 + r] * (box[s + r * KG_P3] + box[s - r * KG_P3])
                 + coef[2 * (KG_R + 1) + r] * (box[s + r] + box[s - r]);
        }
        const long long p = base + a * s1 + b * s2 + c;
        const real v = vel[p];
        nxt[p] = (real)2 * box[s] - nxt[p] + dt2 * v * v * lap;
    }
}
