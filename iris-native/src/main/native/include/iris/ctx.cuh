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

// Checked builds: -DIRIS_CHECKED=1 bounds-checks every translated address (see translate). The
// library ships such a variant of every module (NAME.checked.fatbin), which Java loads in
// checked mode (IRIS_CHECK=1); the default build compiles none of it.
#ifndef IRIS_CHECKED
#define IRIS_CHECKED 0
#endif

namespace iris {

/// Most ranks one context can address (one node: 8 GPUs).
inline constexpr int kMaxRanks = 8;

/// Where a device-side failure is recorded. It lives in mapped host memory, so the host reads
/// it after a synchronize without a copy and raises an exception with these facts. The host
/// also writes into it: `abort` (with `lost_rank`) once this rank must stop waiting for its
/// peers, because one of them is gone; every bounded wait polls it.
struct DeviceStatus {
    uint32_t code;        ///< 0 while all is well, otherwise an ErrorCode
    int32_t site;         ///< waits: caller-chosen id of the wait (see sync.cuh); bad_address: source line
    int32_t rank;         ///< the rank that recorded the error
    int32_t peer;         ///< waits: the rank it was waiting for, or -1; bad_address: the target rank
    uint64_t observed;    ///< waits: the flag value last seen; bad_address: offset into the heap
    uint64_t expected;    ///< waits: the value waited for; bad_address: the heap size
    uint64_t elapsed_ns;  ///< waits: how long it waited; bad_address: bytes of the access
    uint32_t abort;       ///< written by the host: nonzero once a peer rank was lost (never cleared)
    int32_t lost_rank;    ///< written by the host before abort: the rank that was lost
    const char* file;     ///< bad_address: source file of the call (device memory of the module)
    const char* function; ///< bad_address: function that made the call, usually the kernel
};

enum class ErrorCode : uint32_t {
    ok = 0,
    wait_timeout = 1,     ///< wait_until passed the context's deadline
    barrier_timeout = 2,  ///< a peer did not reach the barrier in time
    // 3 is the collectives' count mismatch (iris-kernels, ccl_common.cuh)
    aborted = 4,          ///< a wait gave up because the host set DeviceStatus::abort (a rank was lost)
    bad_address = 5,      ///< checked builds: a translated address outside the heap or the ranks
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
static_assert(sizeof(DeviceStatus) == 64 && offsetof(DeviceStatus, abort) == 40 &&
                  offsetof(DeviceStatus, file) == 48 && offsetof(DeviceStatus, function) == 56,
              "DeviceStatus layout is shared with Java (DeviceStatusRecord)");

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
template <class T>
__device__ __forceinline__ T* translate_range(const Ctx& ctx, T* ptr, uint64_t bytes, int to_rank, Site where) {
    const uint64_t offset = reinterpret_cast<uint64_t>(ptr) - ctx.bases[ctx.rank];
#if IRIS_CHECKED
    check_translation(ctx, offset, bytes, to_rank, where);
#else
    (void)bytes;
    (void)where;
#endif
    return reinterpret_cast<T*>(ctx.bases[to_rank] + offset);
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
/// Checked builds (IRIS_CHECKED=1) verify that `to_rank` is in [0, world) and that the object
/// lies inside the heap; a violation records the call site, the rank, the target rank and the
/// offset (ErrorCode::bad_address), stops the calling thread, and the host raises it.
template <class T>
__device__ __forceinline__ T* translate(const Ctx& ctx, T* ptr, int to_rank, Site where = Site::here()) {
    return impl::translate_range(ctx, ptr, impl::access_bytes<T>, to_rank, where);
}

}  // namespace iris
