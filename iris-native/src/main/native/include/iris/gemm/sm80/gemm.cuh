// iris/gemm/sm80/gemm.cuh: the portable GEMM, for every NVIDIA GPU since Ampere (compute capability
// 8.0 and later; no wgmma, no TMA): mma.sync m16n8k16 on tensor cores, ldmatrix from swizzled
// shared memory, a kStages-deep cp.async pipeline (config.cuh says the sizes).
//
//   C[m][n] = sum_k A[m][k] * B(k, n) (+ bias[n])   A: M x K, B: N x K or K x N, all row-major with
//                                                   leading dimensions; bf16 or f16 in, f32
//                                                   accumulation, one rounding to Out = In or f32
//
// The same contract as the Hopper GEMM (iris/gemm.cuh; in Java, Gemm with Mainloop.PORTABLE, whose
// GemmProblem checks it): M, N, K >= 1, K and N multiples of 8, leading dimensions multiples of 8,
// pointers 16-byte aligned. Ragged edges in M, N and K read zeros (cp.async zero-fill) and store
// nothing outside C.
//
//   extern "C" __global__ void __launch_bounds__(IRIS_GEMM_PORTABLE_THREADS, 2)
//   my_gemm(const IRIS_GRID_CONSTANT iris_gemm_portable_args args) {
//       iris::gemm::sm80::run<iris::gemm::sm80::Config<iris::bf16, iris::gemm::BLayout::nk, iris::bf16>>(args);
//   }
//
// Launch: one CTA per Cfg::kTileM x Cfg::kTileN output tile (a plain grid of ceil(M / kTileM) *
// ceil(N / kTileN) blocks, taken in the grouped order of tile_scheduler.cuh, group_m counting tile
// rows), Cfg::kThreads threads and Cfg::kSmemBytes of dynamic shared memory (past 48 KiB, so
// cudaFuncAttributeMaxDynamicSharedMemorySize must allow it). For the library's tiles these are
// iris/abi/gemm_portable.h's: Config's default, 128 x 128, on IRIS_GEMM_PORTABLE_THREADS threads
// with IRIS_GEMM_PORTABLE_SHARED_BYTES; Config<In, B, Out, WideShape>, 256 x 128, on
// IRIS_GEMM_PORTABLE_WIDE_THREADS with IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES, one block per SM
// (__launch_bounds__(IRIS_GEMM_PORTABLE_WIDE_THREADS, 1)).
//
// Not API: sm80/impl/ (the pipeline, the fragments, the instructions) may change in any release.
#pragma once

#include <cstdint>

#include "iris/abi/gemm_portable.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/epilogue.cuh"
#include "iris/gemm/sm80/impl/mainloop.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/gemm/sm80/impl/warp_tile.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::sm80 {

/// The tile of C that block blockIdx.x computes, stored. Returns false, having done nothing, where
/// the launch gave less dynamic shared memory than Cfg needs (the same in every thread): never
/// __trap, which would kill the context and with it the rank.
template <class Cfg>
__device__ inline bool run(const iris_gemm_portable_args& args) {
    using In = typename Cfg::In;
    using Out = typename Cfg::Out;
    extern __shared__ __align__(128) uint8_t smem[];  // 128-byte aligned: the swizzle's bank lines
    if (!shared_memory_fits<Cfg>()) return false;

    const GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(args.m, args.n, args.group_m);
    if (static_cast<int>(blockIdx.x) >= sched.count()) return true;
    const TileCoord tile = sched.coord(static_cast<int>(blockIdx.x));
    const int row0 = tile.m * Cfg::kTileM;
    const int col0 = tile.n * Cfg::kTileN;

    auto a_copy = copy_of_a<Cfg>(args.a, args.lda, row0, 0, args.m, args.k);  // this tile's rows of A, k-block by k-block
    auto b_copy = copy_of_b<Cfg>(args.b, args.ldb, col0, 0, args.n, args.k);  // and its columns of B
    static_assert(sizeof(In) == 2, "the copies move 16-bit elements");

    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int warp_m = warp % Cfg::kWarpsM;
    const int warp_n = warp / Cfg::kWarpsM;
    Accumulators<Cfg> acc;  // (kWarpM, kWarpN) per warp
    mainloop<Cfg>(acc, shared_address(smem), a_copy, b_copy, (args.k + Cfg::kTileK - 1) / Cfg::kTileK, warp_m, warp_n);
    store_warp_tile<Cfg>(acc, static_cast<Out*>(args.c), args.ldc, static_cast<const Out*>(args.bias), args.m, args.n,
                         row0 + warp_m * Cfg::kWarpM, col0 + warp_n * Cfg::kWarpN, args.alpha, args.beta);
    return true;
}

}  // namespace iris::gemm::sm80
