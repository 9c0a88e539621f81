// 02 store: each rank writes its values into the next rank's buffer; the peer runs nothing for it.
#include <iris/iris.cuh>

extern "C" __global__ void store_to_peer(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* values, float* buffer,
                                         uint64_t n) {
    const int peer = (ctx.rank + 1) % ctx.world;
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        iris::store(ctx, buffer + i, values[i], peer);
    }
}
