// kgpubench regular suite: speckle-reducing anisotropic diffusion, one iteration in two kernels
// (seed 000: SRAD v2, memory-bound). Image J is rows x cols, row-major; neighbours are clamped at the edges.

// Kernel 1: directional differences and the diffusion coefficient of every pixel.
extern "C" __global__ void srad_cuda_1(const float* __restrict__ J, float* __restrict__ dN,
                                       float* __restrict__ dS, float* __restrict__ dW, float* __restrict__ dE,
                                       float* __restrict__ C, int rows, int cols, float q0sqr)
{
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows || j >= cols) return;
    const int k = i * cols + j;
    const float jc = J[k];
    const float n = J[max(i - 1, 0) * cols + j] - jc;
    const float s = J[min(i + 1, rows - 1) * cols + j] - jc;
    const float w = J[i * cols + max(j - 1, 0)] - jc;
    const float e = J[i * cols + min(j + 1, cols - 1)] - jc;
    const float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    const float l = (n + s + w + e) / jc;
    const float num = 0.5f * g2 - 0.0625f * (l * l);
    float den = 1.0f + 0.25f * l;
    const float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    c = fminf(fmaxf(c, 0.0f), 1.0f);
    dN[k] = n;
    dS[k] = s;
    dW[k] = w;
    dE[k] = e;
    C[k] = c;
}

// Kernel 2: divergence of the diffusion flux and the image update J_out = J + lambda/4 * div.
extern "C" __global__ void srad_cuda_2(const float* __restrict__ J, const float* __restrict__ dN,
                                       const float* __restrict__ dS, const float* __restrict__ dW,
                                       const float* __restrict__ dE, const float* __restrict__ C,
                                       float* __restrict__ J_out, int rows, int cols, float lambda)
{
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows || j >= cols) return;
    const int k = i * cols + j;
    const float cn = C[k];
    const float cs = C[min(i + 1, rows - 1) * cols + j];
    const float cw = C[k];
    const float ce = C[i * cols + min(j + 1, cols - 1)];
    const float d = cn * dN[k] + cs * dS[k] + cw * dW[k] + ce * dE[k];
    J_out[k] = J[k] + 0.25f * lambda * d;
}
