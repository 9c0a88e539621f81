// iris/gemm/epilogue.cuh: how a finished accumulator tile leaves the kernel, and the hooks that
// plug into it.
//
// Each consumer warpgroup owns 64 rows x kTileN columns of f32 accumulators in registers. The epilogue
// converts them to the output type (adding the bias), stages them through shared memory 128 bytes
// of columns at a time (an OutputChunk: 64 rows x 64 bf16/f16 or 32 f32), and hands each chunk to
// the kernel's Hooks object. The Hooks are the seam between the GEMM and what a kernel does with
// its output (derive from NoHooks and define what you need; calls are resolved statically, so an
// empty hook costs nothing):
//
//   struct MyHooks : iris::gemm::NoHooks {
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
//       // their global coordinates (store them to any rank, add them, ...). Required: NoHooks has
//       // none, StoreEpilogue writes C.
//       template <class Out> __device__ void store_chunk(const OutputChunk<Out>& chunk);
//       // The same threads, after the warpgroup's last chunk of `tile` (after a warpgroup barrier):
//       // the place for a per-tile flag or a signal to a peer.
//       __device__ void tile_done(TileCoord tile, int consumer);
//   };
//
// `consumer` (0 or 1) is the warpgroup: it holds rows [consumer * 64, consumer * 64 + 64) of the
// tile. The hooks object is shared by every thread of the CTA; keep its state in const members.
// The library's fused kernels (GEMM + all-scatter, + reduce-scatter / all-reduce, all-gather +
// GEMM) are hooks of this kind.
#pragma once

#include <cstdint>

#include "iris/abi/tma.h"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm {

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
    int index;  // which chunk of the warpgroup's tile: a constant where the epilogue unrolls

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

/// Hooks that do nothing; every kernel's hooks derive from this.
struct NoHooks {
    // Whether the epilogue stores C itself by TMA (TensorStoreEpilogue) instead of calling store_chunk.
    static constexpr bool kTensorStore = false;
    __device__ void before_loads(TileCoord, int) const {}
    __device__ void spare_warps(int) const {}
    __device__ void begin_tile(TileCoord, int) const {}
    __device__ void tile_done(TileCoord, int) const {}
};

/// The plain GEMM's hooks: writes C (row-major, leading dimension ldc) with 16-byte stores.
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

/// The plain GEMM's hooks where C has a tensor map (iris_gemm_args' c_map; a Config with
/// kTensorStore): the epilogue stages each chunk in the map's swizzle and one thread of the
/// consumer stores it by TMA, which the consumer does not wait for before its next chunk or tile.
struct TensorStoreEpilogue : NoHooks {
    static constexpr bool kTensorStore = true;
    const iris_tma_descriptor* c_map;  // C's rows and columns, boxes of 128 bytes x 64 rows, 128-byte swizzle

    __device__ explicit TensorStoreEpilogue(const iris_tma_descriptor* map) : c_map(map) {}
};

}  // namespace iris::gemm
