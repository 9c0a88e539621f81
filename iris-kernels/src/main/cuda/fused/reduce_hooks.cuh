// reduce_hooks.cuh: GEMM + all-reduce and GEMM + reduce-scatter (row-parallel layer: K split over
// ranks). Each rank computes its partial of every tile. A tile whose rows another rank owns goes to
// that owner as a partial, with a per-tile flag; the owner waits for the flags, adds the partials
// to its own and stores the sum (all-reduce: into every rank's C; reduce-scatter: into its shard).
// Tiles are visited with the other ranks' rows first (OwnerOrderedScheduler, self last), so the
// partials an owner waits for are computed early.
//
//   ReduceHooks           the epilogue itself stores partials and sums to other ranks
//   ReduceSpareWarpHooks  the epilogue stores partials and sums locally; the spare warps
//                         (fused_common.cuh) send them and raise the flags
//
// Buffers (symmetric; the host sizes them, see dev.irisjvm.kernels.fused):
//   ws     [world][rows_per_owner][n] partials received, ws[src] written by rank src; the spare-
//          warp variant adds [world][rows_per_owner][n] of local staging, [world + o] for owner o
//   flags  [world][tiles][2] per (source rank, tile, consumer half), set to `epoch`; the spare-warp
//          variant adds [tiles][2] local handoff flags
//   c      all-reduce: symmetric M x ldc; reduce-scatter: this rank's rows, (M / world) x ldc
#pragma once

#include "fused/fused_common.cuh"

namespace fused {

/// What both variants share: the buffers and their indexing.
template <class Out>
struct ReduceBuffers {
    static constexpr int kTileCols = 256;  // the reductions' tiles are Config's default, 128 x 256
    const iris::Ctx& ctx;
    Out* c;
    int ldc;
    Out* ws;
    uint64_t* flags;
    uint64_t epoch;
    int n;
    int tiles_n;
    RowOwners owners;
    int prefetch_k0;  // column of A at which the producer prefetches an owned tile's partials

    __device__ int tiles() const { return owners.tiles_m * tiles_n; }
    __device__ uint64_t* flag(int src, TileCoord t, int consumer) const {
        return flags + (int64_t(src) * tiles() + int64_t(t.m) * tiles_n + t.n) * 2 + consumer;
    }
    __device__ int rows_per_owner() const { return owners.most_rows() * 128; }
    /// Slot `slot` of ws at global (row, col): slots 0..world-1 receive, world + o stage for owner o.
    __device__ Out* at(int slot, int owner, int row, int col) const {
        const int local_row = row - owners.first_row(owner) * 128;
        return ws + (int64_t(slot) * rows_per_owner() + local_row) * n + col;
    }
    __device__ Out* result(int owner, int row, int col, bool all_gather) const {
        const int r = all_gather ? row : row - owners.first_row(owner) * 128;
        return c + static_cast<int64_t>(r) * ldc + col;
    }

    /// Owner side, before the first chunk of an owned tile: wait for every peer's partial.
    __device__ void await_partials(TileCoord t, int consumer) const {
        if (owners.owner_of(t.m) != ctx.rank || threadIdx.x % 128 != 0) return;
        for (int j = 1; j < ctx.world; ++j) {
            const int src = (ctx.rank + j) % ctx.world;
            iris::wait_until_backoff(ctx, flag(src, t, consumer), iris::Cmp::ge, epoch, kSitePartialFlag, src);
        }
        // run_epilogue's next warpgroup barrier passes the acquired partials on to the other threads.
        // The backoff keeps this thread's polls off the SM, whose other warpgroup and producer may
        // still be in the mainloop.
    }

