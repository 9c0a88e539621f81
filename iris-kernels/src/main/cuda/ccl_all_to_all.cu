// ccl_all_to_all.cu: all-to-all and all-to-all-v of raw bytes (any element type):
// ccl_all_to_all_push, ccl_all_to_all_v_push.
//
//   ccl_all_to_all_push(const Ctx ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out,
//                       uint64_t bytes)
//     in and out hold world * bytes bytes; block p of rank r's in lands in block r of rank p's out.
//   ccl_all_to_all_v_push(const Ctx ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out,
//                         const Counts counts)
//     in elements [send_displ[p], + send_count[p]) go to rank p, where they land at p's
//     recv_displ[this rank]; recv_count[q] elements arrive from rank q (elements of elem_bytes).
//
//   push  once every peer has arrived, each block writes its piece of every peer's block into
//         that peer's output (all-to-all: all in one pass, copy_to_all), then flags every peer;
//         a rank ends once every peer's pieces have arrived. all-to-all-v: before arriving,
//         every rank publishes its receive displacements and counts in its workspace (meta); a
//         sender reads the receiver's entry for itself (one remote 16-byte load), and a count
//         that disagrees with its own send count is recorded as device error 3 at site 7908
//         (observed: the receiver's count, expected: the send count); the smaller count is moved.
#include "ccl_common.cuh"


extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_to_all_push(
    const IRIS_GRID_CONSTANT iris::Ctx ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v, uint64_t bytes) {
    using namespace ccl;
    constexpr int kSite = kSiteAllToAll;
    const auto* in = static_cast<const uint8_t*>(in_v);
    auto* out = static_cast<uint8_t*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range r = split(0, bytes, blockIdx.x, gridDim.x, 16);
    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        copy_to_all(ctx, out + uint64_t(ctx.rank) * bytes + r.begin, in + r.begin, bytes, r.size());
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}

namespace ccl {
/// all-to-all-v counts, in elements (Java: Collectives.allToAllV packs this struct).
struct Counts {
    uint64_t send_count[iris::kMaxRanks];
    uint64_t send_displ[iris::kMaxRanks];
    uint64_t recv_count[iris::kMaxRanks];
    uint64_t recv_displ[iris::kMaxRanks];
    uint64_t elem_bytes;
};
static_assert(sizeof(Counts) == 264, "Counts layout is shared with Java (Collectives.COUNTS_BYTES)");
}  // namespace ccl

extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_to_all_v_push(
    const IRIS_GRID_CONSTANT iris::Ctx ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v,
    const IRIS_GRID_CONSTANT ccl::Counts counts) {
    using namespace ccl;
    constexpr int kSite = kSiteAllToAllV;
    __shared__ Meta s_to[iris::kMaxRanks];  // where this rank's elements go in each peer's output
    const auto* in = static_cast<const uint8_t*>(in_v);
    auto* out = static_cast<uint8_t*>(out_v);
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
                    iris::impl::record_error(ctx, static_cast<iris::ErrorCode>(kErrorCountMismatch), kSite + kCountMismatch,
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
