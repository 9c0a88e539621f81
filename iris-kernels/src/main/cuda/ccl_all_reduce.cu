// ccl_all_reduce.cu: all-reduce, four algorithms, each for bf16 / f16 / f32 and sum / max / min /
// avg: ccl_all_reduce_<one_shot|two_shot|ring|atomic>_<bf16|f16|f32>_<sum|max|min|avg>, and the
// local step of a fifth that the copy engines carry (ccl_all_reduce_copy_engine_*, below).
//
// Every kernel of the four has the same signature (Java: Collectives.allReduce):
//   (const Ctx ctx, uint8_t* ws, uint64_t staging_bytes, const void* in, void* out, uint64_t n)
// ws is the Collectives workspace (ccl_common.cuh), in / out symmetric tensors of n elements.
// Grid: 1..kMaxBlocks blocks of kThreads threads, the same on every rank; any grid is correct.
//
//   one_shot  push: every rank writes its input into every peer's staging slot (parity epoch&1),
//             flags it per block; each rank then reduces all W operands from local memory in
//             rank order. One flag latency; W x n bytes of staging. In-place allowed. Inputs of
//             whole 32-bit words up to ll_max_bytes(W) travel in packets with the flag inline
//             instead (ll_reduce, ccl_common.cuh): no fences and no entry or exit handshake.
//   two_shot  pull reduce-scatter + push all-gather: after every peer has arrived, rank r reads
//             shard r of every rank's input, reduces it in rank order, and writes the result into
//             shard r of every rank's output; a per-block flag tells the peers it is there (and
//             that r is done reading them). No staging; any size. In-place allowed.
//   ring      pull ring: W-1 reduce-scatter steps (rank r reads its predecessor's partial of a
//             chunk, adds its own, keeps the partial in its output) then W-1 all-gather steps
//             (reads the predecessor's final chunks). Per-block data flags go forward, acks go
//             back, so a partial is never overwritten before the successor read it. Partials are
//             rounded to the element type at every step, like NCCL's ring. In-place allowed.
//   atomic    each rank copies its input into its output, flags it, then adds (min, max) its
//             input into every peer's output with system-scope vector reductions (red.v4); avg
//             scales afterwards. Peers' additions land in any order. Out-of-place only.
//   copy_engine  two-shot on the copy engines (Java: CopyEngineCollectives enqueues it): between two
//             barriers, rank r copies chunk after chunk of shard r from every peer's input into a
//             staging slot, reduces the chunk with these kernels (local memory only), and copies the
//             result into every peer's output, the three on three streams so that the copies of
//             one chunk overlap the others'. The copy engines reach the NVLink bandwidth that SM
//             loads and stores fall short of (docs/benchmarks/rma.md).
#include "ccl_common.cuh"


namespace ccl {

// ---- one-shot -------------------------------------------------------------------------------

template <class T, class Op>
__device__ void all_reduce_one_shot(const iris::Ctx& ctx, uint8_t* ws, uint64_t staging_bytes, const void* in_v,
                                    void* out_v, uint64_t n) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteAllReduceOneShot;
    if (n * sizeof(Bits) % 4 == 0 && n * sizeof(Bits) <= ll_max_bytes(ctx.world)) {
        ll_reduce<T, Op, false>(ctx, ws, staging_bytes, static_cast<const uint32_t*>(in_v), static_cast<uint32_t*>(out_v),
                                n * sizeof(Bits) / 4, kSite + kWaitData);
        return;
    }
    const auto* in = static_cast<const Bits*>(in_v);
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const uint64_t slot = align_up(n, T::kLanes);  // elements per rank's staging slot (16-byte multiple)
    auto* stage = reinterpret_cast<Bits*>(staging(ws, staging_bytes, e));  // (world, slot)
    const Range r = split(0, n, blockIdx.x, gridDim.x, T::kLanes);

    // Push this block's piece of the input into slot [rank] of every peer's staging.
    for (int k = 1; k < ctx.world; ++k) {
        const int p = (ctx.rank + k) % ctx.world;
        copy_block(iris::translate(ctx, stage + uint64_t(ctx.rank) * slot + r.begin, p), in + r.begin, r.size() * sizeof(Bits));
    }
    signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
    if (wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData)) {
        const Sources<T> src{in, stage, slot, false};
        reduce_range<T, Op>(ctx, src, out, false, r.begin, r.end);
    }
    end(ctx, ws, c, kSite);
}

