// moe_common.cuh: what the MoE token exchange (moe_dispatch.cu, moe_combine.cu, and the
// low-latency moe_ll.cu for its epoch, last block, copies and sum) shares: the
// workspace slots, the call epoch, the last-block hand-off, the flag handshakes and the row copies.
//
// The contract of the dispatch and combine kernels (Java: dev.irisjvm.kernels.moe.MoeDispatch /
// MoeCombine):
//
//   * One workspace per MoeDispatch, on the symmetric heap, zeroed once at creation and never reset
//     by the host (its header: iris/abi/moe.h, IRIS_MOE_WS_*). Beside it, allocated with it: the
//     receive buffer and the source layout (symmetric, written by peers), the per-block counts, the
//     routes and their weights, the routes grouped by expert, the per-expert counts (local), the
//     rows arrived per receive-buffer tile (symmetric) and combine's staging (symmetric).
//   * A call is a dispatch (moe_dispatch_count, moe_dispatch_place, moe_dispatch_copy) optionally
//     followed by one combine (moe_combine_send, then moe_combine_reduce), all on one stream. The
//     epoch: every block of moe_dispatch_count reads the stored epoch + 1 and its last block
//     stores it back; the kernels after it read the stored value. Every rank makes the same calls,
//     so an epoch means the same call everywhere, without the host; a replayed CUDA graph gets a
//     fresh one each time.
//   * Flags only grow: each of the four flag arrays holds, per source rank, the epoch of the last
//     call in which that rank passed the flag's point; every wait is `>= epoch`. The one exception,
//     the tile arrivals, count rows within a call: block 0 of moe_dispatch_count zeroes this rank's
//     before its arrive, and the peers add to them after it.
//   * Entry: block 0 of moe_dispatch_count signals arrive to every peer first. A rank writes into
//     a peer's heap (its count-matrix row, receive buffer, sources, tile arrivals, staging) only
//     after it has seen that peer's arrive of this call (or its counts-ready, which comes after):
//     the peer's stream has reached the call, so the expert computation and combine of its
//     previous call, which read those buffers, are over.
//   * Determinism: expert e's rows are ordered by source rank, then by route number (token * top_k
//     + k) within a source. A source learns where its rows start from the count matrix, which every
//     rank receives whole: rank s writes its routes per expert into row s of every rank's matrix.
//     Every rank then computes the same prefix sums, so nothing else is exchanged before the rows.
//   * The last block of a grid (the one whose ticket completes the count) does the cross-rank
//     end of each kernel: every block fences its writes (system scope) before it takes its ticket,
//     and the last block fences again before it goes on, so its release signals publish the whole
//     grid's rows. No block ever waits for another block of its grid, so grids of any size run.
//   * Bounded waits only (iris::wait_until), each with a site of iris/abi/moe.h.
#pragma once

#include <iris/abi/moe.h>
#include <iris/iris.cuh>

