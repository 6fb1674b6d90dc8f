// Test kernels for kgpubench.features (written for these tests).
#ifndef TILE
#define TILE 16
#endif

__global__ void tiled_matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    #pragma unroll 1
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

extern "C" __global__ void dist64(const double* x, const double* y, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double dx = x[i] - y[i];
        out[i] = sqrt(dx * dx + 1.0);
    }
}

extern "C" __global__ void rowsum(const float* a, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    #pragma unroll 1
    for (int c = 0; c < cols; ++c)
        s += __sinf(a[r * cols + c]);
    out[r] = s;
}
