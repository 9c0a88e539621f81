// iris/gemm/impl/k_blocks.cuh (not API): which k-blocks of a tile a unit runs. A whole tile runs
// all of them; a stream-K piece (iris/gemm/stream_k.cuh) the range its scheduler set; the fused
// all-gather's split-K (TileCoord::slices == 2) runs each half of K as a unit of its own, the
// halves meeting at split_boundary. The boundary is shared with the host through
// iris/abi/fused.h.
#pragma once

#include "iris/abi/fused.h"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::impl {

/// A slice boundary falls on a multiple of this many k-blocks (128 columns: a whole all-gather
/// piece, so a unit's first loads wait for exactly one piece).
inline constexpr int kSplitAlignBlocks = IRIS_FUSED_SPLIT_ALIGN_BLOCKS;

/// The first k-block of slice 1: half of the K loop, rounded up to kSplitAlignBlocks. The host
/// splits only when this leaves slice 1 at least one k-block (K >= IRIS_FUSED_MIN_SPLIT_K, which
/// all_gather_gemm.cu checks against this).
__host__ __device__ constexpr int split_boundary(int k_blocks) {
    return ((k_blocks + 1) / 2 + kSplitAlignBlocks - 1) / kSplitAlignBlocks * kSplitAlignBlocks;
}

/// Whether every K loop of `first` to 2^14 k-blocks splits into two slices with k-blocks each.
constexpr bool splits_into_two(int first) {
    for (int blocks = first; blocks <= (1 << 14); ++blocks) {
        if (split_boundary(blocks) <= 0 || split_boundary(blocks) >= blocks) return false;
    }
    return true;
}

struct KBlocks {
    int begin;
    int end;
    __host__ __device__ int count() const { return end - begin; }
};

/// The k-blocks a unit runs: the range its scheduler gave it, all of them, or its slice's half.
__host__ __device__ inline KBlocks k_blocks_of(const TileCoord& t, int k_blocks) {
    if (t.k_end >= 0) return {t.k_begin, t.k_end};
    if (t.slices == 1) return {0, k_blocks};
    const int boundary = split_boundary(k_blocks);
    return t.slice == 0 ? KBlocks{0, boundary} : KBlocks{boundary, k_blocks};
}

}  // namespace iris::gemm::impl
