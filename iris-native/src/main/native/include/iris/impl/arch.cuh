// arch.cuh: THE architecture switch of the device API.
//
// One switch decides everything vendor-specific in device code: IRIS_PLATFORM_HIP. The HIP
// build (CMake -DIRIS_GPU_PLATFORM=HIP) defines it, and so does this file when hipcc compiles
// for AMD (__HIP_PLATFORM_AMD__), so a user's own kernel picks the right path without a flag.
// Everything else is CUDA. Code elsewhere tests the derived IRIS_PLATFORM_NVIDIA (1 or 0) and
// never a compiler macro of its own; the public headers above this one are written once.
//
//                          NVIDIA (CUDA, sm_90a)               AMD (HIP, gfx90a / gfx940)
//   scoped atomics         cuda::atomic_ref                    __hip_atomic_* with memory scopes
//   f16 / bf16 atomic add  PTX atom.add.noftz.{f16,bf16}       CAS loop on the enclosing 32-bit word
//   float min / max        CAS loop                            CAS loop
//   timer (now_ns)         %globaltimer, ns                    s_memrealtime (wall_clock64), 100 MHz
//   cycles                 clock64 (this SM's clock)           s_memtime (clock64)
//   sleep_ns               nanosleep                           s_sleep until s_memrealtime passes
//   fence_acquire          fence.acq_rel.{cta,gpu,sys}         __builtin_amdgcn_fence, workgroup / agent / system
//   Ctx by reference       __grid_constant__                   nothing: AMDGPU passes kernel
//                                                              aggregates byref in the kernarg segment
//   16-bit float types     __half, __nv_bfloat16               __half, hip_bfloat16 (iris::f16, iris::bf16)
//   wgmma, TMA             IRIS_HAS_WGMMA / IRIS_HAS_TMA = 1   0; such kernels are IRIS_NVIDIA_ONLY
//                          when compiling for sm_90a
//   exit_thread (checked)  PTX exit: the thread                s_endpgm: the wavefront
//   prefetch_l2            cp.async.bulk.prefetch.L2 (sm_90a)  nothing (a hint)
//   let_next_kernel_start, griddepcontrol.launch_dependents /   nothing (no programmatic launch)
//   wait_for_previous_kernel  .wait (sm_90)
//   16-byte atomic ld/st   ld/st.relaxed.sys.b128              none (callers use 8-byte words)
//
// NVIDIA-only kernels. A kernel source that needs NVIDIA hardware (wgmma/TMA GEMM and attention
// mainloops, %globaltimer-based profiling, ...) says so on a line of its own:
//
//   IRIS_NVIDIA_ONLY("sm_90a (wgmma/TMA)")
//
// The CUDA build compiles it as usual. The HIP build (cmake/IrisFatbin.cmake) does not compile
// it; it ships a marker "<name>.unavailable-hip" holding the requirement instead, and Java turns
// a load of that module on HIP into "not available on this platform (HIP): <name> needs sm_90a
// (wgmma/TMA)". Compiled by hand with hipcc, the macro stops the build with the same words.
//
// Memory model: what this library promises and how each vendor keeps it.
//   * Every flag and atomic that another rank observes uses Scope::system (the default of every
//     public atomic; signal, wait_until and barrier use it unconditionally).
//   * Plain stores into a peer's heap (store, put, put_tile, copy, tile ops) are published by a
//     release at system scope (signal, a release atomic, barrier) and seen by whoever acquires at
//     system scope (wait_until, an acquire atomic, barrier). Nothing else promises visibility,
//     on either vendor.
//   * CUDA: one kind of device memory; a system-scope release orders every earlier store of the
//     thread, peer memory over NVLink included. Tested on 2 x H200.
//   * AMD: the heap is plain hipMalloc memory, coarse-grained (see iris_malloc_heap in
//     memory.cpp: AMD's Iris started with hipExtMallocWithFlags(..., hipDeviceMallocFinegrained)
//     and moved to plain allocations plus system-scope atomics; so do we). What makes that
//     correct is the scope argument of the __hip_atomic_* builtins: the AMDGPU memory model
//     (LLVM AMDGPUUsage, "Memory Model GFX90A" / "GFX942") lowers system scope to
//     system-coherent accesses (gfx90a: sc1, gfx940: sc0 sc1), writes the L2 back before a
//     release (buffer_wbl2) and invalidates it after an acquire (buffer_invl2 / buffer_inv), and
//     a peer's memory is mapped uncached-coherent, so remote stores probe and invalidate the
//     owner's L2. The build checks that these instructions are there (IrisFatbin.cmake greps
//     the gfx90a and gfx940 disassembly of the barrier kernel).
//     Float atomics: the HIP build does not pass -munsafe-fp-atomics, so float and double adds
//     are CAS loops, which are correct on coarse- and fine-grained memory alike (MI200's
//     hardware float atomics do nothing on fine-grained memory).
//     No AMD GPU has run any of this: the HIP build is compiled and linked in CI, never run.
#pragma once

