// iris/gemm/sm80/config.cuh: the portable GEMM's tile shapes, warp grids, pipeline depth and
// shared-memory layout, in one place (compute capability 8.0 and later: mma.sync, ldmatrix,
// cp.async). The sizes the host shares come from iris/abi/gemm_portable.h.
//
// The library has two tiles. DefaultShape: one CTA computes a 128 x 128 output tile with four warps
// in a 2 x 2 grid, each warp 64 x 64 outputs: 4 x 8 mma.sync m16n8k16 tiles, 128 f32 accumulators
// per thread. WideShape: 256 x 128 with eight warps in a 4 x 2 grid of the same 64 x 64, so every
// k-block of B in shared memory feeds twice the rows (fewer bytes copied per mma.sync) at one block
// per SM. Both advance K 32 at a time through a 4-stage ring of cp.async copies; each k-block is two
// k-steps of 16. The skinny kernels' SkinnyShape (16 x 128, K 64 per stage) serves problems of few
// rows. In every shape the fragments are double-buffered in registers and each lane's shared-memory
// offsets are computed once, before the k loop (on an H200 that made the 128 x 128 kernel 2 to 6 %
// faster and took 16 of its 254 registers). Four stages, not six: a 6-stage wide tile (144 KiB) ran
// 2 to 13 % faster in bursts of ten calls on an H200, but 1 % slower in runs of 200, where the GPU
// sits at its power limit (gemm-findings.md, 2026-12-03).
//
// Shared memory per stage: A's k-block (mk: TileM rows x TileK elements, 128 or 256 x 32, 64-byte
// rows; km: TileK rows of K x TileM) and B's (nk: TileN rows of N x TileK elements; kn: TileK rows of
// K x TileN), every row swizzled
// (impl/smem_tile.cuh) so that ldmatrix and the cp.async writes hit 32 distinct banks.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/abi/gemm_portable.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm::sm80 {

/// A CTA tile's shape: TileM x TileN outputs, K advancing TileK at a time through a Stages-deep ring
/// of shared-memory stages, WarpsM x WarpsN warps (kThreads threads) each owning (TileM / WarpsM) x
/// (TileN / WarpsN) outputs.
template <int TileM, int TileN, int TileK, int WarpsM, int WarpsN, int Stages>
struct TileShape {
    static constexpr int kTileM = TileM;
    static constexpr int kTileN = TileN;
    static constexpr int kTileK = TileK;
    static constexpr int kWarpsM = WarpsM;
    static constexpr int kWarpsN = WarpsN;
    static constexpr int kStages = Stages;
    static constexpr int kThreads = WarpsM * WarpsN * 32;  // one warp per cell of the warp grid
};
/// The library's two tiles (iris/abi/gemm_portable.h): 128 x 128 on 2 x 2 warps, and the wide
/// 256 x 128 on 4 x 2 warps for problems whose wide tiles fill the GPU (the host chooses).
using DefaultShape = TileShape<IRIS_GEMM_PORTABLE_TILE_M, IRIS_GEMM_PORTABLE_TILE_N, IRIS_GEMM_PORTABLE_TILE_K, 2, 2,
                               IRIS_GEMM_PORTABLE_STAGES>;
using WideShape = TileShape<IRIS_GEMM_PORTABLE_WIDE_TILE_M, IRIS_GEMM_PORTABLE_TILE_N, IRIS_GEMM_PORTABLE_TILE_K, 4, 2,
                            IRIS_GEMM_PORTABLE_STAGES>;
/// The persistent tile (persistent.cuh): 128 x 256 on 2 x 4 warps, each row of warps one group of
/// 128 threads that owns 64 rows of the tile, as a Hopper consumer warpgroup does.
using PersistentShape = TileShape<IRIS_GEMM_PORTABLE_TILE_M, IRIS_GEMM_PORTABLE_PERSISTENT_TILE_N, IRIS_GEMM_PORTABLE_TILE_K,
                                  2, IRIS_GEMM_PORTABLE_PERSISTENT_THREADS / 64, IRIS_GEMM_PORTABLE_STAGES>;
/// The skinny kernels' tile (sm80/skinny.cuh): 16 rows, four warps side by side along N.
using SkinnyShape = TileShape<IRIS_GEMM_SKINNY_TILE_M, IRIS_GEMM_SKINNY_TILE_N, IRIS_GEMM_SKINNY_TILE_K, 1,
                              IRIS_GEMM_SKINNY_THREADS / 32, IRIS_GEMM_SKINNY_STAGES>;

