// iris/gemm/sm80/skinny.cuh: the skinny GEMM, for problems of few rows (a decode step, a small batch)
// on every NVIDIA GPU since Ampere, Hopper included:
//
//   C[m][n] = alpha sum_k A[m][k] * B(k, n) + beta C[m][n] (+ bias[n])   A: M x K
//
// Such a GEMM only streams B: 16 rows of A are 2 KiB per k-block next to B's 16 KiB, and the
// arithmetic is a rounding error of the tensor cores' rate. What it needs is many blocks with many
// bytes of B in flight, which the portable mainloop's cp.async ring gives (a 16-row A tile, every
// warp a 16 x 32 slice of a 128-column tile; sm80/impl/mainloop.cuh), and K shared out where the
// column tiles alone are too few. Rows come in bands of 16, the bands of a tile in neighbouring
// blocks, so that B streams from memory once and from L2 for the other bands: block b runs band
// b % bands of column tile (b / bands) / slices over slice (b / bands) % slices of K. The last
// block of a band's tile to finish adds the slices' f32 partials in slice order, so the sum is the
// same on every run, and runs the epilogue; no block ever waits for another.
//
//   extern "C" __global__ void __launch_bounds__(IRIS_GEMM_SKINNY_THREADS)
//   my_skinny(const IRIS_GRID_CONSTANT iris_gemm_skinny_args args) {
//       iris::gemm::sm80::skinny<iris::gemm::sm80::SkinnyConfig<iris::bf16, iris::gemm::BLayout::nk, float>>(args);
//   }
//
// The contract of iris_gemm_skinny_args (iris/abi/gemm_portable.h); shapes and alignment as the
// portable GEMM's (sm80/gemm.cuh). Not API: the parts under sm80/impl/.
#pragma once

#include <cstdint>

#include "iris/abi/gemm_portable.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/pairs.cuh"
#include "iris/gemm/sm80/config.cuh"
#include "iris/gemm/sm80/impl/mainloop.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"
#include "iris/gemm/sm80/impl/warp_tile.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm::sm80 {

/// The portable mainloop's configuration for the 16-row tile (config.cuh's SkinnyShape).
template <class In, BLayout B, class Out>
using SkinnyConfig = Config<In, B, Out, SkinnyShape>;

