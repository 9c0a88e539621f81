// sync.cuh: flags between ranks, bounded waits, and the cross-rank barrier.
//
// No wait here can spin forever: each gives up at the context's deadline (Ctx::timeout_ns),
// records what it waited for in the rank's DeviceStatus, and returns false. The host turns that
// record into an exception that names the rank, the peer and the wait. Once a rank has recorded
// an error its other waits give up at once, so one lost peer does not cost a deadline per wait.
// They also give up, within microseconds, once the host sets DeviceStatus::abort: its watchdog
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
/// failure is recorded with `site` and `peer` for the host's message.
template <Order O = Order::acquire>
__device__ inline bool wait_until(const Ctx& ctx, const uint64_t* flag, Cmp cmp, uint64_t value, int site = 0,
                                  int peer = -1, ErrorCode code = ErrorCode::wait_timeout) {
    static_assert(O == Order::acquire || O == Order::relaxed, "wait_until: acquire or relaxed");
    uint64_t seen = arch::load<O, Scope::system>(flag);
    if (impl::compare(seen, cmp, value)) return true;
    const uint64_t start = arch::now_ns();
    for (uint32_t spin = 1;; ++spin) {
        seen = arch::load<O, Scope::system>(flag);
        if (impl::compare(seen, cmp, value)) return true;
        if ((spin & 255u) == 0) {  // the timer and the status word are checked every 256 spins
            const uint64_t waited = arch::now_ns() - start;
            if (impl::has_error(ctx)) return false;
            if (impl::aborted(ctx)) {
                impl::record_error(ctx, ErrorCode::aborted, site, peer, seen, value, waited);
                return false;
            }
            if (waited > ctx.timeout_ns) {
                impl::record_error(ctx, code, site, peer, seen, value, waited);
                return false;
            }
        }
    }
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
