// rma_bench.cu: remote-memory-access microbenchmarks over the device API (iris/iris.cuh), driven
// by dev.irisjvm.bench.rma.RmaKernels and the sweeps of iris-bench. Built by iris-bench alone:
// benchmark-only code that the library jars do not ship.
//
// What each kernel measures (the host picks every launch shape, so nothing here needs
// recompiling to tune):
//   rma_load / rma_store           this rank's SMs pull from / push to one peer, 16-byte words
//   rma_all_load / rma_all_store   the same with every other rank at once, the grid split by peer
//   rma_local_copy                 the same copy loop on local memory only (the baseline)
//   rma_store_tiles                a GEMM epilogue's pattern: tile-by-tile iris::put_tile stores
//   rma_atomic                     relaxed system-scope atomics on a peer, distinct slots
//   rma_mp_producer / _consumer    message passing: put + signal(release), wait_until(acquire) +
//                                  consume + ack, one message in flight per channel
//   rma_ping_pong                  one thread per rank bouncing a flag
// and the helpers the host needs around them: rma_pair_sync (two ranks meet before a timed rep),
// rma_gate (holds a stream until the host has queued every rep), rma_compare, rma_atomic_init,
// rma_atomic_check and rma_check_allreduce_bf16 (verification after the timed reps).
//
// Conventions: every kernel takes one `const IRIS_GRID_CONSTANT iris_rma_bench_args a`
// (iris/abi/rma_bench.h) and reads the fields its comment names, the context by reference (no
// local copy); "symmetric" pointers point into this rank's heap and are translated to the rank
// named; "local" pointers are any device memory of this rank and are never translated; byte counts
// need not be multiples of 16 (a masked tail finishes them) but pointers must be 16-byte aligned
// (the host checks). Every wait is iris::wait_until, so a lost peer becomes a recorded error, not
// a hang.
#include <iris/abi/rma_bench.h>
#include <iris/iris.cuh>

