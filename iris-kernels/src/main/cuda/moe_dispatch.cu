// moe_dispatch.cu: MoE dispatch, every rank's tokens written straight into the receive buffers of
// the ranks that own their experts: moe_dispatch_count, then moe_dispatch_send, on one grid.
//
//   moe_dispatch_count(iris_moe_args: workspace, block_counts, expert_ids, tokens_n, top_k, experts)
//     Block 0 signals arrive (epoch) to every peer. Each block counts the routes of its chunk per
//     expert (ids outside [0, experts) are not counted). The last block turns the per-block counts
//     into per-block bases (exclusive sums over blocks, in block order), writes this rank's totals
//     into its row of its own count matrix, resets the stats, waits for every peer's arrive (site
//     9301), writes the row into every peer's matrix and signals counts-ready; it stores the epoch.
//   moe_dispatch_send(iris_moe_args: everything but expert_out and out)
//     Each block waits for every peer's counts-ready (site 9302). Route i of this rank, expert e,
//     gets row
//         pos = sum over ranks s < this rank of matrix[s][e]       (the rows of earlier ranks)
//             + block_counts base of its block for e               (earlier blocks of this rank)
//             + routes to e before i in its block                   (ranked a tile at a time)
//     which is its place in the order (source rank, route number): the same layout on every run.
//     If pos < capacity the block writes the token's row into the owner's recv[l][pos] and
//     {this rank, i} into its sources[l][pos] (remote stores; the owner's arrive was seen in
//     moe_dispatch_count) and routes[i] = pos; otherwise routes[i] = -1 and the route is counted
//     as dropped (the owner's matrix says the same, so it keeps no row for it). Every route's
//     weight is kept in route_weights for combine. The last block signals rows-sent to every
//     peer, waits for every peer's (site 9303), then writes counts[l] = min(routed, capacity) and
//     routed[l] for this rank's experts, and the stats; it records a route with a bad expert id
//     (error 17, site 9306) and, under the FAIL policy, the lowest full expert (error 16, site
//     9305, recorded alike by every rank).
#include "moe_common.cuh"