// ---- two-shot -------------------------------------------------------------------------------

template <class T, class Op>
__device__ void all_reduce_two_shot(const iris::Ctx& ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v,
                                    uint64_t n) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteAllReduceTwoShot;
    const auto* in = static_cast<const Bits*>(in_v);
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range mine = shard(n, ctx.rank, ctx.world, T::kLanes);
    const Range r = split(mine.begin, mine.end, blockIdx.x, gridDim.x, T::kLanes);

    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        const Sources<T> src{in, in, 0, true};
        reduce_range<T, Op>(ctx, src, out, true, r.begin, r.end);
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}

// ---- ring -----------------------------------------------------------------------------------

template <class T, class Op>
__device__ void all_reduce_ring(const iris::Ctx& ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v, uint64_t n) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteAllReduceRing;
    const auto* in = static_cast<const Bits*>(in_v);
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const int W = ctx.world;
    const int me = ctx.rank;
    const int prev = (me + W - 1) % W;
    const int next = (me + 1) % W;
    const int b = blockIdx.x;
    uint64_t* my_data = data_slot(ws, b, me);  // symmetric: my slot in the successor's workspace
    uint64_t* my_ack = ack_slot(ws, b, me);    // symmetric: my slot in the predecessor's workspace

    // Flag values (phase of this call): data from the predecessor: s + 1 after its reduce-scatter
    // step s (0..W-2), W + t after its all-gather step t (0..W-3). Acks from the successor: s + 1
    // after its step s, W + t after its all-gather step t: it no longer reads what it read there.
    if (W == 1) {  // a world of one: the reduction of one operand is the operand
        const Range r = split(0, n, b, gridDim.x, T::kLanes);
        if (in != out) copy_block(out + r.begin, in + r.begin, r.size() * sizeof(Bits));
    }
    bool ok = true;
    for (int s = 0; s + 1 < W && ok; ++s) {
        // Chunk c: the predecessor's partial over ranks c+1..prev (its input alone when s == 0).
        const int c = (me + 2 * W - 1 - s) % W;
        ok = s == 0 ? wait_one(ctx, arrive_slot(ws, prev), e, kSite + kWaitArrive, prev)
                    : wait_one(ctx, data_slot(ws, b, prev), phase(e, s), kSite + kWaitData, prev);
        if (!ok) break;
        const Range ch = shard(n, c, W, T::kLanes);
        const Range r = split(ch.begin, ch.end, b, gridDim.x, T::kLanes);
        const Bits* theirs = iris::translate(ctx, s == 0 ? in : static_cast<const Bits*>(out), prev);
        combine_range<T, Op>(ctx, theirs, in, out, r.begin, r.end, s + 2 == W);
        __syncthreads();
        signal_one(ctx, my_data, phase(e, s + 1), next, 0);
        signal_one(ctx, my_ack, phase(e, s + 1), prev, 1);
    }
    for (int t = 0; t + 1 < W && ok; ++t) {
        // Chunk c is final at the predecessor. Overwriting my partial of c waits until the
        // successor has read it (its reduce-scatter step t; for t == 0 my input chunk, which
        // matters in place).
        const int c = (me + W - t) % W;
        {
            bool mine = true;
            if (threadIdx.x == 0)
                mine = iris::wait_until(ctx, data_slot(ws, b, prev), iris::Cmp::ge, phase(e, W - 1 + t), kSite + kWaitData2, prev);
            if (threadIdx.x == 1)
                mine = iris::wait_until(ctx, ack_slot(ws, b, next), iris::Cmp::ge, phase(e, t + 1), kSite + kWaitAck, next);
            ok = __syncthreads_and(mine ? 1 : 0) != 0;
        }
        if (!ok) break;
        const Range ch = shard(n, c, W, T::kLanes);
        const Range r = split(ch.begin, ch.end, b, gridDim.x, T::kLanes);
        copy_block(out + r.begin, iris::translate(ctx, static_cast<const Bits*>(out) + r.begin, prev), r.size() * sizeof(Bits));
        __syncthreads();
        if (t + 2 < W) signal_one(ctx, my_data, phase(e, W + t), next, 0);
        signal_one(ctx, my_ack, phase(e, W + t), prev, 1);
    }
    // The successor's last read of this rank was its all-gather step W-2 (nothing to wait for alone).
    if (ok && W > 1) wait_one(ctx, ack_slot(ws, b, next), phase(e, 2 * W - 2), kSite + kWaitAck, next);
    end(ctx, ws, c, kSite);
}