namespace rma {

using iris::Ctx;
using iris::vec16;

// ---- tuning constants ------------------------------------------------------------------------

// Why these values: iris/abi/rma_bench.h, where the host reads them too.
constexpr int kVecsInFlight = IRIS_RMA_BENCH_VECS_IN_FLIGHT;
constexpr int kAtomicsInFlight = IRIS_RMA_BENCH_ATOMICS_IN_FLIGHT;

constexpr int kSiteGate = IRIS_RMA_BENCH_SITE_GATE;
constexpr int kSitePairSync = IRIS_RMA_BENCH_SITE_PAIR_SYNC;
constexpr int kSiteProducerAck = IRIS_RMA_BENCH_SITE_PRODUCER_ACK;
constexpr int kSiteConsumerFlag = IRIS_RMA_BENCH_SITE_CONSUMER_FLAG;
constexpr int kSitePingInitiator = IRIS_RMA_BENCH_SITE_PING_INITIATOR;
constexpr int kSitePingResponder = IRIS_RMA_BENCH_SITE_PING_RESPONDER;

enum AtomicOp : int {
    kAddU64 = IRIS_RMA_BENCH_ATOMIC_ADD_U64,
    kXchgU64 = IRIS_RMA_BENCH_ATOMIC_XCHG_U64,
    kCasU64 = IRIS_RMA_BENCH_ATOMIC_CAS_U64,
    kAddF32 = IRIS_RMA_BENCH_ATOMIC_ADD_F32
};

// ---- thread partitions -----------------------------------------------------------------------

/// One thread's place in a copy that `count` threads share.
struct Lanes {
    uint64_t lane;
    uint64_t count;
};

/// Every thread of the launch (1-D grid of 1-D blocks).
__device__ __forceinline__ Lanes grid_lanes() {
    return {blockIdx.x * uint64_t(blockDim.x) + threadIdx.x, uint64_t(gridDim.x) * blockDim.x};
}

/// The threads of this block.
__device__ __forceinline__ Lanes block_lanes() { return {threadIdx.x, blockDim.x}; }

/// The grid split into `parts` interleaved teams: block b belongs to team b % parts, so every SM
/// carries a share of every team. Needs gridDim.x >= parts (the host checks).
struct Team {
    int index;
    Lanes lanes;
};
__device__ __forceinline__ Team grid_team(int parts) {
    const int index = static_cast<int>(blockIdx.x % unsigned(parts));
    const uint64_t member = blockIdx.x / unsigned(parts);
    const uint64_t members = (gridDim.x - 1u - unsigned(index)) / unsigned(parts) + 1u;
    return {index, {member * blockDim.x + threadIdx.x, members * blockDim.x}};
}

/// The k-th peer of this rank (k in [0, world - 1)), skipping the rank itself.
__device__ __forceinline__ int kth_peer(const Ctx& ctx, int k) { return k < ctx.rank ? k : k + 1; }

// ---- word transforms -------------------------------------------------------------------------

/// A plain copy.
struct Identity {
    __device__ __forceinline__ vec16 operator()(vec16 v) const { return v; }
    __device__ __forceinline__ uint8_t byte(uint8_t b, uint64_t) const { return b; }
};

/// XOR with a per-message tag, so that every message of a run differs and a stale word shows.
/// The tag repeats in each 32-bit lane; a tail byte at offset o takes byte (o % 4) of it, which is
/// what the vector path gives that byte (little endian, offsets counted from a 16-aligned start).
struct XorTag {
    uint32_t tag;
    __device__ __forceinline__ vec16 operator()(vec16 v) const {
        return {v.x ^ tag, v.y ^ tag, v.z ^ tag, v.w ^ tag};
    }
    __device__ __forceinline__ uint8_t byte(uint8_t b, uint64_t offset) const {
        return static_cast<uint8_t>(b ^ (tag >> (8u * (offset & 3u))));
    }
};

__device__ __forceinline__ bool same(vec16 a, vec16 b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

// splitmix64 finalizer: slot values for the atomics, regenerated by the check kernel.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// ---- the copy loop ---------------------------------------------------------------------------

/// out[0, bytes) = fn(in[0, bytes)). Either side may be a peer's memory (already translated).
/// Each pass a thread loads kVecsInFlight words spaced one grid-width apart (each load
/// instruction of a warp covers 512 contiguous bytes), then stores them; a short loop takes the
/// words that do not fill a pass, and a byte loop the last bytes % 16. Message consumption sets
/// `check`: it counts the words whose new value differs from what `out` held (every message
/// decodes to the same payload, so any difference is a stale or torn word).
template <class Fn>
__device__ __forceinline__ uint32_t consume_bytes(uint8_t* out, const uint8_t* in, uint64_t bytes, Lanes l, Fn fn,
                                                  bool check) {
    const uint64_t words = bytes / 16;
    auto* o = reinterpret_cast<vec16*>(out);
    const auto* s = reinterpret_cast<const vec16*>(in);
    uint32_t wrong = 0;
    uint64_t i = l.lane;
    for (; i + (kVecsInFlight - 1) * l.count < words; i += kVecsInFlight * l.count) {
        vec16 v[kVecsInFlight];
#pragma unroll
        for (int u = 0; u < kVecsInFlight; ++u) v[u] = s[i + u * l.count];
#pragma unroll
        for (int u = 0; u < kVecsInFlight; ++u) {
            const vec16 decoded = fn(v[u]);
            if (check && !same(o[i + u * l.count], decoded)) ++wrong;
            o[i + u * l.count] = decoded;
        }
    }
    for (; i < words; i += l.count) {
        const vec16 decoded = fn(s[i]);
        if (check && !same(o[i], decoded)) ++wrong;
        o[i] = decoded;
    }
    for (uint64_t b = words * 16 + l.lane; b < bytes; b += l.count) {
        const uint8_t decoded = fn.byte(in[b], b);
        if (check && out[b] != decoded) ++wrong;
        out[b] = decoded;
    }
    return wrong;
}

/// consume_bytes without the check: the copy loop of the bandwidth kernels and the producers.
template <class Fn>
__device__ __forceinline__ void copy_bytes(uint8_t* dst, const uint8_t* src, uint64_t bytes, Lanes l, Fn fn) {
    consume_bytes(dst, src, bytes, l, fn, /*check=*/false);
}

/// The [begin, end) byte range of channel c when `bytes` are split over `channels`, each chunk a
/// multiple of 16 bytes so that every channel's words stay 16-byte aligned.
struct Range {
    uint64_t begin;
    uint64_t end;
};
__device__ __forceinline__ Range channel_range(uint64_t bytes, unsigned c, unsigned channels) {
    const uint64_t chunk = ((bytes + channels - 1) / channels + 15) / 16 * 16;
    const uint64_t begin = c * chunk < bytes ? c * chunk : bytes;
    const uint64_t end = begin + chunk < bytes ? begin + chunk : bytes;
    return {begin, end};
}

// ---- atomics ---------------------------------------------------------------------------------

/// One atomic on slot i. Every op leaves slot i at init(i) + g after generation g (add: +1 per
/// launch; xchg: stores init + g; cas: init + g - 1 -> init + g), so one check serves all. The
/// fetch forms count a wrong old value as a failure, which also keeps their results live.
template <int Op>
__device__ __forceinline__ uint32_t atomic_once(const Ctx& ctx, void* slots, uint64_t i, uint64_t seed, uint64_t g,
                                                int peer) {
    if constexpr (Op == kAddU64) {
        iris::atomic_add(ctx, static_cast<unsigned long long*>(slots) + i, 1ull, peer);
        return 0;
    } else if constexpr (Op == kAddF32) {
        iris::atomic_add(ctx, static_cast<float*>(slots) + i, 1.0f, peer);
        return 0;
    } else {
        auto* slot = static_cast<unsigned long long*>(slots) + i;
        const unsigned long long before = mix64(seed + i) + g - 1;
        unsigned long long old;
        if constexpr (Op == kXchgU64) old = iris::atomic_xchg(ctx, slot, before + 1, peer);
        else old = iris::atomic_cas(ctx, slot, before, before + 1, peer);
        return old != before ? 1u : 0u;
    }
}

/// Slot i's value before the first launch.
__device__ __forceinline__ uint64_t slot_init_u64(uint64_t seed, uint64_t i) { return mix64(seed + i); }
/// Small integers, so that adding 1.0f per launch stays exact.
__device__ __forceinline__ float slot_init_f32(uint64_t i) { return float(i & 1023u); }

/// n operations; operation i hits slot i, so consecutive threads of a warp hit consecutive slots.
template <int Op>
__device__ __forceinline__ void atomics(const Ctx& ctx, void* slots, uint64_t n, uint64_t seed, uint64_t g, int peer,
                                        unsigned long long* failures) {
    const Lanes l = grid_lanes();
    uint32_t failed = 0;
    for (uint64_t i = l.lane; i < n; i += kAtomicsInFlight * l.count) {
#pragma unroll
        for (int k = 0; k < kAtomicsInFlight; ++k) {
            const uint64_t j = i + k * l.count;
            if (j < n) failed += atomic_once<Op>(ctx, slots, j, seed, g, peer);
        }
    }
    if (failed) atomicAdd(failures, static_cast<unsigned long long>(failed));
}

// ---- verification ----------------------------------------------------------------------------

/// result[0] += mismatches, result[1] = min(first mismatching byte offset); the host zeroes
/// result[0] and sets result[1] to all ones before the launch.
__device__ __forceinline__ void report(unsigned long long* result, uint32_t wrong, uint64_t first) {
    if (wrong) {
        atomicAdd(result, static_cast<unsigned long long>(wrong));
        atomicMin(result + 1, static_cast<unsigned long long>(first));
    }
}

}  // namespace rma

using rma::Ctx;
using iris::vec16;

// ---- bandwidth --------------------------------------------------------------------------------
// Launch: 1-D grid of 1-D blocks; the whole grid shares the copy (grid-stride over 16-byte words).
// The host sizes the grid to the payload: up to 4 blocks of 512 threads per SM for large copies.

/// dst (local) = rank peer's src (symmetric), bytes: the SMs of this rank pull.
extern "C" __global__ void rma_load(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    rma::copy_bytes(static_cast<uint8_t*>(args.dst), iris::translate(ctx, static_cast<const uint8_t*>(args.src), args.peer),
                    args.bytes, rma::grid_lanes(), rma::Identity{});
}

/// rank peer's dst (symmetric) = src (local), bytes: the SMs of this rank push.
extern "C" __global__ void rma_store(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    rma::copy_bytes(iris::translate(ctx, static_cast<uint8_t*>(args.dst), args.peer), static_cast<const uint8_t*>(args.src),
                    args.bytes, rma::grid_lanes(), rma::Identity{});
}

/// For every peer p: dst (local) + p * stride = rank p's src (symmetric), bytes each. The grid is
/// split into world - 1 interleaved teams, one per peer, so every link is busy at once.
extern "C" __global__ void rma_all_load(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const rma::Team team = rma::grid_team(ctx.world - 1);
    const int peer = rma::kth_peer(ctx, team.index);
    rma::copy_bytes(static_cast<uint8_t*>(args.dst) + peer * args.stride,
                    iris::translate(ctx, static_cast<const uint8_t*>(args.src), peer), args.bytes, team.lanes, rma::Identity{});
}

/// For every peer p: rank p's dst (symmetric) + rank * stride = src (local), bytes each: every
/// rank's slot in a peer's buffer is its own rank, so all ranks may run this at once.
extern "C" __global__ void rma_all_store(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const rma::Team team = rma::grid_team(ctx.world - 1);
    const int peer = rma::kth_peer(ctx, team.index);
    rma::copy_bytes(iris::translate(ctx, static_cast<uint8_t*>(args.dst) + ctx.rank * args.stride, peer),
                    static_cast<const uint8_t*>(args.src), args.bytes, team.lanes, rma::Identity{});
}

/// dst = src, bytes, both local: the SM copy baseline (same loop, no link).
extern "C" __global__ void rma_local_copy(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    rma::copy_bytes(static_cast<uint8_t*>(args.dst), static_cast<const uint8_t*>(args.src), args.bytes, rma::grid_lanes(),
                    rma::Identity{});
}

/// Rank peer's dst matrix (symmetric) = src (local), both row-major rows x ld 2-byte elements
/// (bf16-sized), stored tile by tile the way a GEMM epilogue does it: a persistent grid where block
/// b takes tiles b, b + gridDim.x, ... (row-major over the tile grid) and stores each
/// tile_rows x tile_cols tile with iris::put_tile (one warp per row, 16-byte words). This is the
/// pattern that ran far below link bandwidth inside Iris's fused GEMM kernels; timed in isolation
/// here against rma_store on the same bytes. rows % tile_rows == 0 and ld % tile_cols == 0.
extern "C" __global__ void rma_store_tiles(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    auto* dst = static_cast<uint16_t*>(args.dst);
    const auto* src = static_cast<const uint16_t*>(args.src);
    const uint64_t rows = args.rows;
    const uint64_t ld = args.ld;
    const uint32_t tile_rows = args.tile_rows;
    const uint32_t tile_cols = args.tile_cols;
    const uint64_t tiles_per_row = ld / tile_cols;
    const uint64_t tiles = rows / tile_rows * tiles_per_row;
    for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const uint64_t offset = t / tiles_per_row * tile_rows * ld + t % tiles_per_row * tile_cols;
        iris::put_tile(ctx, dst + offset, ld, src + offset, ld, tile_rows, tile_cols, args.peer);
    }
}

