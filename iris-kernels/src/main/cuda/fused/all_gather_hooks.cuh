// all_gather_hooks.cuh: all-gather + GEMM, push (sequence-parallel input into a column-parallel
// layer). A is split by rows over ranks; each rank computes C_rank = A_gathered x B_rank.
//
// A piece is 128 rows (one tile row) x kPieceCols columns of A. The spare producer warps of every
// CTA push pieces of this rank's rows into every peer's gathered A and raise the piece's flag
// there; the consumers meanwhile compute the tiles of the local rows (OwnerOrderedScheduler, self
// first). On a peer's rows the producer waits, before the loads of each k-block, only for the
// flag of the piece that k-block lies in, so the mainloop starts once the first columns are in,
// not the whole 128 x K block.
//
// With split-K (split_k_exchange.cuh) the units of K's second half start at the middle of a row,
// so the pieces of the two halves alternate: columns 0, B, 128, B + 128, ... (B: the boundary).
//
// Why push: the reads are local and the NVLink writes are posted, so 96 threads per CTA keep far
// more bytes in flight than remote loads, each of which holds registers for a round trip. The
// pieces of all CTAs go in the order the peers' mainloops need them: groups of group_m tile rows
// (the scheduler's groups), within a group column chunk by column chunk, so that every tile row
// of a wave gets its first columns first. CTAs without a unit (all-gather launches one per SM)
// push with all their threads, and take the first pieces.
//
// Who pushes: CTA b's team (its spare warps, or all its threads) owns the pieces of pusher index
// q(b): q, q + gridDim.x, ... (an assignment), and claims it as it starts, with an exchange of the
// call's epoch into claim[q]. Once done with its own (a team without one: kHelpAfterNs after the
// peers' clear flags are up) it claims, one at a time, every assignment nobody has claimed yet and
// pushes those too. A peer's tiles wait for this rank's pieces, so every piece must be pushed by a
// CTA that runs: with the assignments fixed by block index alone, a piece of a CTA that was not
// resident (its SM held by other work: another stream, another process, an MPS limit; the CTAs
// without a unit are the last to get one) waited for that CTA, while the peers' tiles that waited
// for it held the SMs it needed, and so did this rank's tiles waiting for the peers' pieces. Now
// the pieces move as long as any CTA of this rank runs. In a launch whose CTAs all start at once
// every CTA has claimed its own before anyone looks, so the pieces stay where the order above puts
// them. The cost: one exchange per CTA, in flight during the wait for the peers' clear flags, and
// one scan of the claims (one load per thread and assignment, all at once) per team when done.
//
// Why the clear flag: this call overwrites rows of a peer's gathered A that work the peer ran
// before this call may still read. Every CTA raises `clear` in every peer as it starts, which is
// after that work (stream order); a rank writes into a peer only after the peer's clear. Every
// CTA, not one: a peer's pushers must not wait for a CTA of this rank that is not resident yet.
// This rank's own rows are read locally, after the caller filled them (stream order).
//
//   a      symmetric gathered A, M x k; this rank's rows filled by the caller
//   flags  this rank's, all_gather_flag_words(m, k, world, gridDim.x) u64, values are epochs:
//          ready[tiles_m][pieces_per_row]  set by the rows' owner once the piece is in place
//          clear[world]                    clear[s] set by rank s when its call has started
//          claim[gridDim.x]                claim[q] set by the CTA that pushes assignment q
//          then, with split-K, the exchange's flags and tickets (split_k_exchange.cuh)
#pragma once

#include "fused/fused_common.cuh"
#include "iris/gemm/impl/k_blocks.cuh"

namespace fused {

inline constexpr int kGatherPieceCols = IRIS_FUSED_PIECE_COLS;  // a piece: 128 rows x 128 columns (32 KiB of 16-bit A)

/// u64 words of the all-gather's flags for a gathered A of m x k on `world` ranks, pushed by a grid
/// of `blocks` CTAs (host and device).
__host__ __device__ constexpr int64_t all_gather_flag_words(int64_t m, int64_t k, int world, int blocks) {
    return (m + 127) / 128 * ((k + kGatherPieceCols - 1) / kGatherPieceCols) + world + blocks;
}

/// The first column chunk of K's second half for a K loop of `k_blocks` in `slices` (1 or 2) units
/// per tile: where the mainloop's second unit starts (split_k_exchange.cuh), 0 without split-K.
__host__ __device__ constexpr int gather_second_chunk(int k_blocks, int slices) {
    using iris::gemm::impl::kSplitAlignBlocks;
    return slices == 1 ? 0 : iris::gemm::impl::split_boundary(k_blocks) / kSplitAlignBlocks;
}

/// A piece of A: 128 rows (one tile row) by kGatherPieceCols columns from col0.
struct GatherPiece {
    int tile_row;
    int col0;
};

/// The order in which a rank pushes the pieces of its rows (host and device: src/test/native/
/// fused_schedule.cu checks it on the CPU). Groups of group_m tile rows, column chunk by column
/// chunk inside a group (chunk's order), tile rows innermost.
struct PushOrder {
    RowOwners owners;
    int rank;
    int group_m;
    int k;             // A's columns
    int second_chunk;  // with split-K the first column chunk of K's second half, else 0