// ---- atomic ---------------------------------------------------------------------------------

template <class T, class Op>
__device__ void all_reduce_atomic(const iris::Ctx& ctx, uint8_t* ws, uint64_t, const void* in_v, void* out_v,
                                  uint64_t n) {
    using Bits = typename T::Bits;
    constexpr int kSite = kSiteAllReduceAtomic;
    const auto* in = static_cast<const Bits*>(in_v);
    auto* out = static_cast<Bits*>(out_v);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range r = split(0, n, blockIdx.x, gridDim.x, T::kLanes);
    uint64_t* my_data = data_slot(ws, blockIdx.x, ctx.rank);

    copy_block(out + r.begin, in + r.begin, r.size() * sizeof(Bits));  // out = own input
    signal_all(ctx, my_data, phase(e, 1));                               // peers may reduce into it now
    if (wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData)) {
        for (int k = 1; k < ctx.world; ++k) {
            const int p = (ctx.rank + k) % ctx.world;
            red_range<T, Op>(iris::translate(ctx, out, p), in, r.begin, r.end);
        }
        signal_all(ctx, my_data, phase(e, 2));
        const bool added = wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 2), kSite + kWaitData2);
        if constexpr (Op::kAverage) {
            if (added) scale_range<T>(ctx, out, r.begin, r.end);
        }
    }
    end(ctx, ws, c, kSite);
}

// ---- copy engine: the local reduction of one chunk ----------------------------------------------

/// out[i] for i in [begin, end) = the reduction in rank order of in[i] and the peers' copies of
/// element i, which the copy engine put into `stage`: peer p's at stage + p * stride + (i - begin).
/// The same reduce_range as one- and two-shot, so the results are bit-identical to theirs.
template <class T, class Op>
__device__ void all_reduce_copy_engine(const iris::Ctx& ctx, const void* in_v, void* out_v, const void* stage_v,
                                       uint64_t stride, uint64_t begin, uint64_t end) {
    using Bits = typename T::Bits;
    after_previous_kernel();
    const Range r = split(begin, end, blockIdx.x, gridDim.x, T::kLanes);
    // Sources index every operand by the element's index in the tensor; the staged chunk starts at begin.
    const Sources<T> src{static_cast<const Bits*>(in_v), static_cast<const Bits*>(stage_v) - begin, stride, false};
    reduce_range<T, Op>(ctx, src, static_cast<Bits*>(out_v), false, r.begin, r.end);
}

}  // namespace ccl

CCL_REDUCING_KERNELS(all_reduce, one_shot)
CCL_REDUCING_KERNELS(all_reduce, two_shot)
CCL_REDUCING_KERNELS(all_reduce, ring)
CCL_REDUCING_KERNELS(all_reduce, atomic)

// ccl_all_reduce_copy_engine_<type>_<op>(iris_ccl_args: in, out, and the chunk: stage, stride,
// begin, end).
#define CCL_COPY_ENGINE_KERNEL(TNAME, T, OPNAME, OP)                                                                    \
    extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_reduce_copy_engine_##TNAME##_##OPNAME(      \
        const IRIS_GRID_CONSTANT iris_ccl_args a) {                                                                    \
        ccl::all_reduce_copy_engine<T, OP>(a.ctx, a.in, a.out, a.stage, a.stride, a.begin, a.end);                     \
    }
#define CCL_COPY_ENGINE_KERNEL_OPS(TNAME, T)                  \
    CCL_COPY_ENGINE_KERNEL(TNAME, T, sum, ccl::OpSum)         \
    CCL_COPY_ENGINE_KERNEL(TNAME, T, max, ccl::OpMax)         \
    CCL_COPY_ENGINE_KERNEL(TNAME, T, min, ccl::OpMin)         \
    CCL_COPY_ENGINE_KERNEL(TNAME, T, avg, ccl::OpAvg)

CCL_COPY_ENGINE_KERNEL_OPS(bf16, ccl::BF16)
CCL_COPY_ENGINE_KERNEL_OPS(f16, ccl::F16)
CCL_COPY_ENGINE_KERNEL_OPS(f32, ccl::F32)
