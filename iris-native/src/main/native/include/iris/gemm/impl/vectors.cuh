// iris/gemm/impl/vectors.cuh (not API): a consumer thread's f32 accumulators as float4 vectors,
// vector v being acc[4v .. 4v + 3]: the unit in which split-K, stream-K and the SplitK hand-over
// move partial sums through memory.
#pragma once

namespace iris::gemm::impl {

/// Vector v of the accumulators.
template <int N>
__device__ inline float4 vector_of(const float (&acc)[N], int v) {
    return make_float4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]);
}

/// Vector v of the accumulators = x.
template <int N>
__device__ inline void set_vector(float (&acc)[N], int v, const float4& x) {
    acc[4 * v] = x.x;
    acc[4 * v + 1] = x.y;
    acc[4 * v + 2] = x.z;
    acc[4 * v + 3] = x.w;
}

/// Vector v of the accumulators += x.
template <int N>
__device__ inline void add_vector(float (&acc)[N], int v, const float4& x) {
    acc[4 * v] += x.x;
    acc[4 * v + 1] += x.y;
    acc[4 * v + 2] += x.z;
    acc[4 * v + 3] += x.w;
}

}  // namespace iris::gemm::impl
