// moe_dispatch.cu: MoE dispatch, every rank's tokens written straight into the receive buffers of
// the ranks that own their experts: moe_dispatch_count, moe_dispatch_place (on one grid), then
// moe_dispatch_copy (any grid).
//
//   moe_dispatch_count(iris_moe_args: workspace, block_counts, expert_base, arrivals, expert_ids,
//                      tokens_n, top_k, experts, capacity)
//     Block 0 zeroes this rank's arrivals and the fed GEMM's claim counter, then signals arrive
//     (epoch) to every peer. Each block
//     counts the routes of its chunk per expert (ids outside [0, experts) are not counted). The
//     last block turns the per-block counts into per-block bases (exclusive sums over blocks, in
//     block order), writes this rank's totals into its row of its own count matrix and their
//     exclusive sums over experts into expert_base, resets the stats, waits for every peer's
//     arrive (site 9301), writes the row into every peer's matrix and signals counts-ready; it
//     stores the epoch.
//   moe_dispatch_place(iris_moe_args: workspace, block_counts, expert_base, by_expert, routes,
//                      route_weights, counts, routed, expert_ids, weights, tokens_n, top_k,
//                      experts, capacity, policy)
//     Each block waits for every peer's counts-ready (site 9302). Route i of this rank, expert e,
//     gets row
//         pos = sum over ranks s < this rank of matrix[s][e]       (the rows of earlier ranks)
//             + block_counts base of its block for e               (earlier blocks of this rank)
//             + routes to e before i in its block                   (ranked a tile at a time)
//     which is its place in the order (source rank, route number): the same layout on every run.
//     It goes into by_expert at expert_base[e] + (pos - the rows of earlier ranks), and routes[i]
//     = pos if pos < capacity, else -1 and the route is counted as dropped (the owner's matrix
//     says the same, so it keeps no row for it). Every route's weight is kept in route_weights for
//     combine. The last block writes counts[l] = min(routed, capacity) and routed[l] for this
//     rank's experts (from the matrix: no row needs to have arrived), and the stats.
//   moe_dispatch_copy(iris_moe_args: workspace, expert_base, by_expert, recv, sources, arrivals,
//                     tokens, expert_ids, hidden, experts, top_k, capacity, policy)
//     The rows, a receive-buffer tile (IRIS_MOE_TILE_ROWS rows of one expert) at a time, in the
//     order the expert GEMM computes them: local expert, then tile, then owner (starting with the
//     next rank). For each tile a block writes this rank's rows that land in it into the owner's
//     recv and {this rank, route} into its sources (remote stores; the owner's arrive was seen in
//     moe_dispatch_count), then adds their number to the owner's arrivals of that tile (release,
//     system scope). Every block lets the next kernel on the stream start at once (programmatic
//     dependent launch: an expert GEMM fed by the dispatch runs beside it on the other SMs and
//     waits for each tile's rows). The last block signals rows-sent to every peer and waits for
//     every peer's (site 9303): after it, every row of the call is in this rank's receive buffer.
//     Then it records a route with a bad expert id (error 17, site 9306) and, under the FAIL
//     policy, the lowest full expert (error 16, site 9305, recorded alike by every rank).
#include "moe_common.cuh"

