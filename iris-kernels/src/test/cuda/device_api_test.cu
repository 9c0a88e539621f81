// device_api_test.cu: test kernels that exercise every function of the device API
// (iris/iris.cuh) from user code, driven by DeviceApiScenarios on every rank.
//
// Conventions, so that the host can check everything:
//   - every kernel takes iris::Ctx by value first, as users' kernels do;
//   - symmetric pointers (the ones that are translated to another rank) point into this rank's
//     heap; "local" pointers are any device memory of this rank;
//   - every output is written unconditionally, so the host's poison tells written from skipped;
//   - kernels do not judge results themselves unless the data is too large to bring back; the
//     host compares with its own reference;
//   - portable: only the device API and iris::f16 / iris::bf16, so the HIP build compiles this
//     file for gfx90a and gfx940 too (compile-only: no AMD GPU runs it).
#include <iris/iris.cuh>

namespace {

using iris::Ctx;

// splitmix64 finalizer; the host has the same function (DeviceApiScenarios.mix64) so that it can
// regenerate what a kernel wrote without copying the inputs around.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ uint64_t global_thread() { return blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ uint64_t grid_threads() { return uint64_t(gridDim.x) * blockDim.x; }

}  // namespace

// ---- translate ------------------------------------------------------------------------------
// Thread r (< world) reports where rank r's copy of *sym lives in this process and what it holds.
// The host compares the address with its own translation and the value with the tag rank r put
// there, so a wrong base or offset shows either as a wrong address or as a wrong value.
extern "C" __global__ void dat_translate(const IRIS_GRID_CONSTANT Ctx ctx, const uint64_t* sym, uint64_t* addresses, uint64_t* values) {
    const int r = static_cast<int>(threadIdx.x);
    if (r >= ctx.world) return;
    const uint64_t* there = iris::translate(ctx, sym, r);
    addresses[r] = reinterpret_cast<uint64_t>(there);
    values[r] = *there;
}

// ---- ranks outside the node ------------------------------------------------------------------
// The context spans the node; thread i asks for rank probes[i] (other nodes' ranks, -1, world)
// and reports the address translate gave and whether can_reach agreed. Plain builds only: a
// checked build records the rank as a bad address and stops the thread instead.
extern "C" __global__ void dat_translate_off_node(const IRIS_GRID_CONSTANT Ctx ctx, const uint64_t* sym, const int* probes,
                                                  int count, uint64_t* addresses, int* reachable) {
    const int i = static_cast<int>(threadIdx.x);
    if (i >= count) return;
    addresses[i] = reinterpret_cast<uint64_t>(iris::translate(ctx, sym, probes[i]));
    reachable[i] = iris::can_reach(ctx, probes[i]) ? 1 : 0;
}

// ---- load / store ---------------------------------------------------------------------------
// One element per thread (grid-stride). T is a 4-byte, 8-byte or 16-byte (iris::vec16) type, so
// both the scalar accesses and the single 128-bit access are covered.
namespace {
template <class T>
__device__ void load_n(const Ctx& ctx, T* out, const T* src, uint64_t n, int from_rank) {
    for (uint64_t i = global_thread(); i < n; i += grid_threads()) out[i] = iris::load(ctx, src + i, from_rank);
}
template <class T>
__device__ void store_n(const Ctx& ctx, T* dst, const T* src, uint64_t n, int to_rank) {
    for (uint64_t i = global_thread(); i < n; i += grid_threads()) iris::store(ctx, dst + i, src[i], to_rank);
}
}  // namespace

#define DAT_LOAD_STORE(SUFFIX, T)                                                                         \
    /* out[i] = rank from_rank's src[i] (src symmetric, out local) */                                    \
    extern "C" __global__ void dat_load_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, T* out, const T* src, uint64_t n, int from_rank) { \
        load_n(ctx, out, src, n, from_rank);                                                              \
    }                                                                                                     \
    /* rank to_rank's dst[i] = src[i] (dst symmetric, src local) */                                      \
    extern "C" __global__ void dat_store_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, T* dst, const T* src, uint64_t n, int to_rank) { \
        store_n(ctx, dst, src, n, to_rank);                                                               \
    }
