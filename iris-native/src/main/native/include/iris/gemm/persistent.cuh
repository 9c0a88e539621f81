// iris/gemm/persistent.cuh: the persistent, warp-specialized sm_90a GEMM, assembled from a tile
// scheduler (tile_scheduler.cuh), the mainloop (impl/mainloop.cuh) and the epilogue with its hooks
// (epilogue.cuh). A kernel calls iris::gemm::persistent from its __global__ function with its own
// hooks and, if it needs one, its own scheduler:
//
//   C[m][n] = sum_k A(m, k) * B(k, n) (+ bias[n]), f32 accumulation, one rounding to Out.
//
// Launch: a 1-D grid of at most one CTA per SM, Cfg::kThreads threads (IRIS_GEMM_THREADS, or
// IRIS_GEMM_SHORT_THREADS for short tiles), __launch_bounds__(Cfg::kThreads, 1) on the kernel (the register split of setmaxnreg assumes
// it), and IRIS_GEMM_SHARED_BYTES of dynamic shared memory (at least Cfg::kSmemBytes, and for
// TensorStoreEpilogue Cfg::kStoreSmemBytes: config.cuh); the kernel checks the former with
// shared_memory_fits before it calls persistent (run checks what its hooks need). A and B come as
// TMA descriptors (128-byte swizzle; boxes in config.cuh) in the kernel's __grid_constant__
// parameters, so edges of any M, N, K read zeros; the host checks the 16-byte alignment rules TMA
// and the epilogue need (in Java, GemmProblem checks them and GemmKernelArgs encodes the
// descriptors and gives the launch).
#pragma once

#include <cstdint>

#include "iris/abi/gemm.h"
#include "iris/abi/tma.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/impl/epilogue.cuh"
#include "iris/gemm/impl/split_k.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/k_blocks.cuh"
#include "iris/gemm/impl/mainloop.cuh"
#include "iris/gemm/scale.cuh"
#include "iris/gemm/stream_k.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm {

/// The accumulator hook that keeps every unit's accumulators as they are. A hook of this kind sees
/// a consumer warpgroup's f32 accumulators of a finished unit before the epilogue:
///
///   template <class Acc> __device__ bool combine(Acc& acc, const TileCoord& unit, int consumer);
///
/// called by all 128 threads of warpgroup `consumer`, each with its Cfg::kAccumulators values (in
/// warp w, lane l, element i holds row 16w + l/4 + 8*((i/2)%2) and column 8*(i/4) + 2*(l%4) + i%2
/// of the warpgroup's 64 rows of the tile: wgmma's m64nNk16 layout). It may change them, and returns
/// whether the warpgroup runs the epilogue for them (the library's split-K adds the two halves of a
/// tile here, and only one of them stores).
struct KeepAccumulators {
    template <class Acc>
    __device__ bool combine(Acc&, const TileCoord&, int) const {
        return true;
    }
};

/// The timeline hook that records nothing (and costs nothing). One that records gets now() around
/// each unit's mainloop and epilogue, from every consumer thread, and then, from each warpgroup's
/// first thread, tile(unit, consumer, start, mainloop_end, end).
struct NoTimeline {
    __device__ uint64_t now() const { return 0; }
    __device__ void tile(int, int, uint64_t, uint64_t, uint64_t) const {}
};

