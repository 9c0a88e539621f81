// ccl_common.cuh: what every device-initiated collective (ccl_*.cu) shares: the workspace layout,
// the call epoch, the flag handshakes, the inline-flag exchange of small reductions, block
// partitions, 16-byte copies, and 16-byte load-reduce-store of bf16 / f16 / f32 lanes in float
// accumulation.
//
// The contract every collective kernel keeps (Java: dev.irisjvm.kernels.ccl.Collectives):
//
//   * One workspace per Collectives instance, on the symmetric heap, zeroed once at creation and
//     never reset by the host. It holds (per rank):
//        epoch, finished     this rank's call counter and a block counter (local only)
//        arrive[src]         set to the call's epoch by rank src's block 0 when its call starts
//        meta[src]           all-to-all-v: this rank's receive displacement and count for src
//        data[block][src]    per-block data flags, set by rank src's block `block`
//        ack[block][src]     per-block acknowledgements (ring)
//        staging[2]          two parities of push buffers (one-shot all-reduce, push reduce-scatter);
//                            the copy-engine all-reduce's pull slots between its two barriers
//        ll[2][src]          two parities of inline-flag packets from rank src (small reductions)
//   * Epochs. Every block reads epoch + 1 from the local counter when the kernel starts and, once
//     all its threads have it, counts itself in `finished`; the block whose count completes the
//     grid stores the epoch back before it ends (no block reads it again in this call, and the
//     next call starts after this kernel). The count is issued at the start and its result read at
//     the end, so its round trip hides behind the call's work. Every rank makes the same calls on
//     an instance, so the epoch of a call is the same everywhere without any host involvement, and
//     a CUDA graph that replays a call gets a fresh epoch each time.
//   * Flags only grow: arrive = epoch, data/ack = epoch * kPhases + phase (phase 1..15), and every
//     wait is `>=`. A value from a later call implies the earlier one, so no flag is ever reset.
//   * Entry: block 0 of every call signals arrive to every peer. A rank writes into a peer's user
//     buffer (out of all-gather, broadcast, all-to-all, two-shot) or reads a peer's input only
//     after it has seen that peer's arrive of this call: the peer's stream has reached the call,
//     so its input is ready and its output no longer in use.
//   * Exit: a rank's kernel ends only after everything peers write into it has arrived and every
//     peer has finished reading its input (each algorithm's last wait), and after block 0 has seen
//     every peer's arrive of this call. The latter makes "rank q finished call e+1" imply "every
//     rank finished call e", which is what makes two staging parities enough: a peer writes
//     parity e&1 again only in call e+2.
//   * Inline-flag calls (ll_reduce) have neither handshake: a rank finishes such a call only after
//     a word of it has come from every peer, which each peer sends only after finishing its
//     previous call, so the implication above holds for them too, and their own two parities
//     are safe for the same reason.
//   * Bounded waits only (iris::wait_until), each with a site id: site base of the collective
//     (kSite*) + the phase offset (kWait*), so a timeout names the collective and the wait.
//   * Ranks must call the same collectives in the same order with the same sizes, one at a time
//     per instance (stream-ordered); blocks of one call must be co-resident (the grid is at most
//     one block per SM).
#pragma once

#include <type_traits>

#include <iris/abi/ccl.h>
#include <iris/iris.cuh>

