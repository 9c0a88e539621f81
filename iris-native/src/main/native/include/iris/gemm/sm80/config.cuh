// iris/gemm/sm80/config.cuh: the portable GEMM's tile shape, warp grid, pipeline depth and
// shared-memory layout, in one place (compute capability 8.0 and later: mma.sync, ldmatrix,
// cp.async). The sizes the host shares come from iris/abi/gemm_portable.h.
//
// One CTA computes a 128 x 128 output tile with four warps in a 2 x 2 grid, each warp 64 x 64
// outputs: 4 x 8 mma.sync m16n8k16 tiles, 128 f32 accumulators per thread. K advances 32 at a time
// through a 4-stage ring of cp.async copies; each k-block is two k-steps of 16.
//
// Shared memory per stage: A's k-block (128 rows x 32 elements, 64-byte rows) and B's (nk: 128 rows
// of N x 32 elements, 64-byte rows; kn: 32 rows of K x 128 elements, 256-byte rows), every row
// swizzled (impl/smem_tile.cuh) so that ldmatrix and the cp.async writes hit 32 distinct banks.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/abi/gemm_portable.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm::sm80 {

/// In_: the inputs' type, iris::bf16 or iris::f16 (A and B alike). B_: how B is stored. Out_: C's
/// type, In_ or float (accumulation is f32 either way, rounded once).
template <class In_, BLayout B_, class Out_>
struct Config {
    using In = In_;
    using Out = Out_;
    static constexpr BLayout kBLayout = B_;
    static_assert(std::is_same_v<In, iris::bf16> || std::is_same_v<In, iris::f16>, "inputs are bf16 or f16");
    static_assert(std::is_same_v<Out, In> || std::is_same_v<Out, float>, "output is the input type or f32");

    static constexpr int kTileM = IRIS_GEMM_PORTABLE_TILE_M;
    static constexpr int kTileN = IRIS_GEMM_PORTABLE_TILE_N;
    static constexpr int kTileK = IRIS_GEMM_PORTABLE_TILE_K;
    static constexpr int kStages = IRIS_GEMM_PORTABLE_STAGES;
    static constexpr int kThreads = IRIS_GEMM_PORTABLE_THREADS;

    // The warp grid and one warp's share of the tile, in mma.sync m16n8k16 tiles.
    static constexpr int kWarpsM = 2;
    static constexpr int kWarpsN = 2;
    static_assert(kWarpsM * kWarpsN * 32 == kThreads, "one warp per cell of the warp grid");
    static constexpr int kWarpM = kTileM / kWarpsM;  // 64
    static constexpr int kWarpN = kTileN / kWarpsN;  // 64
    static constexpr int kMmaM = 16;
    static constexpr int kMmaN = 8;
    static constexpr int kMmaK = 16;
    static constexpr int kFragsM = kWarpM / kMmaM;  // 4
    static constexpr int kFragsN = kWarpN / kMmaN;  // 8
    static_assert(kFragsN % 2 == 0, "B fragments come in pairs of n8 tiles (one ldmatrix.x4)");
    static constexpr int kKSteps = kTileK / kMmaK;  // 2
    static_assert(kKSteps >= 2, "the fragment double buffer overlaps one k-step's loads with another's mma");

    // One stage's tiles in shared memory: rows x 16-bit elements, swizzled.
    using ATile = SwizzledTile<kTileM, kTileK * 2>;
    using BTile = std::conditional_t<B_ == BLayout::nk, SwizzledTile<kTileN, kTileK * 2>, SwizzledTile<kTileK, kTileN * 2>>;
    static constexpr uint32_t kABytes = ATile::kBytes;
    static constexpr uint32_t kBBytes = BTile::kBytes;
    static constexpr uint32_t kStageBytes = kABytes + kBBytes;
    static constexpr uint32_t kSmemBytes = kStages * kStageBytes;
    static_assert(kSmemBytes == IRIS_GEMM_PORTABLE_SHARED_BYTES, "the host launches IRIS_GEMM_PORTABLE_SHARED_BYTES");
    static_assert(kSmemBytes <= 99 * 1024, "fits a block on every GPU since sm_80 (sm_86 / sm_89 allow 99 KiB)");
};

}  // namespace iris::gemm::sm80
