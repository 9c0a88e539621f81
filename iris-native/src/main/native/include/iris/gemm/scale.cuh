// iris/gemm/scale.cuh: C = alpha A x B + beta C, as an accumulator hook (persistent's combiner): it
// scales each finished unit's f32 accumulators by alpha and adds beta times C as it is in memory,
// before the epilogue (which adds the bias, rounds once and stores) overwrites C. The plain GEMM,
// iris::gemm::run(args), uses it with iris_gemm_args' alpha and beta; a kernel of yours may pass it
// to persistent next to hooks that store into C.
//
//   const iris::gemm::ScaleAccumulators<Cfg> scale{c, ldc, m, n, alpha, beta};
//   iris::gemm::persistent<Cfg>(a_map, b_map, bias, m, n, k, sched, store, iris::gemm::NoTimeline{}, scale);
//
// beta == 0 never reads C, so C may hold anything (NaN included); alpha == 1 with beta == 0 leaves
// the accumulators as they are. The result is alpha * (A x B) + beta * C (+ bias) in f32 (the two
// products and their sum each rounded at most once), rounded once to Out. Every unit must be a whole tile: with
// split-K each part would add beta C (stream-K's fix-up, stream_k.cuh, applies it to the finished sum).
#pragma once

#include <cstdint>

#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/epilogue.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm {

template <class Cfg>
struct ScaleAccumulators {
    using Out = typename Cfg::Out;
    const Out* c;  // C, m x n, leading dimension ldc (the epilogue's output)
    int ldc;
    int m;
    int n;
    float alpha;
    float beta;

    /// wgmma's m64nNk16 layout: in warp w, lane l, element i holds row 16w + l/4 + 8*((i/2)%2) and
    /// column 8*(i/4) + 2*(l%4) + i%2 of the warpgroup's 64 rows; pairs (i, i + 1) are adjacent
    /// columns, read together (N % 8 == 0 and the 16-byte alignment of C keep a pair inside C).
    template <class Acc>
    __device__ bool combine(Acc& acc, const TileCoord& tile, int consumer) const {
        if (beta == 0.f) {
            if (alpha != 1.f) {
#pragma unroll
                for (int i = 0; i < Cfg::kAccumulators; ++i) {
                    acc[i] *= alpha;
                }
            }
            return true;
        }
        const int t = threadIdx.x % 128;
        const int lane = t % 32;
        const int row0 = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows + 16 * (t / 32) + lane / 4;
        const int col0 = tile.n * Cfg::kTileN + 2 * (lane % 4);
#pragma unroll
        for (int block = 0; block < Cfg::kAccumulators / 4; ++block) {
            const int col = col0 + 8 * block;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = row0 + 8 * half;
                const int i = 4 * block + 2 * half;
                // Outside C the accumulators are never stored: leave them, read nothing.
                if (row < m && col < n) {
                    const float2 old = impl::load_pair<Out>(c + static_cast<int64_t>(row) * ldc + col);
                    acc[i] = alpha * acc[i] + beta * old.x;
                    acc[i + 1] = alpha * acc[i + 1] + beta * old.y;
                }
            }
        }
        return true;
    }
};

}  // namespace iris::gemm