namespace ccl {

// ---- launch constants (iris/abi/ccl.h, shared with Java) ----------------------------------------

/// Threads of every collective block.
inline constexpr int kThreads = IRIS_CCL_THREADS;
/// Most blocks of one collective launch (the flag arrays are sized for this many).
inline constexpr int kMaxBlocks = IRIS_CCL_MAX_BLOCKS;
/// data/ack flag values are epoch * kPhases + phase, phase in [1, kPhases).
inline constexpr uint64_t kPhases = 16;

// ---- workspace layout (the sizes: iris/abi/ccl.h) -----------------------------------------------

namespace layout {
inline constexpr size_t kEpoch = 0;      // uint64_t, local
inline constexpr size_t kFinished = 8;   // uint32_t, local
inline constexpr size_t kArrive = 64;    // uint64_t[kMaxRanks]
inline constexpr size_t kMeta = 128;     // Meta[kMaxRanks]
inline constexpr size_t kData = 256;     // uint64_t[kMaxBlocks][kMaxRanks]
inline constexpr size_t kAck = kData + size_t(kMaxBlocks) * iris::kMaxRanks * 8;  // same shape
/// Bytes before the staging buffers; the staging parities follow, each staging_bytes long.
inline constexpr size_t kHeaderBytes = IRIS_CCL_HEADER_BYTES;
// After the two staging buffers: the inline-flag (LL) area of small reductions (one-shot
// all-reduce, reduce-scatter): 2 parities x world slots, one per sending rank, of packets (LlPacket)
// that carry their call's tag. A world of W ranks takes up to ll_max_bytes(W) = kLlAreaBytes / (4 W)
// payload bytes per call: 256 KiB on 2 ranks, 64 KiB on 8 (Java: Collectives.llMaxBytes); a slot
// holds that much even in 8-byte packets of 4 payload bytes (AMD).
inline constexpr uint64_t kLlAreaBytes = IRIS_CCL_LL_AREA_BYTES;
static_assert(kAck + size_t(kMaxBlocks) * iris::kMaxRanks * 8 <= kHeaderBytes, "workspace header overflows");
static_assert(kMeta + 16 * iris::kMaxRanks <= kData, "meta overflows");
}  // namespace layout

/// Most payload bytes of one inline-flag call on `world` ranks (the area split into 2 x world slots).
__device__ __forceinline__ uint64_t ll_max_bytes(int world) { return layout::kLlAreaBytes / (4 * uint64_t(world)); }

/// all-to-all-v: where a sender's elements go in the receiver's output (elements).
struct Meta {
    uint64_t displ;
    uint64_t count;
};

// ---- wait sites (iris/abi/ccl.h; Java: CclSites) ------------------------------------------------

inline constexpr int kSiteAllReduceOneShot = IRIS_CCL_SITE_ALL_REDUCE_ONE_SHOT;
inline constexpr int kSiteAllReduceTwoShot = IRIS_CCL_SITE_ALL_REDUCE_TWO_SHOT;
inline constexpr int kSiteAllReduceRing = IRIS_CCL_SITE_ALL_REDUCE_RING;
inline constexpr int kSiteAllReduceAtomic = IRIS_CCL_SITE_ALL_REDUCE_ATOMIC;
inline constexpr int kSiteAllGather = IRIS_CCL_SITE_ALL_GATHER;
inline constexpr int kSiteReduceScatter = IRIS_CCL_SITE_REDUCE_SCATTER;
inline constexpr int kSiteBroadcast = IRIS_CCL_SITE_BROADCAST;
inline constexpr int kSiteAllToAll = IRIS_CCL_SITE_ALL_TO_ALL;
inline constexpr int kSiteAllToAllV = IRIS_CCL_SITE_ALL_TO_ALL_V;

inline constexpr int kWaitArrive = IRIS_CCL_WAIT_ARRIVE;
inline constexpr int kWaitData = IRIS_CCL_WAIT_DATA;
inline constexpr int kWaitData2 = IRIS_CCL_WAIT_DATA_2;
inline constexpr int kWaitAck = IRIS_CCL_WAIT_ACK;
inline constexpr int kCountMismatch = IRIS_CCL_COUNT_MISMATCH;
inline constexpr int kWaitExit = IRIS_CCL_WAIT_EXIT;


// ---- workspace slots ----------------------------------------------------------------------------

__device__ __forceinline__ uint64_t* epoch_slot(uint8_t* ws) { return reinterpret_cast<uint64_t*>(ws + layout::kEpoch); }
__device__ __forceinline__ uint32_t* finished_slot(uint8_t* ws) { return reinterpret_cast<uint32_t*>(ws + layout::kFinished); }
__device__ __forceinline__ uint64_t* arrive_slot(uint8_t* ws, int src) {
    return reinterpret_cast<uint64_t*>(ws + layout::kArrive) + src;
}
__device__ __forceinline__ Meta* meta_slot(uint8_t* ws, int src) { return reinterpret_cast<Meta*>(ws + layout::kMeta) + src; }
__device__ __forceinline__ uint64_t* data_slot(uint8_t* ws, int block, int src) {
    return reinterpret_cast<uint64_t*>(ws + layout::kData) + size_t(block) * iris::kMaxRanks + src;
}
__device__ __forceinline__ uint64_t* ack_slot(uint8_t* ws, int block, int src) {
    return reinterpret_cast<uint64_t*>(ws + layout::kAck) + size_t(block) * iris::kMaxRanks + src;
}
__device__ __forceinline__ uint8_t* staging(uint8_t* ws, uint64_t staging_bytes, uint64_t epoch) {
    return ws + layout::kHeaderBytes + (epoch & 1) * staging_bytes;
}
__device__ __forceinline__ uint64_t phase(uint64_t epoch, int p) { return epoch * kPhases + uint64_t(p); }

// ---- call begin / end ---------------------------------------------------------------------------

/// Every collective kernel calls it before its first memory access. A kernel launched to overlap
/// the one ahead of it on the stream (Collectives.Options.overlapLaunches: programmatic dependent
/// launch) is scheduled early and waits here until that kernel has finished and its writes are
/// visible; it then lets the next one be scheduled. Only scheduling overlaps, never a memory
/// access, so the contract above holds unchanged. Without such a launch both instructions return
/// at once; calling it twice is harmless.
__device__ __forceinline__ void after_previous_kernel() {
    iris::arch::wait_for_previous_kernel();
    iris::arch::let_next_kernel_start();
}

/// One call as a thread sees it: the call's epoch and, in the block's claiming thread, the
/// ticket its count in `finished` drew.
struct Call {
    uint64_t epoch;
    uint32_t ticket;
};

/// The thread that counts its block: the last, which the handshakes' signals and waits (threads
/// 0..world-1) never use, so the count's round trip delays none of them.
__device__ __forceinline__ bool claims() { return threadIdx.x == blockDim.x - 1; }

/// Every thread calls it first (block-uniformly, after after_previous_kernel()): the call's epoch
/// for the whole block, and the block's count, issued now and read in leave().
__device__ inline Call enter(uint8_t* ws) {
    __shared__ uint64_t s_epoch;
    if (threadIdx.x == 0) s_epoch = *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws)) + 1;
    __syncthreads();
    Call c{s_epoch, 0};
    // After the barrier: the block's one read of the counter has returned, so the store of the
    // block that completes the grid cannot reach it.
    if (claims()) c.ticket = atomicAdd(finished_slot(ws), 1u);
    return c;
}

/// Every thread calls it last: the block whose count completed the grid stores the epoch for
/// the next call (every block has read it; the next call starts after this kernel).
__device__ inline void leave(uint8_t* ws, const Call& c) {
    if (claims() && c.ticket == gridDim.x - 1) {
        *finished_slot(ws) = 0;
        *reinterpret_cast<volatile uint64_t*>(epoch_slot(ws)) = c.epoch;
    }
}

/// enter() for the handshaking collectives: block 0 also tells every peer that this rank has
/// arrived. Writes this block made before (e.g. all-to-all-v's meta) are published with it.
__device__ inline Call begin(const iris::Ctx& ctx, uint8_t* ws) {
    after_previous_kernel();
    const Call c = enter(ws);
    const int t = static_cast<int>(threadIdx.x);
    if (blockIdx.x == 0 && t < ctx.world && t != ctx.rank) iris::signal(ctx, arrive_slot(ws, ctx.rank), c.epoch, t);
    return c;
}

/// Every thread of the block calls it (block-uniformly). Threads 0..world-1 other than this
/// rank's wait until this rank's slot `slots + src * stride` is >= value. Returns true on every
/// thread when every wait succeeded; the block is synchronized either way.
__device__ inline bool wait_all(const iris::Ctx& ctx, const uint64_t* slots, size_t stride, uint64_t value, int site) {
    const int t = static_cast<int>(threadIdx.x);
    bool ok = true;
    if (t < ctx.world && t != ctx.rank) ok = iris::wait_until(ctx, slots + size_t(t) * stride, iris::Cmp::ge, value, site, t);
    return __syncthreads_and(ok ? 1 : 0) != 0;
}

/// One wait by thread `who`, seen by the whole block (block-uniform call).
__device__ inline bool wait_one(const iris::Ctx& ctx, const uint64_t* slot, uint64_t value, int site, int peer,
                                unsigned who = 0) {
    bool ok = true;
    if (threadIdx.x == who) ok = iris::wait_until(ctx, slot, iris::Cmp::ge, value, site, peer);
    return __syncthreads_and(ok ? 1 : 0) != 0;
}