// ---- atomics ------------------------------------------------------------------------------------
// count operations of kind op on rank peer's slots (dst: symmetric; uint64 or float by op),
// generation value (1, 2, ... per launch), starting values from seed. Launch: 1-D grid, each
// thread kAtomicsInFlight slots per pass. Failed fetch results (xchg, cas) are counted into result
// (local).

extern "C" __global__ void rma_atomic(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    void* slots = args.dst;
    const uint64_t n = args.count;
    const uint64_t seed = args.seed;
    const uint64_t generation = args.value;
    const int peer = args.peer;
    auto* failures = static_cast<unsigned long long*>(args.result);
    switch (args.op) {
        case rma::kAddU64: rma::atomics<rma::kAddU64>(ctx, slots, n, seed, generation, peer, failures); break;
        case rma::kXchgU64: rma::atomics<rma::kXchgU64>(ctx, slots, n, seed, generation, peer, failures); break;
        case rma::kCasU64: rma::atomics<rma::kCasU64>(ctx, slots, n, seed, generation, peer, failures); break;
        case rma::kAddF32: rma::atomics<rma::kAddF32>(ctx, slots, n, seed, generation, peer, failures); break;
        default: break;
    }
}

/// Writes every slot's starting value (op, seed) into rank peer's count slots (dst).
extern "C" __global__ void rma_atomic_init(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const uint64_t n = args.count;
    const uint64_t seed = args.seed;
    const int op = args.op;
    const rma::Lanes l = rma::grid_lanes();
    void* there = iris::translate(ctx, static_cast<uint8_t*>(args.dst), args.peer);
    for (uint64_t i = l.lane; i < n; i += l.count) {
        if (op == rma::kAddF32) static_cast<float*>(there)[i] = rma::slot_init_f32(i);
        else static_cast<unsigned long long*>(there)[i] = rma::slot_init_u64(seed, i);
    }
}

