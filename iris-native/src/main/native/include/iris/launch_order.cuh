// launch_order.cuh: a kernel's place in its stream, with launches that overlap the kernel ahead.
//
// A kernel launched with IRIS_LAUNCH_OVERLAP_PREVIOUS (iris_runtime.h; programmatic dependent
// launch) is scheduled while the kernel ahead of it on the stream still runs, once that kernel's
// blocks have all executed griddepcontrol.launch_dependents or finished, so its launch and its
// set-up (barriers in shared memory, prefetched descriptors) hide behind the other's tail. It must
// call after_previous_kernel() before its first global memory access, read or write: that waits
// until the kernel ahead has finished and its writes are visible, then lets the kernel behind this
// one be scheduled the same way. Only scheduling overlaps, never a memory access. Without such a
// launch, or on a GPU older than sm_90, both instructions return at once; calling it twice is
// harmless.
//
//   __global__ void my_kernel(const __grid_constant__ Args a) {
//       __shared__ uint64_t bar; if (threadIdx.x == 0) init(&bar); __syncthreads();
//       iris::after_previous_kernel();
//       ... loads and stores ...
//   }
#pragma once

#include "iris/impl/arch.cuh"

namespace iris {

__device__ __forceinline__ void after_previous_kernel() {
#if IRIS_PLATFORM_NVIDIA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace iris
