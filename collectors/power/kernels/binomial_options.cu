// European call prices on a Cox-Ross-Rubinstein binomial tree with NUM_STEPS steps
// (seed 002 "binomialOptions"). One block prices one option at a time (grid-stride over options):
// the NUM_STEPS + 1 leaf payoffs go to shared memory and are rolled back one step per iteration,
// double-buffered so a step reads one buffer and writes the other.
#ifndef NUM_STEPS
#define NUM_STEPS 1024
#endif

extern "C" __global__ void binomial_options(const float *__restrict__ s, const float *__restrict__ k,
                                            const float *__restrict__ t, float *__restrict__ price,
                                            float r, float v, int nopt)
{
    __shared__ float buf[2][NUM_STEPS + 1];
#pragma unroll 1
    for (int o = blockIdx.x; o < nopt; o += gridDim.x) {
        float spot = s[o];
        float strike = k[o];
        float dt = t[o] / NUM_STEPS;
        float vdt = v * sqrtf(dt);
        float u = expf(vdt);
        float d = 1.0f / u;
        float growth = expf(r * dt);
        float pu = (growth - d) / (u - d);
        float pu_disc = pu / growth;
        float pd_disc = (1.0f - pu) / growth;
#pragma unroll 1
        for (int i = threadIdx.x; i <= NUM_STEPS; i += blockDim.x) {
            float leaf = spot * expf(vdt * (float)(2 * i - NUM_STEPS)) - strike;
            buf[0][i] = leaf > 0.0f ? leaf : 0.0f;
        }
        __syncthreads();
        int cur = 0;
#pragma unroll 1
        for (int step = NUM_STEPS; step > 0; --step) {
#pragma unroll 1
            for (int i = threadIdx.x; i < step; i += blockDim.x) {
                buf[1 - cur][i] = pu_disc * buf[cur][i + 1] + pd_disc * buf[cur][i];
            }
            cur = 1 - cur;
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            price[o] = buf[cur][0];
        }
        __syncthreads();
    }
}
