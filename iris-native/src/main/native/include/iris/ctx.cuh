// ctx.cuh: iris::Ctx, what a kernel needs to reach every rank's symmetric heap.
//
// The context describes the node team: rank and world are this rank's index in its node and the
// node's size, and bases[] holds the node's heaps (CUDA IPC maps no further).
//
// One declaration in plain C (abi/ctx.h) serves this header, the host compiler and Java (the
// generated dev.irisjvm.runtime.abi.iris_ctx). Kernels receive it by value, inside their argument
// struct, so it lives in the kernel parameter space: reading bases[] is a constant bank load, not a
// trip to global memory.
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

#include "abi/ctx.h"
#include "impl/arch.cuh"

// Checked builds: -DIRIS_CHECKED=1 bounds-checks every translated address (see translate). The
// library ships such a variant of every module (NAME.checked.fatbin), which Java loads in
// checked mode (IRIS_CHECK=1); the default build compiles none of it.
#ifndef IRIS_CHECKED
#define IRIS_CHECKED 0
#endif

namespace iris {

/// Most ranks one context can address (one node: 8 GPUs).
inline constexpr int kMaxRanks = IRIS_MAX_RANKS;

/// Where a device-side failure is recorded (iris/abi/ctx.h has the fields and why).
using DeviceStatus = iris_device_status;

enum class ErrorCode : uint32_t {
    ok = IRIS_ERROR_CODE_OK,
    wait_timeout = IRIS_ERROR_CODE_WAIT_TIMEOUT,        ///< wait_until passed the context's deadline
    barrier_timeout = IRIS_ERROR_CODE_BARRIER_TIMEOUT,  ///< a peer did not reach the barrier in time
    count_mismatch = IRIS_ERROR_CODE_COUNT_MISMATCH,    ///< the collectives' all-to-all-v counts disagree
    aborted = IRIS_ERROR_CODE_ABORTED,  ///< a wait gave up because the host set DeviceStatus::abort (a rank was lost)
    bad_address = IRIS_ERROR_CODE_BAD_ADDRESS,  ///< checked builds: a translated address outside the heap or the ranks
    bad_launch = IRIS_ERROR_CODE_BAD_LAUNCH,    ///< a kernel refused a launch it cannot run (a host bug) and returned
};

/// Where in the source a remote operation was called. In checked builds (IRIS_CHECKED=1) every
/// function that translates an address takes one as its last argument, defaulted to the caller's
/// file, function and line, and a bounds violation reports it; otherwise it is empty and costs
/// nothing. Leave the argument out; forward it when wrapping the API in a function of your own.
struct Site {
#if IRIS_CHECKED
    const char* file;
    const char* function;
    int line;
    static __device__ __forceinline__ constexpr Site here(const char* file = __builtin_FILE(),
                                                          const char* function = __builtin_FUNCTION(),
                                                          int line = __builtin_LINE()) {
        return Site{file, function, line};
    }
#else
    static __device__ __forceinline__ constexpr Site here() { return Site{}; }
#endif
};

/// What a kernel needs to reach every rank's heap (iris/abi/ctx.h declares it for both sides).
using Ctx = iris_ctx;

/// Whether `rank` is one of the ranks this context's heap spans (the node team: [0, world)).
/// Ranks on other nodes are reached through NCCL, not the heap; test with this before translating
/// where a kernel may be handed such a rank, as NVSHMEM users test nvshmem_ptr for null.
__device__ __forceinline__ bool can_reach(const Ctx& ctx, int rank) {
    return static_cast<unsigned>(rank) < static_cast<unsigned>(ctx.world);
}

namespace impl {

/// Whether this rank already holds an error (any later wait gives up at its next check).
__device__ __forceinline__ bool has_error(const Ctx& ctx) {
    return arch::load<Order::relaxed, Scope::system>(&ctx.status->code) != 0;
}

/// Whether the host told this rank to stop: a peer rank was lost (DeviceStatus::abort).
__device__ __forceinline__ bool aborted(const Ctx& ctx) {
    return arch::load<Order::relaxed, Scope::system>(&ctx.status->abort) != 0;
}

/// First error wins; later ones are dropped so the record describes the root cause.
__device__ inline bool record_error(const Ctx& ctx, ErrorCode code, int site, int peer, uint64_t observed,
                                    uint64_t expected, uint64_t elapsed_ns) {
    DeviceStatus* s = ctx.status;
    if (arch::compare_exchange<Order::relaxed, Scope::system>(&s->code, 0u, static_cast<uint32_t>(code)) != 0u)
        return false;
    s->site = site;
    s->rank = ctx.rank;
    s->peer = peer;
    s->observed = observed;
    s->expected = expected;
    s->elapsed_ns = elapsed_ns;
    arch::fence_system();
    return true;
}

/// Bytes one access of a T touches (void counts as one byte).
template <class T>
inline constexpr uint64_t access_bytes = sizeof(std::conditional_t<std::is_void_v<std::remove_cv_t<T>>, char, T>);

#if IRIS_CHECKED
/// Checked builds: records a bad address and stops the calling thread. Never __trap: that would
/// kill the context, and with it the rank. The error word makes every other wait of this rank
/// give up, so the rest of the kernel ends too; the host raises the facts at its next check.
__device__ __forceinline__ void fail_translation(const Ctx& ctx, uint64_t offset, uint64_t bytes, int to_rank,
                                              Site where) {
    if (record_error(ctx, ErrorCode::bad_address, where.line, to_rank, offset, ctx.heap_size, bytes)) {
        ctx.status->file = where.file;
        ctx.status->function = where.function;
        arch::fence_system();
    }
    arch::exit_thread();
}

/// Checked builds: `bytes` bytes at `offset` of rank `to_rank`'s heap must lie inside the heap.
__device__ __forceinline__ void check_translation(const Ctx& ctx, uint64_t offset, uint64_t bytes, int to_rank,
                                                  Site where) {
    if (to_rank < 0 || to_rank >= ctx.world || offset > ctx.heap_size || bytes > ctx.heap_size - offset)
        fail_translation(ctx, offset, bytes, to_rank, where);
}
#endif

/// translate for an access of `bytes` bytes that starts at `ptr` (the range forms: get, put,
/// copy, tiles, bulk copies); checked builds check the whole range, not only its first byte.
/// A rank outside the node gives nullptr in every build: bases[] holds only the node's heaps, and
/// indexing it with another rank would read a wild pointer out of the parameter space.
template <class T>
__device__ __forceinline__ T* translate_range(const Ctx& ctx, T* ptr, uint64_t bytes, int to_rank, Site where) {
    const uint64_t offset = reinterpret_cast<uint64_t>(ptr) - ctx.bases[ctx.rank];
#if IRIS_CHECKED
    check_translation(ctx, offset, bytes, to_rank, where);
#else
    (void)bytes;
    (void)where;
#endif
    // Selects rather than branches (an early return made the fused GEMMs spill registers), and
    // never indexes bases[] with the rank it has not vetted.
    const bool reachable = can_reach(ctx, to_rank);
    const uint64_t base = ctx.bases[reachable ? to_rank : ctx.rank];
    return reinterpret_cast<T*>(reachable ? base + offset : 0);
}

/// Bytes spanned by a rows x cols tile with leading dimension ld (elements), from its first element.
template <class T>
__device__ __forceinline__ uint64_t tile_bytes(uint64_t rows, uint64_t cols, uint64_t ld) {
    return rows == 0 || cols == 0 ? 0 : ((rows - 1) * ld + cols) * access_bytes<T>;
}

}  // namespace impl

/// The address of rank `to_rank`'s copy of the symmetric object at `ptr` (a pointer into this
/// rank's heap). Everything remote rests on this one translation.
///
/// The context describes one node (ctx.rank and ctx.world are the node's): a `to_rank` outside
/// [0, world), such as a rank of another node, gives nullptr in every build, never a wild pointer
/// (see can_reach). Checked builds (IRIS_CHECKED=1) also verify that the object lies inside the
/// heap; a violation of either rule records the call site, the rank, the target rank and the
/// offset (ErrorCode::bad_address) and stops the calling thread before it can dereference
/// anything, and the host raises it.
template <class T>
__device__ __forceinline__ T* translate(const Ctx& ctx, T* ptr, int to_rank, Site where = Site::here()) {
    return impl::translate_range(ctx, ptr, impl::access_bytes<T>, to_rank, where);
}

}  // namespace iris