/// After the block's writes: threads 0..world-1 other than this rank's set `my_slot` (a symmetric
/// address: this rank's slot in every peer's workspace) to value in every peer, with release.
__device__ inline void signal_all(const iris::Ctx& ctx, uint64_t* my_slot, uint64_t value) {
    __syncthreads();  // the whole block's writes come before the flag (release is cumulative)
    const int t = static_cast<int>(threadIdx.x);
    if (t < ctx.world && t != ctx.rank) iris::signal(ctx, my_slot, value, t);
}

/// Thread `who` sets `my_slot` in rank `to` (after a __syncthreads the caller made).
__device__ inline void signal_one(const iris::Ctx& ctx, uint64_t* my_slot, uint64_t value, int to, unsigned who) {
    if (threadIdx.x == who) iris::signal(ctx, my_slot, value, to);
}

/// Every thread calls it last. Block 0 checks that every peer arrived in this call (see the
/// contract above), then leave().
__device__ inline void end(const iris::Ctx& ctx, uint8_t* ws, const Call& c, int site) {
    if (blockIdx.x == 0) wait_all(ctx, arrive_slot(ws, 0), 1, c.epoch, site + kWaitExit);
    leave(ws, c);
}

// ---- partitions ---------------------------------------------------------------------------------

struct Range {
    uint64_t begin;
    uint64_t end;
    __device__ uint64_t size() const { return end > begin ? end - begin : 0; }
};

__device__ __forceinline__ uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
__device__ __forceinline__ uint64_t align_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }

/// Block `b` of `blocks`' piece of [begin, end): contiguous, a multiple of `grain` long (except
/// the last), so pieces keep the 16-byte alignment of `begin`. Java mirror: Partition.split.
__device__ __forceinline__ Range split(uint64_t begin, uint64_t end, unsigned b, unsigned blocks, uint64_t grain) {
    const uint64_t n = end > begin ? end - begin : 0;
    const uint64_t per = align_up(ceil_div(n, blocks), grain);
    const uint64_t lo = min(n, uint64_t(b) * per);
    const uint64_t hi = min(n, lo + per);
    return {begin + lo, begin + hi};
}

/// Shard c of n elements cut into `parts` shards of a multiple of `grain` (the last ones shorter
/// or empty). Java mirror: Partition.shard.
__device__ __forceinline__ Range shard(uint64_t n, int c, int parts, uint64_t grain) {
    const uint64_t size = align_up(ceil_div(n, uint64_t(parts)), grain);
    return {min(n, uint64_t(c) * size), min(n, uint64_t(c + 1) * size)};
}

// ---- memory access ------------------------------------------------------------------------------
// Data another rank wrote during this call is read with ld.global.cg (L2, never a stale L1 line),
// after the flag that published it was acquired.

#if IRIS_PLATFORM_HIP
// AMD: the system-scope acquire that precedes these reads already invalidated the caches that could
// hold stale lines, so plain loads see the peer's data.
__device__ __forceinline__ uint4 load16(const void* p) { return *reinterpret_cast<const uint4*>(p); }
template <class U>
__device__ __forceinline__ U load_cg(const U* p) { return *p; }
#else
__device__ __forceinline__ uint4 load16(const void* p) { return __ldcg(reinterpret_cast<const uint4*>(p)); }
template <class U>
__device__ __forceinline__ U load_cg(const U* p) { return __ldcg(p); }
#endif
__device__ __forceinline__ void store16(void* p, const uint4& v) { *reinterpret_cast<uint4*>(p) = v; }

/// dst[i + j * lanes] = src[i + j * lanes] for j in 0..3: four independent loads in flight.
template <class U>
__device__ __forceinline__ void copy_four(U* dst, const U* src, uint64_t i, uint64_t lanes) {
    const U a = load_cg(src + i), b = load_cg(src + i + lanes), c = load_cg(src + i + 2 * lanes),
            d = load_cg(src + i + 3 * lanes);
    dst[i] = a;
    dst[i + lanes] = b;
    dst[i + 2 * lanes] = c;
    dst[i + 3 * lanes] = d;
}

/// Copies `count` units of U with the block's threads, four independent loads in flight each.
template <class U>
__device__ inline void copy_units(U* dst, const U* src, uint64_t count) {
    const uint64_t lanes = blockDim.x;
    uint64_t i = threadIdx.x;
    for (; i + 3 * lanes < count; i += 4 * lanes) copy_four(dst, src, i, lanes);
    for (; i < count; i += lanes) dst[i] = load_cg(src + i);
}

/// Runs `copy(unit, offset, count)` over `bytes` bytes: `count` units of the widest type `unit`
/// (uint4, uint2, unsigned, unsigned short) whose size divides `mix` (the addresses and strides
/// involved, or-ed), from byte `offset`, then the remaining bytes one by one.
template <class Copy>
__device__ inline void by_widest_unit(uintptr_t mix, uint64_t bytes, Copy&& copy) {
    uint64_t done = 0;
    if ((mix & 15) == 0) {
        done = bytes & ~uint64_t(15);
        copy(uint4{}, 0, bytes >> 4);
    } else if ((mix & 7) == 0) {
        done = bytes & ~uint64_t(7);
        copy(uint2{}, 0, bytes >> 3);
    } else if ((mix & 3) == 0) {
        done = bytes & ~uint64_t(3);
        copy(0u, 0, bytes >> 2);
    } else if ((mix & 1) == 0) {
        done = bytes & ~uint64_t(1);
        copy(static_cast<unsigned short>(0), 0, bytes >> 1);
    }
    copy(uint8_t{}, done, bytes - done);
}

/// Block-cooperative copy of `bytes` bytes between any two device addresses (local or a peer's):
/// 16-byte accesses when both are 16-byte aligned, else the widest width both allow.
__device__ inline void copy_block(void* dst, const void* src, uint64_t bytes) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    by_widest_unit(reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s), bytes,
                   [&](auto unit, uint64_t offset, uint64_t count) {
                       using U = decltype(unit);
                       copy_units(reinterpret_cast<U*>(d + offset), reinterpret_cast<const U*>(s + offset), count);
                   });
}