/// Counts rank peer's count slots (dst) that do not hold init + value generations (result as in
/// rma_compare, the offset being the slot index).
extern "C" __global__ void rma_atomic_check(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const uint64_t n = args.count;
    const uint64_t seed = args.seed;
    const uint64_t generations = args.value;
    const int op = args.op;
    const rma::Lanes l = rma::grid_lanes();
    const void* there = iris::translate(ctx, static_cast<const uint8_t*>(args.dst), args.peer);
    uint32_t wrong = 0;
    uint64_t first = ~0ull;
    for (uint64_t i = l.lane; i < n; i += l.count) {
        const bool ok = op == rma::kAddF32
                            ? static_cast<const float*>(there)[i] == rma::slot_init_f32(i) + float(generations)
                            : static_cast<const unsigned long long*>(there)[i] == rma::slot_init_u64(seed, i) + generations;
        if (!ok) {
            ++wrong;
            first = first < i ? first : i;
        }
    }
    rma::report(static_cast<unsigned long long*>(args.result), wrong, first);
}

// ---- message passing ----------------------------------------------------------------------------
// A producer rank sends `iterations` messages of `bytes` to a consumer rank, one in flight per
// channel. Channel c = blockIdx.x owns its own byte range, flag and ack, so channels never wait
// for each other; both kernels must be launched with the same grid (the host does). Messages are
// numbered seq0 + 1 ... seq0 + iterations across launches, so flags need no reset.
//
//   producer, message s:  wait ack[c] >= s - 1 (the consumer is done with s - 1)
//                         put range c of (src ^ tag(s)) into the consumer's landing buffer
//                         __syncthreads; thread 0: signal flag[c] = s (release, system scope)
//   consumer, message s:  thread 0: wait_until flag[c] >= s (acquire); __syncthreads
//                         out = landing ^ tag(s) (the payload again), counting words that differ
//                         from the previous message's; __syncthreads; thread 0: signal ack[c] = s
//
// The producer ends by waiting for the last ack, so one launch is `iterations` complete
// message + consume + ack cycles and the time per message is the launch time / iterations.