    __host__ __device__ int pieces_per_row() const { return (k + kGatherPieceCols - 1) / kGatherPieceCols; }

    /// The column chunk pushed j-th in a row: j itself, or with split-K the two halves' chunks
    /// alternating until the shorter (second) half runs out.
    __host__ __device__ int chunk(int j) const {
        if (second_chunk == 0) return j;
        const int second = pieces_per_row() - second_chunk;  // chunks in the second half, <= the first's
        if (j >= 2 * second) return j - second;
        return j % 2 == 0 ? j / 2 : second_chunk + j / 2;
    }

    /// This rank's pieces: its tile rows x pieces_per_row.
    __host__ __device__ int pieces() const { return (owners.first_row(rank + 1) - owners.first_row(rank)) * pieces_per_row(); }

    /// Piece p of this rank's rows in pushing order.
    __host__ __device__ GatherPiece piece(int p) const {
        const int row0 = owners.first_row(rank);
        const int own_rows = owners.first_row(rank + 1) - row0;
        const int group_pieces = group_m * pieces_per_row();
        const int first = p / group_pieces * group_m;
        const int rows = min(own_rows - first, group_m);
        const int q = p % group_pieces;
        return {row0 + first + q % rows, chunk(q / rows) * kGatherPieceCols};
    }
};

template <bool Trace>
struct AllGatherHooks : NoHooks {
    static constexpr int kPieceCols = kGatherPieceCols;

    const iris::Ctx& ctx;
    uint16_t* a;  // 16-bit elements, copied as raw bits
    uint64_t* flags;
    uint64_t epoch;
    int m;
    int k;
    int units;           // the scheduler's, for the trace slots
    int second_chunk;    // with split-K the first column chunk of K's second half, else 0
    int group_m;
    RowOwners owners;
    Tracer<Trace> tracer;

    __device__ int pieces_per_row() const { return order().pieces_per_row(); }
    __device__ uint64_t* ready(int tile_row, int piece_col) const {
        return flags + int64_t(tile_row) * pieces_per_row() + piece_col;
    }
    __device__ uint64_t* clear(int from_rank) const {
        return flags + int64_t(owners.tiles_m) * pieces_per_row() + from_rank;
    }
    __device__ uint64_t* claim(int assignment) const { return clear(ctx.world) + assignment; }

    /// The producer, before the loads of the k-block at column k0 of a tile (k0: multiples of the
    /// mainloop's kTileK, which divides kPieceCols).
    __device__ void before_loads(TileCoord t, int k0) const {
        if (k0 % kPieceCols != 0) return;
        const int owner = owners.owner_of(t.m);
        if (owner == ctx.rank) return;
        // The owner's spare warps wrote the piece and then released the flag at system scope. A
        // tight poll: the mainloop of a peer's rows runs as fast as the pieces arrive, and
        // wait_until_backoff, waking up to 2 µs late on each, made all-gather 1024 x 3584 x 8192
        // take 80.6-81.0 µs instead of 76.4-76.9 (512 x 8192 x 8192: 87.5 instead of 78.8-80.7).
        iris::wait_until(ctx, ready(t.m, k0 / kPieceCols), iris::Cmp::ge, epoch, kSiteGatheredRows, owner);
#if IRIS_HAS_TMA
        // The rows were written through the generic proxy; TMA reads through the async proxy. (The
        // portable mainloop's cp.async reads through the generic proxy, as the writes went.)
        asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
    }

    __device__ PushOrder order() const { return {owners, ctx.rank, group_m, k, second_chunk}; }

    /// The spare warps of a CTA with units push.
    __device__ void spare_warps(int) const { push(SpareWarps::team()); }

    /// Which pusher this CTA is: the CTAs without a unit first, so that the peers' first pieces,
    /// which every unit on their rows waits for, go to CTAs that push with all their threads.
    __device__ int pusher() const {
        const int busy = min(units, static_cast<int>(gridDim.x));
        const int b = static_cast<int>(blockIdx.x);
        return b >= busy ? b - busy : b + static_cast<int>(gridDim.x) - busy;
    }

    /// This rank's pieces: its tile rows x pieces_per_row.
    __device__ int pieces() const { return order().pieces(); }

    /// Assignments that hold pieces (the others are empty): q < min(gridDim.x, pieces()).
    __device__ int assignments() const { return min(static_cast<int>(gridDim.x), pieces()); }

    /// Whether this call's claim on `assignment` is the caller's (one thread).
    __device__ bool take(int assignment) const {
        return iris::arch::exchange<iris::Order::relaxed, iris::Scope::gpu>(claim(assignment), epoch) != epoch;
    }