DAT_LOAD_STORE(f32, float)
DAT_LOAD_STORE(i64, long long)
DAT_LOAD_STORE(v16, iris::vec16)
#undef DAT_LOAD_STORE

// ---- 1-D get / put / copy -------------------------------------------------------------------
// chunk == 0: the whole grid shares one copy (iris::GridGroup).
// chunk > 0:  block b copies elements [b * chunk, min(count, (b + 1) * chunk)) with
//             iris::BlockGroup, the usual way to compose block-cooperative copies. An odd chunk
//             gives blocks of every alignment, so vector and element paths meet in one launch.
// Which path a copy takes depends on the pointers: the host picks offsets that hit each.
// The context reaches the lambdas as an argument, never as a captured reference: on AMD a lambda
// that captures the kernel's Ctx by reference makes clang copy all 112 bytes to scratch (the HIP
// build fails on scratch use, as the CUDA build does on local memory).
namespace {
template <class T, class Op>
__device__ void for_chunk(const Ctx& ctx, T* dst, const T* src, uint64_t count, uint64_t chunk, Op op) {
    if (chunk == 0) {
        op(ctx, dst, src, count, iris::GridGroup{});
        return;
    }
    const uint64_t begin = blockIdx.x * chunk;
    if (begin >= count) return;  // the whole block leaves together
    const uint64_t n = count - begin < chunk ? count - begin : chunk;
    op(ctx, dst + begin, src + begin, n, iris::BlockGroup{});
}
}  // namespace

#define DAT_MOVE_1D(SUFFIX, T)                                                                                  \
    /* local dst = rank from_rank's src */                                                                      \
    extern "C" __global__ void dat_get_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, T* dst, const T* src, uint64_t count, int from_rank,     \
                                                uint64_t chunk) {                                               \
        for_chunk(ctx, dst, src, count, chunk, [&](const Ctx& c, T* d, const T* s, uint64_t n, auto g) {        \
            iris::get(c, d, s, n, from_rank, g);                                                                \
        });                                                                                                     \
    }                                                                                                           \
    /* rank to_rank's dst = local src */                                                                        \
    extern "C" __global__ void dat_put_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, T* dst, const T* src, uint64_t count, int to_rank,       \
                                                uint64_t chunk) {                                               \
        for_chunk(ctx, dst, src, count, chunk, [&](const Ctx& c, T* d, const T* s, uint64_t n, auto g) {        \
            iris::put(c, d, s, n, to_rank, g);                                                                  \
        });                                                                                                     \
    }                                                                                                           \
    /* rank to_rank's dst = rank from_rank's src; neither needs to be this rank */                             \
    extern "C" __global__ void dat_copy_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, T* dst, const T* src, uint64_t count, int from_rank,    \
                                                 int to_rank, uint64_t chunk) {                                 \
        for_chunk(ctx, dst, src, count, chunk, [&](const Ctx& c, T* d, const T* s, uint64_t n, auto g) {        \
            iris::copy(c, d, s, n, from_rank, to_rank, g);                                                      \
        });                                                                                                     \
    }
DAT_MOVE_1D(f32, float)
DAT_MOVE_1D(u8, uint8_t)
#undef DAT_MOVE_1D

