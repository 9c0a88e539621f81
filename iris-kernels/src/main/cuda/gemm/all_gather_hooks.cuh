// all_gather_hooks.cuh: all-gather + GEMM, pull (sequence-parallel input into a column-parallel
// layer). A is split by rows over ranks; each rank computes C_rank = A_gathered x B_rank. The spare
// producer warps (fused_common.cuh) pull the peers' rows of A into the local gathered A, 128 x 512
// pieces at a time, while the consumers compute the tiles of the local rows (OwnerOrderedScheduler,
// self first); the producer loads a peer row block with TMA once all its pieces have arrived.
//
//   a      symmetric gathered A, M x k; this rank's rows filled by the caller
//   ready  this rank's counters, one per tile row: pieces of that row block copied so far (they
//          only grow; a call waits for epoch * pieces_per_block)
#pragma once

#include "gemm/fused_common.cuh"

namespace gemm {

template <bool Trace>
struct AllGatherHooks : NoHooks {
    static constexpr int kPieceCols = 512;  // a piece: 128 rows x 512 columns (128 KiB of 16-bit A)

    const iris::Ctx& ctx;
    uint16_t* a;  // 16-bit elements, copied as raw bits
    uint64_t* ready;
    uint64_t epoch;
    int m;
    int k;
    int tiles_n;
    RowOwners owners;
    Tracer<Trace> tracer;

    __device__ int pieces_per_block() const { return (k + kPieceCols - 1) / kPieceCols; }
    __device__ int peer_blocks() const { return owners.tiles_m - (owners.first_row(ctx.rank + 1) - owners.first_row(ctx.rank)); }

    __device__ void before_loads(TileCoord t) const {
        if (owners.owner_of(t.m) == ctx.rank) return;
        // Scope gpu: the spare warps of this GPU's CTAs count the pieces in.
        iris::wait_until_backoff<iris::Order::acquire, iris::Scope::gpu>(
            ctx, ready + t.m, iris::Cmp::ge, epoch * pieces_per_block(), kSiteGatheredRows, owners.owner_of(t.m));
        // The rows were written through the generic proxy; TMA reads through the async proxy.
        asm volatile("fence.proxy.async.global;" ::: "memory");
    }

    /// Pieces in the order the mainloop needs them: peers from rank + 1 on, row blocks in order.
    __device__ void spare_warps(int) const {
        const int per_block = pieces_per_block();
        const int pieces = peer_blocks() * per_block;
        for (int p = blockIdx.x; p < pieces; p += gridDim.x) {
            const uint64_t start = tracer.now();
            int block = p / per_block;  // among the peers' blocks, in visiting order
            int tile_row = (owners.first_row(ctx.rank + 1) + block) % owners.tiles_m;
            const int owner = owners.owner_of(tile_row);
            const int row0 = tile_row * 128;
            const int rows = min(128, m - row0);
            const int col0 = (p % per_block) * kPieceCols;
            const int cols = min(kPieceCols, k - col0);
            const int64_t base = int64_t(row0) * k + col0;
            SpareWarps::copy(a + base, k, iris::translate(ctx, a, owner) + base, k, rows, cols);
            SpareWarps::sync();
            if (SpareWarps::leader()) {
                iris::arch::fetch_add<iris::Order::release, iris::Scope::gpu>(ready + tile_row, uint64_t(1));
                tracer.record(int64_t(owners.tiles_m) * tiles_n * 4 + p, TraceKind::copy, p, owner, start, tracer.now());
            }
        }
    }
};

}  // namespace gemm