    /// Owner side, producer thread, when it loads the k-block at prefetch_k0 of an owned tile: every
    /// peer's partial of the tile into L2, for the epilogue's sums. At 8192^3 on two H200s an owned
    /// tile's epilogue took a median 15-16 µs with the partials in HBM and 12 µs with this (a sent
    /// tile's: 5). Late in the mainloop, so that the operands streaming through L2 do not evict
    /// the lines first.
    __device__ void prefetch_partials(TileCoord t, int k0) const {
        if (k0 != prefetch_k0 || owners.owner_of(t.m) != ctx.rank) return;
        const int col0 = t.n * kTileCols;
        const uint32_t bytes = uint32_t(min(kTileCols, n - col0)) * sizeof(Out);
        for (int j = 1; j < ctx.world; ++j) {
            const int src = (ctx.rank + j) % ctx.world;
            for (int r = 0; r < 128; ++r) iris::arch::prefetch_l2(at(src, ctx.rank, t.m * 128 + r, col0), bytes);
        }
    }

    /// The first peer's pieces of the owned chunk that for_each_sum handles next.
    mutable uint4 next_[OutputChunk<Out>::kVectorsPerThread];

    /// next_ = the first peer's pieces of chunk c of the tile that `chunk` belongs to: the pieces
    /// this thread gets in for_each_indexed, c - chunk.index chunks further right.
    __device__ void load_next(const OutputChunk<Out>& chunk, int c) const {
        using Chunk = OutputChunk<Out>;
        const int first = (ctx.rank + 1) % ctx.world;
        const int t = threadIdx.x % 128;
        const int col0 = chunk.col0 + (c - chunk.index) * Chunk::kCols;
#pragma unroll
        for (int i = 0; i < Chunk::kVectorsPerThread; ++i) {
            const int v = t + i * 128;
            const int row = chunk.row0 + v / Chunk::kVectorsPerRow;  // ws has whole tiles of rows
            const int col = col0 + (v % Chunk::kVectorsPerRow) * Chunk::kElementsPerVector;
            if (col < n) next_[i] = *reinterpret_cast<const uint4*>(at(first, ctx.rank, row, col));
        }
    }

    /// Owner side: f(row, col, sum) for every piece of `chunk`, sum = own + each peer's partial in
    /// rank order from rank + 1 (on two ranks rounded once, as NCCL's sum). The first peer's pieces
    /// of a tile's first chunk are all loaded before f stores anything (f's stores may alias them
    /// as far as the compiler knows, so loads interleaved with them would make four dependent
    /// trips to memory per chunk instead of one), and those of each next chunk right after this
    /// chunk's sums, so that their trip overlaps the next chunk's staging. Two chunks ahead would
    /// not fit the spare-warp kernels' registers (ptxas spilled).
    template <class F>
    __device__ void for_each_sum(const OutputChunk<Out>& chunk, F&& f) const {
        if (ctx.world == 1) {
            chunk.for_each_vector(f);
            return;
        }
        if (chunk.index == 0) load_next(chunk, 0);
        chunk.for_each_indexed([&](int i, int row, int col, const uint4& own) {
            uint4 s = add_vectors<Out>(own, next_[i]);
            for (int j = 2; j < ctx.world; ++j) {
                const int src = (ctx.rank + j) % ctx.world;
                s = add_vectors<Out>(s, *reinterpret_cast<const uint4*>(at(src, ctx.rank, row, col)));
            }
            f(row, col, s);
        });
        if (chunk.index + 1 < kTileCols / OutputChunk<Out>::kCols) load_next(chunk, chunk.index + 1);
    }
};

template <class Out, bool AllGatherSum>
struct ReduceHooks : NoHooks {
    ReduceBuffers<Out> b;

    __device__ void before_loads(TileCoord t, int k0) const { b.prefetch_partials(t, k0); }
    __device__ void begin_tile(TileCoord t, int consumer) const { b.await_partials(t, consumer); }

    __device__ void store_chunk(const OutputChunk<Out>& chunk) const {
        const iris::Ctx& ctx = b.ctx;
        const int owner = b.owners.owner_of(chunk.row0 / 128);
        if (owner != ctx.rank) {
            chunk.for_each_vector([&](int row, int col, const uint4& v) {
                *reinterpret_cast<uint4*>(iris::translate(ctx, b.at(ctx.rank, owner, row, col), owner)) = v;
            });
            return;
        }
        b.for_each_sum(chunk, [&](int row, int col, const uint4& s) {
            Out* local = b.result(owner, row, col, AllGatherSum);
            if constexpr (AllGatherSum) {
                for (int j = 1; j <= ctx.world; ++j) {
                    *reinterpret_cast<uint4*>(iris::translate(ctx, local, (ctx.rank + j) % ctx.world)) = s;
                }
            } else {
                *reinterpret_cast<uint4*>(local) = s;
            }
        });
    }