// ---- 2-D get_tile / put_tile ----------------------------------------------------------------
// A rows x cols tile between row-major matrices with leading dimensions ld_dst, ld_src (elements).
// rows_per_block == 0: one tile for the whole grid (GridGroup); otherwise block b takes the row
// band [b * rows_per_block, ...) with BlockGroup. A band of one row takes the rows == 1 path.
namespace {
template <class Op>
__device__ void for_band(const Ctx& ctx, uint64_t rows, uint64_t rows_per_block, Op op) {
    if (rows_per_block == 0) {
        op(ctx, uint64_t(0), rows, iris::GridGroup{});
        return;
    }
    const uint64_t r0 = blockIdx.x * rows_per_block;
    if (r0 >= rows) return;
    op(ctx, r0, rows - r0 < rows_per_block ? rows - r0 : rows_per_block, iris::BlockGroup{});
}
}  // namespace

// local dst tile = rank from_rank's src tile
extern "C" __global__ void dat_get_tile_f32(const IRIS_GRID_CONSTANT Ctx ctx, float* dst, uint64_t ld_dst, const float* src, uint64_t ld_src,
                                            uint64_t rows, uint64_t cols, int from_rank, uint64_t rows_per_block) {
    for_band(ctx, rows, rows_per_block, [&](const Ctx& c, uint64_t r0, uint64_t n, auto g) {
        iris::get_tile(c, dst + r0 * ld_dst, ld_dst, src + r0 * ld_src, ld_src, n, cols, from_rank, g);
    });
}

// rank to_rank's dst tile = local src tile
extern "C" __global__ void dat_put_tile_f32(const IRIS_GRID_CONSTANT Ctx ctx, float* dst, uint64_t ld_dst, const float* src, uint64_t ld_src,
                                            uint64_t rows, uint64_t cols, int to_rank, uint64_t rows_per_block) {
    for_band(ctx, rows, rows_per_block, [&](const Ctx& c, uint64_t r0, uint64_t n, auto g) {
        iris::put_tile(c, dst + r0 * ld_dst, ld_dst, src + r0 * ld_src, ld_src, n, cols, to_rank, g);
    });
}

