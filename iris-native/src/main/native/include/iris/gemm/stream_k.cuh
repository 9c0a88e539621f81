// iris/gemm/stream_k.cuh: stream-K, the plain GEMM's schedule for shapes whose tiles do not fill the
// GPU. A 1 x 4096 x 14336 layer has 16 tiles of 128 x 256: one per CTA, 16 of 132 SMs stream the
// weights. Stream-K shares out the k-blocks of the last `sk_tiles` tiles over every CTA of the grid
// instead: CTA c runs iterations [c S / G, (c + 1) S / G) of the S = sk_tiles x k_blocks in tile
// order, so its range starts inside one tile and ends inside another. The other tiles run whole,
// round robin, first (the host makes them whole waves, and shares out only what would have been a
// mostly empty last wave, or every tile when there are fewer than SMs).
//
// A tile that several CTAs share is finished by the last of them to arrive, so that no CTA ever
// waits for another: each piece stores its f32 accumulators to its CTA's slot, then counts itself
// on the tile's counter; the piece that makes the count whole adds every slot of the tile, in the
// order of the CTAs that own them (the same sum on every run, whoever arrives last), and runs the
// epilogue; it resets the counter to zero for the next launch. Each consumer warpgroup owns its 64
// rows in every piece, so the two warpgroups count apart and never meet. The cost: a partial of a
// tile's rows inside C written and read once per piece (at M = 1, 4 threads' accumulators of 128;
// a warpgroup without a row in C takes no part), and one atomic per warpgroup and piece.
//
// Only the first and the last piece of a CTA's range can be partial, hence two slots per CTA
// (IRIS_GEMM_STREAM_K_SLOTS_PER_CTA); the host never gives a CTA fewer than
// IRIS_GEMM_STREAM_K_MIN_BLOCKS iterations, so no range is empty.
//
// In clusters, all of the above holds with a block of tiles for a tile and a cluster for a CTA: a
// cluster's CTAs run the same range, each on its own tile of the block, with its own slots and
// counters.
#pragma once

#include <cstdint>

#include "iris/abi/gemm.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/mainloop.cuh"
#include "iris/gemm/impl/vectors.cuh"
#include "iris/gemm/scale.cuh"
#include "iris/gemm/tile_scheduler.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm {

/// Where a CTA runs, as StreamKScheduler reads it: a 1-D grid of clusters of Cfg::kClusterSize
/// consecutive CTAs. A host test brings a place of its own, to run the scheduler as every CTA of a
/// launch would (iris-kernels/src/test/native/gemm_schedule.cu).
template <class Cfg>
struct LaunchPlace {
    __device__ static unsigned clusters() { return gridDim.x / Cfg::kClusterSize; }
    __device__ static unsigned cluster() { return blockIdx.x / Cfg::kClusterSize; }
    /// This CTA's rank in its cluster.
    __device__ static int rank() { return static_cast<int>(blockIdx.x) % Cfg::kClusterSize; }
    __device__ static impl::ClusterPlace<Cfg> tile() { return impl::ClusterPlace<Cfg>::here(); }
};

/// Every unit whole, round robin over the clusters (cluster c takes units c, c + clusters, ...), each
/// CTA on its tile of the unit's block, in StreamKScheduler's order: what a plan that shares no
/// unit runs (impl::run_units). Its K loops run every k-block of a tile, a count the compiler sees
/// is the same in every thread. On StreamKScheduler's ranges, whole-tile plans ran 2.6 % slower in
/// geometric mean over 116 plans, up to 9 % (GemmPlanTimes, 2026-12-05); the split-K plans, which still
/// run those ranges, are 2.3 % slower beside this path.
template <class Cfg, class Place = LaunchPlace<Cfg>>
struct WholeUnits {
    GroupedTileScheduler<Cfg::kClusterM * Cfg::kTileM, Cfg::kClusterN * Cfg::kTileN> order;
    impl::ClusterPlace<Cfg> place;  // this CTA's tile in each unit's block

    __host__ __device__ WholeUnits(int m, int n, int group)
        : order(m, n, (group + Cfg::kClusterM - 1) / Cfg::kClusterM), place(Place::tile()) {}

    __host__ __device__ int count() const { return order.count(); }
    __host__ __device__ int first() const { return static_cast<int>(Place::cluster()); }
    __host__ __device__ int next(int t) const { return t + static_cast<int>(Place::clusters()); }
    __host__ __device__ TileCoord coord(int t) const { return in_block(order.coord(t), place); }

    /// The tile at `place` of a unit's block of tiles.
    __host__ __device__ static TileCoord in_block(TileCoord block, impl::ClusterPlace<Cfg> place) {
        block.m = Cfg::kClusterM * block.m + place.m;
        block.n = Cfg::kClusterN * block.n + place.n;
        return block;
    }
};

