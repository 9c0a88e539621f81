// epilogue.cuh: how a finished accumulator tile leaves the kernel, and the hooks that fused kernels
// plug in.
//
// Each consumer warpgroup owns 64 rows x kTileN columns of f32 accumulators in registers. The epilogue
// converts them to the output type (adding the bias), stages them through shared memory 128 bytes
// of columns at a time (an OutputChunk: 64 rows x 64 bf16/f16 or 32 f32), and hands each chunk to
// the kernel's Hooks object. The Hooks are the seam between the GEMM and what a fused kernel does
// with its output (derive from NoHooks and override what you need; calls are resolved statically):
//
//   struct MyHooks : gemm::NoHooks {
//       // Producer thread, before it loads the k-block at column k0 of `tile`'s operands (e.g.
//       // wait until those columns of a peer's rows of A have arrived).
//       __device__ void before_loads(TileCoord tile, int k0);
//       // Warps 1..3 of the producer warpgroup, once per CTA, beside the mainloop, with the
//       // producer's register budget (Config's ProducerRegisters).
//       __device__ void spare_warps(int warp);
//       // All 128 threads of a consumer warpgroup, before the first chunk of `tile` (e.g. wait for
//       // a peer's partial of this tile).
//       __device__ void begin_tile(TileCoord tile, int consumer);
//       // The same threads, once per chunk; chunk.for_each_vector hands out 16-byte pieces with
//       // their global coordinates (store them to any rank, add them, ...).
//       template <class Out> __device__ void store_chunk(const OutputChunk<Out>& chunk);
//       // The same threads, after the warpgroup's last chunk of `tile` (after a warpgroup barrier):
//       // the place for a per-tile flag or a signal to a peer.
//       __device__ void tile_done(TileCoord tile, int consumer);
//   };
//
// StoreEpilogue below writes C; the fused kernels' hooks are in all_scatter_hooks.cuh, reduce_hooks.cuh
// and all_gather_hooks.cuh.
#pragma once

#include "gemm/config.cuh"
#include "gemm/hopper.cuh"
#include "gemm/tile_scheduler.cuh"

namespace gemm {

/// 64 rows x kChunkCols columns of finished output in shared memory, with the global position of
/// its first element and the matrix bounds.
template <class Out>
struct OutputChunk {
    const uint8_t* smem;  // row r at smem + r * pitch
    uint32_t pitch;
    int row0;  // global row of smem row 0
    int col0;  // global column of the chunk's first column
    int m;      // rows of C
    int n;      // columns of C
    int index;  // which chunk of the warpgroup's tile: a constant where run_epilogue unrolls

    static constexpr int kRows = 64;
    static constexpr int kVectorsPerRow = 128 / 16;
    static constexpr int kElementsPerVector = 16 / sizeof(Out);
    static constexpr int kCols = kVectorsPerRow * kElementsPerVector;  // Config's kChunkCols

    /// 16-byte pieces per thread (for_each_indexed's i).
    static constexpr int kVectorsPerThread = kRows * kVectorsPerRow / 128;

    /// Calls f(row, col, vector) for every 16-byte piece inside C, spread over 128 threads so that
    /// eight consecutive threads cover one 128-byte row. N % 8 == 0 keeps a piece wholly in or out.
    template <class F>
    __device__ void for_each_vector(F&& f) const {
        for_each_indexed([&](int, int row, int col, const uint4& v) { f(row, col, v); });
    }

    /// for_each_vector with the piece's index i in [0, kVectorsPerThread) on this thread, a
    /// constant after unrolling: f(i, row, col, vector).
    template <class F>
    __device__ void for_each_indexed(F&& f) const {
        const int t = threadIdx.x % 128;
#pragma unroll
        for (int i = 0; i < kVectorsPerThread; ++i) {
            const int v = t + i * 128;
            const int r = v / kVectorsPerRow;
            const int c = v % kVectorsPerRow;
            const int row = row0 + r;
            const int col = col0 + c * kElementsPerVector;
            if (row < m && col < n) {
                f(i, row, col, *reinterpret_cast<const uint4*>(smem + r * pitch + c * 16));
            }
        }
    }
};

/// Hooks that do nothing; a fused kernel's hooks derive from this.
struct NoHooks {
    __device__ void before_loads(TileCoord, int) const {}
    __device__ void spare_warps(int) const {}
    __device__ void begin_tile(TileCoord, int) const {}
    __device__ void tile_done(TileCoord, int) const {}
};

/// Writes C (row-major, leading dimension ldc) with 16-byte stores.
template <class Out>
struct StoreEpilogue : NoHooks {
    Out* c;
    int ldc;

    __device__ StoreEpilogue(Out* c_, int ldc_) : c(c_), ldc(ldc_) {}

    __device__ void store_chunk(const OutputChunk<Out>& chunk) const {
        chunk.for_each_vector([&](int row, int col, const uint4& v) {
            *reinterpret_cast<uint4*>(c + static_cast<int64_t>(row) * ldc + col) = v;
        });
    }
};

template <class Out>
__device__ inline void store_pair(uint8_t* p, float a, float b) {
    if constexpr (std::is_same_v<Out, float>) {
        *reinterpret_cast<float2*>(p) = make_float2(a, b);
    } else if constexpr (std::is_same_v<Out, iris::bf16>) {
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
    } else {
        *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b);
    }
}

template <class Out>
__device__ inline float2 load_pair(const Out* p) {
    if constexpr (std::is_same_v<Out, float>) {
        return *reinterpret_cast<const float2*>(p);
    } else if constexpr (std::is_same_v<Out, iris::bf16>) {
        return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
    } else {
        return __half22float2(*reinterpret_cast<const __half2*>(p));
    }
}

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
                store_pair<Out>(buffer + row * Cfg::kChunkPitch + col * sizeof(Out), acc[i] + add.x, acc[i + 1] + add.y);
            }
        }
        sm90::named_barrier_sync(barrier, 128);
        epi.store_chunk(OutputChunk<Out>{buffer, Cfg::kChunkPitch, row0, tile_col0 + chunk * Cfg::kChunkCols, m, n, chunk});
    }
    sm90::named_barrier_sync(barrier, 128);
    epi.tile_done(tile, consumer);
}

}  // namespace gemm