/// copy_to_all's loop for one unit width: count units to every rank p, from src + p * stride.
template <class U>
__device__ inline void copy_units_to_all(const iris::Ctx& ctx, U* dst, const U* src, uint64_t stride, uint64_t count) {
    const uint64_t lanes = blockDim.x;
    uint64_t i = threadIdx.x;
    for (; i + 3 * lanes < count; i += 4 * lanes) {
        for (int k = 1; k <= ctx.world; ++k) {  // the peers first, this rank last
            const int p = (ctx.rank + k) % ctx.world;
            copy_four(iris::translate(ctx, dst, p), src + p * stride, i, lanes);
        }
    }
    for (; i < count; i += lanes)
        for (int p = 0; p < ctx.world; ++p) iris::translate(ctx, dst, p)[i] = load_cg(src + p * stride + i);
}

/// Block-cooperative copy of `bytes` bytes into every rank's copy of the symmetric `dst`: rank p
/// gets src + p * src_stride (all-gather: stride 0, one source for all). One pass over the range
/// stores each piece to every rank, so the local copy rides along with the remote ones, whose
/// stores set the pace; copied rank by rank, the blocks that took the local copy last left the
/// link idle while they did it (all-gather and all-to-all of 1 GiB: 1664 µs against a floor of
/// 1440). Widest unit both addresses and the stride allow, as copy_block.
__device__ inline void copy_to_all(const iris::Ctx& ctx, void* dst, const void* src, uint64_t src_stride, uint64_t bytes) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    by_widest_unit(reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s) | src_stride, bytes,
                   [&](auto unit, uint64_t offset, uint64_t count) {
                       using U = decltype(unit);
                       copy_units_to_all(ctx, reinterpret_cast<U*>(d + offset), reinterpret_cast<const U*>(s + offset),
                                         src_stride / sizeof(U), count);
                   });
}

// ---- element types: 16 bytes of lanes <-> floats ------------------------------------------------
// Kernels handle elements as raw bits (Bits) and convert to float only to reduce. bf16 -> float is
// exact; float -> bf16 / f16 rounds to nearest even (what NCCL does after reducing in float).

struct F32 {
    using Bits = uint32_t;
    static constexpr int kLanes = 4;
    __device__ static float to_float(Bits b) { return __uint_as_float(b); }
    __device__ static Bits from_float(float f) { return __float_as_uint(f); }
};
struct BF16 {
    using Bits = uint16_t;
    static constexpr int kLanes = 8;
    __device__ static float to_float(Bits b) { return __uint_as_float(uint32_t(b) << 16); }
    __device__ static Bits from_float(float f) { return iris::arch::bits_of(iris::arch::from_float<iris::bf16>(f)); }
};
struct F16 {
    using Bits = uint16_t;
    static constexpr int kLanes = 8;
    __device__ static float to_float(Bits b) { return __half2float(__ushort_as_half(b)); }
    __device__ static Bits from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

__device__ __forceinline__ uint32_t word(const uint4& v, int j) { return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w; }
__device__ __forceinline__ void set_word(uint4& v, int j, uint32_t w) {
    if (j == 0) v.x = w;
    else if (j == 1) v.y = w;
    else if (j == 2) v.z = w;
    else v.w = w;
}

template <class T>
__device__ __forceinline__ void unpack(const uint4& v, float (&f)[T::kLanes]) {
    if constexpr (T::kLanes == 4) {
#pragma unroll
        for (int j = 0; j < 4; ++j) f[j] = T::to_float(word(v, j));
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const uint32_t w = word(v, j);
            f[2 * j] = T::to_float(static_cast<uint16_t>(w & 0xffffu));
            f[2 * j + 1] = T::to_float(static_cast<uint16_t>(w >> 16));
        }
    }
}

template <class T>
__device__ __forceinline__ uint4 pack(const float (&f)[T::kLanes]) {
    uint4 v;
    if constexpr (T::kLanes == 4) {
#pragma unroll
        for (int j = 0; j < 4; ++j) set_word(v, j, T::from_float(f[j]));
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            set_word(v, j, uint32_t(T::from_float(f[2 * j])) | (uint32_t(T::from_float(f[2 * j + 1])) << 16));
    }
    return v;
}

// ---- reduction operators ------------------------------------------------------------------------
// apply() combines two partial results in float; kAverage ops scale by 1/world once at the end.

struct OpSum {
    static constexpr bool kAverage = false;
    __device__ static float apply(float a, float b) { return a + b; }
};
struct OpMax {
    static constexpr bool kAverage = false;
    __device__ static float apply(float a, float b) { return fmaxf(a, b); }
};
struct OpMin {
    static constexpr bool kAverage = false;
    __device__ static float apply(float a, float b) { return fminf(a, b); }
};
struct OpAvg {
    static constexpr bool kAverage = true;
    __device__ static float apply(float a, float b) { return a + b; }
};

// ---- load-reduce-store over ranks ---------------------------------------------------------------

/// Where a reduction reads rank p's operand: `base + p * rank_stride` translated to rank
/// `translate ? p : this rank`, plus `offset` elements. Covers peers' symmetric inputs
/// (translate, stride 0) and this rank's staging slots (no translation, stride = slot).
template <class T>
struct Sources {
    using Bits = typename T::Bits;
    const Bits* own;       // this rank's operand (used for p == rank)
    const Bits* base;      // symmetric base of the others' operands
    uint64_t rank_stride;  // elements between operands of consecutive ranks (staging slots)
    bool translate;        // read peer p's copy of base (true) or this rank's (false)
    __device__ const Bits* of(const iris::Ctx& ctx, int p) const {
        if (p == ctx.rank) return own;
        const Bits* b = base + uint64_t(p) * rank_stride;
        return translate ? iris::translate(ctx, b, p) : b;
    }
};