namespace skinny_impl {

template <class Out>
__device__ inline float2 bias_pair(const Out* bias, int col) {
    return bias != nullptr ? impl::load_pair(bias + col) : make_float2(0.f, 0.f);
}

/// What block `block` of a launch of `slices` slices runs: band `band` of rows of column tile `tile`
/// (nothing where it lies past C) over slice `slice` of K (slice_k_blocks says how much). Host and
/// device, as slice_k_blocks, band_args and partial_row: src/test/native/gemm_skinny_split.cu runs them
/// for every block of the host's splits.
struct SkinnyBlock {
    int band;
    int tile;
    int slice;
    int col0;
};

template <class Cfg>
__host__ __device__ inline SkinnyBlock skinny_block(const iris_gemm_skinny_args& args, int slices, int block) {
    const int bands = args.m < 1 ? 1 : (args.m + Cfg::kTileM - 1) / Cfg::kTileM;
    const int band = block % bands;
    const int tile = block / bands / slices;
    return {band, tile, block / bands % slices, tile * Cfg::kTileN};
}

/// The k-blocks of slice `slice`: from the first, kb0, `count` of them (none past K).
struct SliceKBlocks {
    int kb0;
    int count;
};

template <class Cfg>
__host__ __device__ inline SliceKBlocks slice_k_blocks(const iris_gemm_skinny_args& args, int slice) {
    const int k_blocks = (args.k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int kb0 = slice * args.k_blocks_per_slice;
    return {kb0, min(args.k_blocks_per_slice, k_blocks - kb0)};
}

/// args as the epilogue of band `band` sees them: a problem of its own, its rows of C, its partials
/// and its counters.
template <class Cfg>
__host__ __device__ inline iris_gemm_skinny_args band_args(const iris_gemm_skinny_args& args, int band, int slices) {
    const int row0 = band * Cfg::kTileM;
    iris_gemm_skinny_args own = args;
    const int tiles = (args.n + Cfg::kTileN - 1) / Cfg::kTileN;
    own.c = static_cast<typename Cfg::Out*>(args.c) + row0 * args.ldc;
    own.m = min(Cfg::kTileM, args.m - row0);
    own.partials = static_cast<float*>(args.partials) + int64_t(band) * tiles * slices * Cfg::kTileM * Cfg::kTileN;
    own.counters = static_cast<uint32_t*>(args.counters) + band * tiles;
    return own;
}

/// The tile's f32 partials of slice s: kTileM rows of kTileN floats, only rows inside C written.
template <class Cfg>
__host__ __device__ inline float2* partial_row(const iris_gemm_skinny_args& args, int tile, int s, int row) {
    return reinterpret_cast<float2*>(static_cast<float*>(args.partials) +
                                     ((int64_t(tile) * args.slices + s) * Cfg::kTileM + row) * Cfg::kTileN);
}

/// Stores this block's partial (rows inside C only, from the mma layout: lane (g, t) of warp w holds
/// rows g and g + 8 of columns 32 w + 8 j + 2 t) and counts it on the tile's counter. Returns true in
/// the last block of the tile to finish. Called by every thread of the block.
template <class Cfg>
__device__ bool store_partial(const Accumulators<Cfg>& acc, const iris_gemm_skinny_args& args, int tile, int slice) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int col = (static_cast<int>(threadIdx.x) / 32) * Cfg::kWarpN + 2 * (lane % 4);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const int row = lane / 4 + 8 * e;
        if (row >= args.m) continue;
        float2* const p = partial_row<Cfg>(args, tile, slice, row) + col / 2;
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN; ++j) __stcg(p + j * Cfg::kMmaN / 2, make_float2(acc.d[0][j][2 * e], acc.d[0][j][2 * e + 1]));
    }
    __threadfence();
    __syncthreads();
    int last = 0;
    if (threadIdx.x == 0) {
        uint32_t* counter = static_cast<uint32_t*>(args.counters) + tile;
        last = iris::arch::fetch_add<iris::Order::acq_rel, iris::Scope::gpu>(counter, 1u) == uint32_t(args.slices - 1);
        if (last) iris::arch::store<iris::Order::relaxed, iris::Scope::gpu>(counter, 0u);  // ready for the next launch
    }
    const bool mine = __syncthreads_or(last);
    if (mine) __threadfence();
    return mine;
}

/// The last block of a tile: C = alpha (the slices' partials added in slice order) + beta C (+ bias).
/// Every thread takes four adjacent columns of kPasses rows and loads kBatch slices of each before
/// it adds them: one block reads every slice of the tile, so what bounds it is how many bytes it
/// keeps in flight, not the slices' count.
template <class Cfg>
__device__ void store_sum(const iris_gemm_skinny_args& args, int tile, int col0) {
    using Out = typename Cfg::Out;
    constexpr int kQuadsPerRow = Cfg::kTileN / 4;
    static_assert(Cfg::kThreads % kQuadsPerRow == 0, "a pass covers whole rows");
    constexpr int kRowsPerPass = Cfg::kThreads / kQuadsPerRow;
    constexpr int kPasses = Cfg::kTileM / kRowsPerPass;
    constexpr int kBatch = 4;
    const int quad = static_cast<int>(threadIdx.x) % kQuadsPerRow;
    const int col = col0 + 4 * quad;
    const int row0 = static_cast<int>(threadIdx.x) / kQuadsPerRow;
    // N % 8 == 0 and col0 % 128 == 0: a quad is wholly in or out.
    if (col >= args.n) return;
    const auto at = [&](int s, int row) { return reinterpret_cast<const float4*>(partial_row<Cfg>(args, tile, s, row)) + quad; };

    float4 sum[kPasses];
#pragma unroll
    for (int q = 0; q < kPasses; ++q) sum[q] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int s0 = 0; s0 < args.slices; s0 += kBatch) {
        float4 x[kBatch][kPasses];
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
            for (int q = 0; q < kPasses; ++q) {
                const int row = row0 + q * kRowsPerPass;
                x[b][q] = s0 + b < args.slices && row < args.m ? __ldcg(at(s0 + b, row)) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
            for (int q = 0; q < kPasses; ++q) {
                sum[q].x += x[b][q].x;
                sum[q].y += x[b][q].y;
                sum[q].z += x[b][q].z;
                sum[q].w += x[b][q].w;
            }
    }
    const Out* bias = static_cast<const Out*>(args.bias);
    const float2 add_lo = bias_pair(bias, col);
    const float2 add_hi = bias_pair(bias, col + 2);
#pragma unroll
    for (int q = 0; q < kPasses; ++q) {
        const int row = row0 + q * kRowsPerPass;
        if (row >= args.m) continue;
        Out* const out = static_cast<Out*>(args.c) + row * args.ldc + col;
        impl::finish_pair(out, make_float2(sum[q].x, sum[q].y), add_lo, args.alpha, args.beta);
        impl::finish_pair(out + 2, make_float2(sum[q].z, sum[q].w), add_hi, args.alpha, args.beta);
    }
}

