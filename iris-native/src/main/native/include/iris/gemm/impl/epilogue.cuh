// iris/gemm/impl/epilogue.cuh (not API): the epilogue's staging of a consumer warpgroup's
// accumulators through shared memory, chunk by chunk, into the hooks of iris/gemm/epilogue.cuh.
#pragma once

#include "iris/gemm/config.cuh"
#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/pairs.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::impl {

/// Hands a consumer's 64 x kTileN accumulators to the hooks `epi`, chunk by chunk.
///
/// wgmma's accumulator layout (m64nNk16, f32): in warp w, lane l, element i holds row
/// 16w + l/4 + 8*((i/2)%2) and column 8*(i/4) + 2*(l%4) + i%2 of the warpgroup's tile.
template <class Cfg, class Epilogue>
__device__ void run_epilogue(const float (&acc)[Cfg::kAccumulators], uint8_t* buffer, TileCoord tile, int consumer,
                             const typename Cfg::Out* bias, int m, int n, Epilogue& epi) {
    using Out = typename Cfg::Out;
    const int t = threadIdx.x % 128;
    const int warp = t / 32;
    const int lane = t % 32;
    const int barrier = 1 + consumer;
    const int row0 = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows;
    const int tile_col0 = tile.n * Cfg::kTileN;
    epi.begin_tile(tile, consumer);
#pragma unroll
    for (int chunk = 0; chunk < Cfg::kChunks; ++chunk) {
        sm90::named_barrier_sync(barrier, 128);  // the previous chunk has been read
        constexpr int kBlocks = Cfg::kChunkCols / 8;
#pragma unroll
        for (int b = 0; b < kBlocks; ++b) {
            const int block = chunk * kBlocks + b;
            const int col = 8 * b + 2 * (lane % 4);  // inside the chunk
            float2 add = make_float2(0.f, 0.f);
            const int gcol = tile_col0 + chunk * Cfg::kChunkCols + col;
            if (bias != nullptr && gcol < n) {
                add = load_pair(bias + gcol);
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = 16 * warp + lane / 4 + 8 * half;
                const int i = 4 * block + 2 * half;
                store_pair(reinterpret_cast<Out*>(buffer + row * Cfg::kChunkPitch + col * sizeof(Out)), acc[i] + add.x, acc[i + 1] + add.y);
            }
        }
        sm90::named_barrier_sync(barrier, 128);
        epi.store_chunk(OutputChunk<Out>{buffer, Cfg::kChunkPitch, row0, tile_col0 + chunk * Cfg::kChunkCols, m, n, chunk});
    }
    sm90::named_barrier_sync(barrier, 128);
    epi.tile_done(tile, consumer);
}

}  // namespace iris::gemm::impl
