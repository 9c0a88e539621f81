// barrier.cu: Iris.barrier(): all ranks meet on the device, in stream order.
//
// Launch: one block of IRIS_CORE_BARRIER_THREADS threads (world <= 32).
#include <iris/abi/core.h>
#include <iris/iris.cuh>

extern "C" __global__ void iris_barrier(const IRIS_GRID_CONSTANT iris_barrier_args a) { iris::barrier(a.ctx, a.site); }