namespace moe {

// ---- launch constants (iris/abi/moe.h, shared with Java) ----------------------------------------

inline constexpr int kThreads = IRIS_MOE_THREADS;
inline constexpr int kMaxBlocks = IRIS_MOE_MAX_BLOCKS;
inline constexpr int kMaxExperts = IRIS_MOE_MAX_EXPERTS;
/// Threads that copy one row together, and the groups of them in a block.
inline constexpr int kRowLanes = IRIS_MOE_ROW_LANES;
inline constexpr int kRowGroups = kThreads / kRowLanes;
static_assert(kThreads % kRowLanes == 0, "a block holds whole row groups");
/// Elements of a bf16 row that one thread moves per 16-byte access.
inline constexpr int kLanesBf16 = 8;

// ---- wait sites and error codes (iris/abi/moe.h; Java: MoeSites) --------------------------------

inline constexpr int kSiteArrive = IRIS_MOE_SITE_ARRIVE;
inline constexpr int kSiteCounts = IRIS_MOE_SITE_COUNTS;
inline constexpr int kSiteRows = IRIS_MOE_SITE_ROWS;
inline constexpr int kSiteTileRows = IRIS_MOE_SITE_TILE_ROWS;
inline constexpr int kSiteResults = IRIS_MOE_SITE_RESULTS;
inline constexpr int kSiteOverCapacity = IRIS_MOE_SITE_OVER_CAPACITY;
inline constexpr int kSiteBadExpert = IRIS_MOE_SITE_BAD_EXPERT;

// ---- workspace slots ----------------------------------------------------------------------------

/// Each ticket belongs to a kernel that ends with a last block: route, the kernel that ranks the
/// routes (moe_dispatch_place, and the low-latency dispatch); combine, the one that sends the
/// expert outputs (moe_combine_send, and the low-latency one).
enum class Ticket { count = 0, route = 1, combine = 2, copy = 3 };

__device__ __forceinline__ uint8_t* bytes(void* ws) { return static_cast<uint8_t*>(ws); }
__device__ __forceinline__ uint64_t* epoch_slot(void* ws) { return reinterpret_cast<uint64_t*>(bytes(ws) + IRIS_MOE_WS_EPOCH); }
__device__ __forceinline__ uint32_t* ticket_slot(void* ws, Ticket t) {
    return reinterpret_cast<uint32_t*>(bytes(ws) + IRIS_MOE_WS_TICKETS) + static_cast<int>(t);
}
/// The fed expert GEMM's claim counter: the next unit a CTA takes.
__device__ __forceinline__ int32_t* claims_slot(void* ws) { return reinterpret_cast<int32_t*>(bytes(ws) + IRIS_MOE_WS_CLAIMS); }
__device__ __forceinline__ iris_moe_stats* stats(void* ws) {
    return reinterpret_cast<iris_moe_stats*>(bytes(ws) + IRIS_MOE_WS_STATS);
}
/// Rows of a receive-buffer tile: the copying kernel's unit and the expert GEMM's tile.
inline constexpr int kTileRows = IRIS_MOE_TILE_ROWS;
/// Tiles of each local expert's receive buffer: its slots of iris_moe_args.arrivals.
__device__ __forceinline__ int tiles_per_expert(int capacity) { return (capacity + kTileRows - 1) / kTileRows; }

/// One of the flag arrays (IRIS_MOE_WS_ARRIVE, _COUNTS_READY, _ROWS_SENT, _RESULTS_SENT), slot `src`.
__device__ __forceinline__ uint64_t* flag_slot(void* ws, int area, int src) {
    return reinterpret_cast<uint64_t*>(bytes(ws) + area) + src;
}
/// Row `src` of the count matrix: rank src's routes per expert in this call.
__device__ __forceinline__ int32_t* matrix_row(void* ws, int src) {
    return reinterpret_cast<int32_t*>(bytes(ws) + IRIS_MOE_WS_MATRIX) + size_t(src) * kMaxExperts;
}

// ---- memory access ------------------------------------------------------------------------------
// What another block or rank wrote during this call is read through L2 (ld.global.cg), after the
// ticket or flag that published it.

#if IRIS_PLATFORM_HIP
template <class U>
__device__ __forceinline__ U load_cg(const U* p) { return *p; }
#else
template <class U>
__device__ __forceinline__ U load_cg(const U* p) { return __ldcg(p); }
#endif

/// Routes to expert e from ranks 0 .. ranks-1 in this call: the top of the count matrix's column e,
/// read through L2 (peers wrote it).
__device__ __forceinline__ int32_t routes_from(void* ws, int e, int ranks) {
    int32_t sum = 0;
    for (int s = 0; s < ranks; ++s) sum += load_cg(matrix_row(ws, s) + e);
    return sum;
}

/// A group of kRowLanes consecutive threads: what copies one row (iris::put's Group).
struct RowGroup {
    __device__ unsigned lane() const { return threadIdx.x % kRowLanes; }
    __device__ unsigned size() const { return kRowLanes; }
};

// ---- partitions ---------------------------------------------------------------------------------

struct Range {
    uint64_t begin;
    uint64_t end;
};

/// Block `b`'s contiguous share of [0, n) when the grid cuts it into equal pieces (the last ones
/// shorter or empty). The two dispatch kernels run on the same grid, so they agree on it.
__device__ __forceinline__ Range chunk(uint64_t n, unsigned b, unsigned blocks) {
    const uint64_t per = (n + blocks - 1) / blocks;
    const uint64_t lo = min(n, uint64_t(b) * per);
    return {lo, min(n, lo + per)};
}

/// Exclusive prefix sums of v[0 .. n) in shared memory, n <= 2 * kThreads, by the whole block
/// (every thread calls it; v is complete before the call and after it).
__device__ inline void exclusive_scan(int32_t* v, int n) {
    const int t = static_cast<int>(threadIdx.x);
    int32_t own[2];
    for (int q = 0; q < 2; ++q) own[q] = t + q * kThreads < n ? v[t + q * kThreads] : 0;
    __syncthreads();
    for (int d = 1; d < n; d *= 2) {  // Hillis-Steele: inclusive sums after log2(n) steps
        int32_t add[2];
        for (int q = 0; q < 2; ++q) {
            const int i = t + q * kThreads;
            add[q] = i < n && i >= d ? v[i - d] : 0;
        }
        __syncthreads();
        for (int q = 0; q < 2; ++q) {
            if (t + q * kThreads < n) v[t + q * kThreads] += add[q];
        }
        __syncthreads();
    }
    for (int q = 0; q < 2; ++q) {
        if (t + q * kThreads < n) v[t + q * kThreads] -= own[q];
    }
    __syncthreads();
}

// ---- programmatic dependent launch --------------------------------------------------------------

// The expert GEMM fed by the dispatch starts beside the copying kernel (MoeExpertGemm's fed launches).
using iris::arch::let_next_kernel_start;
using iris::arch::wait_for_previous_kernel;

// ---- call epoch and the last block --------------------------------------------------------------

/// The epoch the stored counter says, for the whole block (every thread calls it first).
__device__ inline uint64_t stored_epoch(void* ws) {
    __shared__ uint64_t s_epoch;
    if (threadIdx.x == 0) s_epoch = *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws));
    __syncthreads();
    return s_epoch;
}

