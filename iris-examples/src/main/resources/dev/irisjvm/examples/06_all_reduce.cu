// 06 all-reduce, written by hand: every rank sums every rank's input into its own output, reading
// the peers' inputs straight from their heaps (one shot), 16 bytes per load. The host puts a device
// barrier before it (every input written) and after it (no input reused while a peer reads it).
#include <iris/iris.cuh>

extern "C" __global__ void all_reduce_sum(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* input, float* output,
                                          uint64_t n) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    const uint64_t vectors = n / 4;
    const float4* in4 = reinterpret_cast<const float4*>(input);
    float4* out4 = reinterpret_cast<float4*>(output);
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int step = 0; step < ctx.world; ++step) {
            const int r = (ctx.rank + step) % ctx.world;  // each rank starts at itself: the links share the load
            const float4 v = iris::load(ctx, in4 + i, r);
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
        out4[i] = sum;
    }
    for (uint64_t i = 4 * vectors + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        float sum = 0.0f;                                 // the tail that does not fill a float4
        for (int r = 0; r < ctx.world; ++r) sum += iris::load(ctx, input + i, r);
        output[i] = sum;
    }
}