#include <cstdint>
#include <type_traits>

#if !defined(IRIS_PLATFORM_HIP) && (defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__))
#define IRIS_PLATFORM_HIP 1
#endif

#if defined(IRIS_PLATFORM_HIP)
#define IRIS_PLATFORM_NVIDIA 0
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#define IRIS_PLATFORM_NVIDIA 1
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

// Kernel parameters whose address device code takes, without a copy to local memory (CUDA's
// __grid_constant__; AMDGPU passes aggregates by reference into the kernarg segment already).
#if IRIS_PLATFORM_NVIDIA
#define IRIS_GRID_CONSTANT __grid_constant__
#else
#define IRIS_GRID_CONSTANT
#endif

// NVIDIA-only hardware features, for `#if` blocks inside IRIS_NVIDIA_ONLY kernels.
#if IRIS_PLATFORM_NVIDIA && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IRIS_HAS_WGMMA 1
#define IRIS_HAS_TMA 1
#else
#define IRIS_HAS_WGMMA 0
#define IRIS_HAS_TMA 0
#endif

// Marks a kernel source as NVIDIA-only (see the top of this file); `requirement` is a string
// literal such as "sm_90a (wgmma/TMA)".
#if IRIS_PLATFORM_NVIDIA
#define IRIS_NVIDIA_ONLY(requirement) static_assert(true, requirement)
#else
#define IRIS_NVIDIA_ONLY(requirement) \
    static_assert(false, "not available on this platform (HIP): this kernel needs " requirement)
#endif

