// iris/gemm/sm80/impl/warp_tile.cuh (not API): one warp's share of the CTA tile in registers: its
// f32 accumulators, the A and B fragments of one k-step (ldmatrix.x4 from a stage's swizzled
// tiles) and the mma.sync m16n8k16 products of the two.
#pragma once

#include <cstdint>

#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"

namespace iris::gemm::sm80 {

/// A warp's kWarpM x kWarpN outputs: kFragsM x kFragsN m16n8 tiles of four f32 each (ptx.cuh's
/// mma_16816 says which element is where).
template <class Cfg>
struct Accumulators {
    float d[Cfg::kFragsM][Cfg::kFragsN][4];

    __device__ void zero() {
#pragma unroll
        for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::kFragsN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) d[i][j][e] = 0.f;
    }
};

/// A lane's ldmatrix offsets into a stage's A and B tiles for k-step 0 and fragment 0, computed once
/// before the k loop. Every other (k-step, fragment) offset is smem_tile.cuh's moved() of these by
/// compile-time rows and chunk XORs, so a load costs an add of the stage's base (and a XOR shared by
/// a k-step's loads) instead of the swizzle's arithmetic. The logical chunks below are written
/// lane part ^ constant part, which equals the sum wherever the two have no bit in common.
template <class Cfg>
struct LaneOffsets {
    uint32_t a;
    uint32_t b;

    __device__ LaneOffsets(int warp_m, int warp_n) {
        const int lane = static_cast<int>(threadIdx.x) % 32;
        // Fragments::load's rows and chunks at i = j = ks = 0.
        if constexpr (Cfg::kALayout == ALayout::mk) {
            a = Cfg::ATile::offset(warp_m * Cfg::kWarpM + lane % 16, lane / 16);
        } else {
            // Chunk warp_m 2 kFragsM + 2i + (lane / 8) % 2 (load checks that 2i shares no bit with the rest).
            a = Cfg::ATile::offset(lane % 8 + 8 * (lane / 16), warp_m * 2 * Cfg::kFragsM + (lane / 8) % 2);
        }
        if constexpr (Cfg::kBLayout == BLayout::nk) {
            b = Cfg::BTile::offset(warp_n * Cfg::kWarpN + lane % 8 + 8 * (lane / 16), (lane / 8) % 2);
        } else {
            // Chunk warp_n kFragsN + 2j + lane / 16 (load checks that 2j shares no bit with the rest).
            b = Cfg::BTile::offset(lane % 8 + 8 * ((lane / 8) % 2), warp_n * Cfg::kFragsN + lane / 16);
        }
    }
};

/// A warp's operands of one k-step: kFragsM row-major 16 x 16 pieces of A, kFragsN column-major
/// 16 x 8 pieces of B.
template <class Cfg>
struct Fragments {
    uint32_t a[Cfg::kFragsM][4];
    uint32_t b[Cfg::kFragsN][2];

    /// Loads k-step `ks` of the stage whose A tile is at shared address `a_tile` and B tile at
    /// `b_tile`, from the lane's offsets (LaneOffsets). A: matrices (rows 0-7, k 0-7), (8-15, 0-7),
    /// (0-7, 8-15), (8-15, 8-15) of each 16 x 16 piece, a[0..3] as mma.sync wants them; an M x K tile
    /// holds them as rows of m (piece i: rows 16 i further, k-step ks: chunk lane / 16 ^ 2 ks), a
    /// K x M tile their transposes, which ldmatrix.trans turns back (rows 16 ks further, chunk ^ 2 i). B: one
    /// ldmatrix.x4 per pair of n8 pieces, (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15,
    /// k 8-15); an N x K tile holds them as rows of n (pair j: rows 16 j further, chunk ^ 2 ks), a
    /// K x N tile their transposes, which ldmatrix.trans turns back (rows 16 ks further, chunk ^ 2 j).
    __device__ void load(uint32_t a_tile, uint32_t b_tile, const LaneOffsets<Cfg>& at, int ks) {
        using ATile = typename Cfg::ATile;
        using BTile = typename Cfg::BTile;
        if constexpr (Cfg::kALayout == ALayout::mk) {
#pragma unroll
            for (int i = 0; i < Cfg::kFragsM; ++i) ldmatrix_x4<false>(a[i], a_tile + ATile::moved(at.a, i * 16, 2 * ks));
        } else {
            // 2i < 2 kFragsM stays clear of warp_m 2 kFragsM's bits where kFragsM is a power of 2.
            static_assert((Cfg::kFragsM & (Cfg::kFragsM - 1)) == 0, "the chunk's lane and fragment parts share no bit");
#pragma unroll
            for (int i = 0; i < Cfg::kFragsM; ++i) ldmatrix_x4<true>(a[i], a_tile + ATile::moved(at.a, ks * 16, 2 * i));
        }
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN / 2; ++j) {
            uint32_t r[4];
            if constexpr (Cfg::kBLayout == BLayout::nk) {
                ldmatrix_x4<false>(r, b_tile + BTile::moved(at.b, j * 16, 2 * ks));
            } else {
                // 2j < kFragsN stays clear of warp_n kFragsN's bits where kFragsN is a power of 2.
                static_assert((Cfg::kFragsN & (Cfg::kFragsN - 1)) == 0, "the chunk's lane and fragment parts share no bit");
                ldmatrix_x4<true>(r, b_tile + BTile::moved(at.b, ks * 16, 2 * j));
            }
            b[2 * j][0] = r[0];
            b[2 * j][1] = r[1];
            b[2 * j + 1][0] = r[2];
            b[2 * j + 1][1] = r[3];
        }
    }
};

/// acc += the k-step's A fragments times its B fragments.
template <class Cfg>
__device__ inline void warp_mma(Accumulators<Cfg>& acc, const Fragments<Cfg>& f) {
#pragma unroll
    for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN; ++j) mma_16816<typename Cfg::In>(acc.d[i][j], f.a[i], f.b[j]);
}

}  // namespace iris::gemm::sm80
