// common.cuh: what both attention mainloops share, so that their outputs and the ring state agree
// bit for bit in meaning: the chunk positions and the visible K/V tiles of a causal query tile,
// the mode bits, the rounding of probabilities, the ex2 they use, and the quad reductions of a
// row's statistics (in both, a row's fragment elements sit in the four lanes of a quad).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <iris/abi/attention.h>

#include "iris/impl/arch.cuh"

namespace attention {

/// Global positions of a shard's rows (iris/abi/attention.h).
using Chunks = iris_attention_chunks;

/// iris_attention_args::mode bits.
inline constexpr int kLoadState = IRIS_ATTENTION_LOAD_STATE;
inline constexpr int kFinalize = IRIS_ATTENTION_FINALIZE;

/// The global position of local row `row` of a shard laid out as c.
__device__ inline int position(const Chunks& c, int row) {
    return (row < c.len ? c.first : c.second) * c.len + row % c.len;
}

/// The 128-key tiles of a loop that one 128-row query tile sees, in order. Unmasked: all `tiles`.
/// Causal: a key is visible when its position is at most the query's, so within each chunk of the
/// shard the visible tiles are a prefix, and the one tile at the query's own position is the
/// diagonal. Worked out once, so that the loops neither divide nor branch over hidden tiles per
/// tile (with a `continue` over hidden tiles in the Hopper consumers' loop, ptxas serialized their
/// wgmma).
struct VisibleTiles {
    int end0;      // chunk 0's visible tiles are [0, end0)
    int start1;    // chunk 1's are [start1, end1)
    int end1;
    int diagonal;  // the masked tile, or -1

    template <bool Causal>
    __device__ static VisibleTiles of(const Chunks& q_chunks, const Chunks& kv, int q_tile, int tiles) {
        if constexpr (!Causal) {
            return {tiles, tiles, tiles, -1};
        } else {
            const int q0 = position(q_chunks, q_tile * 128);
            const int per_chunk = kv.len / 128;
            VisibleTiles v{0, 0, 0, -1};
            for (int c = 0; c < 2 && c * per_chunk < tiles; ++c) {
                const int offset = q0 - (c == 0 ? kv.first : kv.second) * kv.len;  // the query in this chunk
                const int seen = offset < 0 ? 0 : min(offset / 128 + 1, per_chunk);
                if (offset >= 0 && offset < kv.len) v.diagonal = c * per_chunk + offset / 128;
                if (c == 0) {
                    v.end0 = seen;
                    v.start1 = v.end1 = seen;
                } else {
                    v.start1 = per_chunk;
                    v.end1 = per_chunk + seen;
                }
            }
            return v;
        }
    }
    __device__ int first() const { return end0 > 0 ? 0 : start1; }
    __device__ int next(int j) const { return j + 1 == end0 ? start1 : j + 1; }
    __device__ bool done(int j) const { return j >= end1; }
};

/// Two probabilities (or outputs) rounded to the input type, packed as one 32-bit operand register.
__device__ inline uint32_t pack(float a, float b, iris::bf16) {
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
}
__device__ inline uint32_t pack(float a, float b, iris::f16) {
    __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
}

/// 2^x, flushing results below 2^-126 to zero: the plain instruction, without exp2f's handling of
/// subnormal results. A term that small is under 2^-126 of its row's largest (which is 1), so
/// neither the f32 row sum nor P V could keep it.
__device__ inline float exp2_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ inline float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 1));
    return fmaxf(v, __shfl_xor_sync(0xffffffff, v, 2));
}
__device__ inline float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffff, v, 1);
    return v + __shfl_xor_sync(0xffffffff, v, 2);
}

/// The natural log of a row's softmax denominator from its running max (log2 units, scaled) and sum.
__device__ inline float log_sum_exp(float row_max, float row_sum) {
    return (row_max + log2f(row_sum)) * 0.69314718055994531f;
}

}  // namespace attention
