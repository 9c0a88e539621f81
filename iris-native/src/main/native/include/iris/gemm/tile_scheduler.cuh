// iris/gemm/tile_scheduler.cuh: which output tile a persistent CTA computes next.
//
// Tiles are numbered 0..count-1 and CTA b takes b, b + gridDim.x, b + 2*gridDim.x, ... The number
// maps to (tile_m, tile_n) in grouped order: `group_m` tile rows are walked column by column, so
// the CTAs that run at the same time share a few rows of A and a few columns of B in L2 instead
// of streaming all of B once per row of tiles.
//
// A kernel may bring its own scheduler instead (e.g. to start each rank at a different column so
// that remote stores spread over the peers) without touching the mainloop. A scheduler is any type
// with these const device functions, called by the producer thread and by every consumer thread,
// which must all get the same answers:
//
//   int count();              units in the whole problem
//   int first();              this CTA's first unit (>= count(): none)
//   int next(int unit);       the unit after `unit`
//   TileCoord coord(int unit);  the tile it computes
#pragma once

namespace iris::gemm {

/// One unit of work: an output tile, or a part of its K loop (the fused all-gather's split-K halves,
/// the plain GEMM's stream-K pieces).
struct TileCoord {
    int m;            ///< tile row: output rows [m * kTileM, (m + 1) * kTileM)
    int n;            ///< tile column: output columns [n * kTileN, (n + 1) * kTileN)
    int index = 0;    ///< position in the scheduler's sequence (set by persistent)
    int slice = 0;    ///< which half of K this unit runs when slices == 2 (the library's split-K)
    int slices = 1;   ///< units per tile: 1 (every scheduler of yours), or 2 for the library's split-K
    int k_begin = 0;  ///< with k_end >= 0: the unit runs k-blocks [k_begin, k_end) of the tile (stream-K)
    int k_end = -1;   ///< -1: the k-blocks follow from slice and slices
};

/// The default order: CTA b takes tiles b, b + gridDim.x, ...; with r = t % (group * tiles_n), tile
/// t is tile row (t / (group * tiles_n)) * group + r % rows and tile column r / rows, rows being its
/// group's tile rows (group, fewer in the last group). Its count and coord are arithmetic the host
/// can run too (StreamKScheduler's, in a unit test).
template <int TileM, int TileN>
struct GroupedTileScheduler {
    int tiles_m;
    int tiles_n;
    int group_m;

    /// m x n output, `group` tile rows per group (values below 1 count as 1).
    __host__ __device__ GroupedTileScheduler(int m, int n, int group)
        : tiles_m((m + TileM - 1) / TileM), tiles_n((n + TileN - 1) / TileN), group_m(group < 1 ? 1 : group) {}

    __host__ __device__ int count() const { return tiles_m * tiles_n; }

    __host__ __device__ TileCoord coord(int tile) const {
        const int per_group = group_m * tiles_n;
        const int first_m = (tile / per_group) * group_m;
        const int rows = min(tiles_m - first_m, group_m);
        const int r = tile % per_group;
        return {first_m + r % rows, r / rows};
    }

    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int tile) const { return tile + static_cast<int>(gridDim.x); }
};

}  // namespace iris::gemm