    __device__ void tile_done(TileCoord t, int consumer) const {
        const int owner = b.owners.owner_of(t.m);
        if (owner != b.ctx.rank && threadIdx.x % 128 == 0) {
            // Release at system scope after the warpgroup barrier: covers every thread's partial.
            iris::signal(b.ctx, b.flag(b.ctx.rank, t, consumer), b.epoch, owner);
        }
    }
};

template <class Out, bool AllGatherSum, class Scheduler, bool Trace>
struct ReduceSpareWarpHooks : NoHooks {
    ReduceBuffers<Out> b;
    Handoff handoff;
    Scheduler sched;
    int m;
    Tracer<Trace> tracer;

    __device__ void before_loads(TileCoord t, int k0) const { b.prefetch_partials(t, k0); }
    __device__ void begin_tile(TileCoord t, int consumer) const { b.await_partials(t, consumer); }

    __device__ void store_chunk(const OutputChunk<Out>& chunk) const {
        const int owner = b.owners.owner_of(chunk.row0 / 128);
        if (owner == b.ctx.rank) {
            b.for_each_sum(chunk, [&](int row, int col, const uint4& s) {
                *reinterpret_cast<uint4*>(b.result(owner, row, col, AllGatherSum)) = s;
            });
        } else {
            chunk.for_each_vector([&](int row, int col, const uint4& v) {
                *reinterpret_cast<uint4*>(b.at(b.ctx.world + owner, owner, row, col)) = v;
            });
        }
    }

    __device__ void tile_done(TileCoord t, int consumer) const {
        if (AllGatherSum || b.owners.owner_of(t.m) != b.ctx.rank) handoff.publish(t.index, consumer);
    }

    __device__ void spare_warps(int) const {
        static_assert(sizeof(Out) == 2, "spare-warp copies move 16-bit elements");
        const iris::Ctx& ctx = b.ctx;
        for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
            const TileCoord tile = sched.coord(t);
            const int owner = b.owners.owner_of(tile.m);
            if (owner == ctx.rank && !AllGatherSum) continue;
            for (int consumer = 0; consumer < 2; ++consumer) {
                handoff.await(ctx, t, consumer);
                const uint64_t start = tracer.now();
                const int row0 = tile.m * 128 + consumer * 64;
                const int col0 = tile.n * ReduceBuffers<Out>::kTileCols;
                const int rows = min(64, m - row0);
                const int cols = min(ReduceBuffers<Out>::kTileCols, b.n - col0);
                if (owner != ctx.rank) {
                    if (rows > 0 && cols > 0) {
                        auto* staged = reinterpret_cast<uint16_t*>(b.at(ctx.world + owner, owner, row0, col0));
                        auto* remote = reinterpret_cast<uint16_t*>(b.at(ctx.rank, owner, row0, col0));
                        SpareWarps::copy(iris::translate(ctx, remote, owner), b.n, staged, b.n, rows, cols);
                    }
                    SpareWarps::sync();
                    if (SpareWarps::leader()) iris::signal(ctx, b.flag(ctx.rank, tile, consumer), b.epoch, owner);
                } else if (rows > 0 && cols > 0) {
                    auto* local = reinterpret_cast<uint16_t*>(b.result(owner, row0, col0, true));
                    for (int j = 1; j < ctx.world; ++j) {
                        SpareWarps::copy(iris::translate(ctx, local, (ctx.rank + j) % ctx.world), b.ldc, local, b.ldc,
                                         rows, cols);
                    }
                }
                if (SpareWarps::leader()) tracer.spare_copy(sched.count(), t, consumer, start);
            }
        }
    }
};

}  // namespace fused
