// iris/gemm/sm80/impl/epilogue.cuh (not API): a warp's accumulators times alpha, plus beta C and the
// bias, rounded once to the output type and stored straight from registers (each lane writes pairs
// of adjacent columns, four lanes a 16-byte (f32: 32-byte) piece of a row), or, plus the bias,
// staged in shared memory for hooks.
#pragma once

#include <cstdint>

#include "iris/gemm/impl/pairs.cuh"
#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/warp_tile.cuh"

namespace iris::gemm::sm80 {

using iris::gemm::impl::finish_pair;
using iris::gemm::impl::load_pair;
using iris::gemm::impl::store_pair;

/// C[row0 + r][col0 + c] = alpha acc(r, c) + beta C[row0 + r][col0 + c] + bias[col0 + c] for the
/// warp's outputs inside the m x n matrix C (leading dimension ldc); bias may be null, and beta 0
/// never reads C. n % 8 == 0 keeps each lane's pair of columns wholly in or out.
template <class Cfg>
__device__ void store_warp_tile(const Accumulators<Cfg>& acc, typename Cfg::Out* c, int64_t ldc,
                                const typename Cfg::Out* bias, int m, int n, int row0, int col0, float alpha, float beta) {
    using Out = typename Cfg::Out;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int g = lane / 4;
    const int t = lane % 4;
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) {
        const int col = col0 + j * 8 + 2 * t;
        if (col >= n) continue;
        const float2 add = bias != nullptr ? load_pair(bias + col) : make_float2(0.f, 0.f);
#pragma unroll
        for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = row0 + i * 16 + g + 8 * half;
                if (row < m) {
                    finish_pair(c + row * ldc + col, make_float2(acc.d[i][j][2 * half], acc.d[i][j][2 * half + 1]), add, alpha, beta);
                }
            }
        }
    }
}

/// The warp's accumulators plus the bias, rounded once to Out, into shared memory: row r, column c
/// of the warp's kWarpM x kWarpN outputs at byte r * pitch + c * sizeof(Out) of `tile` (for the
/// hooks of persistent.cuh, which read them back as OutputChunks). col0: the global column of the
/// warp's first; bias (may be null) is read only for columns below n. A pitch of 16 bytes past a
/// multiple of 128 makes the eight rows of each store instruction hit distinct banks.
template <class Cfg>
__device__ void stage_warp_tile(const Accumulators<Cfg>& acc, uint8_t* tile, uint32_t pitch, const typename Cfg::Out* bias,
                                int n, int col0) {
    using Out = typename Cfg::Out;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int g = lane / 4;
    const int t = lane % 4;
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) {
        const int col = j * 8 + 2 * t;
        const float2 add = bias != nullptr && col0 + col < n ? load_pair(bias + col0 + col) : make_float2(0.f, 0.f);
#pragma unroll
        for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = i * 16 + g + 8 * half;
                store_pair(reinterpret_cast<Out*>(tile + row * pitch + col * sizeof(Out)), acc.d[i][j][2 * half] + add.x,
                           acc.d[i][j][2 * half + 1] + add.y);
            }
        }
    }
}

}  // namespace iris::gemm::sm80
