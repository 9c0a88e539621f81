// all_scatter_hooks.cuh: GEMM + all-scatter (column-parallel layer). This rank computes columns
// [rank * n_local, (rank + 1) * n_local) of C, and every rank must end with all of C.
//
//   AllScatterHooks           the epilogue stores each finished 16-byte piece
//                             into every rank's C, starting with the next rank
//   AllScatterSpareWarpHooks  the epilogue stores locally and hands the tile to the spare warps
//                             (fused_common.cuh), which copy it to the other ranks
//
// Either way the host publishes the stores with a barrier on the stream afterwards.
#pragma once

#include "fused/fused_common.cuh"

namespace fused {

/// Every piece goes to every rank from the epilogue.
template <class Out>
struct AllScatterHooks : NoHooks {
    const iris::Ctx& ctx;
    Out* c;  // symmetric, M x ldc
    int ldc;
    int col_offset;

    __device__ void store_chunk(const OutputChunk<Out>& chunk) const {
        chunk.for_each_vector([&](int row, int col, const uint4& v) {
            Out* local = c + static_cast<int64_t>(row) * ldc + col_offset + col;
            for (int j = 1; j <= ctx.world; ++j) {
                *reinterpret_cast<uint4*>(iris::translate(ctx, local, (ctx.rank + j) % ctx.world)) = v;
            }
        });
    }
};

template <class Out, int TileN, class Scheduler, bool Trace>
struct AllScatterSpareWarpHooks : NoHooks {
    const iris::Ctx& ctx;
    Out* c;  // symmetric, M x ldc
    int ldc;
    int col_offset;
    int m;
    int n_local;
    Handoff handoff;
    Scheduler sched;
    Tracer<Trace> tracer;

    __device__ void store_chunk(const OutputChunk<Out>& chunk) const {
        chunk.for_each_vector([&](int row, int col, const uint4& v) {
            *reinterpret_cast<uint4*>(c + static_cast<int64_t>(row) * ldc + col_offset + col) = v;
        });
    }
    __device__ void tile_done(TileCoord t, int consumer) const { handoff.publish(t.index, consumer); }

    __device__ void spare_warps(int) const {
        static_assert(sizeof(Out) == 2, "spare-warp copies move 16-bit elements");
        for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
            const TileCoord tile = sched.coord(t);
            for (int consumer = 0; consumer < 2; ++consumer) {
                handoff.await(ctx, t, consumer);
                const uint64_t start = tracer.now();
                const int row0 = tile.m * 128 + consumer * 64;
                const int col0 = tile.n * TileN;
                const int rows = min(64, m - row0);
                const int cols = min(TileN, n_local - col0);
                if (rows <= 0 || cols <= 0) continue;
                auto* local = reinterpret_cast<uint16_t*>(c + static_cast<int64_t>(row0) * ldc + col_offset + col0);
                for (int j = 1; j < ctx.world; ++j) {
                    SpareWarps::copy(iris::translate(ctx, local, (ctx.rank + j) % ctx.world), ldc, local, ldc, rows, cols);
                }
                if (SpareWarps::leader()) tracer.spare_copy(sched.count(), t, consumer, start);
            }
        }
    }
};

}  // namespace fused
