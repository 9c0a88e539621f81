// 01 load: each rank reads the next rank's buffer, element by element, into its own output.
#include <iris/iris.cuh>

extern "C" __global__ void load_from_peer(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* buffer, float* out,
                                          uint64_t n) {
    const int peer = (ctx.rank + 1) % ctx.world;
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = iris::load(ctx, buffer + i, peer);  // buffer is a heap address of this rank: translated to peer's
    }
}
