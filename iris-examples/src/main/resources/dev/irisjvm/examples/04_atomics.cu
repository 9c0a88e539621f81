// 04 atomics: every thread of every rank adds into rank 0's counters; each rank also takes the
// maximum of its rank into every peer's slot, with release order at system scope.
#include <iris/iris.cuh>

extern "C" __global__ void atomics(const IRIS_GRID_CONSTANT iris::Ctx ctx, uint64_t* counters, int* highest,
                                   uint64_t slots) {
    const uint64_t thread = blockIdx.x * blockDim.x + threadIdx.x;
    iris::atomic_add(ctx, counters + thread % slots, uint64_t(1), 0);
    if (thread == 0) {
        for (int r = 0; r < ctx.world; ++r) {
            iris::atomic_max<iris::Order::release, iris::Scope::system>(ctx, highest, ctx.rank, r);
        }
    }
}