namespace rma {
__device__ __forceinline__ uint32_t message_tag(uint64_t s) { return static_cast<uint32_t>(mix64(s)) | 1u; }

/// A producer's loop on channel blockIdx.x, both flavours: message s is sent by send(s) once
/// thread 0 has seen the consumer's ack of s - 1 (a wait of order Wait); at the end thread 0 waits
/// for the last ack and adds the messages sent and acknowledged to done (local).
template <iris::Order Wait, class Send>
__device__ __forceinline__ void produce(const Ctx& ctx, const uint64_t* acks, uint64_t seq0, uint64_t iterations, int peer,
                                        unsigned long long* done, Send send) {
    __shared__ int ok;
    const unsigned c = blockIdx.x;
    uint64_t sent = 0;
    for (uint64_t s = seq0 + 1; s <= seq0 + iterations; ++s) {
        if (threadIdx.x == 0)
            ok = s == 1 || iris::wait_until<Wait>(ctx, acks + c, iris::Cmp::ge, s - 1, kSiteProducerAck, peer);
        __syncthreads();
        if (!ok) break;
        send(s);
        sent = s - seq0;
    }
    if (threadIdx.x == 0) {
        if (sent == iterations && !iris::wait_until<Wait>(ctx, acks + c, iris::Cmp::ge, seq0 + iterations, kSiteProducerAck, peer))
            --sent;  // the last message was sent but never acknowledged
        atomicAdd(done, static_cast<unsigned long long>(sent));
    }
}
}  // namespace rma

/// landing (symmetric, on peer), flags (symmetric, the consumer's) and acks (symmetric, this
/// rank's) hold one slot per channel; src is local. result (local): done += completed messages.
extern "C" __global__ void rma_mp_producer(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const auto* src = static_cast<const uint8_t*>(args.src);
    auto* flags = static_cast<uint64_t*>(args.flags);
    const int peer = args.peer;
    const unsigned c = blockIdx.x;
    const rma::Range r = rma::channel_range(args.bytes, c, gridDim.x);
    uint8_t* there = iris::translate(ctx, static_cast<uint8_t*>(args.landing), peer);
    rma::produce<iris::Order::acquire>(ctx, static_cast<const uint64_t*>(args.acks), args.seq0, args.iterations, peer,
                                       static_cast<unsigned long long*>(args.result), [&](uint64_t s) {
        rma::copy_bytes(there + r.begin, src + r.begin, r.end - r.begin, rma::block_lanes(), rma::XorTag{rma::message_tag(s)});
        __syncthreads();  // the whole range is written before thread 0 publishes it
        if (threadIdx.x == 0) iris::signal(ctx, flags + c, s, peer);
    });
}

