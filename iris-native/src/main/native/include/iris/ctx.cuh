// ctx.cuh: iris::Ctx, what a kernel needs to reach every rank's symmetric heap.
//
// The host (Java: dev.irisjvm.core.DeviceContext) packs this struct byte for byte and passes it
// to kernels by value, so it lives in the kernel parameter space: reading bases[] is a constant
// bank load, not a trip to global memory. The layout is part of the ABI; the static_asserts
// below pin it.
//
// Declare it in a kernel as `const IRIS_GRID_CONSTANT iris::Ctx ctx`. The device functions take
// the context by reference; without __grid_constant__ taking that reference makes the compiler
// copy all 112 bytes to local memory in every thread (seen in the SASS as STL/LDL).
//
//   extern "C" __global__ void my_kernel(const IRIS_GRID_CONSTANT iris::Ctx ctx, float* buf) { ... }
//
// On AMD (HIP) the macro is empty: kernel aggregates are passed by reference into the kernarg
// segment already. There, do not capture the kernel's ctx by reference in a lambda; pass it as an
// argument instead. A captured reference makes clang copy the 112 bytes to scratch memory, which
// the HIP build rejects as the CUDA build rejects local memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "impl/arch.cuh"

namespace iris {

/// Most ranks one context can address (one node: 8 GPUs).
inline constexpr int kMaxRanks = 8;

/// Where a device-side failure is recorded. It lives in mapped host memory, so the host reads
/// it after a synchronize without a copy and raises an exception with these facts.
struct DeviceStatus {
    uint32_t code;        ///< 0 while all is well, otherwise an ErrorCode
    int32_t site;         ///< caller-chosen id of the wait that failed (see sync.cuh)
    int32_t rank;         ///< the rank that recorded the error
    int32_t peer;         ///< the rank it was waiting for, or -1
    uint64_t observed;    ///< the flag value last seen
    uint64_t expected;    ///< the value waited for
    uint64_t elapsed_ns;  ///< how long it waited
};

enum class ErrorCode : uint32_t {
    ok = 0,
    wait_timeout = 1,     ///< wait_until passed the context's deadline
    barrier_timeout = 2,  ///< a peer did not reach the barrier in time
};

struct Ctx {
    int32_t rank;             ///< this process's rank
    int32_t world;            ///< number of ranks
    uint64_t heap_size;       ///< bytes in each rank's heap
    uint64_t timeout_ns;      ///< bound on every device-side wait
    DeviceStatus* status;     ///< this rank's error record
    uint64_t* barrier_flags;  ///< symmetric: kMaxRanks arrival slots in every rank's heap
    uint64_t* barrier_epoch;  ///< this rank's barrier counter (never accessed remotely)
    uint64_t bases[kMaxRanks];  ///< each rank's heap base as mapped in this process

};

static_assert(sizeof(Ctx) == 112, "Ctx layout is shared with Java (DeviceContext.BYTES)");
static_assert(offsetof(Ctx, heap_size) == 8 && offsetof(Ctx, timeout_ns) == 16 &&
                  offsetof(Ctx, status) == 24 && offsetof(Ctx, barrier_flags) == 32 &&
                  offsetof(Ctx, barrier_epoch) == 40 && offsetof(Ctx, bases) == 48,
              "Ctx layout is shared with Java (DeviceContext)");
static_assert(sizeof(DeviceStatus) == 40, "DeviceStatus layout is shared with Java (DeviceStatus)");

/// The address of rank `to_rank`'s copy of the symmetric object at `ptr` (a pointer into this
/// rank's heap). Everything remote rests on this one translation.
template <class T>
__device__ __forceinline__ T* translate(const Ctx& ctx, T* ptr, int to_rank) {
    const uint64_t offset = reinterpret_cast<uint64_t>(ptr) - ctx.bases[ctx.rank];
    return reinterpret_cast<T*>(ctx.bases[to_rank] + offset);
}

}  // namespace iris
