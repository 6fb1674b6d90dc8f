// kgpubench regular suite: one elimination step t of Gaussian elimination on an n x n row-major system
// a x = b (seed 000: Gaussian Fan1 and Fan2, compute-bound).

// Fan1: multipliers m[i] = a[i][t] / a[t][t] for the rows below the pivot (grid-stride over i).
extern "C" __global__ void fan1(const float* __restrict__ a, float* __restrict__ m, int n, int t)
{
    const int stride = blockDim.x * gridDim.x;
    const float pivot = a[t * n + t];
#pragma unroll 1
    for (int i = t + 1 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {  // loop:grid_stride
        m[i] = a[i * n + t] / pivot;
    }
}

// Fan2: a[i][j] -= m[i] * a[t][j] for i > t, j >= t, and b[i] -= m[i] * b[t]; y covers rows t+1..n-1,
// x covers columns t..n-1.
extern "C" __global__ void fan2(float* __restrict__ a, float* __restrict__ b, const float* __restrict__ m,
                                int n, int t)
{
    const int i = t + 1 + blockIdx.y * blockDim.y + threadIdx.y;
    const int j = t + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || j >= n) return;
    const float mi = m[i];
    a[i * n + j] -= mi * a[t * n + j];
    if (j == t) b[i] -= mi * b[t];
}