// ---- atomics --------------------------------------------------------------------------------
// One kernel per element type; (op, order, scope) are chosen at run time and dispatched with
// switches onto the template instances, so that every instance is compiled and reachable while
// the kernel count stays small. Codes (shared with DeviceApiScenarios):
//   op:    0 add, 1 sub, 2 xchg, 3 cas, 4 and, 5 or, 6 xor, 7 min, 8 max
//   order: 0 relaxed, 1 acquire, 2 release, 3 acq_rel
//   scope: 0 gpu, 1 system
// Launch: grid (x, n_combos, n_targets). blockIdx.y picks combo c = combos[3c..3c+2];
// blockIdx.z picks the target rank (target0 or target1). Thread i < n_ops of (z, c) applies
// operand[z][c][i] to rank target's slots[c][i % n_slots] and writes the returned old value to
// olds[z][c][i]; for cas, compares[z][c][i] is the expected value and operand the desired one.
// An (op, type) pair the API does not offer leaves olds unwritten, so the host sees the poison.
namespace {

enum : int { kAdd, kSub, kXchg, kCas, kAnd, kOr, kXor, kMin, kMax };

template <class T>
inline constexpr bool kHalfType = iris::arch::is_16bit_float_v<T>;

template <class T, iris::Order O, iris::Scope S>
__device__ bool apply_op(int op, const Ctx& ctx, T* slot, T operand, T compare, int rank, T& old) {
    if constexpr (kHalfType<T>) {  // 16-bit floats: add only
        if (op != kAdd) return false;
        old = iris::atomic_add<O, S>(ctx, slot, operand, rank);
        return true;
    } else {
        switch (op) {
            case kAdd: old = iris::atomic_add<O, S>(ctx, slot, operand, rank); return true;
            case kSub: old = iris::atomic_sub<O, S>(ctx, slot, operand, rank); return true;
            case kXchg: old = iris::atomic_xchg<O, S>(ctx, slot, operand, rank); return true;
            case kCas: old = iris::atomic_cas<O, S>(ctx, slot, compare, operand, rank); return true;
            case kMin: old = iris::atomic_min<O, S>(ctx, slot, operand, rank); return true;
            case kMax: old = iris::atomic_max<O, S>(ctx, slot, operand, rank); return true;
            default: break;
        }
        if constexpr (std::is_integral_v<T>) {  // bitwise: integers only
            switch (op) {
                case kAnd: old = iris::atomic_and<O, S>(ctx, slot, operand, rank); return true;
                case kOr: old = iris::atomic_or<O, S>(ctx, slot, operand, rank); return true;
                case kXor: old = iris::atomic_xor<O, S>(ctx, slot, operand, rank); return true;
                default: break;
            }
        }
        return false;
    }
}

template <class T, iris::Order O>
__device__ bool apply_scope(int scope, int op, const Ctx& ctx, T* slot, T operand, T compare, int rank, T& old) {
    switch (scope) {
        case 0: return apply_op<T, O, iris::Scope::gpu>(op, ctx, slot, operand, compare, rank, old);
        case 1: return apply_op<T, O, iris::Scope::system>(op, ctx, slot, operand, compare, rank, old);
        default: return false;
    }
}

template <class T>
__device__ bool apply_any(int order, int scope, int op, const Ctx& ctx, T* slot, T operand, T compare, int rank,
                          T& old) {
    switch (order) {
        case 0: return apply_scope<T, iris::Order::relaxed>(scope, op, ctx, slot, operand, compare, rank, old);
        case 1: return apply_scope<T, iris::Order::acquire>(scope, op, ctx, slot, operand, compare, rank, old);
        case 2: return apply_scope<T, iris::Order::release>(scope, op, ctx, slot, operand, compare, rank, old);
        case 3: return apply_scope<T, iris::Order::acq_rel>(scope, op, ctx, slot, operand, compare, rank, old);
        default: return false;
    }
}

template <class T>
__device__ void atomics_body(const Ctx& ctx, const int32_t* combos, T* slots, const T* operands, const T* compares,
                             T* olds, uint64_t n_slots, uint64_t n_ops, int target0, int target1) {
    const uint64_t c = blockIdx.y;
    const int op = combos[3 * c], order = combos[3 * c + 1], scope = combos[3 * c + 2];
    const int target = blockIdx.z == 0 ? target0 : target1;
    const uint64_t base = (uint64_t(blockIdx.z) * gridDim.y + c) * n_ops;
    T* my_slots = slots + c * n_slots;
    for (uint64_t i = global_thread(); i < n_ops; i += grid_threads()) {
        T old;
        if (apply_any(order, scope, op, ctx, my_slots + i % n_slots, operands[base + i], compares[base + i], target, old))
            olds[base + i] = old;
    }
}

}  // namespace

#define DAT_ATOMICS(SUFFIX, T)                                                                                 \
    extern "C" __global__ void dat_atomics_##SUFFIX(const IRIS_GRID_CONSTANT Ctx ctx, const int32_t* combos, T* slots, const T* operands, \
                                                    const T* compares, T* olds, uint64_t n_slots, uint64_t n_ops, \
                                                    int target0, int target1) {                                \
        atomics_body(ctx, combos, slots, operands, compares, olds, n_slots, n_ops, target0, target1);          \
    }
DAT_ATOMICS(i32, int32_t)
DAT_ATOMICS(u32, uint32_t)
DAT_ATOMICS(i64, long long)
DAT_ATOMICS(u64, unsigned long long)
DAT_ATOMICS(f32, float)
DAT_ATOMICS(f64, double)
DAT_ATOMICS(f16, iris::f16)
DAT_ATOMICS(bf16, iris::bf16)
#undef DAT_ATOMICS