/// The GEMM of one launch, run by every thread of every CTA; the caller has checked
/// shared_memory_fits<Cfg>().
///
/// a_map, b_map  A (M x K or K x M, Cfg::kALayout) and B (N x K or K x N, Cfg::kBLayout) as TMA descriptors in the kernel's
///               __grid_constant__ parameters (iris_gemm_args' a_map and b_map)
/// bias          N values of Cfg::Out added to every row, or null
/// m, n, k       the problem; C is m x n
/// sched         the units and their order (tile_scheduler.cuh), e.g. GroupedTileScheduler
/// hooks         what happens to each finished tile (epilogue.cuh): StoreEpilogue writes C
/// timeline      NoTimeline, or a recorder of when each unit ran
/// combiner      KeepAccumulators, or a hook on the accumulators before the epilogue
template <class Cfg, class Scheduler, class Hooks, class Timeline = NoTimeline, class Combine = KeepAccumulators>
__device__ void persistent(const iris_tma_descriptor* a_map, const iris_tma_descriptor* b_map,
                           const typename Cfg::Out* bias, int m, int n, int k, const Scheduler& sched,
                           Hooks& hooks, const Timeline& timeline = {}, const Combine& combiner = {}) {
    extern __shared__ uint8_t smem_raw[];
    __shared__ uint64_t full[Cfg::kStages];
    __shared__ uint64_t empty[Cfg::kStages];

    // The 128-byte swizzle repeats every 1024 bytes; TMA and wgmma must agree on where it starts.
    uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    const impl::Stages<Cfg> st{smem, full, empty};
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::kStages; ++s) {
            sm90::mbarrier_init(&full[s], 1);
            sm90::mbarrier_init(&empty[s], Cfg::kStageReleases);
        }
        if constexpr (Cfg::kClustered) sm90::fence_mbarrier_init_cluster();
        sm90::tma_prefetch_descriptor(a_map);
        sm90::tma_prefetch_descriptor(b_map);
    }
    // A cluster's producers load into its other CTAs and its consumers release in them: no CTA may
    // start before all have initialized their barriers.
    if constexpr (Cfg::kClustered) {
        sm90::cluster_sync();
    } else {
        __syncthreads();
    }

    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        if constexpr (Cfg::kMovesRegisters) sm90::warpgroup_release_registers<Cfg::kProducerRegisters>();
        if (threadIdx.x == 0) {
            impl::produce<Cfg>(st, a_map, b_map, sched, k_blocks, hooks);
        } else if (threadIdx.x >= 32) {
            hooks.spare_warps(threadIdx.x / 32);
        }
    } else {
        if constexpr (Cfg::kMovesRegisters) sm90::warpgroup_claim_registers<Cfg::kConsumerRegisters>();
        const int consumer = warpgroup - 1;
        uint8_t* buffer = smem + Cfg::kEpilogueOffset + consumer * Cfg::kChunkBytes;
        impl::RingPosition<Cfg::kStages> pos;
        float acc[Cfg::kAccumulators];
        impl::SplitKHandOver<Cfg> hand_over{reinterpret_cast<float4*>(smem + Cfg::kEpilogueOffset)};
        static_assert(!Hooks::kTensorStore || Cfg::kTensorStore, "a tensor-map store needs a Config with its buffers");
        impl::TensorStores<Cfg> stores{smem + Cfg::kEpilogueOffset + consumer * Cfg::kStoreChunkSlots * Cfg::kStoreChunkBytes};
        for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
            TileCoord tile = sched.coord(t);
            tile.index = t;
            const uint64_t start = timeline.now();
            impl::consume<Cfg>(st, pos, acc, consumer, impl::k_blocks_of(tile, k_blocks).count());
            const uint64_t mainloop_end = timeline.now();
            if (!hand_over.add_halves(acc, consumer)) continue;  // SplitK's second consumer: its sum is handed over
            if constexpr (Cfg::kEpilogue) {
                if (combiner.combine(acc, tile, consumer)) {
                    if constexpr (Hooks::kTensorStore) {
                        stores.store(acc, tile, consumer, bias, m, n, hooks.c_map);
                    } else {
                        impl::run_epilogue<Cfg>(acc, buffer, tile, consumer, bias, m, n, hooks);
                    }
                }
            } else {
                combiner.combine(acc, tile, consumer);  // the combiner stores the tile
            }
            hand_over.release_buffers();
            if (threadIdx.x % 128 == 0) {
                timeline.tile(t, consumer, start, mainloop_end, timeline.now());
            }
        }
        hand_over.finish(consumer);
        if constexpr (Hooks::kTensorStore) stores.drain();
    }
}

