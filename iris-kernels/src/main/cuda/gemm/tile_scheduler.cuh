// tile_scheduler.cuh: which output tile a persistent CTA computes next.
//
// Tiles are numbered 0..count-1 and CTA b takes b, b + gridDim.x, b + 2*gridDim.x, ... The number
// maps to (tile_m, tile_n) in grouped order: `group_m` tile rows are walked column by column, so
// the CTAs that run at the same time share a few rows of A and a few columns of B in L2 instead
// of streaming all of B once per row of tiles.
//
// A fused kernel replaces or wraps this to reorder tiles (e.g. start each rank at a different
// column so that remote stores spread over the peers) without touching the mainloop, or wraps it
// in SplitKScheduler, whose units are halves of K (gemm/split_k_exchange.cuh).
#pragma once

#include "iris/abi/fused.h"

namespace gemm {

struct TileCoord {
    int m;           ///< tile row: output rows [m * TileM, m * TileM + TileM)
    int n;           ///< tile column
    int index = 0;   ///< position in the scheduler's sequence (set by the kernel)
    int slice = 0;   ///< which half of K this unit runs when slices == 2 (SplitKScheduler)
    int slices = 1;  ///< units per tile: 1, or 2 for split-K (gemm/split_k_exchange.cuh)
};

template <int TileM, int TileN>
struct GroupedTileScheduler {
    int tiles_m;
    int tiles_n;
    int group_m;

    __device__ GroupedTileScheduler(int m, int n, int group)
        : tiles_m((m + TileM - 1) / TileM), tiles_n((n + TileN - 1) / TileN), group_m(group < 1 ? 1 : group) {}

    __device__ int count() const { return tiles_m * tiles_n; }

    __device__ TileCoord coord(int tile) const {
        const int per_group = group_m * tiles_n;
        const int first_m = (tile / per_group) * group_m;
        const int rows = min(tiles_m - first_m, group_m);
        const int r = tile % per_group;
        return {first_m + r % rows, r / rows};
    }

    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int tile) const { return tile + static_cast<int>(gridDim.x); }
};

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
    __device__ int count() const { return end - begin; }
};

/// The k-blocks a unit runs: all of them, or its slice's half.
__device__ inline KBlocks k_blocks_of(const TileCoord& t, int k_blocks) {
    if (t.slices == 1) return {0, k_blocks};
    const int boundary = split_boundary(k_blocks);
    return t.slice == 0 ? KBlocks{0, boundary} : KBlocks{boundary, k_blocks};
}

/// Wraps a tile scheduler: `slices` (1 or 2) consecutive units per tile, in the tiles' order, so that
/// on an even grid the two halves of a tile run in the same round on neighbouring CTAs, where the
/// exchange's wait is shortest. Any grid is correct: the exchange decides who waits by arrival
/// (gemm/split_k_exchange.cuh), not by this order.
template <class Tiles>
struct SplitKScheduler {
    Tiles tiles;
    int slices;

    __device__ int count() const { return tiles.count() * slices; }
    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int unit) const { return unit + static_cast<int>(gridDim.x); }

    __device__ TileCoord coord(int unit) const {
        TileCoord t = tiles.coord(unit / slices);
        t.slice = unit % slices;
        t.slices = slices;
        return t;
    }
};

}  // namespace gemm