/// In_, B_, Out_, A_: as iris::gemm::Operands (config.cuh). Shape_: the tile; the library's kernels
/// use DefaultShape, WideShape, PersistentShape or SkinnyShape. A K x M A needs tiles of at least 32
/// rows (shared-memory rows of at least 64 bytes), so not SkinnyShape.
template <class In_, BLayout B_, class Out_, class Shape_ = DefaultShape, ALayout A_ = ALayout::mk>
struct Config : Operands<In_, B_, Out_, A_> {
    using In = In_;
    using Out = Out_;

    static constexpr int kTileM = Shape_::kTileM;
    static constexpr int kTileN = Shape_::kTileN;
    static constexpr int kTileK = Shape_::kTileK;
    static constexpr int kStages = Shape_::kStages;
    static_assert(kStages >= 2, "one stage multiplied while the next lands");

    // The warp grid and one warp's share of the tile, in mma.sync m16n8k16 tiles.
    static constexpr int kWarpsM = Shape_::kWarpsM;
    static constexpr int kWarpsN = Shape_::kWarpsN;
    static constexpr int kThreads = Shape_::kThreads;
    static constexpr int kWarpM = kTileM / kWarpsM;  // 64 in the library's tiles
    static constexpr int kWarpN = kTileN / kWarpsN;  // 64 in the library's tiles
    static constexpr int kMmaM = 16;
    static constexpr int kMmaN = 8;
    static constexpr int kMmaK = 16;
    static_assert(kWarpM % kMmaM == 0 && kWarpN % (2 * kMmaN) == 0 && kTileK % kMmaK == 0, "whole mma.sync tiles");
    static constexpr int kFragsM = kWarpM / kMmaM;  // 4
    static constexpr int kFragsN = kWarpN / kMmaN;  // 8
    static_assert(kFragsN % 2 == 0, "B fragments come in pairs of n8 tiles (one ldmatrix.x4)");
    static constexpr int kKSteps = kTileK / kMmaK;  // 2

    static_assert(kKSteps % 2 == 0, "with two fragment buffers, k-step 0's is the same in every k-block");

    // One stage's tiles in shared memory: rows x 16-bit elements, swizzled; an operand stored with K
    // contiguous (A M x K, B N x K) as rows of K, the others as rows of M or N.
    using ATile = std::conditional_t<A_ == ALayout::mk, SwizzledTile<kTileM, kTileK * 2>, SwizzledTile<kTileK, kTileM * 2>>;
    using BTile = std::conditional_t<B_ == BLayout::nk, SwizzledTile<kTileN, kTileK * 2>, SwizzledTile<kTileK, kTileN * 2>>;
    static constexpr uint32_t kABytes = ATile::kBytes;
    static constexpr uint32_t kBBytes = BTile::kBytes;
    static constexpr uint32_t kStageBytes = kABytes + kBBytes;
    static constexpr uint32_t kSmemBytes = kStages * kStageBytes;
    static_assert(kSmemBytes <= 99 * 1024, "fits a block on every GPU since sm_80 (sm_86 / sm_89 allow 99 KiB)");

    // The library's shapes are what the host launches: threads and bytes of iris/abi/gemm_portable.h.
    // Another shape is launched by whoever instantiates it.
    static constexpr bool kDefaultShape = std::is_same_v<Shape_, DefaultShape>;
    static constexpr bool kWideShape = std::is_same_v<Shape_, WideShape>;
    static_assert(!kDefaultShape || kThreads == IRIS_GEMM_PORTABLE_THREADS, "the host launches IRIS_GEMM_PORTABLE_THREADS");
    static_assert(!kDefaultShape || kSmemBytes == IRIS_GEMM_PORTABLE_SHARED_BYTES,
                  "the host launches IRIS_GEMM_PORTABLE_SHARED_BYTES");
    static_assert(!kWideShape || kThreads == IRIS_GEMM_PORTABLE_WIDE_THREADS, "the host launches IRIS_GEMM_PORTABLE_WIDE_THREADS");
    static_assert(!kWideShape || kSmemBytes == IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES,
                  "the host launches IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES");
    static constexpr bool kPersistentShape = std::is_same_v<Shape_, PersistentShape>;
    static_assert(!kPersistentShape || (kThreads == IRIS_GEMM_PORTABLE_PERSISTENT_THREADS &&
                                        kSmemBytes == IRIS_GEMM_PORTABLE_PERSISTENT_SHARED_BYTES),
                  "the host launches IRIS_GEMM_PORTABLE_PERSISTENT_THREADS and _SHARED_BYTES");
    static constexpr bool kSkinnyShape = std::is_same_v<Shape_, SkinnyShape>;
    static_assert(!kSkinnyShape || kSmemBytes == IRIS_GEMM_SKINNY_SHARED_BYTES, "the host launches IRIS_GEMM_SKINNY_SHARED_BYTES");
};

}  // namespace iris::gemm::sm80
