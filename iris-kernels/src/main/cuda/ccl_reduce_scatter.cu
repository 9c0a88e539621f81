// ccl_reduce_scatter.cu: reduce-scatter for bf16 / f16 / f32 and sum / max / min / avg:
// ccl_reduce_scatter_pull_<bf16|f16|f32>_<sum|max|min|avg>.
//
//   (const Ctx ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out, uint64_t m)
// in holds world * m elements, out m; rank r's out = the reduction over ranks of in[r*m, (r+1)*m).
//
//   pull  after every peer has arrived, rank r reads shard r of every rank's input, reduces it in
//         rank order (float accumulation, one rounding, so every rank's shard is what a one-shot
//         all-reduce would give there) and writes its own output; a per-block flag then tells
//         every peer that r is done reading it, and r ends once every peer is done reading r.
//         16-byte accesses when m * element size is a multiple of 16, else element by element.
#include "ccl_common.cuh"


namespace ccl {

template <class T, class Op>
__device__ void reduce_scatter_pull(const iris::Ctx& ctx, uint8_t* ws, const void* in_v, void* out_v, uint64_t m) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteReduceScatter;
    const auto* in = static_cast<const Bits*>(in_v) + uint64_t(ctx.rank) * m;  // shard [rank] of every rank's input
    auto* out = static_cast<Bits*>(out_v);
    const uint64_t e = begin(ctx, ws);
    const Range r = split(0, m, blockIdx.x, gridDim.x, T::kLanes);
    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        const Sources<T> src{in, in, 0, true};
        reduce_range<T, Op>(ctx, src, out, false, r.begin, r.end);
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, e, kSite);
}

}  // namespace ccl

#define CCL_REDUCE_SCATTER(TNAME, T, OPNAME, OP)                                                                  \
    extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_reduce_scatter_pull_##TNAME##_##OPNAME(     \
        const IRIS_GRID_CONSTANT iris::Ctx ctx, uint8_t* ws, uint64_t, const void* in, void* out, uint64_t m) {  \
        ccl::reduce_scatter_pull<T, OP>(ctx, ws, in, out, m);                                                     \
    }

#define CCL_REDUCE_SCATTER_OPS(TNAME, T)              \
    CCL_REDUCE_SCATTER(TNAME, T, sum, ccl::OpSum)     \
    CCL_REDUCE_SCATTER(TNAME, T, max, ccl::OpMax)     \
    CCL_REDUCE_SCATTER(TNAME, T, min, ccl::OpMin)     \
    CCL_REDUCE_SCATTER(TNAME, T, avg, ccl::OpAvg)

CCL_REDUCE_SCATTER_OPS(bf16, ccl::BF16)
CCL_REDUCE_SCATTER_OPS(f16, ccl::F16)
CCL_REDUCE_SCATTER_OPS(f32, ccl::F32)
