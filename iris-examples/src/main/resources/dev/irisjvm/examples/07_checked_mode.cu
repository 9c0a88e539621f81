// 07 checked mode: a store to an address past the end of the heap. Compiled with IRIS_CHECKED=1
// (KernelCompiler.checked(true), or IRIS_CHECK=1 with KernelCompiler.forIris) the translation
// records the kernel, this file's line, the target rank and the offset, and stores nothing; the
// host raises it as an IrisDeviceException at the next synchronize. store_line receives the line
// of the store, so that the host can check the report names it.
#include <iris/iris.cuh>

extern "C" __global__ void out_of_heap(const IRIS_GRID_CONSTANT iris::Ctx ctx, float* buffer, uint64_t past_end,
                                       int* store_line) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int peer = (ctx.rank + 1) % ctx.world;
        *store_line = __LINE__ + 1;
        iris::store(ctx, buffer + past_end, 1.0f, peer);
    }
}
