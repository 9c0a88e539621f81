// iris/gemm/sm80/persistent.cuh: the portable GEMM (compute capability 8.0 and later) as a
// persistent kernel with the epilogue hooks of iris/gemm/epilogue.cuh, so that a kernel written as
// hooks (store each finished tile to other ranks, add a peer's partial, signal a consumer...) runs
// on GPUs without wgmma as well as on Hopper's iris::gemm::persistent:
//
//   C[m][n] = sum_k A[m][k] * B(k, n) (+ bias[n]), f32 accumulation, one rounding to Out = In
//
//   extern "C" __global__ void __launch_bounds__(IRIS_GEMM_PORTABLE_PERSISTENT_THREADS, 1)
//   my_kernel(const IRIS_GRID_CONSTANT my_args args) {
//       using Cfg = iris::gemm::sm80::Config<iris::bf16, iris::gemm::BLayout::nk, iris::bf16,
//                                            iris::gemm::sm80::PersistentShape>;
//       if (!iris::gemm::sm80::shared_memory_fits<Cfg>()) return;
//       const iris::gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(args.m, args.n, 8);
//       iris::gemm::sm80::persistent<Cfg>(args.a, args.k, args.b, args.k, nullptr, args.m, args.n, args.k, sched,
//                                         [&] { return MyHooks{...from args...}; });
//   }
//
// Launch: a 1-D grid of at most one block per SM, IRIS_GEMM_PORTABLE_PERSISTENT_THREADS threads,
// IRIS_GEMM_PORTABLE_PERSISTENT_SHARED_BYTES of dynamic shared memory (iris/abi/gemm_portable.h).
// Operands as the portable GEMM takes them (sm80/gemm.cuh): row-major 16-bit A (M x K) and B (N x K
// or K x N), K, N and the leading dimensions multiples of 8, pointers 16-byte aligned; ragged edges
// read zeros.
//
// The hooks' contract differs from Hopper's in what the hardware has, not in what a hook sees:
//   - before_loads(tile, k0) is called by thread 0 for every k-block of a tile before the tile's
//     first copy, and a block barrier follows: no producer warp waits beside the mainloop here.
//   - begin_tile, store_chunk and tile_done are called exactly as there: by the 128 threads of the
//     group that owns rows [64 consumer, 64 consumer + 64) of the tile (warps 4 consumer to
//     4 consumer + 3), with 64 x 64 chunks of 16-bit output in shared memory, in column order.
//   - spare_warps is never called: every warp computes. A kernel whose hooks need spare warps has
//     no portable form (the library's fused kernels use their epilogue variants here).
//   - Units come from the scheduler as there (first, next, count, coord); a unit is one whole tile.
#pragma once

#include <cstdint>

#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/epilogue.cuh"
#include "iris/gemm/sm80/impl/mainloop.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/gemm/sm80/impl/warp_tile.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::sm80 {

/// How a persistent block's outputs are staged for the hooks: one OutputChunk per warp, the two
/// groups' chunks side by side in the bytes the pipeline's stages used.
template <class Cfg>
struct ChunkStaging {
    using Out = typename Cfg::Out;
    static constexpr uint32_t kPitch = 128 + 16;  // see stage_warp_tile
    static constexpr uint32_t kChunkBytes = Cfg::kWarpM * kPitch;
    static_assert(sizeof(Out) == 2 && Cfg::kWarpN == OutputChunk<Out>::kCols && Cfg::kWarpM == OutputChunk<Out>::kRows,
                  "a warp's 64 x 64 outputs of a 16-bit type are one OutputChunk");
    static_assert(Cfg::kWarpsM * Cfg::kWarpsN * kChunkBytes <= Cfg::kSmemBytes, "the chunks fit the stages' bytes");

    __device__ static uint8_t* chunk(uint8_t* smem, int group, int warp_n) {
        return smem + (group * Cfg::kWarpsN + warp_n) * kChunkBytes;
    }
};