namespace rma {
/// landing and flags are this rank's (symmetric); acks and errors are the producer's (symmetric);
/// out is local and ends holding the payload. Words that differ between consecutive messages are
/// added to the producer's errors, so the producer's rank can report them.
__device__ __forceinline__ void mp_consumer(const Ctx& ctx, const uint8_t* landing, uint8_t* out, uint64_t bytes,
                                            uint64_t* flags, uint64_t* acks, uint64_t seq0, uint64_t iterations, int peer,
                                            unsigned long long* errors) {
    __shared__ int ok;
    const unsigned c = blockIdx.x;
    const Range r = channel_range(bytes, c, gridDim.x);
    uint32_t wrong = 0;
    for (uint64_t s = seq0 + 1; s <= seq0 + iterations; ++s) {
        if (threadIdx.x == 0) ok = iris::wait_until(ctx, flags + c, iris::Cmp::ge, s, kSiteConsumerFlag, peer);
        __syncthreads();
        if (!ok) break;
        wrong += consume_bytes(out + r.begin, landing + r.begin, r.end - r.begin, block_lanes(), XorTag{message_tag(s)},
                               /*check=*/s > 1);
        __syncthreads();  // every thread has read its words before the producer may overwrite them
        if (threadIdx.x == 0) iris::signal(ctx, acks + c, s, peer);
    }
    if (wrong) iris::atomic_add(ctx, errors, static_cast<unsigned long long>(wrong), peer);
}
}  // namespace rma

/// rma::mp_consumer with out = dst and errors = result.
extern "C" __global__ void rma_mp_consumer(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    rma::mp_consumer(args.ctx, static_cast<const uint8_t*>(args.landing), static_cast<uint8_t*>(args.dst), args.bytes,
                     static_cast<uint64_t*>(args.flags), static_cast<uint64_t*>(args.acks), args.seq0, args.iterations,
                     args.peer, static_cast<unsigned long long*>(args.result));
}

// ---- message passing, flags inline (LL) ----------------------------------------------------------
// The same exchange without a separate flag: every 4 bytes of payload travel in one 8-byte word
// whose upper half is the message's sequence number. An aligned 8-byte store arrives whole, so the
// consumer knows a word is this message's as soon as it sees the sequence number, and neither side
// needs a system-scope fence: one NVLink trip each way per message. The landing area holds
// 2 x bytes (bytes a multiple of 4); it starts zeroed, and sequence numbers start at 1. The
// fields are those of the flagged kernels, flags unused.
//   producer, message s: thread 0 waits for ack >= s - 1; __syncthreads; every thread stores its
//                        words (s << 32 | payload)
//   consumer, message s: every thread waits for each of its words to reach s << 32, checks the
//                        sequence number and keeps the payload; __syncthreads; thread 0 acks s

extern "C" __global__ void rma_mp_ll_producer(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const auto* src = static_cast<const uint32_t*>(args.src);
    const int peer = args.peer;
    const rma::Range r = rma::channel_range(args.bytes, blockIdx.x, gridDim.x);
    uint64_t* there = iris::translate(ctx, static_cast<uint64_t*>(args.landing), peer);
    rma::produce<iris::Order::relaxed>(ctx, static_cast<const uint64_t*>(args.acks), args.seq0, args.iterations, peer,
                                       static_cast<unsigned long long*>(args.result), [&](uint64_t s) {
        for (uint64_t w = r.begin / 4 + threadIdx.x; w < r.end / 4; w += blockDim.x)
            there[w] = (s << 32) | src[w];
    });
}