// ---- signal / wait_until: ping-pong ---------------------------------------------------------
// Ranks `initiator` and `peer` take turns, one thread each. In round i (1..rounds) the sender
// first writes a data word into the receiver's *data with iris::store, then raises the
// receiver's flag to i with iris::signal (set to i, or add 1 when signal_add != 0). The receiver
// waits for the flag, then reads its *data: the release in signal and the acquire in wait_until
// must make the data visible (the message-passing pattern). Each rank keeps every data word it
// received in received[i - 1] and the number of completed rounds in *completed; the host checks
// both against msg(seed, sender, i). The wait's comparison rotates through eq, ge, gt and ne,
// each of which is true exactly once the flag has reached i, first with wait_until, then with
// wait_until_backoff (relaxed polls and one acquire fence must publish the data just the same).
// A rank only writes its peer's words, and only after the peer has consumed the previous ones.
namespace {
__device__ __forceinline__ uint64_t pingpong_msg(uint64_t seed, int sender, uint64_t round) {
    return mix64(seed ^ (uint64_t(sender + 1) * 0xD6E8FEB86659FD93ull) ^ (round * 0xA0761D6478BD642Full));
}
__device__ bool pingpong_wait(const Ctx& ctx, const uint64_t* flag, uint64_t round, int peer, int site) {
    switch (round % 8) {
        case 0: return iris::wait_until(ctx, flag, iris::Cmp::eq, round, site, peer);
        case 1: return iris::wait_until(ctx, flag, iris::Cmp::ge, round, site, peer);
        case 2: return iris::wait_until(ctx, flag, iris::Cmp::gt, round - 1, site, peer);
        case 3: return iris::wait_until(ctx, flag, iris::Cmp::ne, round - 1, site, peer);
        case 4: return iris::wait_until_backoff(ctx, flag, iris::Cmp::eq, round, site, peer);
        case 5: return iris::wait_until_backoff(ctx, flag, iris::Cmp::ge, round, site, peer);
        case 6: return iris::wait_until_backoff(ctx, flag, iris::Cmp::gt, round - 1, site, peer);
        default: return iris::wait_until_backoff(ctx, flag, iris::Cmp::ne, round - 1, site, peer);
    }
}
}  // namespace

extern "C" __global__ void dat_pingpong(const IRIS_GRID_CONSTANT Ctx ctx, uint64_t* flag, uint64_t* data, uint64_t rounds, int peer,
                                        int initiator, int signal_add, uint64_t seed, uint64_t* received,
                                        uint64_t* completed) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    auto send = [&](const Ctx& c, uint64_t round) {  // c, not a captured ctx: see for_chunk
        iris::store(c, data, pingpong_msg(seed, c.rank, round), peer);
        if (signal_add) iris::signal(c, flag, 1, peer, iris::SignalOp::add);
        else iris::signal(c, flag, round, peer, iris::SignalOp::set);
    };
    uint64_t done = 0;
    for (uint64_t round = 1; round <= rounds; ++round) {
        if (initiator) {
            send(ctx, round);
            if (!pingpong_wait(ctx, flag, round, peer, 11)) break;
            received[round - 1] = iris::load(ctx, data, ctx.rank);
        } else {
            if (!pingpong_wait(ctx, flag, round, peer, 12)) break;
            received[round - 1] = iris::load(ctx, data, ctx.rank);
            send(ctx, round);
        }
        done = round;
    }
    *completed = done;
}