/// Whole units round robin, then this cluster's stream-K range (a scheduler as tile_scheduler.cuh
/// says). A unit is a tile, or in clusters (Config's Cluster) a block of kClusterM x kClusterN
/// adjacent tiles, one per CTA of the cluster: the cluster is the one that takes units and ranges,
/// so that its CTAs run the same k-blocks of their tiles, and each loads its share of the operands
/// into the others (impl/mainloop.cuh). Units are numbered in grouped order (over rows of kClusterM
/// tiles); the stream-K units are the last sk_tiles of them. A CTA's tile may lie past C (tile rows
/// or columns not a multiple of the block's): it then loads zeros, stores nothing, and loads its
/// shares for the others all the same.
template <class Cfg, class Place = LaunchPlace<Cfg>>
struct StreamKScheduler {
    GroupedTileScheduler<Cfg::kClusterM * Cfg::kTileM, Cfg::kClusterN * Cfg::kTileN> order;
    int k_blocks;
    int whole_tiles;  // units [0, whole_tiles) run whole
    int iterations;   // of the stream-K units: (units - whole_tiles) x k_blocks

    /// sk_tiles outside [0, units], too few iterations for one per cluster, or more than an int
    /// counts (the host shares out fewer than two waves of units), run every unit whole.
    __host__ __device__ StreamKScheduler(int m, int n, int k, int group, int sk_tiles)
        : order(m, n, (group + Cfg::kClusterM - 1) / Cfg::kClusterM),
          k_blocks((k + Cfg::kTileK - 1) / Cfg::kTileK) {
        const int tiles = order.count();
        const int64_t shared = int64_t(sk_tiles) * k_blocks;
        const unsigned fill = clusters();  // read before the condition, so that it needs no branch
        if (sk_tiles < 0 || sk_tiles > tiles || shared < fill || shared > 0x3fffffff) sk_tiles = 0;  // int arithmetic below
        whole_tiles = tiles - sk_tiles;
        iterations = sk_tiles * k_blocks;
    }

    /// Whether any unit is shared by K (else WholeUnits runs them all).
    __host__ __device__ bool shares() const { return whole_tiles < order.count(); }

    /// Clusters of the launch, and this CTA's (one CTA per cluster without clusters).
    __host__ __device__ static unsigned clusters() { return Place::clusters(); }
    __host__ __device__ static unsigned cluster() { return Place::cluster(); }
    /// This CTA's rank in its cluster.
    __host__ __device__ static int rank() { return Place::rank(); }

    // No 64-bit division below: ptxas calls a subroutine for one, whose result it cannot prove the
    // same in every thread; the K loops' counts then lived in per-thread registers, the stage ring
    // with them, and whole 64 x 128 tiles ran 10 to 16 % slower, 64 x 64 ones 6 %, 128 x 128 ones 3 %
    // (GemmPlanTimes, 0bf1d41 against cf0492f; MainloopDivisionTest holds the PTX to this).

