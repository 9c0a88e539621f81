// iris/gemm/impl/pairs.cuh (not API): two adjacent f32 values to and from an output row, the unit in
// which both GEMM mainloops' epilogues (wgmma's and mma.sync's accumulator layouts each give a lane
// pairs of adjacent columns) read C or the bias and store C.
#pragma once

#include <type_traits>

#include "iris/impl/arch.cuh"

namespace iris::gemm::impl {

/// p[0], p[1] = x, y rounded once to Out (one 4-byte store for 16-bit types, 8 for f32).
template <class Out>
__device__ inline void store_pair(Out* p, float x, float y) {
    if constexpr (std::is_same_v<Out, float>) {
        *reinterpret_cast<float2*>(p) = make_float2(x, y);
    } else if constexpr (std::is_same_v<Out, iris::bf16>) {
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
    } else {
        *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
    }
}

/// p[0], p[1] as f32.
template <class Out>
__device__ inline float2 load_pair(const Out* p) {
    if constexpr (std::is_same_v<Out, float>) {
        return *reinterpret_cast<const float2*>(p);
    } else if constexpr (std::is_same_v<Out, iris::bf16>) {
        return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
    } else {
        return __half22float2(*reinterpret_cast<const __half2*>(p));
    }
}

/// One value to and from an output element, for stores that have no adjacent pair (the swapped
/// kernels' transposed C).
template <class Out>
__device__ inline void store_one(Out* p, float x) {
    if constexpr (std::is_same_v<Out, float>) {
        *p = x;
    } else {
        *p = iris::arch::from_float<Out>(x);
    }
}

template <class Out>
__device__ inline float load_one(const Out* p) {
    if constexpr (std::is_same_v<Out, float>) {
        return *p;
    } else {
        return iris::arch::to_float(*p);
    }
}

/// *out = alpha acc + beta *out (+ add), for two adjacent columns, rounded once; beta 0 never reads
/// out, so it may hold anything (NaN included).
template <class Out>
__device__ inline void finish_pair(Out* out, float2 acc, float2 add, float alpha, float beta) {
    float x = alpha * acc.x;
    float y = alpha * acc.y;
    if (beta != 0.f) {
        const float2 old = load_pair(out);
        x += beta * old.x;
        y += beta * old.y;
    }
    store_pair(out, x + add.x, y + add.y);
}

}  // namespace iris::gemm::impl
