// moe_combine.cu: MoE combine, the inverse of moe_dispatch.cu: every expert output row goes back to
// its token's home rank, which sums a token's rows with the routing weights:
// moe_combine_send, then moe_combine_reduce; or, where the expert GEMM's epilogue has already
// stored each row into its home rank's staging (moe_expert_gemm.cu), moe_combine_publish, then
// moe_combine_reduce.
//
//   moe_combine_send(iris_moe_args: workspace, sources, counts, staging, expert_out, hidden, experts, capacity)
//     Row j < counts[l] of local expert l came from route i of rank src (sources[l][j] = {src, i},
//     written by the dispatch before this call); its output expert_out[l][j] goes into rank src's
//     staging[i] (a remote store, one row per group of IRIS_MOE_ROW_LANES threads; src's previous
//     combine is over, as the dispatch's arrive said). The last block signals results-sent to every
//     peer and waits for every peer's (site 9304): after it, this rank's staging holds every
//     delivered route's output.
//   moe_combine_publish(iris_moe_args: workspace), one block
//     What moe_combine_send's last block does once its rows are out, for rows that the launch before
//     it on this stream (the fused expert GEMM) stored: signals results-sent to every peer and waits
//     for every peer's (site 9304). That launch has completed, so its remote stores come before
//     the release of the signals (as a barrier on the stream publishes the fused GEMMs' stores).
//   moe_combine_reduce(iris_moe_args: routes, route_weights, staging, out, tokens_n, top_k, hidden)
//     out[t] = bf16( sum over k = 0 .. top_k-1, in that order, of weight[t][k] * staging[t * top_k + k] ),
//     accumulated in f32 (fma) and rounded once to nearest even, skipping routes that were not
//     delivered (routes[i] = -1: a full expert or a bad id). The same bits on every run.
#include "moe_common.cuh"

using namespace moe;

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_combine_send(const IRIS_GRID_CONSTANT iris_moe_args a) {
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const uint64_t epoch = stored_epoch(ws);
    const int capacity = a.capacity;
    const int hidden = a.hidden;
    const int local_experts = a.experts / ctx.world;
    const auto* counts = static_cast<const int32_t*>(a.counts);    // (local_experts)
    const auto* sources = static_cast<const int2*>(a.sources);     // (local_experts, capacity)
    const auto* expert_out = static_cast<const uint16_t*>(a.expert_out);  // (local_experts, capacity, hidden)
    auto* staging = static_cast<uint16_t*>(a.staging);             // (routes, hidden), symmetric
    const uint64_t rows = uint64_t(local_experts) * capacity;
    const uint64_t groups = uint64_t(gridDim.x) * kRowGroups;
    for (uint64_t slot = uint64_t(blockIdx.x) * kRowGroups + threadIdx.x / kRowLanes; slot < rows; slot += groups) {
        const int l = static_cast<int>(slot / capacity);
        const int j = static_cast<int>(slot % capacity);
        if (j >= counts[l]) continue;
        const int2 from = load_cg(sources + slot);  // written by the source rank during the dispatch
        iris::put(ctx, staging + uint64_t(from.y) * hidden, expert_out + slot * hidden, size_t(hidden), from.x, RowGroup{});
    }
    if (!last_block(ws, Ticket::combine)) return;
    signal_all(ctx, ws, IRIS_MOE_WS_RESULTS_SENT, epoch);
    wait_all(ctx, ws, IRIS_MOE_WS_RESULTS_SENT, epoch, kSiteResults);
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_combine_publish(const IRIS_GRID_CONSTANT iris_moe_args a) {
    const iris::Ctx& ctx = a.ctx;
    void* ws = a.workspace;
    const uint64_t epoch = stored_epoch(ws);
    if (threadIdx.x == 0) iris::arch::fence_system();
    signal_all(ctx, ws, IRIS_MOE_WS_RESULTS_SENT, epoch);
    wait_all(ctx, ws, IRIS_MOE_WS_RESULTS_SENT, epoch, kSiteResults);
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) moe_combine_reduce(const IRIS_GRID_CONSTANT iris_moe_args a) {
    reduce_routes(a.routes, a.route_weights, a.staging, a.out, a.tokens_n, a.top_k, a.hidden);
}
