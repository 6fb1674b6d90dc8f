// Matrix transpose through a padded 32 x 32 shared-memory tile (seed 002 "Mtrans").
// out (cols x rows) = transpose of in (rows x cols), both row-major. Block = (32, BLOCK_ROWS);
// blocks walk the tiles with a grid-stride loop so any number of blocks covers the matrix.
#define TILE 32
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

extern "C" __global__ void mtrans(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int tiles_x = (cols + TILE - 1) / TILE;
    int tiles = tiles_x * ((rows + TILE - 1) / TILE);
#pragma unroll 1
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tx = t % tiles_x;
        int ty = t / tiles_x;
        int col = tx * TILE + threadIdx.x;
#pragma unroll
        for (int j = 0; j < TILE / BLOCK_ROWS; ++j) {
            int r = j * BLOCK_ROWS + threadIdx.y;
            int row = ty * TILE + r;
            if (row < rows && col < cols) {
                tile[r][threadIdx.x] = in[(long long)row * cols + col];
            }
        }
        __syncthreads();
        int out_col = ty * TILE + threadIdx.x;
#pragma unroll
        for (int j = 0; j < TILE / BLOCK_ROWS; ++j) {
            int r = j * BLOCK_ROWS + threadIdx.y;
            int out_row = tx * TILE + r;
            if (out_row < cols && out_col < rows) {
                out[(long long)out_row * rows + out_col] = tile[threadIdx.x][r];
            }
        }
        __syncthreads();
    }
}
