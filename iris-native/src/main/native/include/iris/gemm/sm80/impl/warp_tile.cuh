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

/// A warp's operands of one k-step: kFragsM row-major 16 x 16 pieces of A, kFragsN column-major
/// 16 x 8 pieces of B.
template <class Cfg>
struct Fragments {
    uint32_t a[Cfg::kFragsM][4];
    uint32_t b[Cfg::kFragsN][2];

    /// Loads k-step `ks` of the stage whose A tile is at shared address `a_tile` and B tile at
    /// `b_tile`, for the warp at (warp_m, warp_n) of the warp grid.
    __device__ void load(uint32_t a_tile, uint32_t b_tile, int warp_m, int warp_n, int ks) {
        using ATile = typename Cfg::ATile;
        using BTile = typename Cfg::BTile;
        const int lane = static_cast<int>(threadIdx.x) % 32;
        // A: matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of each 16 x 16
        // piece: a[0..3] as mma.sync wants them.
#pragma unroll
        for (int i = 0; i < Cfg::kFragsM; ++i) {
            const int row = warp_m * Cfg::kWarpM + i * 16 + lane % 16;
            ldmatrix_x4<false>(a[i], a_tile + ATile::offset(row, ks * 2 + lane / 16));
        }
        // B: one ldmatrix.x4 per pair of n8 pieces: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
        // k 0-7), (n 8-15, k 8-15). An N x K tile holds them as rows of n; a K x N tile holds
        // their transposes, which ldmatrix.trans turns back.
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN / 2; ++j) {
            uint32_t r[4];
            const int n0 = warp_n * Cfg::kWarpN + j * 16;
            if constexpr (Cfg::kBLayout == BLayout::nk) {
                const int row = n0 + lane % 8 + 8 * (lane / 16);
                ldmatrix_x4<false>(r, b_tile + BTile::offset(row, ks * 2 + (lane / 8) % 2));
            } else {
                const int row = ks * 16 + lane % 8 + 8 * ((lane / 8) % 2);
                ldmatrix_x4<true>(r, b_tile + BTile::offset(row, n0 / 8 + lane / 16));
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
