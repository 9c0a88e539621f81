// split_k_exchange.cuh: split-K by two. Two units per output tile, each running half of the K loop,
// for problems whose tiles would leave most SMs idle (a small M, as in all-gather + GEMM at 1024
// rows: 56 tiles of 128 x 256 on 132 SMs). One wave of 112 half-K units runs in about half the time of 56 whole tiles, and
// 128 x 256 tiles keep the mainloop's L2 traffic per flop at that of the large shapes, where
// 128 x 128 tiles (twice the tiles, whole K) ran the GEMM at half cuBLAS's rate.
//
// Each consumer warpgroup owns the same 64 rows of the tile in both units. Which of the two
// warpgroups that own those rows finishes them is decided by arrival: after its mainloop each
// takes a ticket, an exchange of the call's epoch into the rows' ticket word, and
//   first   stores its f32 accumulators to the rows' partial slot, then releases the slot's flag;
//   second  waits for the flag, adds the slot to its accumulators, and runs the epilogue.
// The first never waits. The second waits only for a warpgroup that has already taken its ticket:
// one that is running, past its mainloop, with nothing left to do but those stores. So the wait is
// as short as the stores wherever and whenever the two units run: in the same round on
// neighbouring CTAs (the host's usual launch), in two rounds of one CTA, or with one of them held
// back until other work (another stream, another process, an MPS limit) leaves an SM free. Roles
// fixed by the schedule (warpgroup c finishing in slice c) made each unit of a pair wait for the
// other, which holds only while both are resident at once: with SMs taken by other work, a CTA
// waited for a partner that could only start once that CTA had left its SM.
//
// Why the cost is small: one atomic per warpgroup of each unit (two per 64 rows of a tile per
// call), by one thread, on a word no other pair touches, so it never queues behind another: one
// round trip to L2 (about a microsecond) after a mainloop over half of K (tens of microseconds at
// the shapes split-K serves, 1024 x 3584 x 8192 on 132 SMs). On the tile's critical path it adds
// at most that round trip once, before the first's stores or the second's poll, which the
// second's poll of the flag already cost when it arrived first under the fixed roles. Epochs, not
// counts: a ticket word holds the epoch of the last call that took it, so no reset is needed
// between calls, and a replayable call (epoch 1) follows the zeroing of every flag (FusedGemm).
//
// The sum is first half + second half in f32 whichever arrives first (f32 addition commutes), the
// same on both halves of the tile, rounded once.
#pragma once

#include "fused/fused_common.cuh"
#include "iris/gemm/impl/k_blocks.cuh"
#include "iris/gemm/impl/vectors.cuh"

namespace fused {

// Where the mainloop splits a tile's K loop (iris/gemm/impl/k_blocks.cuh, the library's own).
using iris::gemm::impl::kSplitAlignBlocks;
using iris::gemm::impl::split_boundary;
using iris::gemm::impl::splits_into_two;

/// Wraps a tile scheduler: `slices` (1 or 2) consecutive units per tile, in the tiles' order, so that
/// on an even grid the two halves of a tile run in the same round on neighbouring CTAs, where the
/// exchange's wait is shortest. Any grid is correct: the exchange decides who waits by arrival
/// (SplitPartials below), not by this order. The mainloop runs a unit's half of K
/// (iris/gemm/impl/k_blocks.cuh's split_boundary).
template <class Tiles>
struct SplitKScheduler {
    Tiles tiles;
    int slices;

    __host__ __device__ int count() const { return tiles.count() * slices; }
    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int unit) const { return unit + static_cast<int>(gridDim.x); }

    __host__ __device__ TileCoord coord(int unit) const {
        TileCoord t = tiles.coord(unit / slices);
        t.slice = unit % slices;
        t.slices = slices;
        return t;
    }
};

/// u64 words of split-K's exchange for `tiles` tiles: flags[tiles][2] and tickets[tiles][2].
__host__ __device__ constexpr int64_t split_exchange_words(int64_t tiles) { return tiles * 2 * 2; }

/// The exchange of the two units' halves, persistent's combiner (iris/gemm/persistent.cuh):
/// partials[tiles][2][kAccumulators / 4][128] float4 (each thread's accumulators, so both sides
/// read and write whole 2 KiB rows per warpgroup); flags[tiles][2] and, after them,
/// tickets[tiles][2], u64 whose values are epochs (split_exchange_words).
template <class Cfg>
struct SplitPartials {
    const iris::Ctx& ctx;
    float4* partials;
    uint64_t* flags;
    int64_t tiles;
    uint64_t epoch;

    static constexpr int kVectors = Cfg::kAccumulators / 4;

    /// Whether this warpgroup runs the epilogue of its rows of `t` (t.index: the unit).
    __device__ bool combine(float (&acc)[Cfg::kAccumulators], const TileCoord& t, int consumer) const {
        if (t.slices == 1) return true;
        const int64_t half = int64_t(t.index / t.slices) * 2 + consumer;
        float4* slot = partials + half * kVectors * 128 + threadIdx.x % 128;
        uint64_t* flag = flags + half;
        const int barrier = 1 + consumer;
        bool second = false;
        if (threadIdx.x % 128 == 0) {
            uint64_t* ticket = flags + tiles * 2 + half;
            second = iris::arch::exchange<iris::Order::relaxed, iris::Scope::gpu>(ticket, epoch) == epoch;
        }
        if (!sm90::named_barrier_or(barrier, 128, second)) {
#pragma unroll
            for (int i = 0; i < kVectors; ++i) {
                __stcg(slot + i * 128, iris::gemm::impl::vector_of(acc, i));
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
            iris::gemm::impl::add_vector(acc, i, __ldcg(slot + i * 128));
        }
        return true;
    }
};

}  // namespace fused
