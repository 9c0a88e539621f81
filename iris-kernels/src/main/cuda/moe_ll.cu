// moe_ll.cu: the low-latency MoE exchange for decode (few tokens per rank): a dispatch of one
// kernel with no count exchange before the rows, and a combine of two (Java:
// dev.irisjvm.kernels.moe.MoeLowLatency; layout and header: iris/abi/moe.h, IRIS_MOE_LL_*).
//
//   moe_ll_dispatch(iris_moe_ll_args: everything but expert_out and out), one block per
//   IRIS_MOE_THREADS routes
//     Route i of this rank (src), expert e = l + owner * L, takes row
//         j = #(routes before i of this rank to e)          (its place in route order)
//     of its own region (l, src) on the owner; the block writes the token's row there and i into
//     recv_routes (remote stores), routes[i] = j and route_weights[i]. Ids outside [0, experts)
//     are not delivered (routes[i] = -1). The last block (its ticket completes the grid) writes,
//     for every expert, the rows it sent into the owner's ROWS_COUNT[l * world + src] and then
//     the epoch into its ROWS_SIGNAL (release: after every block's rows). It then waits for every
//     (l, src) signal of this rank (site 9307) and copies the counts into counts[l][src]; it
//     records the first bad expert id (error 17, site 9306) and stores the epoch.
//   moe_ll_combine_send(iris_moe_ll_args: workspace, recv_routes, counts, staging, expert_out, ...)
//     Row j < counts[l][src] of region (l, src) goes back into rank src's staging[recv_routes
//     [l][src][j]] (remote stores). The last block signals results to every peer. No waits.
//   moe_ll_combine_reduce(iris_moe_ll_args: routes, route_weights, staging, out, ...)
//     Every block waits for every peer's results (site 9308), then sums as moe_combine_reduce.
//
// Why no handshake before the remote writes: each dispatch is followed by its combine on every
// rank, and a source's next dispatch starts after its reduce, which waited for every owner's
// combine_send of this call, which ran after that owner's expert computation: the receive buffer
// is free by then. An owner's next combine_send writes a source's staging only after its dispatch
// saw that source's next rows, sent after the source's reduce. Why combine takes two kernels:
// its sum waits for every peer, and a block waiting inside the send grid could hold the SM that a
// not yet started block of the same grid needs; the send kernel never waits, so it always ends.
#include "moe_common.cuh"

using namespace moe;

