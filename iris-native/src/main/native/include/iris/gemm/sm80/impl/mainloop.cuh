// iris/gemm/sm80/impl/mainloop.cuh (not API): the multi-stage cp.async pipeline of one CTA tile.
//
// kStages shared-memory stages hold consecutive k-blocks of A and B. The prologue starts the copies
// of the first kStages - 1; then each k-block's first k-step starts the copy of the k-block
// kStages - 1 ahead into the stage freed by the previous k-block, and its last k-step waits for the
// next k-block's copy (cp.async.wait_group kStages - 2, then a CTA barrier, which also tells every
// warp that the stage about to be overwritten has been read). The fragments are double-buffered in
// registers: k-step s + 1's ldmatrix loads are issued before k-step s's mma.sync, across k-blocks
// too, so shared-memory latency hides behind the tensor cores. Each lane's ldmatrix offsets are
// computed once, before the loop (warp_tile.cuh's LaneOffsets).
#pragma once

#include <cstdint>

#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/gemm/sm80/impl/warp_tile.cuh"

namespace iris::gemm::sm80 {

/// The copy of A's k-blocks into a tile whose first output row is row0, from element k0 of K on:
/// along A's rows where A is stored K x M, along its columns where it is M x K (m x k elements).
template <class Cfg>
__device__ inline auto copy_of_a(const void* a, int64_t lda, int row0, int k0, int m, int k) {
    constexpr bool km = Cfg::kALayout == ALayout::km;
    return GlobalToShared<typename Cfg::ATile, Cfg::kThreads, km>(a, lda, km ? k0 : row0, km ? row0 : k0, km ? k : m,
                                                                  km ? m : k);
}

/// The copy of B's k-blocks into a tile whose first output column is col0, from element k0 of K on:
/// along B's rows where B is stored K x N, along its columns where it is N x K (n x k elements).
template <class Cfg>
__device__ inline auto copy_of_b(const void* b, int64_t ldb, int col0, int k0, int n, int k) {
    constexpr bool kn = Cfg::kBLayout == BLayout::kn;
    return GlobalToShared<typename Cfg::BTile, Cfg::kThreads, kn>(b, ldb, kn ? k0 : col0, kn ? col0 : k0, kn ? k : n,
                                                                  kn ? n : k);
}

/// acc = the CTA tile's A rows times B columns over all of K, for the warp at (warp_m, warp_n).
/// `smem`: the shared address of kStages stages of kStageBytes (A's tile, then B's). a_copy and
/// b_copy (copy_of_a, copy_of_b) start at the first k-block of the tile's operands; k_blocks >= 1
/// k-blocks follow. Called by every thread of the CTA.
template <class Cfg, class ACopy, class BCopy>
__device__ void mainloop(Accumulators<Cfg>& acc, uint32_t smem, ACopy& a_copy, BCopy& b_copy, int k_blocks, int warp_m,
                         int warp_n) {
    const auto a_tile = [&](int stage) { return smem + stage * Cfg::kStageBytes; };
    const auto b_tile = [&](int stage) { return smem + stage * Cfg::kStageBytes + Cfg::kABytes; };
    const LaneOffsets<Cfg> offsets(warp_m, warp_n);
    const auto load = [&](Fragments<Cfg>& f, int stage, int ks) { f.load(a_tile(stage), b_tile(stage), offsets, ks); };

#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s) {
        if (s < k_blocks) {
            a_copy.copy_and_advance(a_tile(s));
            b_copy.copy_and_advance(b_tile(s));
        }
        cp_async_commit();  // empty groups too: the wait counts below assume one group per k-block
    }
    acc.zero();
    cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();

    Fragments<Cfg> frag[2];
    int read = 0;                   // the stage of the k-block being multiplied
    int write = Cfg::kStages - 1;   // the stage the next copy fills
    int next = Cfg::kStages - 1;    // the k-block it copies
    load(frag[0], read, 0);
    for (int kb = 0; kb < k_blocks; ++kb) {
#pragma unroll
        for (int ks = 0; ks < Cfg::kKSteps; ++ks) {
            if (ks == Cfg::kKSteps - 1) {
                // The next k-block has landed, and every warp has read the stage the next copy
                // overwrites.
                cp_async_wait<Cfg::kStages - 2>();
                __syncthreads();
                read = read == Cfg::kStages - 1 ? 0 : read + 1;
            }
            load(frag[(ks + 1) % 2], read, (ks + 1) % Cfg::kKSteps);
            if (ks == 0) {
                if (next < k_blocks) {
                    a_copy.copy_and_advance(a_tile(write));
                    b_copy.copy_and_advance(b_tile(write));
                }
                cp_async_commit();
                write = write == Cfg::kStages - 1 ? 0 : write + 1;
                ++next;
            }
            warp_mma(acc, frag[ks % 2]);
        }
    }
    cp_async_wait<0>();  // only empty groups are left; nothing may be in flight when the CTA ends
}

}  // namespace iris::gemm::sm80
