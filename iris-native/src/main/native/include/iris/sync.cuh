// sync.cuh: flags between ranks, bounded waits, and the cross-rank barrier.
//
// No wait here can spin forever: each gives up at the context's deadline (Ctx::timeout_ns; a
// wait_until_local at twice it), records what it waited for in the rank's DeviceStatus, and
// returns false. The host turns that record into an exception that names the rank, the peer and
// the wait. Once a rank has recorded an error its other waits give up at their next check (within
// about half a millisecond), so one lost peer does not cost a deadline per wait.
// They also give up, within about a millisecond, once the host sets DeviceStatus::abort: its watchdog
// saw a peer process end (or fall silent), and nobody should wait out a deadline for a dead rank;
// the record then says ErrorCode::aborted, and the host names the rank that was lost.
//
//   // producer: data first, then the flag with release semantics
//   iris::put(ctx, buf, local, n, peer);
//   __syncthreads();
//   if (threadIdx.x == 0) iris::signal(ctx, flag, 1, peer);
//   // consumer
//   if (threadIdx.x == 0 && !iris::wait_until(ctx, flag, iris::Cmp::ge, 1, /*site=*/7)) return;
#pragma once

#include "ctx.cuh"

namespace iris {

enum class Cmp { eq, ne, ge, gt, le, lt };

enum class SignalOp { set, add };

namespace impl {

__device__ __forceinline__ bool compare(uint64_t a, Cmp cmp, uint64_t b) {
    switch (cmp) {
        case Cmp::eq: return a == b;
        case Cmp::ne: return a != b;
        case Cmp::ge: return a >= b;
        case Cmp::gt: return a > b;
        case Cmp::le: return a <= b;
        default: return a < b;
    }
}

/// Whom a wait depends on. A peer wait gives up at the context's deadline or as soon as the host
/// aborts the rank's waits. A local wait (a flag that this rank's own threads set) stalls only
/// when its writer is stuck in a peer wait, which records the cause: so it ignores the abort,
/// gives up without a record once that error is there, and records its own only at twice the
/// deadline.
enum class Waiter { peer, local };

/// The bounded waits' periodic check: true when the wait must give up, because this rank already
/// holds an error, the host aborted its waits (recorded as aborted; peer waits only) or the
/// deadline has passed (recorded as `code`).
template <Waiter W = Waiter::peer>
__device__ inline bool give_up(const Ctx& ctx, uint64_t start, int site, int peer, uint64_t seen, uint64_t value,
                               ErrorCode code) {
    const uint64_t waited = arch::now_ns() - start;
    if (has_error(ctx)) return true;
    if (W == Waiter::peer && aborted(ctx)) {
        record_error(ctx, ErrorCode::aborted, site, peer, seen, value, waited);
        return true;
    }
    if (waited > (W == Waiter::peer ? 1 : 2) * ctx.timeout_ns) {
        record_error(ctx, code, site, peer, seen, value, waited);
        return true;
    }
    return false;
}

/// How often a tight poll runs give_up: every 2^20 cycles of its SM, about half a millisecond
/// at 2 GHz. Paced by the cycle counter (a register read), not by spins: give_up reads
/// %globaltimer and the status word in mapped host memory, and a poll that spins on its SM's L1
/// (a block-scope flag) reached it every few microseconds when it counted 256 spins. With 132
/// such polls the spare-warp GEMM + all-scatter at 8192^3 took 8020 us instead of 752; checked
/// every 2^13 cycles, 23700.
inline constexpr uint64_t kGiveUpCheckCycles = uint64_t(1) << 20;

/// The tight, bounded poll behind wait_for, wait_until_value and wait_until_local: `look(seen)`
/// reads once, leaves what it read in `seen` and says whether the wait is over; `value` is what
/// the wait expects (both go into the error record).
template <Waiter W, class Look>
__device__ inline bool poll_until(const Ctx& ctx, Look look, uint64_t& seen, uint64_t value, int site, int peer,
                                  ErrorCode code) {
    if (look(seen)) return true;
    const uint64_t start = arch::now_ns();
    uint64_t checked = arch::cycles();
    for (;;) {
        if (look(seen)) return true;
        const uint64_t now = arch::cycles();
        if (now - checked >= kGiveUpCheckCycles) {
            checked = now;
            if (give_up<W>(ctx, start, site, peer, seen, value, code)) return false;
        }
    }
}

template <Order O, Scope S, Waiter W>
__device__ inline bool spin_until(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, uint64_t& seen, int site,
                                  int peer, ErrorCode code) {
    static_assert(O == Order::acquire || O == Order::relaxed, "wait_until: acquire or relaxed");
    const auto look = [&](uint64_t& v) {
        v = arch::load<O, S>(flag);
        return compare(v, cmp, value);
    };
    return poll_until<W>(ctx, look, seen, value, site, peer, code);
}

}  // namespace impl

/// Sets (or adds to) rank `to_rank`'s copy of the flag at system scope. With the default release
/// order every write this thread made before, to any rank, is visible to whoever acquires the
/// flag; Order::relaxed skips that fence (about a microsecond on NVLink) for flags that carry no
/// data, such as a pure handshake.
template <Order O = Order::release>
__device__ __forceinline__ void signal(const Ctx& ctx, uint64_t* flag, uint64_t value, int to_rank,
                                       SignalOp op = SignalOp::set, Site where = Site::here()) {
    static_assert(O == Order::release || O == Order::relaxed, "signal: release or relaxed");
    uint64_t* target = translate(ctx, flag, to_rank, where);
    if (op == SignalOp::set) arch::store<O, Scope::system>(target, value);
    else arch::fetch_add<O, Scope::system>(target, value);
}

/// Spins (one thread) until this rank's `*flag` compares true against `value`, with acquire
/// semantics (Order::relaxed to pair with a relaxed signal). Returns false if the deadline passed,
/// the rank already holds an error, or the host aborted this rank's waits (a peer was lost); the
/// failure is recorded with `site` and `peer` for the host's message. `seen` gets the value that
/// satisfied the comparison (the last one observed on failure): a flag that carries data, such
/// as a word whose upper half is a call number and whose lower half the payload, costs no second
/// load.
template <Order O = Order::acquire>
__device__ inline bool wait_until_value(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, uint64_t& seen,
                                        int site = 0, int peer = -1, ErrorCode code = ErrorCode::wait_timeout) {
    return impl::spin_until<O, Scope::system, impl::Waiter::peer>(ctx, flag, cmp, value, seen, site, peer, code);
}

/// The bounded wait for a condition that is not one 64-bit flag, such as a packet whose tag
/// arrives with its payload in one access: polls `look(seen)` (a callable `bool(uint64_t&)` that
/// reads once, leaves what it read in `seen` and returns whether the wait is over) tightly, with
/// the deadline, abort and error record of wait_until; `value` is what the record says it expected.
/// The reads are the callable's own, so is their ordering.
template <class Look>
__device__ inline bool wait_for(const Ctx& ctx, Look look, uint64_t value, int site = 0, int peer = -1,
                                ErrorCode code = ErrorCode::wait_timeout) {
    uint64_t seen;
    return impl::poll_until<impl::Waiter::peer>(ctx, look, seen, value, site, peer, code);
}

/// wait_until_value for a flag whose value does not matter once it compares true.
template <Order O = Order::acquire>
__device__ inline bool wait_until(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, int site = 0,
                                  int peer = -1, ErrorCode code = ErrorCode::wait_timeout) {
    uint64_t seen;
    return wait_until_value<O>(ctx, flag, cmp, value, seen, site, peer, code);
}

/// wait_until (tight, acquire at scope S) for a flag that only this rank's own threads set, such
/// as a hand-off between the warps of one kernel. Such a flag stalls only when its writer is stuck
/// in a peer wait, whose error names the cause (the peer, the site): this wait returns false once
/// that error is recorded and records one of its own (naming this rank) only at twice the
/// deadline, so the message never shows the consequence instead of the cause.
///
/// S = Scope::block when every writer is a thread of the waiter's own block and releases at block
/// scope (or wider): the poll is then an L1 hit. At GPU scope each poll invalidates the SM's L1
/// and goes to L2: with it the fused kernels' hand-off between the warps of one CTA made the
/// spare-warp GEMM + all-scatter at 8192^3 take 1120-1154 us instead of 752.
///
///   // producer warps of this block                // a waiting warp of the same block
///   iris::arch::store<iris::Order::release,         iris::wait_until_local<iris::Scope::block>(
///       iris::Scope::block>(flag, epoch);               ctx, flag, iris::Cmp::ge, epoch, site);
template <Scope S = Scope::gpu>
__device__ inline bool wait_until_local(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, int site = 0) {
    static_assert(S != Scope::system, "wait_until_local: a flag of this rank's own threads needs Scope::gpu or block");
    uint64_t seen;
    return impl::spin_until<Order::acquire, S, impl::Waiter::local>(ctx, flag, cmp, value, seen, site, ctx.rank,
                                                                  ErrorCode::wait_timeout);
}

/// wait_until for a waiter that shares its SM with work that matters more than how fast it wakes
/// up, such as a GEMM's producer thread or spare warps beside the tensor-core mainloop: a tight
/// loop of acquire loads takes issue slots and memory bandwidth from that work. This one polls
/// with relaxed loads and sleeps between them, from 32 ns doubling up to 1 µs (the hardware may
/// sleep up to twice that), so it notices a change up to about 2 µs late. Same results, deadline,
/// abort and error record as wait_until.
///
/// S is the scope of the writer's release: Scope::gpu only when every writer of the flag runs on
/// this GPU (it skips the system-wide part of the acquire). O = Order::relaxed pairs with a
/// relaxed signal, as in wait_until.
///
/// Why the ordering is that of an acquire load: the first look is an acquire load, which is all
/// a waiter pays when the flag is already set. After it, the poll that sees the condition reads
/// the value of the writer's release (or of a later write in its release sequence), and the
/// acquire fence of scope S that follows it makes that read synchronize with the release (C++
/// fence-to-atomic synchronization; PTX: a strong read then fence.acq_rel is an acquire pattern,
/// and the relaxed poll of scope S is morally strong with a release of scope S or wider). So
/// everything the writer ordered before its release is visible to this thread, and through a
/// barrier to its block, when this returns true. Earlier polls that saw an older value order
/// nothing, and none is needed: the caller reads the published data only after the call returns.
template <Order O = Order::acquire, Scope S = Scope::system>
__device__ inline bool wait_until_backoff(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, int site = 0,
                                          int peer = -1, ErrorCode code = ErrorCode::wait_timeout) {
    static_assert(O == Order::acquire || O == Order::relaxed, "wait_until_backoff: acquire or relaxed");
    constexpr uint32_t kFirstSleepNs = 32;
    constexpr uint32_t kLongestSleepNs = 1024;
    uint64_t seen = arch::load<O, S>(flag);
    if (impl::compare(seen, cmp, value)) return true;
    const uint64_t start = arch::now_ns();
    uint32_t sleep = kFirstSleepNs;
    for (uint32_t poll = 1;; ++poll) {
        arch::sleep_ns(sleep);
        sleep = sleep < kLongestSleepNs ? 2 * sleep : kLongestSleepNs;
        seen = arch::load<Order::relaxed, S>(flag);
        if (impl::compare(seen, cmp, value)) break;
        // Every 32 polls: about every 30 µs once the sleeps are at their longest.
        if ((poll & 31u) == 0 && impl::give_up(ctx, start, site, peer, seen, value, code)) return false;
    }
    if constexpr (O == Order::acquire) arch::fence_acquire<S>();
    return true;
}

/// All ranks meet: every rank's block returns only after every rank's block has arrived, and
/// writes made before the barrier (to any rank) are visible after it. Call it from every thread
/// of exactly one block per rank, the same number of times on each rank, e.g. from a one-block
/// kernel or after a grid-wide sync. Returns false (on every thread) if a peer did not arrive
/// before the deadline (or the host aborted the wait); the status record names it.
__device__ inline bool barrier(const Ctx& ctx, int site = 0, Site where = Site::here()) {
    __shared__ uint64_t epoch;
    __shared__ int ok;
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    __syncthreads();  // the block's own writes come before the arrival
    if (t == 0) {
        epoch = *ctx.barrier_epoch + 1;
        *ctx.barrier_epoch = epoch;
        ok = 1;
    }
    __syncthreads();
    if (t < static_cast<unsigned>(ctx.world)) {
        // Arrive: slot [my rank] in rank t's pad. Epochs only grow, so a late reader never
        // mistakes an old arrival for this one.
        signal(ctx, ctx.barrier_flags + ctx.rank, epoch, static_cast<int>(t), SignalOp::set, where);
        if (!wait_until(ctx, ctx.barrier_flags + t, Cmp::ge, epoch, site, static_cast<int>(t),
                        ErrorCode::barrier_timeout))
            ok = 0;
    }
    __syncthreads();
    return ok != 0;
}

}  // namespace iris