namespace impl {

/// shared_memory_fits for a launch with `Hooks`: TensorStoreEpilogue's buffers are larger than the
/// chunks other hooks take.
template <class Cfg, class Hooks>
__device__ inline bool shared_memory_fits_hooks() {
    return dynamic_smem_bytes() >= (Hooks::kTensorStore ? Cfg::kStoreSmemBytes : Cfg::kSmemBytes);
}

// What run and run_swapped share: args' units, its last stream_k_tiles shared out by K where it
// gives the partials and counters (units_of), through persistent with `hooks`, each finished sum
// handed to `finish` (run_units): by WholeUnits where no unit is shared, else by the scheduler
// with the fix-up. Two calls rather than one: the scheduler is built before the hooks.
template <class Cfg>
__device__ inline StreamKScheduler<Cfg> units_of(const iris_gemm_args& args) {
    const bool workspace = args.stream_k_partials != nullptr && args.stream_k_counters != nullptr;
    return StreamKScheduler<Cfg>(args.m, args.n, args.k, args.group_m, workspace ? args.stream_k_tiles : 0);
}

template <class Cfg, class Hooks, class Finish>
__device__ inline void run_units(const iris_gemm_args& args, const StreamKScheduler<Cfg>& sched, const typename Cfg::Out* bias,
                                 Hooks& hooks, const Finish& finish) {
    if (!sched.shares()) {
        const WholeUnits<Cfg> whole(args.m, args.n, args.group_m);
        persistent<Cfg>(&args.a_map, &args.b_map, bias, args.m, args.n, args.k, whole, hooks, NoTimeline{}, finish);
        return;
    }
    const StreamKFixup<Cfg, Finish> fixup{sched, static_cast<float4*>(args.stream_k_partials),
                                          static_cast<uint32_t*>(args.stream_k_counters), finish};
    persistent<Cfg>(&args.a_map, &args.b_map, bias, args.m, args.n, args.k, sched, hooks, NoTimeline{}, fixup);
}

}  // namespace impl

/// The GEMM of iris_gemm_args (iris/abi/gemm.h, filled on the host by
/// dev.irisjvm.kernels.gemm.GemmKernelArgs) with the default tile order and your hooks: what
/// persistent needs, taken from the struct; alpha and beta are not applied (your hooks decide what
/// happens to A x B; ScaleAccumulators in scale.cuh is how to apply them). Returns false, having
/// done nothing, where the launch gave less shared memory than Cfg needs (the same in every thread).
template <class Cfg, class Hooks>
__device__ inline bool run(const iris_gemm_args& args, Hooks& hooks) {
    if (!impl::shared_memory_fits_hooks<Cfg, Hooks>()) return false;
    const GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(args.m, args.n, args.group_m);
    persistent<Cfg>(&args.a_map, &args.b_map, static_cast<const typename Cfg::Out*>(args.bias), args.m, args.n,
                    args.k, sched, hooks);
    return true;
}

/// The plain GEMM: C = alpha A x B + beta C (+ bias) into args.c (leading dimension args.ldc), stored
/// by TMA through args.c_map (TensorStoreEpilogue; a SplitK or clustered Config, Config::kTensorStore
/// false, by its threads with StoreEpilogue); beta == 0 does not read C. The last args.stream_k_tiles
/// tiles are shared out by K over the grid (stream_k.cuh) where the struct also gives the partials and counters. In
/// clusters (Config's Pairs or Cluster), each cluster runs a block of adjacent tiles (a unit of
/// stream_k.cuh), and stream_k_tiles counts blocks. Launch: a grid of a multiple of
/// Cfg::kClusterSize CTAs, at most one per SM, the kernel declared __cluster_dims__(Cfg::kClusterSize,
/// 1, 1); each shared operand's tensor map has boxes of one CTA's share (config.cuh).
template <class Cfg>
__device__ inline bool run(const iris_gemm_args& args) {
    using Out = typename Cfg::Out;
    if (!impl::shared_memory_fits_hooks<Cfg, TensorStoreEpilogue>()) return false;
    const StreamKScheduler<Cfg> sched = impl::units_of<Cfg>(args);
    const ScaleAccumulators<Cfg> scale{static_cast<const Out*>(args.c), args.ldc, args.m, args.n, args.alpha, args.beta};
    if constexpr (Cfg::kTensorStore) {
        TensorStoreEpilogue store(&args.c_map);
        impl::run_units<Cfg>(args, sched, static_cast<const Out*>(args.bias), store, scale);
    } else {
        StoreEpilogue<Out> store(static_cast<Out*>(args.c), args.ldc);
        impl::run_units<Cfg>(args, sched, static_cast<const Out*>(args.bias), store, scale);
    }
    return true;
}

}  // namespace iris::gemm
