// rma.cuh: one thread's remote load and store.
//
// Argument order, here and in every remote operation: (ctx, target pointer, [value,] rank).
// Pointers are symmetric: addresses in this rank's heap; the rank says whose copy is meant.
// T may be any trivially copyable type up to 16 bytes; with a 16-byte type (uint4, float4,
// iris::vec16) the access is one 128-bit instruction, the fast path over NVLink. The last
// argument of every remote operation, iris::Site, is filled in by the compiler (checked builds
// report it on a bad address; see ctx.cuh): leave it out.
#pragma once

#include "ctx.cuh"

namespace iris {

/// 16 bytes moved by one instruction.
using vec16 = uint4;

/// Reads rank `from_rank`'s copy of `*ptr`.
template <class T>
__device__ __forceinline__ T load(const Ctx& ctx, const T* ptr, int from_rank, Site where = Site::here()) {
    static_assert(sizeof(T) <= 16, "load: at most 16 bytes per thread");
    return *translate(ctx, ptr, from_rank, where);
}

/// Writes `value` into rank `to_rank`'s copy of `*ptr`. Visible to that rank once ordered by a
/// release (signal, a release atomic, or barrier).
template <class T>
__device__ __forceinline__ void store(const Ctx& ctx, T* ptr, const T& value, int to_rank, Site where = Site::here()) {
    static_assert(sizeof(T) <= 16, "store: at most 16 bytes per thread");
    *translate(ctx, ptr, to_rank, where) = value;
}

}  // namespace iris
