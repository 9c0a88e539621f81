// gemm_kernel.cuh: the persistent, warp-specialized sm_90a GEMM, assembled from the tile scheduler,
// the mainloop and the epilogue. A fused kernel includes this and calls gemm::persistent with its
// own Hooks (epilogue.cuh) and, if it needs one, its own scheduler from its __global__ function.
//
//   C[m][n] = sum_k A[m][k] * B(k, n) (+ bias[n]), f32 accumulation, one rounding to Out.
//
// Launch: a 1-D grid of at most one CTA per SM, IRIS_GEMM_THREADS threads (Cfg::kThreads) and
// IRIS_GEMM_SHARED_BYTES of dynamic shared memory (at least Cfg::kSmemBytes: config.cuh); the kernel
// checks the latter with shared_memory_fits before it calls persistent. A and B come as TMA
// descriptors (128-byte swizzle; boxes in config.cuh), so edges of any M, N, K read zeros; the host
// checks the 16-byte alignment rules TMA and the epilogue need.
#pragma once

#include "gemm/config.cuh"
#include "gemm/epilogue.cuh"
#include "gemm/hopper.cuh"
#include "gemm/mainloop.cuh"
#include "gemm/tile_scheduler.cuh"
#include "gemm/trace.cuh"

namespace gemm {

/// Every unit is a whole tile, and every warpgroup finishes its rows of it.
struct NoSplit {
    template <class Acc>
    __device__ bool combine(Acc&, const TileCoord&, int) const {
        return true;
    }
};

/// Whether this launch gave the CTA the dynamic shared memory Cfg needs. The same in every thread of
/// the grid, so a kernel that returns when it is false returns everywhere. The library launches with
/// IRIS_GEMM_SHARED_BYTES, which every Config fits, so false means a launch from outside it. Never
/// __trap instead: that would kill the context, and with it the rank.
template <class Cfg>
__device__ inline bool shared_memory_fits() {
    return sm90::dynamic_smem_bytes() >= Cfg::kSmemBytes;
}

/// The caller has checked shared_memory_fits<Cfg>().
/// split: NoSplit, or the exchange of the halves of a SplitKScheduler's tiles (split_k_exchange.cuh),
/// whose combine(acc, unit, consumer) says whether this warpgroup runs the unit's epilogue.
template <class Cfg, class Scheduler, class Hooks, bool Trace = false, class Split = NoSplit>
__device__ void persistent(const sm90::TmaDescriptor* a_map, const sm90::TmaDescriptor* b_map,
                           const typename Cfg::Out* bias, int m, int n, int k, const Scheduler& sched,
                           Hooks& hooks, const Tracer<Trace>& tracer = {}, const Split& split = {}) {
    extern __shared__ uint8_t smem_raw[];
    __shared__ uint64_t full[Cfg::kStages];
    __shared__ uint64_t empty[Cfg::kStages];

    // The 128-byte swizzle repeats every 1024 bytes; TMA and wgmma must agree on where it starts.
    uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    const Stages<Cfg> st{smem, full, empty};
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::kStages; ++s) {
            sm90::mbarrier_init(&full[s], 1);
            sm90::mbarrier_init(&empty[s], Cfg::kConsumers);
        }
        sm90::tma_prefetch_descriptor(a_map);
        sm90::tma_prefetch_descriptor(b_map);
    }
    __syncthreads();

    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        sm90::warpgroup_release_registers<Cfg::kProducerRegisters>();
        if (threadIdx.x == 0) {
            produce<Cfg>(st, a_map, b_map, sched, k_blocks, hooks);
        } else if (threadIdx.x >= 32) {
            hooks.spare_warps(threadIdx.x / 32);
        }
    } else {
        sm90::warpgroup_claim_registers<Cfg::kConsumerRegisters>();
        const int consumer = warpgroup - 1;
        uint8_t* buffer = smem + Cfg::kEpilogueOffset + consumer * Cfg::kChunkBytes;
        RingPosition<Cfg::kStages> pos;
        float acc[Cfg::kAccumulators];
        for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
            TileCoord tile = sched.coord(t);
            tile.index = t;
            const uint64_t start = tracer.now();
            consume<Cfg>(st, pos, acc, consumer, k_blocks_of(tile, k_blocks).count());
            const uint64_t mainloop_end = tracer.now();
            if (split.combine(acc, tile, consumer)) {
                run_epilogue<Cfg>(acc, buffer, tile, consumer, bias, m, n, hooks);
            }
            if (threadIdx.x % 128 == 0) {
                tracer.tile(t, consumer, start, mainloop_end, tracer.now());
            }
        }
    }
}

}  // namespace gemm
