// barrier.cu: Iris.barrier(): all ranks meet on the device, in stream order.
//
// Launch: one block of 32 threads (world <= 32).
#include <iris/iris.cuh>

extern "C" __global__ void iris_barrier(const IRIS_GRID_CONSTANT iris::Ctx ctx, int32_t site) { iris::barrier(ctx, site); }
