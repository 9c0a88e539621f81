// ccl_all_gather.cu: all-gather of raw bytes (any element type): ccl_all_gather_push.
//
//   (iris_ccl_args: in, out, count = bytes)
// in holds `bytes` bytes per rank, out world * bytes; out[r * bytes ...] on every rank = rank r's in.
//
//   push  once every peer has arrived (its output is free), each block writes its piece of the
//         input into slot [rank] of every rank's output (its own included, all in one pass:
//         copy_to_all), then flags every peer; a rank ends once every peer's pieces have
//         arrived. 16-byte stores when the slot offset allows (bytes a multiple of 16), else the
//         widest width it allows.
#include "ccl_common.cuh"


extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_gather_push(const IRIS_GRID_CONSTANT iris_ccl_args a) {
    using namespace ccl;
    constexpr int kSite = kSiteAllGather;
    const iris::Ctx& ctx = a.ctx;
    uint8_t* ws = a.workspace;
    const uint64_t bytes = a.count;
    const auto* in = static_cast<const uint8_t*>(a.in);
    auto* out = static_cast<uint8_t*>(a.out);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range r = split(0, bytes, blockIdx.x, gridDim.x, 16);
    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        copy_to_all(ctx, out + uint64_t(ctx.rank) * bytes + r.begin, in + r.begin, 0, r.size());
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}
