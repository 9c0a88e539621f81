// iris/gemm/impl/block.cuh (not API): what a GEMM block asks of its launch on every NVIDIA GPU the
// library builds for, shared by the Hopper mainloop (impl/hopper.cuh) and the portable one
// (sm80/impl/ptx.cuh): the dynamic shared memory it was given, named barriers, and whether a
// Config's shared memory fits.
#pragma once

#include <cstdint>

namespace iris::gemm {

/// Bytes of dynamic shared memory this launch gave the block.
__device__ inline uint32_t dynamic_smem_bytes() {
    uint32_t bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

/// A barrier among the `threads` threads (whole warps) that use hardware barrier `id` (1..15; 0 is
/// __syncthreads).
__device__ inline void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Arrives at named barrier `id` of `threads` threads without waiting: what this thread wrote to
/// shared memory before it is visible to the threads that wait there.
__device__ inline void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Whether this launch gave the block the dynamic shared memory Cfg needs. The same in every thread
/// of the grid, so a kernel that returns when it is false returns everywhere. The library launches
/// with each Config's bytes, so false means a launch from outside it. Never __trap instead: that
/// would kill the context, and with it the rank.
template <class Cfg>
__device__ inline bool shared_memory_fits() {
    return dynamic_smem_bytes() >= Cfg::kSmemBytes;
}

}  // namespace iris::gemm