/// out[i] for every rank (all_ranks) or this rank only, i in [begin, end), is the reduction in
/// rank order 0..world-1 of the sources' element i, accumulated in float and rounded once.
/// Every rank reduces in the same order, so every rank's result is bit-identical.
template <class T, class Op>
__device__ inline void reduce_range(const iris::Ctx& ctx, const Sources<T>& src, typename T::Bits* out,
                                    bool all_ranks, uint64_t begin, uint64_t end) {
    using Bits = typename T::Bits;
    constexpr int L = T::kLanes;
    if (end <= begin) return;
    const float inv_world = 1.0f / static_cast<float>(ctx.world);
    const uint64_t lanes = blockDim.x;
    bool aligned = ((reinterpret_cast<uintptr_t>(out + begin)) & 15) == 0;
#pragma unroll
    for (int p = 0; p < iris::kMaxRanks; ++p)
        if (p < ctx.world) aligned = aligned && ((reinterpret_cast<uintptr_t>(src.of(ctx, p) + begin) & 15) == 0);
    uint64_t done = begin;
    if (aligned) {
        const uint64_t nvec = (end - begin) / L;
        for (uint64_t v = threadIdx.x; v < nvec; v += lanes) {
            const uint64_t i = begin + v * L;
            uint4 x[iris::kMaxRanks];
#pragma unroll
            for (int p = 0; p < iris::kMaxRanks; ++p)
                if (p < ctx.world) x[p] = load16(src.of(ctx, p) + i);
            float acc[L];
            unpack<T>(x[0], acc);
#pragma unroll
            for (int p = 1; p < iris::kMaxRanks; ++p) {
                if (p < ctx.world) {
                    float f[L];
                    unpack<T>(x[p], f);
#pragma unroll
                    for (int l = 0; l < L; ++l) acc[l] = Op::apply(acc[l], f[l]);
                }
            }
            if constexpr (Op::kAverage) {
#pragma unroll
                for (int l = 0; l < L; ++l) acc[l] *= inv_world;
            }
            const uint4 r = pack<T>(acc);
            if (all_ranks) {
#pragma unroll
                for (int k = 0; k < iris::kMaxRanks; ++k) {
                    if (k < ctx.world) {
                        const int p = (ctx.rank + k) % ctx.world;  // own copy first, then the peers in turn
                        store16(iris::translate(ctx, out + i, p), r);
                    }
                }
            } else {
                store16(out + i, r);
            }
        }
        done = begin + nvec * L;
    }
    for (uint64_t i = done + threadIdx.x; i < end; i += lanes) {  // tail, or everything when unaligned
        float acc = T::to_float(load_cg(src.of(ctx, 0) + i));
#pragma unroll
        for (int p = 1; p < iris::kMaxRanks; ++p)
            if (p < ctx.world) acc = Op::apply(acc, T::to_float(load_cg(src.of(ctx, p) + i)));
        if constexpr (Op::kAverage) acc *= inv_world;
        const Bits r = T::from_float(acc);
        if (all_ranks) {
            for (int k = 0; k < ctx.world; ++k) *iris::translate(ctx, out + i, (ctx.rank + k) % ctx.world) = r;
        } else {
            out[i] = r;
        }
    }
}

// ---- inline-flag (LL) exchange ------------------------------------------------------------------

/// The unit of the inline-flag exchange: kWords payload words and the low 32 bits of the call's
/// epoch as a tag, written and read as one single-copy-atomic access, so a packet whose tag is
/// this call's carries this call's payload, with no fence or flag of its own. 16 bytes (kWords 3:
/// the exchange moves 4/3 of the payload; NVIDIA only) or 8 (kWords 1: twice the payload; AMD
/// promises atomicity up to 8 bytes only).
/// The tag is compared for equality: a slot of parity e & 1 holds call e's packet or call e - 2's
/// (the invariants above), so the tag tells them apart however long the epoch has run. The zeroed
/// area must match no call: see ll_tag.
template <int kWords>
struct alignas(4 * (kWords + 1)) LlPacket {
    static_assert(kWords == 1 || (kWords == 3 && IRIS_PLATFORM_NVIDIA), "8-byte packets, or 16-byte ones on NVIDIA");
    uint32_t word[kWords];
    uint32_t tag;
};

/// Call `epoch`'s tag: its low 32 bits, except that a multiple of 2^32 (whose low bits are 0, what
/// an area no call has written yet holds) takes 1. Tag 1 is otherwise odd epochs' only, and a
/// slot holds packets of one parity, so no two calls that can meet in a slot share a tag, as long
/// as a slot is rewritten at least once every 2^32 calls of its parity.
__device__ __forceinline__ uint32_t ll_tag(uint64_t epoch) {
    const auto low = static_cast<uint32_t>(epoch);
    return low != 0 ? low : 1u;
}

/// The widest packet's payload words here. 16-byte packets rely on 16-byte accesses being single-
/// copy atomic, which they are on Hopper (where they ran); earlier GPUs take 8-byte packets, as AMD.
#if IRIS_PLATFORM_NVIDIA && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
inline constexpr int kLlWordsMax = 3;
#else
inline constexpr int kLlWordsMax = 1;
#endif

template <int kWords>
__device__ __forceinline__ void ll_send(LlPacket<kWords>* to, const LlPacket<kWords>& p) {
#if IRIS_PLATFORM_NVIDIA
    if constexpr (kWords == 3) {
        iris::arch::store_relaxed_b128(to, uint64_t(p.word[1]) << 32 | p.word[0], uint64_t(p.tag) << 32 | p.word[2]);
        return;
    }
#endif
    if constexpr (kWords == 1) {
        iris::arch::store<iris::Order::relaxed, iris::Scope::system>(reinterpret_cast<uint64_t*>(to),
                                                                     uint64_t(p.tag) << 32 | p.word[0]);
    }
}

template <int kWords>
__device__ __forceinline__ LlPacket<kWords> ll_peek(const LlPacket<kWords>* at) {
    LlPacket<kWords> p;
#if IRIS_PLATFORM_NVIDIA
    if constexpr (kWords == 3) {
        uint64_t lo, hi;
        iris::arch::load_relaxed_b128(at, lo, hi);
        p.word[0] = static_cast<uint32_t>(lo);
        p.word[1] = static_cast<uint32_t>(lo >> 32);
        p.word[2] = static_cast<uint32_t>(hi);
        p.tag = static_cast<uint32_t>(hi >> 32);
        return p;
    }
#endif
    if constexpr (kWords == 1) {
        const uint64_t v = iris::arch::load<iris::Order::relaxed, iris::Scope::system>(reinterpret_cast<const uint64_t*>(at));
        p.word[0] = static_cast<uint32_t>(v);
        p.tag = static_cast<uint32_t>(v >> 32);
    }
    return p;
}

/// Packet `pk`'s payload words of `src` (`words` long), zero past its end.
template <int kWords>
__device__ __forceinline__ void ll_words(uint32_t (&w)[kWords], const uint32_t* src, uint64_t words, uint64_t pk) {
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
        const uint64_t i = pk * kWords + j;
        w[j] = i < words ? src[i] : 0u;
    }
}

