// kgpubench regular suite: nearest-neighbour distances (seed 000: NN euclid, memory-bound).
// Each record is an interleaved (latitude, longitude) pair; the kernel writes its distance to a target.
extern "C" __global__ void euclid(const float* __restrict__ records, float* __restrict__ distances, int n,
                                  float lat, float lng)
{
    const int stride = blockDim.x * gridDim.x;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {  // loop:grid_stride
        const float dlat = lat - records[2 * i];
        const float dlng = lng - records[2 * i + 1];
        distances[i] = sqrtf(dlat * dlat + dlng * dlng);
    }
}
