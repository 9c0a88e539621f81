// moe_expert_schedule.cuh: the expert GEMM's units (moe_expert_gemm.cu) and the order its CTAs
// take them in. Host and device: src/test/native/moe_expert_schedule.cu runs them on the CPU.
//
// The unit table of one launch: expert l's units are [table[l], table[l + 1]), its tile rows
// (ceil(rows / TileM) of the rows its count puts in the receive buffer, at most the capacity)
// times the tile columns of its weights; table[local_experts] is the total.
#pragma once

#include <cstdint>

#include "iris/gemm/tile_scheduler.cuh"

namespace moe {

/// Units of one expert that received `count` rows into a receive buffer of `capacity` rows.
template <int TileM>
__host__ __device__ inline int expert_units(int count, int capacity, int tiles_n) {
    const int rows = min(max(count, 0), capacity);
    return (rows + TileM - 1) / TileM * tiles_n;
}

/// The tile order (a scheduler of iris/gemm/tile_scheduler.cuh) over the unit table: CTA b takes
/// units b, b + gridDim.x, ...; inside an expert, consecutive units walk its tile rows first, so
/// the CTAs running together share a tile column of its weights.
template <int TileM, int TileN>
struct ExpertTileScheduler {
    const int32_t* table;  // the unit table (shared memory)
    int local_experts;
    int tiles_n;           // n / TileN
    int rows_per_expert;   // capacity / TileM: tile rows of the receive buffer per expert

    __host__ __device__ int count() const { return table[local_experts]; }
    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int u) const { return u + static_cast<int>(gridDim.x); }

    __host__ __device__ iris::gemm::TileCoord coord(int u) const {
        // The last expert whose units start at or before u; experts without rows have empty ranges.
        int lo = 0;
        int hi = local_experts - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (table[mid] <= u) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        const int r = u - table[lo];
        const int tiles_m = (table[lo + 1] - table[lo]) / tiles_n;
        return {lo * rows_per_expert + r % tiles_m, lo * tiles_n + r / tiles_m};
    }
};

}  // namespace moe
