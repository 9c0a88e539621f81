// ccl_broadcast.cu: broadcast of raw bytes (any element type), in place: ccl_broadcast_push.
//
//   (iris_ccl_args: out = buf, count = bytes, root)
// After the call every rank's buf holds root's.
//
//   push  the root waits until every peer has arrived (its buffer is free), writes each block's
//         piece into every peer's buffer and flags it per block; the others wait for the root's
//         flags. One arrive plus one flag latency.
#include "ccl_common.cuh"


extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_broadcast_push(const IRIS_GRID_CONSTANT iris_ccl_args a) {
    using namespace ccl;
    constexpr int kSite = kSiteBroadcast;
    const iris::Ctx& ctx = a.ctx;
    uint8_t* ws = a.workspace;
    const uint64_t bytes = a.count;
    const int root = a.root;
    auto* buf = static_cast<uint8_t*>(a.out);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range r = split(0, bytes, blockIdx.x, gridDim.x, 16);
    if (ctx.rank == root) {
        if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
            for (int k = 1; k < ctx.world; ++k) {
                const int p = (root + k) % ctx.world;
                copy_block(iris::translate(ctx, buf + r.begin, p), buf + r.begin, r.size());
            }
            signal_all(ctx, data_slot(ws, blockIdx.x, root), phase(e, 1));
        }
    } else {
        wait_one(ctx, data_slot(ws, blockIdx.x, root), phase(e, 1), kSite + kWaitData, root);
    }
    end(ctx, ws, c, kSite);
}
