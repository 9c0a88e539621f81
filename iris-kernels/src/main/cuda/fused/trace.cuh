// trace.cuh: optional per-tile timeline of a GEMM or fused kernel, for seeing overlap.
//
// With Tracer<true> the leader thread of each consumer warpgroup records, per tile, when its
// mainloop ran (compute) and when its epilogue ran (communicate: in a fused kernel that is where
// tiles go to other ranks); spare producer warps record the pieces they copy. Each record is four
// u64 in a slot fixed by what it describes, so no atomics are needed and the host knows the size:
//
//   slot(tile, consumer, kind) = (tile * 2 + consumer) * 2 + kind       kind: 0 compute, 1 communicate
//   spare-warp copy            = tiles * 4 + p    p: a piece of A (all-gather) or tile * 2 + consumer
//   (tile is the position in the scheduler's sequence; a buffer of tiles * 6 + pieces records fits all)
//   record = { start_ns, end_ns, tile_or_piece | sm << 32, kind | consumer << 8 }   (%globaltimer)
//
// The record's size and kinds are declared for the host in iris/abi/fused.h (Java: TileTrace).
// Tracer<false> compiles to nothing, so an untraced kernel pays no cost. A Tracer is persistent's
// timeline hook (iris/gemm/persistent.cuh), and the hooks' spare warps record through it too.
#pragma once

#include <cstdint>

#include "iris/abi/fused.h"
#include "iris/impl/arch.cuh"

namespace fused {

enum class TraceKind : uint32_t {
    compute = IRIS_FUSED_TRACE_COMPUTE,
    communicate = IRIS_FUSED_TRACE_COMMUNICATE,
    copy = IRIS_FUSED_TRACE_COPY,
};

/// u64 words of one record.
inline constexpr int kTraceRecordWords = IRIS_FUSED_TRACE_RECORD_BYTES / 8;
static_assert(kTraceRecordWords == 4, "a record is {start, end, what | sm << 32, kind | who << 8}");

template <bool On>
struct Tracer {
    uint64_t* records;

    __device__ uint64_t now() const {
        if constexpr (On) {
            return iris::arch::now_ns();
        } else {
            return 0;
        }
    }

    __device__ void record(int64_t slot, TraceKind kind, int what, int who, uint64_t start, uint64_t end) const {
        if constexpr (On) {
            uint32_t sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            uint64_t* r = records + slot * kTraceRecordWords;
            r[0] = start;
            r[1] = end;
            r[2] = static_cast<uint32_t>(what) | uint64_t(sm) << 32;
            r[3] = static_cast<uint32_t>(kind) | uint64_t(who) << 8;
        }
    }

    /// A spare-warp copy of sequence tile `tile`'s half `consumer`, by the team leader.
    __device__ void spare_copy(int tiles, int tile, int consumer, uint64_t start) const {
        record(int64_t(tiles) * 4 + tile * 2 + consumer, TraceKind::copy, tile, consumer, start, now());
    }

    __device__ void tile(int tile, int consumer, uint64_t start, uint64_t mainloop_end, uint64_t end) const {
        record((int64_t(tile) * 2 + consumer) * 2, TraceKind::compute, tile, consumer, start, mainloop_end);
        record((int64_t(tile) * 2 + consumer) * 2 + 1, TraceKind::communicate, tile, consumer, mainloop_end, end);
    }
};

}  // namespace fused