/// Every thread of every block calls it after the block's work (block-uniformly). True, on every
/// thread, in the one block whose ticket completes the grid: every other block's writes (local or
/// to peers) happen before what that block does next. It also resets the ticket for the next call
/// (every block has taken its ticket by then, and the next kernel starts after this one).
__device__ inline bool last_block(void* ws, Ticket which) {
    __shared__ int s_last;
    __syncthreads();  // the block's writes come before thread 0's fence (which is cumulative)
    if (threadIdx.x == 0) {
        iris::arch::fence_system();
        const uint32_t ticket = atomicAdd(ticket_slot(ws, which), 1u);
        const bool last = ticket == gridDim.x - 1;
        if (last) {
            *ticket_slot(ws, which) = 0;
            iris::arch::fence_system();  // pairs with every other block's fence before its ticket
        }
        s_last = last ? 1 : 0;
    }
    __syncthreads();
    return s_last != 0;
}

// ---- handshakes ---------------------------------------------------------------------------------

/// Every thread of the block calls it. Threads 0..world-1 other than this rank's wait until this
/// rank's slot `src` of flag array `area` is >= epoch. True on every thread when every wait
/// succeeded; the block is synchronized either way.
__device__ inline bool wait_all(const iris::Ctx& ctx, void* ws, int area, uint64_t epoch, int site) {
    const int t = static_cast<int>(threadIdx.x);
    bool ok = true;
    if (t < ctx.world && t != ctx.rank) ok = iris::wait_until(ctx, flag_slot(ws, area, t), iris::Cmp::ge, epoch, site, t);
    return __syncthreads_and(ok ? 1 : 0) != 0;
}

/// After the block's writes: threads 0..world-1 other than this rank's set this rank's slot of
/// flag array `area` in every peer to epoch, with release (system scope).
__device__ inline void signal_all(const iris::Ctx& ctx, void* ws, int area, uint64_t epoch) {
    __syncthreads();  // the whole block's writes come before the flags (release is cumulative)
    const int t = static_cast<int>(threadIdx.x);
    if (t < ctx.world && t != ctx.rank) iris::signal(ctx, flag_slot(ws, area, ctx.rank), epoch, t);
}

// ---- combine's sum ------------------------------------------------------------------------------

/// Both combines' last step, for the whole grid: out[t] = bf16( sum over k = 0 .. top_k-1, in that
/// order, of weight[t][k] * staging[t * top_k + k] ), accumulated in f32 (fma) and rounded once to
/// nearest even, skipping routes that were not delivered (routes[i] = -1). One token per group of
/// kRowLanes threads; the same bits on every run.
__device__ inline void reduce_routes(const void* routes_, const void* route_weights_, const void* staging_, void* out_,
                                     int tokens_n, int top_k, int hidden) {
    const auto* routes = static_cast<const int32_t*>(routes_);              // (tokens, top_k)
    const auto* route_weights = static_cast<const float*>(route_weights_);  // (tokens, top_k)
    const auto* staging = static_cast<const uint16_t*>(staging_);          // (tokens * top_k, hidden)
    auto* out = static_cast<uint16_t*>(out_);                               // (tokens, hidden)
    const uint64_t tokens = uint64_t(tokens_n);
    const uint64_t groups = uint64_t(gridDim.x) * kRowGroups;
    const int lane = static_cast<int>(threadIdx.x % kRowLanes);
    for (uint64_t token = uint64_t(blockIdx.x) * kRowGroups + threadIdx.x / kRowLanes; token < tokens; token += groups) {
        const uint64_t first = token * top_k;
        for (int h = lane * kLanesBf16; h < hidden; h += kRowLanes * kLanesBf16) {
            float acc[kLanesBf16];
#pragma unroll
            for (int q = 0; q < kLanesBf16; ++q) acc[q] = 0.0f;
            for (int k = 0; k < top_k; ++k) {
                if (routes[first + k] < 0) continue;
                const float w = route_weights[first + k];
                const uint4 v = load_cg(reinterpret_cast<const uint4*>(staging + (first + k) * hidden + h));
                const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    acc[2 * q] = fmaf(w, __uint_as_float(words[q] << 16), acc[2 * q]);
                    acc[2 * q + 1] = fmaf(w, __uint_as_float(words[q] & 0xffff0000u), acc[2 * q + 1]);
                }
            }
            uint32_t packed[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const uint32_t lo = iris::arch::bits_of(iris::arch::from_float<iris::bf16>(acc[2 * q]));
                const uint32_t hi = iris::arch::bits_of(iris::arch::from_float<iris::bf16>(acc[2 * q + 1]));
                packed[q] = lo | (hi << 16);
            }
            *reinterpret_cast<uint4*>(out + token * hidden + h) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        }
    }
}

/// Records an MoE check's failure (first error wins; see iris/abi/moe.h for the fields).
__device__ inline void record(const iris::Ctx& ctx, int code, int site, int peer, uint64_t observed, uint64_t expected,
                              uint64_t detail) {
    iris::impl::record_error(ctx, static_cast<iris::ErrorCode>(code), site, peer, observed, expected, detail);
}

}  // namespace moe