    /// This CTA's share of the pushing, by `team` (a CopyTeam): it raises this rank's clear flag in
    /// every peer, claims its own assignment, waits for the peers' clear flags, pushes its
    /// assignment if the claim was its own, then the assignments nobody has claimed.
    template <class Team>
    __device__ void push(const Team& team) const {
        const int peers = ctx.world - 1;
        const int t = team.thread;
        const int peer = (ctx.rank + 1 + t) % ctx.world;  // thread t < peers speaks to this one
        if (t < peers) {
            // Release: this rank's earlier reads of the rows (work before this kernel) come before
            // the peer's writes into them.
            iris::signal(ctx, clear(ctx.rank), epoch, peer);
        }
        if (peers == 0 || assignments() == 0) return;
        // The claim, by the first thread that waits for no peer, so that its round trip overlaps the
        // waits; through shared memory, since a value kept across those waits spilled.
        __shared__ bool s_mine;
        if (t == peers) s_mine = pusher() < assignments() && take(pusher());
        if (t < peers) {
            // Tight, for the same reason as before_loads: every piece waits on it.
            iris::wait_until(ctx, clear(peer), iris::Cmp::ge, epoch, kSiteGatherClear, peer);
        }
        team.sync();  // every thread writes into every peer only after that peer's clear
        int j = s_mine ? pusher() : -1;
        if (j < 0 && pusher() >= assignments()) {
            // Timed from here, not from the start: a start time kept across the waits above spilled.
            const uint64_t until = iris::arch::now_ns() + kHelpAfterNs;
            while (iris::arch::now_ns() < until) iris::arch::sleep_ns(1024);
        }
        // Its own, then those nobody has claimed, one at a time: one push in the code, and nothing
        // live across it (the copy's loads in flight fill kSpareWarpRegisters: keeping even the
        // count of assignments across it spilled).
        for (;;) {
            if (j < 0) j = claim_unclaimed(team);
            if (j < 0) return;
            push_assignment(team, j);
            j = -1;
        }
    }

    /// How long a team without an assignment of its own waits, once the peers' clear flags are up,
    /// before it first looks for unclaimed ones. The CTAs of a launch that finds the SMs free start
    /// within a few microseconds of each other, the CTAs without a unit (which own the first pieces
    /// and push them with four times the threads) last; a team that looked at once, with the peers'
    /// clear flags already up, would take their assignments before they could. A CTA that has not
    /// started by then is held back by other work, and its pieces are better pushed by a slower
    /// team than later.
    static constexpr uint64_t kHelpAfterNs = 10'000;

    /// The first assignment that nobody had claimed, now claimed by this team, or -1 when every one
    /// is claimed: each thread looks at every Team::kThreads-th claim at once, the leader takes the
    /// first unclaimed one, and the team looks again if another team took it meanwhile.
    template <class Team>
    __device__ int claim_unclaimed(const Team& team) const {
        __shared__ int s_first;
        const int assignments = this->assignments();
        for (;;) {
            if (team.leader()) s_first = assignments;
            team.sync();
            for (int j = team.thread; j < assignments; j += Team::kThreads) {
                if (iris::arch::load<iris::Order::relaxed, iris::Scope::gpu>(claim(j)) != epoch) {
                    atomicMin(&s_first, j);
                    break;
                }
            }
            team.sync();
            const int j = s_first;
            if (j == assignments) return -1;
            if (team.sync_or(team.leader() && take(j))) return j;  // also keeps s_first until every thread read it
        }
    }

    /// The pieces of assignment q (q, q + gridDim.x, ...) into every peer, by `team`; the peers have
    /// raised their clear flags.
    template <class Team>
    __device__ void push_assignment(const Team& team, int q) const {
        const int peers = ctx.world - 1;
        const int t = team.thread;
        const int peer = (ctx.rank + 1 + t) % ctx.world;
        const int pieces_here = pieces();
        for (int p = q; p < pieces_here; p += gridDim.x) {
            const uint64_t start = tracer.now();
            const GatherPiece pc = order().piece(p);
            const int64_t base = int64_t(pc.tile_row) * 128 * k + pc.col0;
            const int rows = min(128, m - pc.tile_row * 128);
            const int cols = min(kPieceCols, k - pc.col0);
            for (int j = 1; j <= peers; ++j) {
                team.copy(iris::translate(ctx, a + base, (ctx.rank + j) % ctx.world), k, a + base, k, rows, cols);
            }
            team.sync();
            if (t < peers) {
                // Release at system scope after the team barrier: covers every thread's stores.
                iris::signal(ctx, ready(pc.tile_row, pc.col0 / kPieceCols), epoch, peer);
            }
            if (team.leader()) {
                tracer.record(int64_t(units) * 4 + p, TraceKind::copy, p, ctx.rank, start, tracer.now());
            }
        }
    }
};

}  // namespace fused