// ---- wait_until: every comparison, true and false -------------------------------------------
// One thread evaluates cases[k] = (cmp code, value) against this rank's *flag in order and writes
// results[k] = 1 if the wait returned true, 0 if false; k % 4 picks wait_until, wait_until_backoff,
// wait_until_local or wait_until_local<Scope::block>, which must agree case by case (the local ones
// at twice the deadline). The kernel's copy of the context gets the short deadline timeout_ns (Ctx
// is passed by value; only this kernel sees the change), so a false case fails fast: the first one
// records a wait_timeout at site site_base + k, and every later wait gives up at its next check
// because the rank already holds an error.
extern "C" __global__ void dat_wait_cmp(const IRIS_GRID_CONSTANT Ctx ctx, const uint64_t* flag, const uint64_t* cases, int32_t* results,
                                        uint64_t n, uint64_t timeout_ns, int site_base) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    Ctx c = ctx;
    c.timeout_ns = timeout_ns;
    for (uint64_t k = 0; k < n; ++k) {
        const auto cmp = static_cast<iris::Cmp>(cases[2 * k]);
        const int site = site_base + static_cast<int>(k);
        const uint64_t value = cases[2 * k + 1];
        const bool held = k % 4 == 0   ? iris::wait_until(c, flag, cmp, value, site)
                          : k % 4 == 1 ? iris::wait_until_backoff(c, flag, cmp, value, site)
                          : k % 4 == 2 ? iris::wait_until_local(c, flag, cmp, value, site)
                                       : iris::wait_until_local<iris::Scope::block>(c, flag, cmp, value, site);
        results[k] = held ? 1 : 0;
    }
}

// ---- wait_until_local alone: twice the deadline, this rank named --------------------------------
// Waits for *flag >= 1 with wait_until_local (at block scope when block != 0) under the deadline
// timeout_ns set in the kernel's copy of the context; nobody sets the flag and nothing else
// records an error, so the wait records a wait_timeout naming this rank after twice the deadline.
// *result gets the wait's result (1 or 0), *waited_ns the nanoseconds it took by the GPU's timer.
extern "C" __global__ void dat_wait_local_timeout(const IRIS_GRID_CONSTANT Ctx ctx, const uint64_t* flag, uint64_t timeout_ns,
                                                  int site, int block, int32_t* result, uint64_t* waited_ns) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    Ctx c = ctx;
    c.timeout_ns = timeout_ns;
    const uint64_t start = iris::arch::now_ns();
    const bool held = block ? iris::wait_until_local<iris::Scope::block>(c, flag, iris::Cmp::ge, 1, site)
                            : iris::wait_until_local(c, flag, iris::Cmp::ge, 1, site);
    *result = held ? 1 : 0;
    *waited_ns = iris::arch::now_ns() - start;
}

// ---- wait_until that must time out ----------------------------------------------------------
// Waits for *flag >= expected with the context's own deadline; nobody sets the flag, so the wait
// records a wait_timeout (site, peer) and returns false; *result gets 1 or 0 for true or false.
extern "C" __global__ void dat_wait_timeout(const IRIS_GRID_CONSTANT Ctx ctx, const uint64_t* flag, uint64_t expected, int site, int peer,
                                            int32_t* result) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    *result = iris::wait_until(ctx, flag, iris::Cmp::ge, expected, site, peer) ? 1 : 0;
}

// ---- barrier inside a user kernel -----------------------------------------------------------
// One block per rank, P = blockDim.x threads, `iterations` rounds. In round k every thread j
// writes word j of this rank's row into every rank t's mailbox (double-buffered by k % 2:
// mailbox[k % 2][source rank][j]) with iris::store, then all call iris::barrier, then thread j
// reads word j of every source's row in its own mailbox and compares it with what the source
// must have written in round k. The writer of word j on each rank is a different thread from the
// one that signals that rank in the barrier, so the check also covers ordering through
// __syncthreads. A missing or leaky barrier shows as a stale (round k - 2) or zero word.
// Double buffering makes it safe: a source writes buffer k % 2 again only in round k + 2, after
// barrier k + 1, which this rank enters only after its reads of round k.
// Per round: errors[k] = number of words that differed, sums[k] = wrapping sum of every word read
// (recomputed independently by the host). *ok = 1 if every barrier returned true, else 0.
namespace {
__device__ __forceinline__ uint64_t barrier_word(uint64_t seed, uint64_t round, int src, int dst, unsigned j) {
    return mix64(seed + round * 0x9FB21C651E98DF25ull + uint64_t(src) * 0xC2B2AE3D27D4EB4Full +
                 uint64_t(dst) * 0x165667B19E3779F9ull + uint64_t(j) * 0x27D4EB2F165667C5ull);
}
}  // namespace

