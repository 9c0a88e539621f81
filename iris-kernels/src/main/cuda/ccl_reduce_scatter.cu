// ccl_reduce_scatter.cu: reduce-scatter for bf16 / f16 / f32 and sum / max / min / avg, three ways
// chosen by size (Java: ReduceScatterPath): ccl_reduce_scatter_<ll|push|pull>_<bf16|f16|f32>_<sum|max|min|avg>.
//
//   (const Ctx ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out, uint64_t m)
// in holds world * m elements, out m; rank r's out = the reduction over ranks of in[r*m, (r+1)*m),
// in rank order, accumulated in float and rounded once (what a one-shot all-reduce gives there).
//
//   ll    shards of whole 32-bit words up to ll_max_bytes(W): shard p travels to rank p in 8-byte packets
//         with the flag inline (ll_reduce, ccl_common.cuh): no fence, no handshake, one NVLink
//         trip. A thread per packet.
//   push  shards up to a staging slot (W x the shard fits staging_bytes): each block writes its
//         piece of shard p into slot [rank] of rank p's staging (parity epoch&1), flags it, and
//         reduces its piece of the own shard from the input and the W-1 staged pieces. It writes
//         no user buffer of a peer and reads none, so it needs no entry handshake.
//   pull  any size: after every peer has arrived, rank r reads shard r of every rank's input,
//         reduces it and writes its own output; a per-block flag then tells every peer that r is
//         done reading it, and r ends once every peer is done reading r. The reduction is fused
//         with the transfer, which is what pays at large sizes.
// push and pull take 16-byte accesses where the shard offsets allow (m * element size a multiple
// of 16), else element by element.
#include "ccl_common.cuh"


namespace ccl {

template <class T, class Op>
__device__ void reduce_scatter_ll(const iris::Ctx& ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out,
                                  uint64_t m) {
    ll_reduce<T, Op, true>(ctx, ws, staging_bytes, static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out),
                           m * sizeof(typename T::Bits) / 4, kSiteReduceScatter + kWaitData);
}

template <class T, class Op>
__device__ void reduce_scatter_push(const iris::Ctx& ctx, uint8_t* ws, uint64_t staging_bytes, const void* in_v,
                                    void* out_v, uint64_t m) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteReduceScatter;
    const auto* in = static_cast<const Bits*>(in_v);
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t slot = align_up(m, T::kLanes);  // elements per rank's staging slot (16-byte multiple)
    auto* stage = reinterpret_cast<Bits*>(staging(ws, staging_bytes, c.epoch));  // (world, slot)
    const Range r = split(0, m, blockIdx.x, gridDim.x, T::kLanes);
    for (int k = 1; k < ctx.world; ++k) {
        const int p = (ctx.rank + k) % ctx.world;
        copy_block(iris::translate(ctx, stage + uint64_t(ctx.rank) * slot + r.begin, p), in + uint64_t(p) * m + r.begin,
                   r.size() * sizeof(Bits));
    }
    signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(c.epoch, 1));
    if (wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(c.epoch, 1), kSite + kWaitData)) {
        const Sources<T> src{in + uint64_t(ctx.rank) * m, stage, slot, false};
        reduce_range<T, Op>(ctx, src, out, false, r.begin, r.end);
    }
    end(ctx, ws, c, kSite);
}

template <class T, class Op>
__device__ void reduce_scatter_pull(const iris::Ctx& ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v,
                                    uint64_t m) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteReduceScatter;
    const auto* in = static_cast<const Bits*>(in_v) + uint64_t(ctx.rank) * m;  // shard [rank] of every rank's input
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const Range r = split(0, m, blockIdx.x, gridDim.x, T::kLanes);
    if (wait_all(ctx, arrive_slot(ws, 0), 1, c.epoch, kSite + kWaitArrive)) {
        const Sources<T> src{in, in, 0, true};
        reduce_range<T, Op>(ctx, src, out, false, r.begin, r.end);
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(c.epoch, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(c.epoch, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}

}  // namespace ccl

CCL_REDUCING_KERNELS(reduce_scatter, ll)
CCL_REDUCING_KERNELS(reduce_scatter, push)
CCL_REDUCING_KERNELS(reduce_scatter, pull)
