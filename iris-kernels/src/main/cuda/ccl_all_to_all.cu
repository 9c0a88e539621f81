// ccl_all_to_all.cu: all-to-all and all-to-all-v of raw bytes (any element type):
// ccl_all_to_all_push, ccl_all_to_all_v_push.
//
//   ccl_all_to_all_push(iris_ccl_args: in, out, count = bytes)
//     in and out hold world * bytes bytes; block p of rank r's in lands in block r of rank p's out.
//   ccl_all_to_all_v_push(iris_ccl_args: in, out, counts)
//     in elements [send_displ[p], + send_count[p]) go to rank p, where they land at p's
//     recv_displ[this rank]; recv_count[q] elements arrive from rank q (elements of elem_bytes).
//
//   push  once every peer has arrived, each block writes its piece of every peer's block into
//         that peer's output (all-to-all: all in one pass, copy_to_all), then flags every peer;
//         a rank ends once every peer's pieces have arrived. all-to-all-v: before arriving,
//         every rank publishes its receive displacements and counts in its workspace (meta); a
//         sender reads the receiver's entry for itself (one remote 16-byte load), and a count
//         that disagrees with its own send count is recorded as IRIS_ERROR_CODE_COUNT_MISMATCH at site 7908
//         (observed: the receiver's count, expected: the send count); the smaller count is moved.
#include "ccl_common.cuh"

extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_to_all_push(const IRIS_GRID_CONSTANT iris_ccl_args a) {
    ccl::push_to_all<ccl::kSiteAllToAll>(a, a.count);
}

extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_to_all_v_push(const IRIS_GRID_CONSTANT iris_ccl_args a) {
    using namespace ccl;
    constexpr int kSite = kSiteAllToAllV;
    __shared__ Meta s_to[iris::kMaxRanks];  // where this rank's elements go in each peer's output
    const iris::Ctx& ctx = a.ctx;
    uint8_t* ws = a.workspace;
    const iris_ccl_counts& counts = a.counts;
    const auto* in = static_cast<const uint8_t*>(a.in);
    auto* out = static_cast<uint8_t*>(a.out);
    const uint64_t es = counts.elem_bytes;
    const int t = static_cast<int>(threadIdx.x);
    after_previous_kernel();  // the previous call's peers may still read this rank's meta until it ends
    if (blockIdx.x == 0 && t < ctx.world) {
        Meta* m = meta_slot(ws, t);  // published by begin()'s arrive
        m->displ = counts.recv_displ[t];
        m->count = counts.recv_count[t];
    }
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        if (t < ctx.world) {
            Meta to;
            if (t == ctx.rank) {
                to.displ = counts.recv_displ[t];
                to.count = counts.recv_count[t];
            } else {
                // The peer wrote it before its arrive, which this thread acquired in wait_all.
                const Meta* there = iris::translate(ctx, meta_slot(ws, ctx.rank), t);
                to.displ = ccl::load_cg(&there->displ);
                to.count = ccl::load_cg(&there->count);
            }
            if (to.count != counts.send_count[t]) {
                if (blockIdx.x == 0)
                    iris::impl::record_error(ctx, iris::ErrorCode::count_mismatch, kSite + kCountMismatch,
                                             t, to.count, counts.send_count[t], 0);
                to.count = min(to.count, counts.send_count[t]);
            }
            s_to[t] = to;
        }
        __syncthreads();
        for (int k = 0; k < ctx.world; ++k) {
            const int p = (ctx.rank + k) % ctx.world;
            const Range r = split(0, s_to[p].count * es, blockIdx.x, gridDim.x, 16);
            copy_block(iris::translate(ctx, out + s_to[p].displ * es + r.begin, p), in + counts.send_displ[p] * es + r.begin,
                       r.size());
        }
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}