    /// The first iteration of cluster c: floor(c x iterations / clusters), as c q + c r / clusters
    /// (q, r: iterations' quotient and remainder by clusters; c r < clusters^2 fits an int).
    __host__ __device__ int start(int c) const {
        const int cl = static_cast<int>(clusters());
        const int q = iterations / cl, r = iterations % cl;
        return c * q + c * r / cl;
    }
    /// The cluster whose range holds iteration x: the last one that starts at or before it, by
    /// bisection over start (every range holds an iteration: iterations >= clusters).
    __host__ __device__ int owner(int x) const {
        int lo = 0, hi = static_cast<int>(clusters()) - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (start(mid) <= x) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
    // This cluster's iterations are [start(cluster()), start(cluster() + 1)), worked out where needed
    // (once per unit) rather than kept in registers across the mainloop, which holds 128 accumulators.
    __host__ __device__ int first_shared() const { return whole_tiles + start(cluster()) / k_blocks; }

    __host__ __device__ int count() const {
        const int end = start(cluster() + 1);
        return start(cluster()) < end ? whole_tiles + (end - 1) / k_blocks + 1 : whole_tiles;
    }
    __host__ __device__ int first() const {
        return static_cast<int>(cluster()) < whole_tiles ? static_cast<int>(cluster()) : first_shared();
    }
    __host__ __device__ int next(int t) const {
        if (t >= whole_tiles) return t + 1;
        t += static_cast<int>(clusters());
        return t < whole_tiles ? t : first_shared();
    }

    __host__ __device__ TileCoord coord(int t) const {
        TileCoord c = WholeUnits<Cfg, Place>::in_block(order.coord(t), Place::tile());
        if (t >= whole_tiles) {
            const int tile_begin = (t - whole_tiles) * k_blocks;
            c.k_begin = max(start(cluster()), tile_begin) - tile_begin;
            c.k_end = min(start(cluster() + 1), tile_begin + k_blocks) - tile_begin;
        }
        return c;
    }

    /// The cluster that owns the first piece of unit t (a stream-K unit).
    __host__ __device__ int first_owner(int t) const { return owner((t - whole_tiles) * k_blocks); }

    /// How many clusters share unit t: 1 for a whole one.
    __host__ __device__ int pieces(int t) const {
        if (t < whole_tiles) return 1;
        const int tile_begin = (t - whole_tiles) * k_blocks;
        return owner(tile_begin + k_blocks - 1) - owner(tile_begin) + 1;
    }

    /// The slot of this CTA's place in cluster c for its piece of unit t: the first of the CTA's two
    /// where t is the first unit of c's range, else the second.
    __host__ __device__ int slot(int c, int t) const {
        const int cta = c * Cfg::kClusterSize + rank();
        return cta * IRIS_GEMM_STREAM_K_SLOTS_PER_CTA + (whole_tiles + start(c) / k_blocks == t ? 0 : 1);
    }

    /// The counter of this CTA's tile of unit t (a stream-K unit) for consumer warpgroup `consumer`.
    __host__ __device__ int64_t counter(int t, int consumer) const {
        return (int64_t(t - whole_tiles) * Cfg::kClusterSize + rank()) * Cfg::kConsumers + consumer;
    }
};

/// persistent's combiner for StreamKScheduler: the fix-up of shared tiles described above, then
/// Finish on the finished sum only: alpha and beta (ScaleAccumulators), or for the swapped kernels
/// the transposed store (swapped.cuh). Finish's m is the product's rows.
/// partials: IRIS_GEMM_STREAM_K_SLOTS_PER_CTA x gridDim.x slots of kTileM x kTileN floats, each
/// [consumer][kAccumulators / 4][128 threads] float4; counters: [stream-K unit][CTA of the cluster][consumer] u32.
template <class Cfg, class Finish = ScaleAccumulators<Cfg>>
struct StreamKFixup {
    const StreamKScheduler<Cfg>& sched;
    float4* partials;
    uint32_t* counters;
    Finish finish;

    static constexpr int kVectors = Cfg::kAccumulators / 4;

    __device__ float4* slot_of(int cluster, int t, int consumer) const {
        return partials + (int64_t(sched.slot(cluster, t)) * Cfg::kConsumers + consumer) * kVectors * 128 + threadIdx.x % 128;
    }

    template <class Acc>
    __device__ bool combine(Acc& acc, const TileCoord& tile, int consumer) const {
        const int pieces = sched.pieces(tile.index);
        if (pieces == 1) return finish.combine(acc, tile, consumer);
        const int rows = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows;
        if (rows >= finish.m) return false;  // no row of C in any piece: nothing to add, nothing to store

        // Vector v holds acc[4v .. 4v + 3]: columns 8v + 2 (lane % 4) + {0, 1} of rows r and r + 8, r
        // this thread's first row. Only threads whose first row is inside C move their partials (at
        // M = 1, 4 of 128); the others' are never stored. One predicate per thread, not per vector:
        // the accumulators leave no registers for more.
        const int t = threadIdx.x % 128;
        const bool inside = rows + 16 * (t / 32) + (t % 32) / 4 < finish.m;
        const int barrier = 1 + consumer;

        if (inside) {
            float4* mine = slot_of(sched.cluster(), tile.index, consumer);
#pragma unroll
            for (int v = 0; v < kVectors; ++v) {
                __stcg(mine + v * 128, impl::vector_of(acc, v));
            }
        }
        __threadfence();
        sm90::named_barrier_sync(barrier, 128);
        bool last = false;
        if (t == 0) {
            uint32_t* counter = counters + sched.counter(tile.index, consumer);
            last = iris::arch::fetch_add<iris::Order::acq_rel, iris::Scope::gpu>(counter, 1u) == uint32_t(pieces - 1);
            if (last) {
                iris::arch::store<iris::Order::relaxed, iris::Scope::gpu>(counter, 0u);  // no piece of this launch counts again
            }
        }
        if (!sm90::named_barrier_or(barrier, 128, last)) return false;
        __threadfence();

        if (inside) {
            const int first = sched.first_owner(tile.index);
            const float4* slot = slot_of(first, tile.index, consumer);
#pragma unroll
            for (int v = 0; v < kVectors; ++v) {
                impl::set_vector(acc, v, __ldcg(slot + v * 128));
            }
            for (int p = 1; p < pieces; ++p) {
                slot = slot_of(first + p, tile.index, consumer);
#pragma unroll
                for (int v = 0; v < kVectors; ++v) {
                    impl::add_vector(acc, v, __ldcg(slot + v * 128));
                }
            }
        }
        return finish.combine(acc, tile, consumer);
    }
};

}  // namespace iris::gemm
