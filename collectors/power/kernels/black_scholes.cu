// European call and put prices under Black-Scholes (seed 002 "BlackScholes") for nopt options with
// spot s, strike k and expiry t (years), risk-free rate r and volatility v; grid-stride over options.
// N(d) = erfc(-d / sqrt(2)) / 2.

extern "C" __global__ void black_scholes(const float *__restrict__ s, const float *__restrict__ k,
                                         const float *__restrict__ t, float *__restrict__ call,
                                         float *__restrict__ put, float r, float v, int nopt)
{
    int stride = gridDim.x * blockDim.x;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nopt; i += stride) {
        float spot = s[i];
        float strike = k[i];
        float expiry = t[i];
        float sqrt_t = sqrtf(expiry);
        float d1 = (logf(spot / strike) + (r + 0.5f * v * v) * expiry) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float nd1 = 0.5f * erfcf(-d1 * 0.70710678118654752f);
        float nd2 = 0.5f * erfcf(-d2 * 0.70710678118654752f);
        float disc = strike * expf(-r * expiry);
        call[i] = spot * nd1 - disc * nd2;
        put[i] = disc * (1.0f - nd2) - spot * (1.0f - nd1);
    }
}
