// iris/gemm/impl/epilogue.cuh (not API): the epilogue's staging of a consumer warpgroup's
// accumulators through shared memory, chunk by chunk, into the hooks of iris/gemm/epilogue.cuh.
#pragma once

#include "iris/gemm/config.cuh"
#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/pairs.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::impl {

/// Writes chunk `chunk` of a consumer's 64 x kTileN accumulators (plus the bias) to shared memory
/// as Out, element (row, column) of the chunk at buffer + at(row, column).
///
/// wgmma's accumulator layout (m64nNk16, f32): in warp w, lane l, element i holds row
/// 16w + l/4 + 8*((i/2)%2) and column 8*(i/4) + 2*(l%4) + i%2 of the warpgroup's tile.
template <class Cfg, class At>
__device__ inline void stage_chunk(const float (&acc)[Cfg::kAccumulators], uint8_t* buffer, int chunk, int tile_col0,
                                   const typename Cfg::Out* bias, int n, At at) {
    using Out = typename Cfg::Out;
    const int t = threadIdx.x % 128;
    const int warp = t / 32;
    const int lane = t % 32;
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
            store_pair(reinterpret_cast<Out*>(buffer + at(row, col)), acc[i] + add.x, acc[i + 1] + add.y);
        }
    }
}

/// Hands a consumer's 64 x kTileN accumulators to the hooks `epi`, chunk by chunk, through its
/// buffer of rows padded to kChunkPitch bytes.
template <class Cfg, class Epilogue>
__device__ void run_epilogue(const float (&acc)[Cfg::kAccumulators], uint8_t* buffer, TileCoord tile, int consumer,
                             const typename Cfg::Out* bias, int m, int n, Epilogue& epi) {
    using Out = typename Cfg::Out;
    const int barrier = 1 + consumer;
    const int row0 = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows;
    const int tile_col0 = tile.n * Cfg::kTileN;
    epi.begin_tile(tile, consumer);
#pragma unroll
    for (int chunk = 0; chunk < Cfg::kChunks; ++chunk) {
        sm90::named_barrier_sync(barrier, 128);  // the previous chunk has been read
        stage_chunk<Cfg>(acc, buffer, chunk, tile_col0, bias, n,
                         [](int row, int col) { return row * Cfg::kChunkPitch + col * sizeof(Out); });
        sm90::named_barrier_sync(barrier, 128);
        epi.store_chunk(OutputChunk<Out>{buffer, Cfg::kChunkPitch, row0, tile_col0 + chunk * Cfg::kChunkCols, m, n, chunk});
    }
    sm90::named_barrier_sync(barrier, 128);
    epi.tile_done(tile, consumer);
}

/// A consumer's tensor stores (Cfg::kTensorStore): its kStoreChunkSlots chunk buffers, which one the
/// next chunk takes, and the bulk groups its first thread has in flight.
template <class Cfg>
struct TensorStores {
    uint8_t* buffers;  // kStoreChunkSlots x kStoreChunkBytes, 1024-byte aligned
    int slot = 0;

    /// Stores a consumer's 64 x kTileN accumulators to C by TMA through `c_map` (boxes of
    /// kChunkCols x 64 in the 128-byte swizzle), chunk by chunk, without waiting for the stores: a
    /// buffer is written again once the store of two chunks before has read it.
    __device__ void store(const float (&acc)[Cfg::kAccumulators], TileCoord tile, int consumer, const typename Cfg::Out* bias,
                          int m, int n, const sm90::TmaDescriptor* c_map) {
        const bool leader = threadIdx.x % 128 == 0;
        const int barrier = 1 + consumer;
        const int row0 = tile.m * Cfg::kTileM + consumer * Cfg::kConsumerRows;
        const int tile_col0 = tile.n * Cfg::kTileN;
#pragma unroll
        for (int chunk = 0; chunk < Cfg::kChunks; ++chunk) {
            uint8_t* buffer = buffers + slot * Cfg::kStoreChunkBytes;
            if (leader) sm90::bulk_wait_group_read<Cfg::kStoreChunkSlots - 1>();
            sm90::named_barrier_sync(barrier, 128);  // this buffer's last store has read it
            // The swizzle the tensor map un-does: 16-byte unit u of row r at unit u ^ (r % 8).
            stage_chunk<Cfg>(acc, buffer, chunk, tile_col0, bias, n,
                             [](int row, int col) {
                                 const uint32_t byte = col * sizeof(typename Cfg::Out);
                                 return row * uint32_t(IRIS_GEMM_SWIZZLE_BYTES) + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
                             });
            sm90::fence_proxy_async_shared();
            sm90::named_barrier_sync(barrier, 128);
            const int col0 = tile_col0 + chunk * Cfg::kChunkCols;
            if (leader) {
                if (row0 < m && col0 < n) sm90::tma_store_2d(c_map, buffer, col0, row0);
                sm90::bulk_commit_group();
            }
            slot = (slot + 1) % Cfg::kStoreChunkSlots;
        }
    }

    /// After the consumer's last tile: its stores have read their buffers (before the CTA's shared
    /// memory goes); their writes complete with the grid's.
    __device__ void drain() const {
        if (threadIdx.x % 128 == 0) sm90::bulk_wait_group_read<0>();
    }
};

}  // namespace iris::gemm::impl