/// x[p] = packet pk's words of in + p * peer_stride for the first kSent ranks.
template <int kSent, int kWords>
__device__ __forceinline__ void ll_load(const iris::Ctx& ctx, uint32_t (&x)[kSent][kWords], const uint32_t* in,
                                        uint64_t peer_stride, uint64_t words, uint64_t pk) {
#pragma unroll
    for (int p = 0; p < kSent; ++p)
        if (p < ctx.world) ll_words(x[p], in + p * peer_stride, words, pk);
}

/// The exchange of small reductions with the flag inline: the payload travels to a peer in
/// packets (LlPacket) that announce themselves, so no fence, flag, entry or exit handshake is
/// needed: one NVLink trip per call. This rank sends peer p the words in[p * peer_stride + w],
/// w in [0, words) (all-reduce: stride 0, every peer gets the input; reduce-scatter: stride =
/// words, peer p gets shard p), and writes out[w] = the reduction in rank order of every rank's
/// word w for it (its own: in[rank * peer_stride + w]), accumulated in float and rounded once, as
/// reduce_range does. A thread per packet is fastest (the waits overlap); any grid is correct.
/// Whole words only: 4 * words <= ll_max_bytes(world).
/// All-reduce sends the widest packets; reduce-scatter 8-byte ones, with which it measured
/// 0.1-0.25 µs faster from 4 to 256 KiB on 2 x H200 (Java: Collectives.llWordsPerPacket).
template <class T, class Op, bool kScatter>
__device__ void ll_reduce(const iris::Ctx& ctx, uint8_t* ws, uint64_t staging_bytes, const uint32_t* in,
                          uint32_t* out, uint64_t words, int site) {
    using Bits = typename T::Bits;
    constexpr int kLlWords = kScatter ? 1 : kLlWordsMax;     // payload words per packet
    using Packet = LlPacket<kLlWords>;
    constexpr int kPer = 4 / sizeof(Bits);                    // elements per 32-bit word
    constexpr int kSent = kScatter ? iris::kMaxRanks : 1;     // distinct packets sent per pk
    const uint64_t peer_stride = kScatter ? words : 0;
    const uint64_t packets = (words + kLlWords - 1) / kLlWords;
    const uint64_t first = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    uint32_t x[kSent][kLlWords];  // x[p]: the payload for rank p (all-reduce: x[0] for every rank)
    after_previous_kernel();
    if (first < packets) ll_load<kSent>(ctx, x, in, peer_stride, words, first);  // in flight while thread 0 reads the epoch
    const Call c = enter(ws);
    const uint32_t tag = ll_tag(c.epoch);
    const uint64_t slot_packets = layout::kLlAreaBytes / (2 * sizeof(Packet)) / ctx.world;  // of a sending rank, per parity
    auto* area = reinterpret_cast<Packet*>(ws + layout::kHeaderBytes + 2 * staging_bytes) +
                 (c.epoch & 1) * ctx.world * slot_packets;  // (rank, packet) of this parity
    for (uint64_t pk = first; pk < packets; pk += stride) {
        if (pk != first) ll_load<kSent>(ctx, x, in, peer_stride, words, pk);
#pragma unroll
        for (int p = 0; p < iris::kMaxRanks; ++p) {
            if (p < ctx.world && p != ctx.rank) {
                Packet sent;
#pragma unroll
                for (int j = 0; j < kLlWords; ++j) sent.word[j] = x[kScatter ? p : 0][j];
                sent.tag = tag;
                ll_send(iris::translate(ctx, area + ctx.rank * slot_packets + pk, p), sent);
            }
        }
    }
    const float inv_world = 1.0f / static_cast<float>(ctx.world);
    const bool single = first + stride >= packets;  // the usual case: x still holds this thread's only packet
    bool ok = true;
    for (uint64_t pk = first; ok && pk < packets; pk += stride) {
        if (!single && !kScatter) ll_load<kSent>(ctx, x, in, peer_stride, words, pk);
        // Reduce-scatter reads its own words again (from L1): selecting them from x by rank would
        // put x in local memory.
        Packet got;
        float acc[kLlWords][kPer];
#pragma unroll 1
        for (int q = 0; q < ctx.world && ok; ++q) {
            if (q == ctx.rank) {
                if constexpr (kScatter) {
                    ll_words(got.word, in + uint64_t(ctx.rank) * peer_stride, words, pk);
                } else {
#pragma unroll
                    for (int j = 0; j < kLlWords; ++j) got.word[j] = x[0][j];
                }
            } else {
                const Packet* at = area + q * slot_packets + pk;
                const auto look = [&](uint64_t& seen) {
                    got = ll_peek(at);
                    seen = got.tag;
                    return got.tag == tag;
                };
                ok = iris::wait_for(ctx, look, tag, site, q);
            }
#pragma unroll
            for (int j = 0; j < kLlWords; ++j)
#pragma unroll
                for (int l = 0; l < kPer; ++l) {
                    const float f = T::to_float(static_cast<Bits>(kPer == 1 ? got.word[j] : got.word[j] >> (16 * l)));
                    acc[j][l] = q == 0 ? f : Op::apply(acc[j][l], f);
                }
        }
        if (!ok) break;
#pragma unroll
        for (int j = 0; j < kLlWords; ++j) {
            uint32_t packed = 0;
#pragma unroll
            for (int l = 0; l < kPer; ++l) {
                const float f = Op::kAverage ? acc[j][l] * inv_world : acc[j][l];
                packed |= kPer == 1 ? uint32_t(T::from_float(f)) : uint32_t(T::from_float(f)) << (16 * l);
            }
            if (pk * kLlWords + j < words) out[pk * kLlWords + j] = packed;
        }
    }
    leave(ws, c);
}

