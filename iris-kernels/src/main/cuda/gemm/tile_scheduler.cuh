// tile_scheduler.cuh: which output tile a persistent CTA computes next.
//
// Tiles are numbered 0..count-1 and CTA b takes b, b + gridDim.x, b + 2*gridDim.x, ... The number
// maps to (tile_m, tile_n) in grouped order: `group_m` tile rows are walked column by column, so
// the CTAs that run at the same time share a few rows of A and a few columns of B in L2 instead
// of streaming all of B once per row of tiles.
//
// A fused kernel replaces or wraps this to reorder tiles (e.g. start each rank at a different
// column so that remote stores spread over the peers) without touching the mainloop.
#pragma once

namespace gemm {

struct TileCoord {
    int m;          ///< tile row: output rows [m * TileM, m * TileM + TileM)
    int n;          ///< tile column
    int index = 0;  ///< position in the scheduler's sequence (set by the kernel)
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

}  // namespace gemm