namespace iris {

/// Memory order of an atomic or a flag operation (C++ semantics).
enum class Order { relaxed, acquire, release, acq_rel };

/// Which threads the ordering is promised to: the threads of this block (CTA) only, this GPU only,
/// or every GPU and the host. Operations that another rank observes need Scope::system. A flag
/// that never leaves its block, such as a hand-off between the warps of one CTA, takes
/// Scope::block: on NVIDIA its acquire is then served by the SM's L1 (no cache invalidation and
/// no trip to L2 per poll).
enum class Scope { block, gpu, system };

/// The 16-bit float types, by one name on both platforms (use these, not __nv_bfloat16).
#if IRIS_PLATFORM_NVIDIA
using f16 = __half;
using bf16 = __nv_bfloat16;
#else
using f16 = __half;
using bf16 = hip_bfloat16;
#endif

namespace arch {

template <class T>
inline constexpr bool is_16bit_float_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// ---- 16-bit float conversions --------------------------------------------------------------

#if IRIS_PLATFORM_NVIDIA
__device__ inline float to_float(f16 v) { return __half2float(v); }
__device__ inline float to_float(bf16 v) { return __bfloat162float(v); }
__device__ inline uint16_t bits_of(f16 v) { return __half_as_ushort(v); }
__device__ inline uint16_t bits_of(bf16 v) { return __bfloat16_as_ushort(v); }
template <class T> __device__ inline T from_float(float v);
template <> __device__ inline f16 from_float<f16>(float v) { return __float2half_rn(v); }
template <> __device__ inline bf16 from_float<bf16>(float v) { return __float2bfloat16_rn(v); }
template <class T> __device__ inline T from_double(double v);
template <> __device__ inline f16 from_double<f16>(double v) { return __double2half(v); }
template <> __device__ inline bf16 from_double<bf16>(double v) { return __double2bfloat16(v); }
#else
__device__ inline float to_float(f16 v) { return __half2float(v); }
__device__ inline float to_float(bf16 v) { return static_cast<float>(v); }
__device__ inline uint16_t bits_of(f16 v) { return __half_as_ushort(v); }
__device__ inline uint16_t bits_of(bf16 v) { return v.data; }
template <class T> __device__ inline T from_bits(uint16_t b);
template <> __device__ inline f16 from_bits<f16>(uint16_t b) { return __ushort_as_half(b); }
template <> __device__ inline bf16 from_bits<bf16>(uint16_t b) {
    bf16 v;
    v.data = b;
    return v;
}
/// float -> bf16, round to nearest even (NaN stays NaN).
__device__ inline uint16_t bf16_bits_rn(float f) {
    const uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
template <class T> __device__ inline T from_float(float v);
template <> __device__ inline f16 from_float<f16>(float v) { return __float2half_rn(v); }
template <> __device__ inline bf16 from_float<bf16>(float v) { return from_bits<bf16>(bf16_bits_rn(v)); }
/// double -> float rounded to odd: rounding that to a 16-bit type (at least 2 bits narrower)
/// gives the correctly rounded result, as CUDA's __double2half / __double2bfloat16 do.
__device__ inline float to_float_round_odd(double d) {
    float f = static_cast<float>(d);
    if (d == d && static_cast<double>(f) != d) {
        uint32_t u = __float_as_uint(f);
        if (fabs(static_cast<double>(f)) > fabs(d)) --u;  // rounded away from zero: truncate
        f = __uint_as_float(u | 1u);
    }
    return f;
}
template <class T> __device__ inline T from_double(double v) { return from_float<T>(to_float_round_odd(v)); }
#endif

#if IRIS_PLATFORM_HIP

template <Order O>
constexpr int order() {
    return O == Order::relaxed   ? __ATOMIC_RELAXED
           : O == Order::acquire ? __ATOMIC_ACQUIRE
           : O == Order::release ? __ATOMIC_RELEASE
                                 : __ATOMIC_ACQ_REL;
}
/// The order a failed compare-exchange may have: no release part.
template <Order O>
constexpr int failure_order() {
    return O == Order::release || O == Order::relaxed ? __ATOMIC_RELAXED : __ATOMIC_ACQUIRE;
}
template <Scope S>
constexpr int scope() {
    return S == Scope::block ? __HIP_MEMORY_SCOPE_WORKGROUP
           : S == Scope::gpu ? __HIP_MEMORY_SCOPE_AGENT
                             : __HIP_MEMORY_SCOPE_SYSTEM;
}

template <Order O, Scope S, class T>
__device__ inline T compare_exchange(T* p, T expected, T desired) {
    __hip_atomic_compare_exchange_strong(p, &expected, desired, order<O>(), failure_order<O>(), scope<S>());
    return expected;
}

/// f16 / bf16 add: AMD has no scalar 16-bit float atomic, so a compare-exchange loop on the
/// aligned 32-bit word that holds the element; the neighbouring element is carried unchanged
/// (a concurrent store to it makes the exchange fail and retry). The sum is formed in float and
/// rounded to nearest even, as CUDA's own software fallback does.
template <Order O, Scope S, class T>
__device__ inline T fetch_add_16(T* p, T v) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    auto* word = reinterpret_cast<uint32_t*>(address & ~uintptr_t(3));
    const unsigned shift = (address & 2u) ? 16u : 0u;
    uint32_t old = __hip_atomic_load(word, __ATOMIC_RELAXED, scope<S>());
    for (;;) {
        const uint16_t old16 = static_cast<uint16_t>(old >> shift);
        const uint16_t new16 = bits_of(from_float<T>(to_float(from_bits<T>(old16)) + to_float(v)));
        const uint32_t desired = (old & ~(0xffffu << shift)) | (uint32_t(new16) << shift);
        if (__hip_atomic_compare_exchange_strong(word, &old, desired, order<O>(), failure_order<O>(), scope<S>()))
            return from_bits<T>(old16);
    }
}

template <Order O, Scope S, class T>
__device__ inline T fetch_add(T* p, T v) {
    if constexpr (is_16bit_float_v<T>) return fetch_add_16<O, S>(p, v);
    else return __hip_atomic_fetch_add(p, v, order<O>(), scope<S>());
}
template <Order O, Scope S, class T> __device__ inline T fetch_and(T* p, T v) { return __hip_atomic_fetch_and(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_or(T* p, T v) { return __hip_atomic_fetch_or(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T fetch_xor(T* p, T v) { return __hip_atomic_fetch_xor(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline T exchange(T* p, T v) { return __hip_atomic_exchange(p, v, order<O>(), scope<S>()); }
template <Order O, Scope S, class T>
__device__ inline T fetch_min(T* p, T v) {
    if constexpr (std::is_integral_v<T>) {
        return __hip_atomic_fetch_min(p, v, order<O>(), scope<S>());
    } else {  // floating point: a CAS loop, as on CUDA
        T old = __hip_atomic_load(p, __ATOMIC_RELAXED, scope<S>());
        while (v < old && !__hip_atomic_compare_exchange_strong(p, &old, v, order<O>(), failure_order<O>(), scope<S>())) {}
        return old;
    }
}
template <Order O, Scope S, class T>
__device__ inline T fetch_max(T* p, T v) {
    if constexpr (std::is_integral_v<T>) {
        return __hip_atomic_fetch_max(p, v, order<O>(), scope<S>());
    } else {
        T old = __hip_atomic_load(p, __ATOMIC_RELAXED, scope<S>());
        while (v > old && !__hip_atomic_compare_exchange_strong(p, &old, v, order<O>(), failure_order<O>(), scope<S>())) {}
        return old;
    }
}
template <Order O, Scope S, class T> __device__ inline T load(const T* p) { return __hip_atomic_load(const_cast<T*>(p), order<O>(), scope<S>()); }
template <Order O, Scope S, class T> __device__ inline void store(T* p, T v) { __hip_atomic_store(p, v, order<O>(), scope<S>()); }

/// Nanoseconds from the constant-rate counter s_memrealtime, which ticks at 100 MHz on MI200
/// and MI300 (hipDeviceAttributeWallClockRate = 100000 kHz). Only the bounded waits use it.
__device__ inline uint64_t now_ns() { return static_cast<uint64_t>(wall_clock64()) * 10ull; }

/// Sleeps about `ns` nanoseconds: s_sleep takes only a constant count of 64 clocks, so the wave
/// sleeps in short steps until the counter has passed.
__device__ inline void sleep_ns(uint32_t ns) {
    const uint64_t until = now_ns() + ns;
    while (now_ns() < until) __builtin_amdgcn_s_sleep(1);
}

/// Makes the relaxed reads before it acquire reads at scope S (C++ fence-to-atomic
/// synchronization): see wait_until_backoff.
template <Scope S>
__device__ inline void fence_acquire() {
    if constexpr (S == Scope::system) __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "");
    else if constexpr (S == Scope::gpu) __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
    else __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

#else  // NVIDIA

// __host__ __device__: called from device code, which nvcc allows of a constexpr function only so
// (or with --expt-relaxed-constexpr); NVRTC's -default-device makes it a device function anyway.
template <Order O>
__host__ __device__ constexpr cuda::std::memory_order order() {
    return O == Order::relaxed   ? cuda::std::memory_order_relaxed
           : O == Order::acquire ? cuda::std::memory_order_acquire
           : O == Order::release ? cuda::std::memory_order_release
                                 : cuda::std::memory_order_acq_rel;
}
template <Scope S>
__host__ __device__ constexpr cuda::thread_scope scope() {
    return S == Scope::block ? cuda::thread_scope_block
           : S == Scope::gpu ? cuda::thread_scope_device
                             : cuda::thread_scope_system;
}
template <Scope S, class T>
using ref = cuda::atomic_ref<T, scope<S>()>;

// Half-precision adds are not covered by atomic_ref: a relaxed PTX `atom.add.noftz`, ordered by
// fences where the caller asked for acquire or release (the PTX model's fence + relaxed pattern).
// A Scope::block add is an atom of GPU scope, which is stronger.
template <Scope S>
__device__ inline void fence() {
    if constexpr (S == Scope::system) asm volatile("fence.acq_rel.sys;" ::: "memory");
    else if constexpr (S == Scope::gpu) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    else asm volatile("fence.acq_rel.cta;" ::: "memory");
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    // Before Hopper there is no bf16 atomic: a compare-exchange loop on the aligned 32-bit word
    // that holds the element, the sum formed in float and rounded to nearest even (as the
    // hardware add rounds); a concurrent update of the other half only makes it retry.
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    auto* word = reinterpret_cast<uint32_t*>(address & ~uintptr_t(3));
    const unsigned shift = (address & 2u) ? 16u : 0u;
    ref<S, uint32_t> r(*word);
    uint32_t old = r.load(cuda::std::memory_order_relaxed);
    for (;;) {
        const auto old16 = static_cast<unsigned short>(old >> shift);
        const float sum = __bfloat162float(__ushort_as_bfloat16(old16)) + __bfloat162float(__ushort_as_bfloat16(v));
        const uint32_t desired = (old & ~(0xffffu << shift)) | (uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(sum))) << shift);
        if (r.compare_exchange_strong(old, desired, cuda::std::memory_order_relaxed)) return old16;
    }
#else
    unsigned short old;
    if constexpr (S == Scope::system)
        asm volatile("atom.relaxed.sys.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    else
        asm volatile("atom.relaxed.gpu.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v) : "memory");
    return old;
#endif
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

// 16-byte relaxed accesses at system scope, single-copy atomic (PTX ld/st .b128, sm_70+): a
// reader sees all 16 bytes of one store or none of them. Written out because atomic_ref of a
// 16-byte type in CUDA 13.0's libcu++ moves the register pair the wrong way around the access.
// NVIDIA only: AMD promises no such atomicity above 8 bytes.
__device__ inline void store_relaxed_b128(void* p, uint64_t lo, uint64_t hi) {
    asm volatile("{\n\t.reg .b128 v;\n\tmov.b128 v, {%1, %2};\n\tst.relaxed.sys.global.b128 [%0], v;\n\t}" ::"l"(p),
                 "l"(lo), "l"(hi)
                 : "memory");
}
__device__ inline void load_relaxed_b128(const void* p, uint64_t& lo, uint64_t& hi) {
    asm volatile("{\n\t.reg .b128 v;\n\tld.relaxed.sys.global.b128 v, [%2];\n\tmov.b128 {%0, %1}, v;\n\t}"
                 : "=l"(lo), "=l"(hi)
                 : "l"(p)
                 : "memory");
}

/// Nanoseconds of the GPU's global timer (ticks are coarse, about 1 µs on recent GPUs).
/// NVIDIA-only (%globaltimer); the HIP branch above uses s_memrealtime.
__device__ inline uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/// Sleeps about `ns` nanoseconds (the hardware may wake the warp anywhere in [0, 2 ns]); the warp
/// issues nothing meanwhile, so the SM's other warps get its slots.
__device__ inline void sleep_ns(uint32_t ns) { __nanosleep(ns); }

/// Makes the relaxed reads before it acquire reads at scope S (C++ fence-to-atomic synchronization;
/// in PTX, a strong read followed by this fence is an acquire pattern): see wait_until_backoff.
template <Scope S>
__device__ inline void fence_acquire() {
    cuda::atomic_thread_fence(cuda::std::memory_order_acquire, scope<S>());
}

#endif

/// This SM's (compute unit's) cycle counter, clock64 on both vendors (AMD: s_memtime): a register
/// read, cheap enough for pacing a spin loop (now_ns is not), but it counts cycles, not time, and
/// differs between SMs.
__device__ inline uint64_t cycles() { return static_cast<uint64_t>(clock64()); }

/// Orders this thread's prior writes, including writes into peer memory, before later ones
/// as seen by every GPU and the host (both vendors provide __threadfence_system).
__device__ inline void fence_system() { __threadfence_system(); }

/// Hint: bring `bytes` of global memory at `p` into L2, one instruction of one thread, no
/// registers held while the bytes travel (sm_90 cp.async.bulk.prefetch.L2; p and bytes multiples
/// of 16). Elsewhere, and on AMD, it does nothing.
__device__ inline void prefetch_l2(const void* p, uint32_t bytes) {
#if IRIS_HAS_TMA
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

/// Lets the kernel after this one on the stream start while this one runs, once every block of
/// this one has called it or exited (programmatic dependent launch: IRIS_LAUNCH_OVERLAP_PREVIOUS in
/// iris_runtime.h). Elsewhere, and on AMD, it does nothing.
__device__ __forceinline__ void let_next_kernel_start() {
#if IRIS_PLATFORM_NVIDIA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Returns once the kernel ahead of this one on the stream has finished and its writes are
/// visible: at once where that kernel had finished before this one started, or where this one was
/// not launched to overlap it. Elsewhere, and on AMD, it does nothing.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if IRIS_PLATFORM_NVIDIA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Ends the calling thread (checked builds, after recording a bad address). NVIDIA: PTX `exit`,
/// only this thread stops; threads that exited count as arrived at later __syncthreads. AMD:
/// s_endpgm ends the whole wavefront. Never __trap / abort: they take down the context, and a
/// rank's context cannot be recovered inside a JVM.
[[noreturn]] __device__ inline void exit_thread() {
#if IRIS_PLATFORM_NVIDIA
    asm volatile("exit;" ::: "memory");
    __builtin_unreachable();
#else
    __builtin_amdgcn_endpgm();
#endif
}

}  // namespace arch

/// Conversions of the 16-bit float types, the same on both platforms.
__device__ inline float to_float(f16 v) { return arch::to_float(v); }
__device__ inline float to_float(bf16 v) { return arch::to_float(v); }

}  // namespace iris