/// out[i] = a[i] (op) b[i] for i in [begin, end), rounded to T; scaled by 1/world if `finish` and
/// the op averages. The ring's step: a is the previous rank's partial, b this rank's input.
template <class T, class Op>
__device__ inline void combine_range(const iris::Ctx& ctx, const typename T::Bits* a, const typename T::Bits* b,
                                     typename T::Bits* out, uint64_t begin, uint64_t end, bool finish) {
    constexpr int L = T::kLanes;
    if (end <= begin) return;
    const float scale = (Op::kAverage && finish) ? 1.0f / static_cast<float>(ctx.world) : 1.0f;
    const uint64_t lanes = blockDim.x;
    const bool aligned = ((reinterpret_cast<uintptr_t>(a + begin) | reinterpret_cast<uintptr_t>(b + begin) |
                           reinterpret_cast<uintptr_t>(out + begin)) & 15) == 0;
    uint64_t done = begin;
    if (aligned) {
        const uint64_t nvec = (end - begin) / L;
        for (uint64_t v = threadIdx.x; v < nvec; v += lanes) {
            const uint64_t i = begin + v * L;
            const uint4 xa = load16(a + i);
            const uint4 xb = load16(b + i);
            float fa[L], fb[L];
            unpack<T>(xa, fa);
            unpack<T>(xb, fb);
#pragma unroll
            for (int l = 0; l < L; ++l) {
                fa[l] = Op::apply(fa[l], fb[l]);
                if constexpr (Op::kAverage) fa[l] *= scale;
            }
            store16(out + i, pack<T>(fa));
        }
        done = begin + nvec * L;
    }
    for (uint64_t i = done + threadIdx.x; i < end; i += lanes) {
        float r = Op::apply(T::to_float(load_cg(a + i)), T::to_float(load_cg(b + i)));
        if constexpr (Op::kAverage) r *= scale;
        out[i] = T::from_float(r);
    }
}

/// out[i] *= 1/world for i in [begin, end) (the atomic all-reduce's average), rounded to T.
template <class T>
__device__ inline void scale_range(const iris::Ctx& ctx, typename T::Bits* out, uint64_t begin, uint64_t end) {
    constexpr int L = T::kLanes;
    if (end <= begin) return;
    const float inv_world = 1.0f / static_cast<float>(ctx.world);
    const uint64_t lanes = blockDim.x;
    uint64_t done = begin;
    if ((reinterpret_cast<uintptr_t>(out + begin) & 15) == 0) {
        const uint64_t nvec = (end - begin) / L;
        for (uint64_t v = threadIdx.x; v < nvec; v += lanes) {
            const uint64_t i = begin + v * L;
            float f[L];
            unpack<T>(load16(out + i), f);
#pragma unroll
            for (int l = 0; l < L; ++l) f[l] *= inv_world;
            store16(out + i, pack<T>(f));
        }
        done = begin + nvec * L;
    }
    for (uint64_t i = done + threadIdx.x; i < end; i += lanes) out[i] = T::from_float(T::to_float(load_cg(out + i)) * inv_world);
}

// ---- remote reductions (atomic all-reduce) ------------------------------------------------------
// red = an atomic without a result, relaxed, system scope; published by the release of a later
// signal. 16 bytes at a time where PTX has a vector form (f32 add, bf16x2 / f16x2 add, min, max);
// f32 min / max through the integer order of IEEE floats; a 16-bit CAS loop for a lone 16-bit
// min / max.

template <class T, class Op>
struct Red;

#if IRIS_PLATFORM_HIP || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)

// AMD, and NVIDIA before Hopper, have no vector reductions and (but for f16 on NVIDIA) no 16-bit
// float atomics: every lane is a compare-exchange loop
// on the aligned 32-bit word that holds it, combining in float and rounding once (as the NVIDIA
// path's hardware does). A concurrent update of the other half of the word only makes it retry.
template <class T, class Op>
__device__ inline void cas_apply(typename T::Bits* p, typename T::Bits bits) {
    using Bits = typename T::Bits;
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    auto* word = reinterpret_cast<uint32_t*>(address & ~uintptr_t(3));
    const unsigned shift = sizeof(Bits) == 2 && (address & 2u) ? 16u : 0u;
    const uint32_t mask = sizeof(Bits) == 2 ? (0xffffu << shift) : 0xffffffffu;
    uint32_t old = iris::arch::load<iris::Order::relaxed, iris::Scope::system>(word);
    for (;;) {
        const auto current = static_cast<Bits>((old & mask) >> shift);
        const Bits next = T::from_float(Op::apply(T::to_float(current), T::to_float(bits)));
        if (next == current) return;
        const uint32_t desired = (old & ~mask) | (uint32_t(next) << shift);
        const uint32_t seen = iris::arch::compare_exchange<iris::Order::relaxed, iris::Scope::system>(word, old, desired);
        if (seen == old) return;
        old = seen;
    }
}

template <class T, class Op>
struct Red {
    using Bits = typename T::Bits;
    __device__ static void one(Bits* p, Bits bits) { cas_apply<T, Op>(p, bits); }
    __device__ static void vec(Bits* p, const uint4& v) {
        const auto* lanes = reinterpret_cast<const Bits*>(&v);
#pragma unroll
        for (int l = 0; l < T::kLanes; ++l) cas_apply<T, Op>(p + l, lanes[l]);
    }
};

#else

template <class Op>
struct Red<F32, Op> {
    __device__ static void one(uint32_t* p, uint32_t bits) {
        if constexpr (Op::kAverage || std::is_same_v<Op, OpSum>) {
            asm volatile("red.relaxed.sys.global.add.f32 [%0], %1;" ::"l"(p), "f"(__uint_as_float(bits)) : "memory");
        } else {
            // Non-negative floats order like signed ints; negative ones like unsigned ints, reversed.
            constexpr bool kMax = std::is_same_v<Op, OpMax>;
            const bool negative = (bits >> 31) != 0;
            if (kMax != negative) {  // max of a non-negative value, or min of a negative one
                if (kMax) asm volatile("red.relaxed.sys.global.max.s32 [%0], %1;" ::"l"(p), "r"(bits) : "memory");
                else asm volatile("red.relaxed.sys.global.max.u32 [%0], %1;" ::"l"(p), "r"(bits) : "memory");
            } else {
                if (kMax) asm volatile("red.relaxed.sys.global.min.u32 [%0], %1;" ::"l"(p), "r"(bits) : "memory");
                else asm volatile("red.relaxed.sys.global.min.s32 [%0], %1;" ::"l"(p), "r"(bits) : "memory");
            }
        }
    }
    __device__ static void vec(uint32_t* p, const uint4& v) {
        if constexpr (Op::kAverage || std::is_same_v<Op, OpSum>) {
            asm volatile("red.relaxed.sys.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(__uint_as_float(v.x)),
                         "f"(__uint_as_float(v.y)), "f"(__uint_as_float(v.z)), "f"(__uint_as_float(v.w))
                         : "memory");
        } else {
            one(p, v.x);
            one(p + 1, v.y);
            one(p + 2, v.z);
            one(p + 3, v.w);
        }
    }
};

