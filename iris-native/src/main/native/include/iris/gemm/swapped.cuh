// iris/gemm/swapped.cuh: the GEMM of few rows, swapped. For M of at most 48, a tile of 64 rows of C
// spends most of its multiply-adds on rows past C; the swapped kernel computes C^T = B A^T instead,
// so that B's N rows take wgmma's 64-row side and C's few rows its N (Cfg::kTileN: 8, 16, 32 or 48),
// and stores each finished tile of C^T into C transposed. The mainloop is the same: B is the
// product's A (an N x K B as an mk A, a K x N one as a km A), A (M x K) the product's nk B.
//
//   C[m][n] = alpha sum_k A(m, k) * B(k, n) + beta C[m][n] (+ bias[n]),  computed as (C^T)[n][m]
//
// Stream-K and split-K (stream_k.cuh) share out the product's tiles as any others'; clusters of a
// row of the product's block share B's k-blocks (Config's Cluster).
#pragma once

#include <cstdint>

#include "iris/abi/gemm.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/impl/pairs.cuh"
#include "iris/gemm/persistent.cuh"
#include "iris/gemm/stream_k.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm {

/// persistent's combiner for a swapped product: C = alpha P^T + beta C (+ bias), P the product's
/// finished tile, straight from the accumulators, each element rounded once; it returns false (the
/// swapped tiles have no epilogue: Config's kEpilogue). beta == 0 never reads C.
template <class Cfg>
struct TransposedStore {
    using Out = typename Cfg::Out;
    Out* c;  // C, n x m here (the product's columns by its rows), leading dimension ldc
    int ldc;
    int m;  // the product's rows: C's columns
    int n;  // the product's columns: C's rows
    const Out* bias;  // m values, one per product row (C's column), or null
    float alpha;
    float beta;

    /// wgmma's m64nNk16 layout: in warp w, lane l, element i holds product row 16w + l/4 + 8*((i/2)%2)
    /// and column 8*(i/4) + 2*(l%4) + i%2 of the warpgroup's 64 rows. Per store, a warp writes 8
    /// consecutive elements of each of 4 rows of C.
    template <class Acc>
    __device__ bool combine(Acc& acc, const TileCoord& tile, int consumer) const {
        const int t = threadIdx.x % 128;
        const int lane = t % 32;
        const int row0 = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows + 16 * (t / 32) + lane / 4;
        const int col0 = tile.n * Cfg::kTileN + 2 * (lane % 4);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row0 + 8 * half;
            if (row >= m) continue;
            const float add = bias != nullptr ? impl::load_one(bias + row) : 0.f;
#pragma unroll
            for (int block = 0; block < Cfg::kAccumulators / 4; ++block) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int col = col0 + 8 * block + e;
                    if (col < n) {
                        Out* out = c + static_cast<int64_t>(col) * ldc + row;
                        float v = alpha * acc[4 * block + 2 * half + e];
                        if (beta != 0.f) v += beta * impl::load_one(out);
                        impl::store_one(out, v + add);
                    }
                }
            }
        }
        return false;
    }
};

/// The plain GEMM of few rows, swapped: args holds the product, C^T = B A^T (a_map B's map as the
/// product's A, b_map A's as its nk B, m = N, n = M, k = K), with C's c, ldc and bias, alpha and
/// beta, and stream-K's units and workspace as run takes them. Launch as run: Cfg::kThreads
/// threads, IRIS_GEMM_SHARED_BYTES, a grid of whole clusters of at most one CTA per SM.
template <class Cfg>
__device__ inline bool run_swapped(const iris_gemm_args& args) {
    static_assert(!Cfg::kEpilogue && Cfg::kBLayout == BLayout::nk, "a product of few columns (C's rows), A as its N x K B");
    using Out = typename Cfg::Out;
    if (!shared_memory_fits<Cfg>()) return false;
    const StreamKScheduler<Cfg> sched = impl::units_of<Cfg>(args);
    NoHooks loads;
    const TransposedStore<Cfg> store{static_cast<Out*>(args.c), args.ldc, args.m, args.n, static_cast<const Out*>(args.bias),
                                     args.alpha, args.beta};
    impl::run_units<Cfg>(args, sched, static_cast<const Out*>(nullptr), loads, store);  // the bias is the store's
    return true;
}

}  // namespace iris::gemm