/// One slice: C = alpha acc + beta C (+ bias) straight from the mma layout, for the tile's outputs
/// inside C (N % 8 == 0 keeps a lane's pair of columns wholly in or out).
template <class Cfg>
__device__ void store(const Accumulators<Cfg>& acc, const iris_gemm_skinny_args& args, int col0) {
    using Out = typename Cfg::Out;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int first = col0 + (static_cast<int>(threadIdx.x) / 32) * Cfg::kWarpN + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) {
        const int col = first + j * Cfg::kMmaN;
        if (col >= args.n) continue;
        const float2 add = bias_pair(static_cast<const Out*>(args.bias), col);
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int row = lane / 4 + 8 * e;
            if (row < args.m) {
                impl::finish_pair(static_cast<Out*>(args.c) + row * args.ldc + col, make_float2(acc.d[0][j][2 * e], acc.d[0][j][2 * e + 1]),
                            add, args.alpha, args.beta);
            }
        }
    }
}

}  // namespace skinny_impl

/// This block's column tile over its slice of K, stored (or left to the tile's last slice). Returns
/// false, having done nothing, where the launch gave less dynamic shared memory than Cfg needs (the
/// same in every thread): never __trap, which would kill the context and with it the rank.
template <class Cfg>
__device__ inline bool skinny(const iris_gemm_skinny_args& args) {
    extern __shared__ __align__(128) uint8_t smem[];
    if (!shared_memory_fits<Cfg>()) return false;
    const int slices = args.slices < 1 ? 1 : args.slices;
    const skinny_impl::SkinnyBlock here = skinny_impl::skinny_block<Cfg>(args, slices, static_cast<int>(blockIdx.x));
    if (here.col0 >= args.n) return true;
    const skinny_impl::SliceKBlocks ks = skinny_impl::slice_k_blocks<Cfg>(args, here.slice);
    if (ks.count < 1) return true;  // the host never launches an empty slice
    const int k0 = ks.kb0 * Cfg::kTileK;

    const int row0 = here.band * Cfg::kTileM;
    auto a_copy = copy_of_a<Cfg>(args.a, args.lda, row0, k0, args.m, args.k);
    auto b_copy = copy_of_b<Cfg>(args.b, args.ldb, here.col0, k0, args.n, args.k);
    const iris_gemm_skinny_args own = skinny_impl::band_args<Cfg>(args, here.band, slices);
    Accumulators<Cfg> acc;
    mainloop<Cfg>(acc, shared_address(smem), a_copy, b_copy, ks.count, 0, static_cast<int>(threadIdx.x) / 32);
    if (slices == 1) {
        skinny_impl::store<Cfg>(acc, own, here.col0);
    } else if (skinny_impl::store_partial<Cfg>(acc, own, here.tile, here.slice)) {
        skinny_impl::store_sum<Cfg>(own, here.tile, here.col0);
    }
    return true;
}

}  // namespace iris::gemm::sm80
