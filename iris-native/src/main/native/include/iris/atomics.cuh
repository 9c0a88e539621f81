// atomics.cuh: atomic read-modify-write on another rank's memory.
//
// Each takes a memory order and a scope as template arguments, defaulting to relaxed and
// system (the scope that other GPUs observe), and returns the value the target held before.
//
//   int old = iris::atomic_add<iris::Order::release>(ctx, counter, 1, peer);
//
// Checked builds bounds-check the target (see translate in ctx.cuh); the last argument, iris::Site,
// is filled in by the compiler.
//
// Types: add/sub/xchg/cas/min/max on int32/uint32/int64/uint64/float/double; add also on
// iris::f16 and iris::bf16 (__half and __nv_bfloat16 on CUDA, __half and hip_bfloat16 on HIP);
// and/or/xor on the integer types.
#pragma once

#include "ctx.cuh"

namespace iris {

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_add(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    return arch::fetch_add<O, S>(translate(ctx, ptr, to_rank, where), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_sub(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    return arch::fetch_add<O, S>(translate(ctx, ptr, to_rank, where), static_cast<T>(T(0) - value));
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_xchg(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    return arch::exchange<O, S>(translate(ctx, ptr, to_rank, where), value);
}

/// Stores `desired` if the target holds `expected`; returns what it held (== expected on success).
template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_cas(const Ctx& ctx, T* ptr, T expected, T desired, int to_rank, Site where = Site::here()) {
    return arch::compare_exchange<O, S>(translate(ctx, ptr, to_rank, where), expected, desired);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_and(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    static_assert(std::is_integral_v<T>, "atomic_and: integer types only");
    return arch::fetch_and<O, S>(translate(ctx, ptr, to_rank, where), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_or(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    static_assert(std::is_integral_v<T>, "atomic_or: integer types only");
    return arch::fetch_or<O, S>(translate(ctx, ptr, to_rank, where), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_xor(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    static_assert(std::is_integral_v<T>, "atomic_xor: integer types only");
    return arch::fetch_xor<O, S>(translate(ctx, ptr, to_rank, where), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_min(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    return arch::fetch_min<O, S>(translate(ctx, ptr, to_rank, where), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
__device__ __forceinline__ T atomic_max(const Ctx& ctx, T* ptr, T value, int to_rank, Site where = Site::here()) {
    return arch::fetch_max<O, S>(translate(ctx, ptr, to_rank, where), value);
}

}  // namespace iris