namespace rma {
__device__ __forceinline__ void mp_ll_consumer(const Ctx& ctx, const uint64_t* landing, uint32_t* out, uint64_t bytes,
                                               uint64_t* acks, uint64_t seq0, uint64_t iterations, int peer,
                                               unsigned long long* errors) {
    __shared__ int ok;
    const unsigned c = blockIdx.x;
    const Range r = channel_range(bytes, c, gridDim.x);
    uint32_t wrong = 0;
    for (uint64_t s = seq0 + 1; s <= seq0 + iterations; ++s) {
        if (threadIdx.x == 0) ok = 1;
        __syncthreads();
        for (uint64_t w = r.begin / 4 + threadIdx.x; w < r.end / 4; w += blockDim.x) {
            if (!iris::wait_until<iris::Order::relaxed>(ctx, landing + w, iris::Cmp::ge, s << 32, kSiteConsumerFlag, peer)) {
                ok = 0;
                break;
            }
            const uint64_t v = iris::arch::load<iris::Order::relaxed, iris::Scope::system>(landing + w);
            wrong += (v >> 32) != s;
            out[w] = static_cast<uint32_t>(v);
        }
        __syncthreads();  // every word of this message is read before the producer may overwrite it
        if (!ok) break;
        if (threadIdx.x == 0) iris::signal<iris::Order::relaxed>(ctx, acks + c, s, peer);
    }
    if (wrong) iris::atomic_add(ctx, errors, static_cast<unsigned long long>(wrong), peer);
}
}  // namespace rma

extern "C" __global__ void rma_mp_ll_consumer(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    rma::mp_ll_consumer(args.ctx, static_cast<const uint64_t*>(args.landing), static_cast<uint32_t*>(args.dst), args.bytes,
                        static_cast<uint64_t*>(args.acks), args.seq0, args.iterations, args.peer,
                        static_cast<unsigned long long*>(args.result));
}

// ---- ping-pong ---------------------------------------------------------------------------------
// One thread per rank, on the uint64 at flags (symmetric). Round s (seq0 + 1 ... seq0 + iterations):
// the initiator raises the peer's flag to s and waits for its own to reach s; the responder waits,
// then answers. Round trip = launch time / rounds. result (local): done += completed rounds.

namespace rma {
/// Release/acquire flags (the data-publishing handshake) or relaxed ones (a pure handshake).
template <iris::Order Signal, iris::Order Wait>
__device__ __forceinline__ void ping_pong(const Ctx& ctx, uint64_t* flag, uint64_t seq0, uint64_t rounds, int peer,
                                          int initiator, unsigned long long* done) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    uint64_t completed = 0;
    for (uint64_t s = seq0 + 1; s <= seq0 + rounds; ++s) {
        if (initiator) {
            iris::signal<Signal>(ctx, flag, s, peer);
            if (!iris::wait_until<Wait>(ctx, flag, iris::Cmp::ge, s, kSitePingInitiator, peer)) break;
        } else {
            if (!iris::wait_until<Wait>(ctx, flag, iris::Cmp::ge, s, kSitePingResponder, peer)) break;
            iris::signal<Signal>(ctx, flag, s, peer);
        }
        ++completed;
    }
    atomicAdd(done, static_cast<unsigned long long>(completed));
}

template <iris::Order Signal, iris::Order Wait>
__device__ __forceinline__ void ping_pong(const iris_rma_bench_args& args) {
    ping_pong<Signal, Wait>(args.ctx, static_cast<uint64_t*>(args.flags), args.seq0, args.iterations, args.peer,
                            args.initiator, static_cast<unsigned long long*>(args.result));
}
}  // namespace rma

extern "C" __global__ void rma_ping_pong(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    rma::ping_pong<iris::Order::release, iris::Order::acquire>(args);
}

extern "C" __global__ void rma_ping_pong_relaxed(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    rma::ping_pong<iris::Order::relaxed, iris::Order::relaxed>(args);
}

// ---- bulk copies (cp.async.bulk through shared memory) ------------------------------------------
// One thread per block drives a 4-stage pipeline of 16 KiB chunks: 64 KiB of shared memory, so
// several blocks share an SM. Whether bulk transfers beat 16-byte loads over NVLink is what the
// load_bulk / store_bulk points measure. Fields as rma_load and rma_store.

namespace rma {
constexpr int kBulkStages = IRIS_RMA_BENCH_BULK_STAGES;
constexpr int kBulkChunk = IRIS_RMA_BENCH_BULK_CHUNK;
}  // namespace rma

extern "C" __global__ void rma_load_bulk(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    iris::bulk_get<rma::kBulkStages, rma::kBulkChunk>(args.ctx, static_cast<uint8_t*>(args.dst),
                                                      static_cast<const uint8_t*>(args.src), args.bytes, args.peer);
}

extern "C" __global__ void rma_store_bulk(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    iris::bulk_put<rma::kBulkStages, rma::kBulkChunk>(args.ctx, static_cast<uint8_t*>(args.dst),
                                                      static_cast<const uint8_t*>(args.src), args.bytes, args.peer);
}