using namespace moe;

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_dispatch_count(const IRIS_GRID_CONSTANT iris_moe_args a) {
    __shared__ int32_t s_count[kMaxExperts];  // (experts): this block's routes per expert
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int experts = a.experts;
    const uint64_t epoch = stored_epoch(ws) + 1;
    if (blockIdx.x == 0) {
        // The arrivals start from zero; peers add to them only after the arrive below (release).
        auto* arrivals = static_cast<uint64_t*>(a.arrivals);
        const int slots = experts / ctx.world * tiles_per_expert(a.capacity);
        for (int i = t; i < slots; i += kThreads) arrivals[i] = 0;
        if (t == 0) *claims_slot(ws) = 0;  // this rank's alone, read by its next fed GEMM
        __syncthreads();
        if (t < ctx.world && t != ctx.rank) iris::signal(ctx, flag_slot(ws, IRIS_MOE_WS_ARRIVE, ctx.rank), epoch, t);
    }
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
        s_count[e] = sum;
    }
    __syncthreads();
    exclusive_scan(s_count, experts);
    auto* expert_base = static_cast<int32_t*>(a.expert_base);  // (experts)
    for (int e = t; e < experts; e += kThreads) expert_base[e] = s_count[e];
    if (t == 0) {
        iris_moe_stats* s = stats(ws);
        s->dropped_here = 0;
        s->dropped_all = 0;
        s->bad_here = 0;
        s->full_experts = 0;
        s->first_bad_route = 0xFFFFFFFFu;
        s->first_full = 0xFFFFFFFFu;
    }
    // A peer's row for this rank is free once the peer has arrived: its previous call is over.
    if (wait_all(ctx, ws, IRIS_MOE_WS_ARRIVE, epoch, kSiteArrive)) {
        for (int k = 1; k < ctx.world; ++k) iris::put(ctx, row, row, size_t(experts), (ctx.rank + k) % ctx.world);
        signal_all(ctx, ws, IRIS_MOE_WS_COUNTS_READY, epoch);
    }
    if (t == 0) *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws)) = epoch;
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_dispatch_place(const IRIS_GRID_CONSTANT iris_moe_args a) {
    __shared__ int32_t s_next[kMaxExperts];    // (experts): the block's next route to e, among this rank's routes to e
    __shared__ int32_t s_before[kMaxExperts];  // (experts): rows of e from earlier ranks
    __shared__ int32_t s_tile[kMaxExperts];    // (experts): routes to e in the current tile
    __shared__ int32_t s_id[kThreads];         // (tile): each route's expert, -1 for none
    __shared__ uint32_t s_dropped;
    __shared__ uint32_t s_bad;
    __shared__ uint32_t s_first_bad;
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int experts = a.experts;
    const int capacity = a.capacity;
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
            s_before[e] = routes_from(ws, e, ctx.rank);
            s_next[e] = block_base[e];
            s_tile[e] = 0;
        }
        const auto* ids = static_cast<const int32_t*>(a.expert_ids);
        const auto* weights = static_cast<const float*>(a.weights);
        const auto* expert_base = static_cast<const int32_t*>(a.expert_base);  // (experts)
        auto* by_expert = static_cast<int32_t*>(a.by_expert);
        auto* routes = static_cast<int32_t*>(a.routes);
        auto* route_weights = static_cast<float*>(a.route_weights);
        const Range r = chunk(uint64_t(a.tokens_n) * uint64_t(a.top_k), blockIdx.x, gridDim.x);
        for (uint64_t tile = r.begin; tile < r.end; tile += kThreads) {
            const uint64_t i = tile + t;
            const bool here = i < r.end;
            const int32_t id = here ? ids[i] : -1;
            const bool good = here && static_cast<uint32_t>(id) < static_cast<uint32_t>(experts);
            s_id[t] = good ? id : -1;
            __syncthreads();  // s_id complete; s_next holds the routes before this tile
            int before = 0;
            int j = -1;  // among this rank's routes to its expert
            if (good) {
                for (int q = 0; q < t; ++q) before += s_id[q] == id ? 1 : 0;
                j = s_next[id] + before;
                atomicAdd(&s_tile[id], 1);
            }
            __syncthreads();  // every route has read s_next and counted itself in s_tile
            if (good && before == 0) {  // the tile's first route to its expert moves the expert on
                s_next[id] += s_tile[id];
                s_tile[id] = 0;
            }
            const int pos = good ? s_before[id] + j : -1;
            const bool delivered = good && pos < capacity;
            if (here) {
                routes[i] = delivered ? pos : -1;
                route_weights[i] = weights[i];
                if (good) by_expert[expert_base[id] + j] = static_cast<int32_t>(i);
                if (!good) {
                    atomicAdd(&s_bad, 1u);
                    atomicMin(&s_first_bad, static_cast<uint32_t>(i));
                } else if (!delivered) {
                    atomicAdd(&s_dropped, 1u);
                }
            }
            __syncthreads();  // s_id is free for the next tile
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
    if (!last_block(ws, Ticket::route)) return;

    // The last block: what every rank's counts say of this rank's experts, and what the copying
    // kernel's checks record.
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
        const int32_t total = routes_from(ws, e, ctx.world);
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
        st->first_full = s_first_full < experts ? static_cast<uint32_t>(s_first_full) : 0xFFFFFFFFu;
    }
}