extern "C" __global__ void dat_barrier_loop(const IRIS_GRID_CONSTANT Ctx ctx, uint64_t* mailbox, uint64_t iterations, uint64_t seed, int site,
                                            uint64_t* sums, int32_t* errors, int32_t* ok) {
    __shared__ unsigned long long sum;
    __shared__ int wrong;
    const unsigned j = threadIdx.x, words = blockDim.x;
    const int world = ctx.world, me = ctx.rank;
    for (uint64_t k = 0; k < iterations; ++k) {
        uint64_t* buffer = mailbox + (k % 2) * uint64_t(world) * words;
        if (j == 0) {
            sum = 0;
            wrong = 0;
        }
        for (int t = 0; t < world; ++t) iris::store(ctx, buffer + uint64_t(me) * words + j, barrier_word(seed, k, me, t, j), t);
        if (!iris::barrier(ctx, site)) {  // same result on every thread; the host sees the status
            if (j == 0) *ok = 0;
            return;
        }
        for (int s = 0; s < world; ++s) {
            const uint64_t v = buffer[uint64_t(s) * words + j];
            atomicAdd(&sum, static_cast<unsigned long long>(v));
            if (v != barrier_word(seed, k, s, me, j)) atomicAdd(&wrong, 1);
        }
        __syncthreads();
        if (j == 0) {
            sums[k] = sum;
            errors[k] = wrong;
        }
        __syncthreads();  // thread 0 resets sum and wrong in the next round only after this
    }
    if (j == 0) *ok = 1;
}

// ---- bulk put after ordinary stores -----------------------------------------------------------
// One block per rank, `rounds` rounds. In round k the block writes `words` new words into src with
// ordinary stores, bulk-puts them (iris::bulk_put, Hopper's cp.async.bulk) into slot k % 2 of the
// next rank, meets every rank at iris::barrier, then counts the words of its own slot that differ
// from what the previous rank wrote in round k. The bulk loads read src through the async proxy,
// so a missing proxy fence in bulk_copy shows as words of round k - 1. Double buffering as in
// dat_barrier_loop. errors[k] = differing words of round k; *ok = 1 if every barrier returned true.
namespace {
constexpr int kBulkTestStages = 2;
constexpr int kBulkTestChunk = 4096;

__device__ __forceinline__ uint64_t bulk_word(uint64_t seed, uint64_t round, int src, uint64_t i) {
    return mix64(seed + round * 0x9FB21C651E98DF25ull + uint64_t(src) * 0xC2B2AE3D27D4EB4Full + i * 0x27D4EB2F165667C5ull);
}
}  // namespace

extern "C" __global__ void dat_bulk_put_after_store(const IRIS_GRID_CONSTANT Ctx ctx, uint64_t* src, uint64_t* slots,
                                                    uint64_t words, uint64_t rounds, uint64_t seed, int site,
                                                    int32_t* errors, int32_t* ok) {
    __shared__ int wrong;
    const int me = ctx.rank, world = ctx.world;
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    for (uint64_t k = 0; k < rounds; ++k) {
        uint64_t* slot = slots + (k % 2) * words;
        if (threadIdx.x == 0) wrong = 0;
        for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) src[i] = bulk_word(seed, k, me, i);
        iris::bulk_put<kBulkTestStages, kBulkTestChunk>(ctx, slot, src, words, next);
        if (!iris::barrier(ctx, site)) {  // same result on every thread; the host sees the status
            if (threadIdx.x == 0) *ok = 0;
            return;
        }
        int mine = 0;
        for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) mine += slot[i] != bulk_word(seed, k, prev, i);
        atomicAdd(&wrong, mine);
        __syncthreads();
        if (threadIdx.x == 0) errors[k] = wrong;
        __syncthreads();  // thread 0 resets wrong in the next round only after this
    }
    if (threadIdx.x == 0) *ok = 1;
}
