// kgpubench regular suite: element-wise vector addition c = a + b (seed 000: vector add, memory-bound).
// Grid-stride loop, so the launch (blocks x threads) can be swept independently of n.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    const int stride = blockDim.x * gridDim.x;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {  // loop:grid_stride
        c[i] = a[i] + b[i];
    }
}