/// The checks' errors, by one thread of moe_dispatch_copy's last block once every rank's rows are
/// here: a recorded error makes later waits give up, so none may be recorded while rows are still
/// on their way.
__device__ inline void record_errors(const iris_moe_args& a, void* ws) {
    const iris::Ctx& ctx = a.ctx;
    const iris_moe_stats* st = stats(ws);
    const uint32_t bad = load_cg(&st->first_bad_route);
    if (bad != 0xFFFFFFFFu) {
        const int32_t id = static_cast<const int32_t*>(a.expert_ids)[bad];
        record(ctx, IRIS_MOE_ERROR_CODE_BAD_EXPERT, kSiteBadExpert, -1, static_cast<uint64_t>(static_cast<int64_t>(id)),
               uint64_t(a.experts), bad);
    }
    const uint32_t full = load_cg(&st->first_full);
    if (a.policy == IRIS_MOE_POLICY_FAIL && full != 0xFFFFFFFFu) {
        const int e = static_cast<int>(full);
        record(ctx, IRIS_MOE_ERROR_CODE_OVER_CAPACITY, kSiteOverCapacity, e / (a.experts / ctx.world),
               uint64_t(routes_from(ws, e, ctx.world)), uint64_t(a.capacity), uint64_t(e));
    }
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_dispatch_copy(const IRIS_GRID_CONSTANT iris_moe_args a) {
    let_next_kernel_start();
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const int t = static_cast<int>(threadIdx.x);
    const int world = ctx.world;
    const int hidden = a.hidden;
    const int top_k = a.top_k;
    const int capacity = a.capacity;
    const int local_experts = a.experts / world;
    const int tiles = tiles_per_expert(capacity);
    const uint64_t epoch = stored_epoch(ws);
    __shared__ int32_t s_before[kMaxExperts];  // (experts): rows of e from earlier ranks
    __shared__ int32_t s_mine[kMaxExperts];    // (experts): this rank's routes to e
    // Already true (moe_dispatch_place waited for it); here it orders this block's reads of the matrix.
    if (wait_all(ctx, ws, IRIS_MOE_WS_COUNTS_READY, epoch, kSiteCounts)) {
        for (int e = t; e < a.experts; e += kThreads) {
            s_before[e] = routes_from(ws, e, ctx.rank);
            s_mine[e] = load_cg(matrix_row(ws, ctx.rank) + e);
        }
        __syncthreads();
        const auto* tokens = static_cast<const uint16_t*>(a.tokens);       // (tokens, hidden) bf16 bits
        const auto* expert_base = static_cast<const int32_t*>(a.expert_base);  // (experts)
        const auto* by_expert = static_cast<const int32_t*>(a.by_expert);
        auto* recv = static_cast<uint16_t*>(a.recv);                      // (local_experts, capacity, hidden), symmetric
        auto* sources = static_cast<int2*>(a.sources);                    // (local_experts, capacity), symmetric
        auto* arrivals = static_cast<uint64_t*>(a.arrivals);              // (local_experts, tiles), symmetric
        const int units = local_experts * tiles * world;
        for (int u = static_cast<int>(blockIdx.x); u < units; u += static_cast<int>(gridDim.x)) {
            const int l = u / (tiles * world);
            const int tile = u / world % tiles;
            const int owner = (u % world + ctx.rank + 1) % world;
            const int e = owner * local_experts + l;
            // This rank's rows of expert e are [before, before + mine); those of this tile [lo, hi).
            const int before = s_before[e];
            const int lo = max(before, tile * kTileRows);
            const int hi = min(min(before + s_mine[e], (tile + 1) * kTileRows), capacity);
            if (lo >= hi) continue;
            const int32_t* routes = by_expert + expert_base[e] + (lo - before);  // this rank's routes to e, from row lo
            for (int p = lo + t / kRowLanes; p < hi; p += kRowGroups) {
                const int32_t route = routes[p - lo];
                const size_t slot = size_t(l) * capacity + p;
                iris::put(ctx, recv + slot * hidden, tokens + size_t(route / top_k) * hidden, size_t(hidden), owner, RowGroup{});
                if (t % kRowLanes == 0) iris::store(ctx, sources + slot, make_int2(ctx.rank, route), owner);
            }
            __syncthreads();  // the whole block's rows of this tile come before the count (release is cumulative)
            if (t == 0) {
                iris::signal(ctx, arrivals + size_t(l) * tiles + tile, uint64_t(hi - lo), owner, iris::SignalOp::add);
            }
        }
    }
    if (!last_block(ws, Ticket::copy)) return;
    signal_all(ctx, ws, IRIS_MOE_WS_ROWS_SENT, epoch);
    wait_all(ctx, ws, IRIS_MOE_WS_ROWS_SENT, epoch, kSiteRows);
    if (t == 0) record_errors(a, ws);
}
