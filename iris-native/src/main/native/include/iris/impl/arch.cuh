// arch.cuh: the device-side architecture switch.
//
// Everything in the device API that differs between NVIDIA (CUDA) and AMD (HIP) sits in this
// file: scoped atomics, the global nanosecond timer and the fences. The public headers above it
// are written once against these functions.
//
// Memory-model choice: cross-GPU flags and atomics use system scope, and data written for a
// peer is published with a release operation at system scope (which orders all prior stores,
// including plain stores into peer memory). On AMD this is the "system-scope atomics" approach
// Iris settled on; it needs no fine-grained allocation for flag visibility.
#pragma once

#include <cstdint>

#if defined(IRIS_PLATFORM_HIP)
#include <hip/hip_runtime.h>
#else
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

// Kernel parameters whose address device code takes, without a copy to local memory (CUDA's
// __grid_constant__; HIP reads parameters from memory already).
#if defined(IRIS_PLATFORM_HIP)
#define IRIS_GRID_CONSTANT
#else
#define IRIS_GRID_CONSTANT __grid_constant__
#endif

namespace iris {

/// Memory order of an atomic or a flag operation (C++ semantics).
enum class Order { relaxed, acquire, release, acq_rel };

/// Which threads the ordering is promised to: this GPU only, or every GPU and the host.
/// Operations that another rank observes need Scope::system.
enum class Scope { gpu, system };

namespace arch {

#if defined(IRIS_PLATFORM_HIP)

template <Order O>
constexpr int order() {
    return O == Order::relaxed   ? __ATOMIC_RELAXED
           : O == Order::acquire ? __ATOMIC_ACQUIRE
           : O == Order::release ? __ATOMIC_RELEASE
                                 : __ATOMIC_ACQ_REL;
}
template <Scope S>
constexpr int scope() {
    return S == Scope::gpu ? __HIP_MEMORY_SCOPE_AGENT : __HIP_MEMORY_SCOPE_SYSTEM;
}
template <Order O, Scope S, class T> __device__ inline T fetch_add(T* p, T v) { return __hip_atomic_fetch_add(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_and(T* p, T v) { return __hip_atomic_fetch_and(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_or(T* p, T v) { return __hip_atomic_fetch_or(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_xor(T* p, T v) { return __hip_atomic_fetch_xor(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_min(T* p, T v) { return __hip_atomic_fetch_min(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_max(T* p, T v) { return __hip_atomic_fetch_max(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T exchange(T* p, T v) { return __hip_atomic_exchange(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T>
__device__ inline T compare_exchange(T* p, T expected, T desired) {
    __hip_atomic_compare_exchange_strong(p, &expected, desired, order<O>(),
                                         O == Order::release || O == Order::relaxed ? __ATOMIC_RELAXED : __ATOMIC_ACQUIRE,
                                         scope<S>());
    return expected;
}
template <Order O, Scope S, class T> __device__ inline T load(const T* p) { return __hip_atomic_load(const_cast<T*>(p), order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline void store(T* p, T v) { __hip_atomic_store(p, v, order<O>(), scope<S>()); }

/// Nanoseconds from a constant-rate counter (wall_clock64 ticks at 100 MHz on MI200/MI300).
__device__ inline uint64_t now_ns() { return wall_clock64() * 10ull; }

#else

template <Order O>
constexpr cuda::std::memory_order order() {
    return O == Order::relaxed   ? cuda::std::memory_order_relaxed
           : O == Order::acquire ? cuda::std::memory_order_acquire
           : O == Order::release ? cuda::std::memory_order_release
                                 : cuda::std::memory_order_acq_rel;
}
template <Scope S>
constexpr cuda::thread_scope scope() {
    return S == Scope::gpu ? cuda::thread_scope_device : cuda::thread_scope_system;
}
template <Scope S, class T>
using ref = cuda::atomic_ref<T, scope<S>()>;

// Half-precision adds are not covered by atomic_ref: a relaxed PTX `atom.add.noftz`, ordered by
// fences where the caller asked for acquire or release (the PTX model's fence + relaxed pattern).
template <Scope S>
__device__ inline void fence() {
    if constexpr (S == Scope::system) asm volatile("fence.acq_rel.sys;" ::: "memory");
    else asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
template <Scope S>
__device__ inline unsigned short relaxed_add_f16(void* p, unsigned short v) {
    unsigned short old;
    if constexpr (S == Scope::system)
        asm volatile("atom.relaxed.sys.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    else
        asm volatile("atom.relaxed.gpu.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    return old;
}
template <Scope S>
__device__ inline unsigned short relaxed_add_bf16(void* p, unsigned short v) {
    unsigned short old;
    if constexpr (S == Scope::system)
        asm volatile("atom.relaxed.sys.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    else
        asm volatile("atom.relaxed.gpu.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    return old;
}

template <Order O, Scope S, class T>
__device__ inline T fetch_add(T* p, T v) {
    constexpr bool is_f16 = cuda::std::is_same_v<T, __half>;
    constexpr bool is_bf16 = cuda::std::is_same_v<T, __nv_bfloat16>;
    if constexpr (is_f16 || is_bf16) {
        if constexpr (O == Order::release || O == Order::acq_rel) fence<S>();
        unsigned short old;
        if constexpr (is_f16) old = relaxed_add_f16<S>(p, __half_as_ushort(v));
        else old = relaxed_add_bf16<S>(p, __bfloat16_as_ushort(v));
        if constexpr (O == Order::acquire || O == Order::acq_rel) fence<S>();
        if constexpr (is_f16) return __ushort_as_half(old);
        else return __ushort_as_bfloat16(old);
    } else {
        return ref<S, T>(*p).fetch_add(v, order<O>());
    }
}
template <Order O, Scope S, class T> __device__ inline T fetch_and(T* p, T v) { return ref<S, T>(*p).fetch_and(v, order<O>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_or(T* p, T v) { return ref<S, T>(*p).fetch_or(v, order<O>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_xor(T* p, T v) { return ref<S, T>(*p).fetch_xor(v, order<O>()); }
template <Order O, Scope S, class T> __device__ inline T exchange(T* p, T v) { return ref<S, T>(*p).exchange(v, order<O>()); }
template <Order O, Scope S, class T>
__device__ inline T compare_exchange(T* p, T expected, T desired) {
    ref<S, T>(*p).compare_exchange_strong(expected, desired, order<O>());
    return expected;
}
template <Order O, Scope S, class T>
__device__ inline T fetch_min(T* p, T v) {
    if constexpr (cuda::std::is_integral_v<T>) {
        return ref<S, T>(*p).fetch_min(v, order<O>());
    } else {  // floating point: no native instruction, so a CAS loop
        ref<S, T> r(*p);
        T old = r.load(cuda::std::memory_order_relaxed);
        while (v < old && !r.compare_exchange_weak(old, v, order<O>())) {}
        return old;
    }
}
template <Order O, Scope S, class T>
__device__ inline T fetch_max(T* p, T v) {
    if constexpr (cuda::std::is_integral_v<T>) {
        return ref<S, T>(*p).fetch_max(v, order<O>());
    } else {
        ref<S, T> r(*p);
        T old = r.load(cuda::std::memory_order_relaxed);
        while (v > old && !r.compare_exchange_weak(old, v, order<O>())) {}
        return old;
    }
}
template <Order O, Scope S, class T> __device__ inline T load(const T* p) { return ref<S, const T>(*p).load(order<O>()); }
template <Order O, Scope S, class T> __device__ inline void store(T* p, T v) { ref<S, T>(*p).store(v, order<O>()); }

/// Nanoseconds of the GPU's global timer (ticks are coarse, about 1 µs on recent GPUs).
__device__ inline uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#endif

/// Orders this thread's prior writes, including writes into peer memory, before later ones
/// as seen by every GPU and the host.
__device__ inline void fence_system() { __threadfence_system(); }

}  // namespace arch
}  // namespace iris
