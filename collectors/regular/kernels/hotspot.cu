// kgpubench regular suite: thermal simulation of a chip, `iters` explicit time steps per launch computed in
// shared memory on overlapping tiles (seed 000: Hotspot calculate_temp, compute-bound).
// Each block loads a blockDim.x x blockDim.y tile (with a halo of `iters` cells) and writes its interior of
// (blockDim.x - 2 iters) x (blockDim.y - 2 iters) cells. Edges are insulated: an outside neighbour is the
// cell itself. Dynamic shared memory: 3 * blockDim.x * blockDim.y floats.
extern "C" __global__ void calculate_temp(const float* __restrict__ power, const float* __restrict__ temp_in,
                                          float* __restrict__ temp_out, int rows, int cols, int iters,
                                          float step, float rx1, float ry1, float rz1, float amb)
{
    extern __shared__ float sh[];
    const int bw = blockDim.x, bh = blockDim.y;
    float* t = sh;
    float* p = sh + bw * bh;
    float* tn = sh + 2 * bw * bh;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int gx = blockIdx.x * (bw - 2 * iters) - iters + tx;
    const int gy = blockIdx.y * (bh - 2 * iters) - iters + ty;
    const bool inside = gx >= 0 && gx < cols && gy >= 0 && gy < rows;
    const int s = ty * bw + tx;
    if (inside) {
        t[s] = temp_in[gy * cols + gx];
        p[s] = power[gy * cols + gx];
    }
    __syncthreads();
#pragma unroll 1
    for (int it = 0; it < iters; ++it) {  // loop:steps
        const bool active = inside && tx > it && tx < bw - 1 - it && ty > it && ty < bh - 1 - it;
        if (active) {
            const float tc = t[s];
            const float tN = gy == 0 ? tc : t[s - bw];
            const float tS = gy == rows - 1 ? tc : t[s + bw];
            const float tW = gx == 0 ? tc : t[s - 1];
            const float tE = gx == cols - 1 ? tc : t[s + 1];
            tn[s] = tc + step * (p[s] + (tS + tN - 2.0f * tc) * ry1 + (tE + tW - 2.0f * tc) * rx1
                                 + (amb - tc) * rz1);
        }
        __syncthreads();
        if (active) t[s] = tn[s];
        __syncthreads();
    }
    if (inside && tx >= iters && tx < bw - iters && ty >= iters && ty < bh - iters) {
        temp_out[gy * cols + gx] = t[s];
    }
}