#define CCL_RED16(TYPE, PTX_TYPE)                                                                                     \
    template <class Op>                                                                                              \
    struct Red<TYPE, Op> {                                                                                           \
        __device__ static void one(uint16_t* p, uint16_t bits) {                                                     \
            if constexpr (Op::kAverage || std::is_same_v<Op, OpSum>) {                                               \
                asm volatile("red.relaxed.sys.global.add.noftz." PTX_TYPE " [%0], %1;" ::"l"(p), "h"(bits) : "memory"); \
            } else {                                                                                                 \
                uint16_t seen = *reinterpret_cast<volatile uint16_t*>(p);                                            \
                for (;;) {                                                                                           \
                    const uint16_t want = TYPE::from_float(Op::apply(TYPE::to_float(seen), TYPE::to_float(bits)));   \
                    if (want == seen) break;                                                                         \
                    uint16_t old;                                                                                    \
                    asm volatile("atom.relaxed.sys.global.cas.b16 %0, [%1], %2, %3;"                                 \
                                 : "=h"(old) : "l"(p), "h"(seen), "h"(want) : "memory");                             \
                    if (old == seen) break;                                                                          \
                    seen = old;                                                                                      \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
        __device__ static void vec(uint16_t* p, const uint4& v) {                                                    \
            if constexpr (Op::kAverage || std::is_same_v<Op, OpSum>) {                                               \
                asm volatile("red.relaxed.sys.global.add.noftz.v4." PTX_TYPE "x2 [%0], {%1, %2, %3, %4};" ::"l"(p),   \
                             "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");                                     \
            } else if constexpr (std::is_same_v<Op, OpMax>) {                                                        \
                asm volatile("red.relaxed.sys.global.max.noftz.v4." PTX_TYPE "x2 [%0], {%1, %2, %3, %4};" ::"l"(p),   \
                             "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");                                     \
            } else {                                                                                                 \
                asm volatile("red.relaxed.sys.global.min.noftz.v4." PTX_TYPE "x2 [%0], {%1, %2, %3, %4};" ::"l"(p),   \
                             "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");                                     \
            }                                                                                                        \
        }                                                                                                            \
    };
CCL_RED16(BF16, "bf16")
CCL_RED16(F16, "f16")
#undef CCL_RED16

#endif  // IRIS_PLATFORM_HIP

/// dst[i] (op)= src[i] for i in [begin, end) with remote reductions; dst is a peer's memory.
template <class T, class Op>
__device__ inline void red_range(typename T::Bits* dst, const typename T::Bits* src, uint64_t begin, uint64_t end) {
    constexpr int L = T::kLanes;
    if (end <= begin) return;
    const uint64_t lanes = blockDim.x;
    uint64_t done = begin;
    if (((reinterpret_cast<uintptr_t>(dst + begin) | reinterpret_cast<uintptr_t>(src + begin)) & 15) == 0) {
        const uint64_t nvec = (end - begin) / L;
        for (uint64_t v = threadIdx.x; v < nvec; v += lanes) {
            const uint64_t i = begin + v * L;
            Red<T, Op>::vec(dst + i, load16(src + i));
        }
        done = begin + nvec * L;
    }
    for (uint64_t i = done + threadIdx.x; i < end; i += lanes) Red<T, Op>::one(dst + i, src[i]);
}

/// The push of all-gather and all-to-all (iris_ccl_args: in, out, count = bytes): once every peer
/// has arrived (its output is free), each block writes its piece of the input into slot [rank] of
/// every rank's output, rank p's from in + p * src_stride (all-gather: 0, the one input; all-to-all:
/// bytes, the block meant for p), all in one pass (copy_to_all), then flags every peer; a rank ends
/// once every peer's pieces have arrived. Waits name kSite.
template <int kSite>
__device__ inline void push_to_all(const iris_ccl_args& a, uint64_t src_stride) {
    const iris::Ctx& ctx = a.ctx;
    uint8_t* ws = a.workspace;
    const uint64_t bytes = a.count;
    const auto* in = static_cast<const uint8_t*>(a.in);
    auto* out = static_cast<uint8_t*>(a.out);
    const Call c = begin(ctx, ws);
    const uint64_t e = c.epoch;
    const Range r = split(0, bytes, blockIdx.x, gridDim.x, 16);
    if (wait_all(ctx, arrive_slot(ws, 0), 1, e, kSite + kWaitArrive)) {
        copy_to_all(ctx, out + uint64_t(ctx.rank) * bytes + r.begin, in + r.begin, src_stride, r.size());
        signal_all(ctx, data_slot(ws, blockIdx.x, ctx.rank), phase(e, 1));
        wait_all(ctx, data_slot(ws, blockIdx.x, 0), 1, phase(e, 1), kSite + kWaitData);
    }
    end(ctx, ws, c, kSite);
}

}  // namespace ccl

// The reducing collectives' kernels: ccl_<COLLECTIVE>_<VARIANT>_<type>_<op> for every element type
// and reduction, each taking iris_ccl_args and calling ccl::<COLLECTIVE>_<VARIANT><T, Op>(ctx, ws,
// staging_bytes, in, out, count). Macros because extern "C" names cannot come from a template.
#define CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, OPNAME, OP)                                               \
    extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1)                                                  \
        ccl_##COLLECTIVE##_##VARIANT##_##TNAME##_##OPNAME(const IRIS_GRID_CONSTANT iris_ccl_args a) {              \
        ccl::COLLECTIVE##_##VARIANT<T, OP>(a.ctx, a.workspace, a.staging_bytes, a.in, a.out, a.count);              \
    }

#define CCL_REDUCING_KERNEL_OPS(COLLECTIVE, VARIANT, TNAME, T)              \
    CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, sum, ccl::OpSum)     \
    CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, max, ccl::OpMax)     \
    CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, min, ccl::OpMin)     \
    CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, avg, ccl::OpAvg)

#define CCL_REDUCING_KERNELS(COLLECTIVE, VARIANT)                      \
    CCL_REDUCING_KERNEL_OPS(COLLECTIVE, VARIANT, bf16, ccl::BF16)      \
    CCL_REDUCING_KERNEL_OPS(COLLECTIVE, VARIANT, f16, ccl::F16)        \
    CCL_REDUCING_KERNEL_OPS(COLLECTIVE, VARIANT, f32, ccl::F32)