/// The group's epilogue of one tile: begin_tile, every warp stages its outputs, then the group's
/// chunks go to store_chunk in column order, then tile_done; named barrier 1 + group keeps the two
/// groups apart (ids 1 and 2, as Hopper's consumers; 3 is fused::CopyTeam's).
template <class Cfg, class Hooks>
__device__ void run_epilogue(const Accumulators<Cfg>& acc, uint8_t* smem, TileCoord tile, int group, int warp_n,
                             const typename Cfg::Out* bias, int m, int n, Hooks& hooks) {
    using Out = typename Cfg::Out;
    using Staging = ChunkStaging<Cfg>;
    constexpr int kGroupThreads = Cfg::kWarpsN * 32;
    static_assert(kGroupThreads == 128, "a group is four warps, as a Hopper warpgroup");
    const int barrier = 1 + group;
    const int row0 = tile.m * Cfg::kTileM + group * Cfg::kWarpM;
    const int col0 = tile.n * Cfg::kTileN;
    hooks.begin_tile(tile, group);
    stage_warp_tile<Cfg>(acc, Staging::chunk(smem, group, warp_n), Staging::kPitch, bias, n, col0 + warp_n * Cfg::kWarpN);
    named_barrier_sync(barrier, kGroupThreads);  // also passes on what begin_tile acquired
    // Not unrolled: four copies of a reduction's store_chunk (loads of every peer's partials in
    // flight) made ptxas spill at sm_80, where the mainloop leaves the kernel few registers.
#pragma unroll 1
    for (int c = 0; c < Cfg::kWarpsN; ++c) {
        hooks.store_chunk(OutputChunk<Out>{Staging::chunk(smem, group, c), Staging::kPitch, row0, col0 + c * Cfg::kWarpN, m, n, c});
    }
    named_barrier_sync(barrier, kGroupThreads);
    hooks.tile_done(tile, group);
}

/// The GEMM of one launch, run by every thread of every block; the caller has checked
/// shared_memory_fits<Cfg>(). Cfg: Config<In, B, In, PersistentShape>. A: M x K (lda), B: N x K or
/// K x N (ldb), bias: N values of Out or null; sched: the units and their order; make_hooks: a
/// callable that returns the hooks (what happens to each finished tile, epilogue.cuh), called
/// where they are used. Built there from the kernel's parameters, what they hold does not sit in
/// registers through the mainloop, whose accumulators and fragments take nearly all of them: a
/// hooks object alive across it made ptxas spill in the reductions' K x N kernels at sm_86 and
/// sm_89.
template <class Cfg, class Scheduler, class MakeHooks>
__device__ void persistent(const void* a, int64_t lda, const void* b, int64_t ldb, const typename Cfg::Out* bias, int m,
                           int n, int k, const Scheduler& sched, const MakeHooks& make_hooks) {
    static_assert(Cfg::kWarpsM == 2, "two groups, as Hopper's two consumer warpgroups");
    extern __shared__ __align__(128) uint8_t smem[];  // 128-byte aligned: the swizzle's bank lines
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int group = warp / Cfg::kWarpsN;
    const int warp_n = warp % Cfg::kWarpsN;
    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    for (int u = sched.first(); u < sched.count(); u = sched.next(u)) {
        TileCoord tile = sched.coord(u);
        tile.index = u;
        const int row0 = tile.m * Cfg::kTileM;
        const int col0 = tile.n * Cfg::kTileN;
        if (threadIdx.x == 0) {
            const auto hooks = make_hooks();
            for (int kb = 0; kb < k_blocks; ++kb) hooks.before_loads(tile, kb * Cfg::kTileK);
        }
        __syncthreads();  // what thread 0 waited for comes before every thread's copies
        auto a_copy = copy_of_a<Cfg>(a, lda, row0, 0, m, k);
        auto b_copy = copy_of_b<Cfg>(b, ldb, col0, 0, n, k);
        Accumulators<Cfg> acc;
        mainloop<Cfg>(acc, shared_address(smem), a_copy, b_copy, k_blocks, group, warp_n);
        __syncthreads();  // every warp has read the last stage, which the staging overwrites
        auto hooks = make_hooks();
        run_epilogue<Cfg>(acc, smem, tile, group, warp_n, bias, m, n, hooks);
        __syncthreads();  // both groups' chunks have been read before the next tile's copies land there
    }
}

}  // namespace iris::gemm::sm80