using namespace moe;

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_dispatch_count(const IRIS_GRID_CONSTANT iris_moe_args a) {
    __shared__ int32_t s_count[kMaxExperts];  // (experts): this block's routes per expert
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int experts = a.experts;
    const uint64_t epoch = stored_epoch(ws) + 1;
    if (blockIdx.x == 0 && t < ctx.world && t != ctx.rank) iris::signal(ctx, flag_slot(ws, IRIS_MOE_WS_ARRIVE, ctx.rank), epoch, t);
    for (int e = t; e < experts; e += kThreads) s_count[e] = 0;
    __syncthreads();

    const auto* ids = static_cast<const int32_t*>(a.expert_ids);
    const Range r = chunk(uint64_t(a.tokens_n) * uint64_t(a.top_k), blockIdx.x, gridDim.x);
    for (uint64_t i = r.begin + t; i < r.end; i += kThreads) {
        const int32_t id = ids[i];
        if (static_cast<uint32_t>(id) < static_cast<uint32_t>(experts)) atomicAdd(&s_count[id], 1);
    }
    __syncthreads();
    auto* block_counts = static_cast<int32_t*>(a.block_counts);  // (blocks, experts)
    int32_t* mine = block_counts + size_t(blockIdx.x) * experts;  // (experts)
    for (int e = t; e < experts; e += kThreads) mine[e] = s_count[e];
    if (!last_block(ws, Ticket::count)) return;

    // The last block: per-block bases and this rank's totals, in its own row of the count matrix.
    int32_t* row = matrix_row(ws, ctx.rank);  // (experts)
    for (int e = t; e < experts; e += kThreads) {
        int32_t sum = 0;
        for (unsigned b = 0; b < gridDim.x; ++b) {
            int32_t* c = block_counts + size_t(b) * experts + e;
            const int32_t n = load_cg(c);
            *c = sum;
            sum += n;
        }
        row[e] = sum;
    }
    if (t == 0) {
        iris_moe_stats* s = stats(ws);
        s->dropped_here = 0;
        s->dropped_all = 0;
        s->bad_here = 0;
        s->full_experts = 0;
        s->first_bad_route = 0xFFFFFFFFu;
    }
    // A peer's row for this rank is free once the peer has arrived: its previous call is over.
    if (wait_all(ctx, ws, IRIS_MOE_WS_ARRIVE, epoch, kSiteArrive)) {
        for (int k = 1; k < ctx.world; ++k) iris::put(ctx, row, row, size_t(experts), (ctx.rank + k) % ctx.world);
        signal_all(ctx, ws, IRIS_MOE_WS_COUNTS_READY, epoch);
    }
    if (t == 0) *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws)) = epoch;
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_dispatch_send(const IRIS_GRID_CONSTANT iris_moe_args a) {
    __shared__ int32_t s_next[kMaxExperts];  // (experts): the row the block's next route to e takes
    __shared__ int32_t s_tile[kMaxExperts];  // (experts): routes to e in the current tile
    __shared__ int32_t s_id[kThreads];       // (tile): each route's expert, -1 for none
    __shared__ int32_t s_pos[kThreads];      // (tile): each route's row in its expert, -1 if not delivered
    __shared__ uint32_t s_dropped;
    __shared__ uint32_t s_bad;
    __shared__ uint32_t s_first_bad;
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int experts = a.experts;
    const int top_k = a.top_k;
    const int capacity = a.capacity;
    const int hidden = a.hidden;
    const int local_experts = experts / ctx.world;
    const uint64_t epoch = stored_epoch(ws);
    if (t == 0) {
        s_dropped = 0;
        s_bad = 0;
        s_first_bad = 0xFFFFFFFFu;
    }

    if (wait_all(ctx, ws, IRIS_MOE_WS_COUNTS_READY, epoch, kSiteCounts)) {
        const auto* block_base = static_cast<const int32_t*>(a.block_counts) + size_t(blockIdx.x) * experts;  // (experts)
        for (int e = t; e < experts; e += kThreads) {
            int32_t before = 0;
            for (int s = 0; s < ctx.rank; ++s) before += load_cg(matrix_row(ws, s) + e);
            s_next[e] = before + block_base[e];
            s_tile[e] = 0;
        }
        const auto* ids = static_cast<const int32_t*>(a.expert_ids);
        const auto* weights = static_cast<const float*>(a.weights);
        const auto* tokens = static_cast<const uint16_t*>(a.tokens);  // (tokens, hidden) bf16 bits
        auto* routes = static_cast<int32_t*>(a.routes);
        auto* route_weights = static_cast<float*>(a.route_weights);
        auto* recv = static_cast<uint16_t*>(a.recv);     // (local_experts, capacity, hidden), symmetric
        auto* sources = static_cast<int2*>(a.sources);   // (local_experts, capacity), symmetric
        const Range r = chunk(uint64_t(a.tokens_n) * uint64_t(top_k), blockIdx.x, gridDim.x);
        for (uint64_t tile = r.begin; tile < r.end; tile += kThreads) {
            const uint64_t i = tile + t;
            const bool here = i < r.end;
            const int32_t id = here ? ids[i] : -1;
            const bool good = here && static_cast<uint32_t>(id) < static_cast<uint32_t>(experts);
            s_id[t] = good ? id : -1;
            __syncthreads();  // s_id complete; s_next holds the rows before this tile
            int before = 0;
            int pos = -1;
            if (good) {
                for (int j = 0; j < t; ++j) before += s_id[j] == id ? 1 : 0;
                pos = s_next[id] + before;
                atomicAdd(&s_tile[id], 1);
            }
            __syncthreads();  // every route has read s_next and counted itself in s_tile
            if (good && before == 0) {  // the tile's first route to its expert moves the expert on
                s_next[id] += s_tile[id];
                s_tile[id] = 0;
            }
            const bool delivered = good && pos < capacity;
            if (here) {
                routes[i] = delivered ? pos : -1;
                route_weights[i] = weights[i];
                if (!good) {
                    atomicAdd(&s_bad, 1u);
                    atomicMin(&s_first_bad, static_cast<uint32_t>(i));
                } else if (!delivered) {
                    atomicAdd(&s_dropped, 1u);
                }
            }
            s_pos[t] = delivered ? pos : -1;
            __syncthreads();  // the tile's outcomes are in s_pos
            // Rows to their owners, one row per group of kRowLanes threads.
            for (int j = t / kRowLanes; j < kThreads; j += kRowGroups) {
                const int p = s_pos[j];
                if (p < 0) continue;
                const int e = s_id[j];
                const int owner = e / local_experts;
                const size_t slot = size_t(e % local_experts) * capacity + p;
                const uint64_t route = tile + j;
                const uint64_t token = route / top_k;
                iris::put(ctx, recv + slot * hidden, tokens + token * hidden, size_t(hidden), owner, RowGroup{});
                if (t % kRowLanes == 0) iris::store(ctx, sources + slot, make_int2(ctx.rank, static_cast<int>(route)), owner);
            }
            __syncthreads();  // s_id and s_pos are free for the next tile
        }
        if (t == 0) {
            iris_moe_stats* st = stats(ws);
            if (s_dropped) atomicAdd(&st->dropped_here, s_dropped);
            if (s_bad) {
                atomicAdd(&st->bad_here, s_bad);
                atomicMin(&st->first_bad_route, s_first_bad);
            }
        }
    }
    if (!last_block(ws, Ticket::send)) return;

    // The last block: every block's rows are out; tell the peers, wait for theirs.
    signal_all(ctx, ws, IRIS_MOE_WS_ROWS_SENT, epoch);
    wait_all(ctx, ws, IRIS_MOE_WS_ROWS_SENT, epoch, kSiteRows);
    __shared__ uint32_t s_all_dropped;
    __shared__ uint32_t s_full;
    __shared__ int32_t s_first_full;
    if (t == 0) {
        s_all_dropped = 0;
        s_full = 0;
        s_first_full = experts;
    }
    __syncthreads();
    auto* counts = static_cast<int32_t*>(a.counts);
    auto* routed = static_cast<int32_t*>(a.routed);
    for (int e = t; e < experts; e += kThreads) {
        int32_t total = 0;
        for (int s = 0; s < ctx.world; ++s) total += load_cg(matrix_row(ws, s) + e);
        if (e / local_experts == ctx.rank) {
            routed[e % local_experts] = total;
            counts[e % local_experts] = min(total, capacity);
        }
        if (total > capacity) {
            atomicAdd(&s_all_dropped, static_cast<uint32_t>(total - capacity));
            atomicAdd(&s_full, 1u);
            atomicMin(&s_first_full, e);
        }
    }
    __syncthreads();
    if (t == 0) {
        iris_moe_stats* st = stats(ws);
        st->dropped_all = s_all_dropped;
        st->full_experts = s_full;
        const uint32_t bad = load_cg(&st->first_bad_route);
        if (bad != 0xFFFFFFFFu) {
            const int32_t id = static_cast<const int32_t*>(a.expert_ids)[bad];
            record(ctx, IRIS_MOE_ERROR_CODE_BAD_EXPERT, kSiteBadExpert, -1, static_cast<uint64_t>(static_cast<int64_t>(id)),
                   uint64_t(experts), bad);
        }
        if (a.policy == IRIS_MOE_POLICY_FAIL && s_first_full < experts) {
            const int e = s_first_full;
            int32_t total = 0;
            for (int s = 0; s < ctx.world; ++s) total += load_cg(matrix_row(ws, s) + e);
            record(ctx, IRIS_MOE_ERROR_CODE_OVER_CAPACITY, kSiteOverCapacity, e / local_experts, uint64_t(total),
                   uint64_t(capacity), uint64_t(e));
        }
    }
}
