// Forward 2-D DCT-II (orthonormal) of every 8 x 8 tile of a width x height float image
// (seed 002 "DCT"). Block = (8, 8, TILES_PER_BLOCK): thread (x, y, z) owns coefficient (y, x) of
// tile z of the block's current group; blocks walk the groups with a grid-stride loop.
// Y = C X C^T with C[u][x] = a(u) cos((2x + 1) u pi / 16), a(0) = sqrt(1/8), a(u > 0) = 1/2;
// coefficient (v, u) of a tile is stored where pixel (row v, column u) of that tile was.
#ifndef TILES_PER_BLOCK
#define TILES_PER_BLOCK 4
#endif

__constant__ float dct_c[8][8] = {
    {3.535533906e-01f, 3.535533906e-01f, 3.535533906e-01f, 3.535533906e-01f,
     3.535533906e-01f, 3.535533906e-01f, 3.535533906e-01f, 3.535533906e-01f},
    {4.903926402e-01f, 4.157348062e-01f, 2.777851165e-01f, 9.754516101e-02f,
     -9.754516101e-02f, -2.777851165e-01f, -4.157348062e-01f, -4.903926402e-01f},
    {4.619397663e-01f, 1.913417162e-01f, -1.913417162e-01f, -4.619397663e-01f,
     -4.619397663e-01f, -1.913417162e-01f, 1.913417162e-01f, 4.619397663e-01f},
    {4.157348062e-01f, -9.754516101e-02f, -4.903926402e-01f, -2.777851165e-01f,
     2.777851165e-01f, 4.903926402e-01f, 9.754516101e-02f, -4.157348062e-01f},
    {3.535533906e-01f, -3.535533906e-01f, -3.535533906e-01f, 3.535533906e-01f,
     3.535533906e-01f, -3.535533906e-01f, -3.535533906e-01f, 3.535533906e-01f},
    {2.777851165e-01f, -4.903926402e-01f, 9.754516101e-02f, 4.157348062e-01f,
     -4.157348062e-01f, -9.754516101e-02f, 4.903926402e-01f, -2.777851165e-01f},
    {1.913417162e-01f, -4.619397663e-01f, 4.619397663e-01f, -1.913417162e-01f,
     -1.913417162e-01f, 4.619397663e-01f, -4.619397663e-01f, 1.913417162e-01f},
    {9.754516101e-02f, -2.777851165e-01f, 4.157348062e-01f, -4.903926402e-01f,
     4.903926402e-01f, -4.157348062e-01f, 2.777851165e-01f, -9.754516101e-02f},
};

extern "C" __global__ void dct8x8(const float *__restrict__ in, float *__restrict__ out, int width, int height)
{
    __shared__ float pix[TILES_PER_BLOCK][8][9];
    __shared__ float rows[TILES_PER_BLOCK][8][9];
    int x = threadIdx.x;
    int y = threadIdx.y;
    int z = threadIdx.z;
    int tiles_x = width / 8;
    int tiles = tiles_x * (height / 8);
    int groups = (tiles + TILES_PER_BLOCK - 1) / TILES_PER_BLOCK;
#pragma unroll 1
    for (int g = blockIdx.x; g < groups; g += gridDim.x) {
        int t = g * TILES_PER_BLOCK + z;
        bool valid = t < tiles;
        long long at = 0;
        if (valid) {
            at = (long long)((t / tiles_x) * 8 + y) * width + (t % tiles_x) * 8 + x;
            pix[z][y][x] = in[at];
        }
        __syncthreads();
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            acc += pix[z][y][k] * dct_c[x][k];
        }
        rows[z][y][x] = acc;
        __syncthreads();
        acc = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            acc += dct_c[y][k] * rows[z][k][x];
        }
        if (valid) {
            out[at] = acc;
        }
        __syncthreads();
    }
}