namespace {

inline constexpr int kSiteLlRows = IRIS_MOE_SITE_LL_ROWS;
inline constexpr int kSiteLlResults = IRIS_MOE_SITE_LL_RESULTS;

/// Slot l * world + src of the rows handshake: the epoch src's rows to local expert l carry.
__device__ __forceinline__ uint64_t* rows_signal(void* ws, int slot) {
    return reinterpret_cast<uint64_t*>(bytes(ws) + IRIS_MOE_LL_WS_ROWS_SIGNAL) + slot;
}
/// Slot l * world + src of the row counts: how many rows src wrote into its region of l.
__device__ __forceinline__ int32_t* rows_count(void* ws, int slot) {
    return reinterpret_cast<int32_t*>(bytes(ws) + IRIS_MOE_LL_WS_ROWS_COUNT) + slot;
}

/// Index of row j of region (l, src) in the receive buffer [L][world][region_rows].
__device__ __forceinline__ uint64_t region_row(int l, int src, int world, int region_rows, int j) {
    return (uint64_t(l) * world + src) * region_rows + j;
}

/// Routes of this rank in [0, end) per expert, into s_count (experts); ids out of range are not
/// counted. The smallest such route goes into s_first_bad (0xFFFFFFFF if none). Whole block.
__device__ inline void count_routes(const int32_t* ids, uint64_t end, int experts, int32_t* s_count, uint32_t* s_first_bad) {
    const int t = static_cast<int>(threadIdx.x);
    for (int e = t; e < experts; e += kThreads) s_count[e] = 0;
    if (t == 0) *s_first_bad = 0xFFFFFFFFu;
    __syncthreads();
    for (uint64_t i = t; i < end; i += kThreads) {
        const int32_t id = ids[i];
        if (static_cast<uint32_t>(id) < static_cast<uint32_t>(experts)) atomicAdd(&s_count[id], 1);
        else atomicMin(s_first_bad, static_cast<uint32_t>(i));
    }
    __syncthreads();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_ll_dispatch(const IRIS_GRID_CONSTANT iris_moe_ll_args a) {
    __shared__ int32_t s_count[kMaxExperts];  // (experts): this rank's routes to e before the tile, then in all
    __shared__ int32_t s_id[kThreads];        // (tile): each route's expert, -1 for none
    __shared__ int32_t s_row[kThreads];       // (tile): each route's row in its region, -1 if not delivered
    __shared__ uint32_t s_first_bad;
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int experts = a.experts;
    const int top_k = a.top_k;
    const int hidden = a.hidden;
    const int world = ctx.world;
    const int local_experts = experts / world;
    const uint64_t epoch = stored_epoch(ws) + 1;
    const auto* ids = static_cast<const int32_t*>(a.expert_ids);  // (routes)
    const uint64_t routes_n = uint64_t(a.tokens_n) * uint64_t(top_k);
    const uint64_t tile = uint64_t(blockIdx.x) * kThreads;

    count_routes(ids, min(tile, routes_n), experts, s_count, &s_first_bad);
    const uint64_t i = tile + t;
    const bool here = i < routes_n;
    const int32_t id = here ? ids[i] : -1;
    const bool good = here && static_cast<uint32_t>(id) < static_cast<uint32_t>(experts);
    s_id[t] = good ? id : -1;
    __syncthreads();  // s_id complete
    int row = -1;
    if (good) {
        int before = 0;
        for (int j = 0; j < t; ++j) before += s_id[j] == id ? 1 : 0;
        row = s_count[id] + before;
    }
    if (here) {
        static_cast<int32_t*>(a.routes)[i] = row;
        static_cast<float*>(a.route_weights)[i] = static_cast<const float*>(a.weights)[i];
    }
    s_row[t] = row;
    __syncthreads();  // the tile's rows are in s_row

    const auto* tokens = static_cast<const uint16_t*>(a.tokens);  // (tokens, hidden) bf16 bits
    auto* recv = static_cast<uint16_t*>(a.recv);                   // (L, world, region_rows, hidden), symmetric
    auto* recv_routes = static_cast<int32_t*>(a.recv_routes);      // (L, world, region_rows), symmetric
    for (int j = t / kRowLanes; j < kThreads; j += kRowGroups) {
        const int r = s_row[j];
        if (r < 0) continue;
        const int e = s_id[j];
        const int owner = e / local_experts;
        const uint64_t slot = region_row(e % local_experts, ctx.rank, world, a.region_rows, r);
        const uint64_t route = tile + j;
        iris::put(ctx, recv + slot * hidden, tokens + (route / top_k) * hidden, size_t(hidden), owner, RowGroup{});
        if (t % kRowLanes == 0) iris::store(ctx, recv_routes + slot, static_cast<int32_t>(route), owner);
    }
    if (!last_block(ws, Ticket::route)) return;

    // The last block: every block's rows are out; tell each owner how many went to each of its experts.
    count_routes(ids, routes_n, experts, s_count, &s_first_bad);
    for (int e = t; e < experts; e += kThreads) {
        const int owner = e / local_experts;
        const int slot = (e % local_experts) * world + ctx.rank;
        iris::store(ctx, rows_count(ws, slot), s_count[e], owner);
        iris::signal(ctx, rows_signal(ws, slot), epoch, owner);  // release: after the count and every row
    }
    __syncthreads();  // this rank's signals to itself are out before any thread waits for one
    auto* counts = static_cast<int32_t*>(a.counts);  // (L, world)
    for (int slot = t; slot < local_experts * world; slot += kThreads) {
        const bool ok = iris::wait_until(ctx, rows_signal(ws, slot), iris::Cmp::ge, epoch, kSiteLlRows, slot % world);
        counts[slot] = ok ? load_cg(rows_count(ws, slot)) : 0;
    }
    if (t == 0) {
        if (s_first_bad != 0xFFFFFFFFu) {
            record(ctx, IRIS_MOE_ERROR_CODE_BAD_EXPERT, kSiteBadExpert, -1,
                   static_cast<uint64_t>(static_cast<int64_t>(ids[s_first_bad])), uint64_t(experts), s_first_bad);
        }
        *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws)) = epoch;
    }
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_ll_combine_send(const IRIS_GRID_CONSTANT iris_moe_ll_args a) {
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const uint64_t epoch = stored_epoch(ws);
    const int hidden = a.hidden;
    const int region_rows = a.region_rows;
    const int world = ctx.world;
    const auto* counts = static_cast<const int32_t*>(a.counts);            // (L, world)
    const auto* recv_routes = static_cast<const int32_t*>(a.recv_routes);  // (L, world, region_rows)
    const auto* expert_out = static_cast<const uint16_t*>(a.expert_out);   // (L, world, region_rows, hidden)
    auto* staging = static_cast<uint16_t*>(a.staging);                     // (routes, hidden), symmetric
    const uint64_t rows = uint64_t(a.experts / world) * world * region_rows;
    const uint64_t groups = uint64_t(gridDim.x) * kRowGroups;
    for (uint64_t slot = uint64_t(blockIdx.x) * kRowGroups + threadIdx.x / kRowLanes; slot < rows; slot += groups) {
        const int region = static_cast<int>(slot / region_rows);  // l * world + src
        if (static_cast<int>(slot % region_rows) >= counts[region]) continue;
        const int src = region % world;
        const int32_t route = load_cg(recv_routes + slot);  // written by src during the dispatch
        iris::put(ctx, staging + uint64_t(route) * hidden, expert_out + slot * hidden, size_t(hidden), src, RowGroup{});
    }
    if (!last_block(ws, Ticket::combine)) return;
    signal_all(ctx, ws, IRIS_MOE_LL_WS_RESULTS, epoch);
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_ll_combine_reduce(const IRIS_GRID_CONSTANT iris_moe_ll_args a) {
    void* ws = a.workspace;
    const uint64_t epoch = stored_epoch(ws);
    if (!wait_all(a.ctx, ws, IRIS_MOE_LL_WS_RESULTS, epoch, kSiteLlResults)) return;
    reduce_routes(a.routes, a.route_weights, a.staging, a.out, a.tokens_n, a.top_k, a.hidden);
}
