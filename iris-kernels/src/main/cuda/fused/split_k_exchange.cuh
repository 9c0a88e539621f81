// split_k_exchange.cuh: split-K by two. Two CTAs per output tile, each running half of the K loop,
// for problems whose tiles would leave most SMs idle (a small M, as in all-gather + GEMM at 1024
// rows: 56 tiles of 128 x 256 on 132 SMs). One wave of 112 half-K units runs in about half the time of 56 whole tiles, and
// 128 x 256 tiles keep the mainloop's L2 traffic per flop at that of the large shapes, where
// 128 x 128 tiles (twice the tiles, whole K) ran the GEMM at half cuBLAS's rate.
//
// The two units of a tile are consecutive in the schedule, so with an even grid they run in the
// same round on neighbouring CTAs. Each consumer warpgroup owns 64 rows of the tile in both units;
// warpgroup c finishes its rows in slice c and donates them in the other slice:
//   donor     stores its f32 accumulators to the tile's partial slot, then releases the slot's flag;
//   finisher  waits for the flag, adds the slot to its accumulators, and runs the epilogue.
// A donor never waits on a finisher, and a finisher waits only on the unit beside it in the same
// round (whose earlier rounds did not wait on this CTA's current one), so the waits cannot cycle.
// The sum is first half + second half in f32, the same on both halves of the tile, rounded once.
#pragma once

#include "fused/fused_common.cuh"
#include "iris/gemm/impl/k_blocks.cuh"

namespace fused {

// Where the mainloop splits a tile's K loop (iris/gemm/impl/k_blocks.cuh, the library's own).
using iris::gemm::impl::kSplitAlignBlocks;
using iris::gemm::impl::split_boundary;
using iris::gemm::impl::splits_into_two;

/// Wraps a tile scheduler: `slices` (1 or 2) consecutive units per tile, in the tiles' order. The
/// mainloop runs a unit's half of K (iris/gemm/impl/k_blocks.cuh's split_boundary).
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

    /// A pair split over two rounds of one CTA would wait for itself; the host never launches that
    /// (FusedGemm.blocks), and the kernel refuses such a launch (all_gather_gemm.cu).
    __device__ bool launch_ok() const { return slices == 1 || gridDim.x % 2 == 0 || count() <= static_cast<int>(gridDim.x); }
};

/// The exchange of the two units' halves, persistent's combiner (iris/gemm/persistent.cuh):
/// partials[tiles][2][kAccumulators / 4][128] float4 (each thread's accumulators, so both sides
/// read and write whole 2 KiB rows per warpgroup), and flags[tiles][2] u64 whose values are epochs.
template <class Cfg>
struct SplitPartials {
    const iris::Ctx& ctx;
    float4* partials;
    uint64_t* flags;
    uint64_t epoch;

    static constexpr int kVectors = Cfg::kAccumulators / 4;

    /// Whether this warpgroup runs the epilogue of its rows of `t` (t.index: the unit).
    __device__ bool combine(float (&acc)[Cfg::kAccumulators], const TileCoord& t, int consumer) const {
        if (t.slices == 1) return true;
        const int64_t half = int64_t(t.index / t.slices) * 2 + consumer;
        float4* slot = partials + half * kVectors * 128 + threadIdx.x % 128;
        uint64_t* flag = flags + half;
        const int barrier = 1 + consumer;
        if (consumer != t.slice) {
#pragma unroll
            for (int i = 0; i < kVectors; ++i) {
                __stcg(slot + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
            }
            sm90::named_barrier_sync(barrier, 128);
            if (threadIdx.x % 128 == 0) {
                iris::arch::store<iris::Order::release, iris::Scope::gpu>(flag, epoch);
            }
            return false;
        }
        if (threadIdx.x % 128 == 0) {
            iris::wait_until_local(ctx, flag, iris::Cmp::ge, epoch, kSiteSplitPartial);
        }
        sm90::named_barrier_sync(barrier, 128);
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            const float4 v = __ldcg(slot + i * 128);
            acc[4 * i] += v.x;
            acc[4 * i + 1] += v.y;
            acc[4 * i + 2] += v.z;
            acc[4 * i + 3] += v.w;
        }
        return true;
    }
};

}  // namespace fused