// ---- helpers around the timed reps --------------------------------------------------------------

/// Two ranks meet: this rank raises slot [rank] of the peer's flags (symmetric, kMaxRanks slots)
/// to value and waits for its own slot [peer] to reach it. Both ranks call it with the same value
/// sequence; the work queued after it on either rank starts only once both have arrived, which
/// keeps host launch skew between the two processes out of the timed region.
extern "C" __global__ void rma_pair_sync(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    auto* flags = static_cast<uint64_t*>(args.flags);
    const uint64_t value = args.value;
    const int peer = args.peer;
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    iris::signal(ctx, flags + ctx.rank, value, peer);
    iris::wait_until(ctx, flags + peer, iris::Cmp::ge, value, rma::kSitePairSync, peer);
}

/// Holds the stream until the host raises the word at flags (mapped host memory) to value. The
/// host queues the gate, then every timed rep, then opens it: the reps then run back to back and
/// no rep's events include the host's launch overhead.
extern "C" __global__ void rma_gate(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    iris::wait_until(args.ctx, static_cast<const uint64_t*>(args.flags), iris::Cmp::ge, args.value, rma::kSiteGate, -1);
}

/// Compares bytes of a (dst) and b (src), either of which may be a peer's memory as mapped here;
/// result as in rma::report, offsets in bytes (of the first differing 16-byte word).
extern "C" __global__ void rma_compare(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const auto* a = static_cast<const uint8_t*>(args.dst);
    const auto* b = static_cast<const uint8_t*>(args.src);
    const uint64_t bytes = args.bytes;
    const rma::Lanes l = rma::grid_lanes();
    const uint64_t words = bytes / 16;
    const auto* va = reinterpret_cast<const vec16*>(a);
    const auto* vb = reinterpret_cast<const vec16*>(b);
    uint32_t wrong = 0;
    uint64_t first = ~0ull;
    uint64_t i = l.lane;
    for (; i + (rma::kVecsInFlight - 1) * l.count < words; i += rma::kVecsInFlight * l.count) {
        vec16 x[rma::kVecsInFlight], y[rma::kVecsInFlight];
#pragma unroll
        for (int u = 0; u < rma::kVecsInFlight; ++u) {
            x[u] = va[i + u * l.count];
            y[u] = vb[i + u * l.count];
        }
#pragma unroll
        for (int u = 0; u < rma::kVecsInFlight; ++u) {
            if (!rma::same(x[u], y[u])) {
                ++wrong;
                const uint64_t at = (i + u * l.count) * 16;
                first = first < at ? first : at;
            }
        }
    }
    for (; i < words; i += l.count) {
        if (!rma::same(va[i], vb[i])) {
            ++wrong;
            first = first < i * 16 ? first : i * 16;
        }
    }
    for (uint64_t k = words * 16 + l.lane; k < bytes; k += l.count) {
        if (a[k] != b[k]) {
            ++wrong;
            first = first < k ? first : k;
        }
    }
    rma::report(static_cast<unsigned long long*>(args.result), wrong, first);
}

/// Checks an all-reduce (sum) of count bf16s: out (dst, local) against the sum of every rank's in
/// (src, symmetric), summed here in float. Allowed error: world x 2^-8 x sum |in| per element (bf16
/// rounding of each partial sum in any order); NaN never passes. Result as in rma::report, offsets
/// in elements.
extern "C" __global__ void rma_check_allreduce_bf16(const IRIS_GRID_CONSTANT iris_rma_bench_args args) {
    const Ctx& ctx = args.ctx;
    const auto* in = static_cast<const iris::bf16*>(args.src);
    const auto* out = static_cast<const iris::bf16*>(args.dst);
    const uint64_t n = args.count;
    const rma::Lanes l = rma::grid_lanes();
    uint32_t wrong = 0;
    uint64_t first = ~0ull;
    for (uint64_t i = l.lane; i < n; i += l.count) {
        float sum = 0.0f, magnitude = 0.0f;
        for (int r = 0; r < ctx.world; ++r) {
            const float v = iris::to_float(iris::translate(ctx, in, r)[i]);
            sum += v;
            magnitude += fabsf(v);
        }
        const float error = fabsf(iris::to_float(out[i]) - sum);
        if (!(error <= float(ctx.world) * 0.00390625f * magnitude)) {
            ++wrong;
            first = first < i ? first : i;
        }
    }
    rma::report(static_cast<unsigned long long*>(args.result), wrong, first);
}
