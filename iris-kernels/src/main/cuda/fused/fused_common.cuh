// fused_common.cuh: what the fused GEMM + communication kernels share: who owns which rows, the
// tile order that follows from it, and the spare producer warps that move finished tiles.
//
// Rows are owned in contiguous blocks of whole tiles: owner o holds tile rows
// [o * tiles_m / world, (o + 1) * tiles_m / world). Reduce-scatter and all-gather need
// M % (128 * world) == 0 so that these blocks are exactly the ranks' shards; the host checks.
//
// Spare warps. Warps 1..3 of the producer warpgroup have nothing to do in a plain GEMM. The fused
// kernels give them the communication: the consumers store a finished tile locally (fast) and
// publish a per-tile handoff flag; the spare warps, walking the same tile sequence, wait for it
// and copy the tile to other ranks. The consumers go back to the tensor cores at once, so remote
// stores never stall the mainloop.
//
// What the host shares with these kernels (their one argument struct, the wait sites, the launch
// checks, the workspace and trace layouts) is declared once in iris/abi/fused.h.
#pragma once

#include "ccl_common.cuh"
#include "fused/trace.cuh"
#include "iris/abi/fused.h"
#include "iris/gemm.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/iris.cuh"

namespace fused {

// The public GEMM (iris/gemm.cuh) that these kernels plug their hooks into, and the sm_90a
// instructions under it, which the library may use as its own.
using iris::gemm::consumer_registers;
using iris::gemm::NoHooks;
using iris::gemm::OutputChunk;
using iris::gemm::shared_memory_fits;
using iris::gemm::TileCoord;
namespace sm90 = iris::gemm::sm90;

/// Wait sites the host names in a timeout message, and launch checks (DeviceStatus::site).
enum FusedSite : int {
    kSitePartialFlag = IRIS_FUSED_SITE_PARTIAL_FLAG,
    kSiteGatheredRows = IRIS_FUSED_SITE_GATHERED_ROWS,
    kSiteHandoff = IRIS_FUSED_SITE_HANDOFF,
    kSiteGatherClear = IRIS_FUSED_SITE_GATHER_CLEAR,
    kSiteSplitPartial = IRIS_FUSED_SITE_SPLIT_PARTIAL,
    kSiteSharedBytes = IRIS_FUSED_SITE_SHARED_BYTES,
};

/// A launch the kernel cannot run (a host bug): records IRIS_ERROR_CODE_BAD_LAUNCH at launch check
/// `site` with what the launch gave and what the kernel needs, for the host to raise at its next
/// check; the caller then returns in every thread. Never __trap: that would kill the context, and
/// with it the rank. Peers that wait on this rank time out in their bounded waits.
__device__ inline void refuse_launch(const iris::Ctx& ctx, int site, uint64_t given, uint64_t needed) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        iris::impl::record_error(ctx, iris::ErrorCode::bad_launch, site, -1, given, needed, 0);
    }
}

/// shared_memory_fits (iris/gemm/impl/block.cuh), recording a refused launch.
template <class Cfg>
__device__ inline bool launch_fits(const iris::Ctx& ctx) {
    if (shared_memory_fits<Cfg>()) return true;
    refuse_launch(ctx, kSiteSharedBytes, sm90::dynamic_smem_bytes(), Cfg::kSmemBytes);
    return false;
}

/// Registers the producer warpgroup keeps when its spare warps copy (see iris/gemm/config.cuh): what
/// SpareWarps::copy needs without spilling. Up to 72 the consumers keep 216
/// (consumer_registers(2, 72) == consumer_registers(2, 64)).
inline constexpr int kSpareWarpRegisters = 72;
static_assert(consumer_registers(2, kSpareWarpRegisters) == 216, "the consumers' budget of the spare-warp kernels");
/// The same for 128 x 192 tiles: the traced all-scatter's spare warps spilled at 72 there; the
/// consumers' 96 accumulators fit the 208 left to them.
inline constexpr int kSpareWarpRegistersMidTiles = 80;
static_assert(consumer_registers(2, kSpareWarpRegistersMidTiles) == 208, "the consumers' budget with 128 x 192 tiles");

/// Host and device: src/test/native/fused_schedule.cu checks the blocks, and the orders below, on the CPU.
struct RowOwners {
    int tiles_m;
    int world;

    __host__ __device__ int first_row(int owner) const { return owner * tiles_m / world; }
    /// The tile rows of the largest block: the rows of one owner's slot in the reductions' ws.
    __host__ __device__ int most_rows() const { return (tiles_m + world - 1) / world; }
    __host__ __device__ int owner_of(int tile_row) const {
        int o = tile_row * world / tiles_m;  // a first guess; blocks differ in size by at most one row
        while (o + 1 < world && tile_row >= first_row(o + 1)) ++o;
        while (tile_row < first_row(o)) --o;
        return o;
    }
};

/// Grouped order inside each owner's block of tile rows, the blocks visited from this rank's own
/// (self_first: all-gather, whose local rows need no communication) or ending with it (self last:
/// the reductions, so that the partials other ranks wait for are computed first).
template <int TileM, int TileN>
struct OwnerOrderedScheduler {
    int tiles_n;
    int group_m;
    int rank;
    bool self_first;
    RowOwners owners;

    __host__ __device__ OwnerOrderedScheduler(int m, int n, int group, int rank_, int world, bool self_first_)
        : tiles_n((n + TileN - 1) / TileN), group_m(group < 1 ? 1 : group), rank(rank_), self_first(self_first_),
          owners{(m + TileM - 1) / TileM, world} {}

    __host__ __device__ int count() const { return owners.tiles_m * tiles_n; }
    __device__ int first() const { return static_cast<int>(blockIdx.x); }
    __device__ int next(int tile) const { return tile + static_cast<int>(gridDim.x); }

    __host__ __device__ TileCoord coord(int s) const {
        for (int j = 0; j < owners.world; ++j) {
            const int o = (rank + (self_first ? j : j + 1)) % owners.world;
            const int row0 = owners.first_row(o);
            const int rows = owners.first_row(o + 1) - row0;
            if (s < rows * tiles_n) {
                const int per_group = group_m * tiles_n;
                const int first_m = (s / per_group) * group_m;
                const int group_rows = min(rows - first_m, group_m);
                const int r = s % per_group;
                return {row0 + first_m + r % group_rows, r / group_rows};
            }
            s -= rows * tiles_n;
        }
        return {0, 0};  // unreachable for s < count()
    }
};

/// 16 bytes of Out as the collectives' lane type (ccl_common.cuh), whose float conversions they share.
template <class Out>
using Lanes = std::conditional_t<std::is_same_v<Out, float>, ccl::F32,
                                 std::conditional_t<std::is_same_v<Out, iris::bf16>, ccl::BF16, ccl::F16>>;

/// a + b lane by lane, added in f32 and rounded back to Out (as NCCL adds two 16-bit partials).
template <class Out>
__device__ inline uint4 add_vectors(const uint4& a, const uint4& b) {
    using L = Lanes<Out>;
    float x[L::kLanes];
    float y[L::kLanes];
    ccl::unpack<L>(a, x);
    ccl::unpack<L>(b, y);
#pragma unroll
    for (int i = 0; i < L::kLanes; ++i) x[i] = ccl::OpSum::apply(x[i], y[i]);
    return ccl::pack<L>(x);
}

/// Threads that copy together: Threads of them (a multiple of 32, a constant so that the copy's
/// indexing folds), this one `thread`, meeting at named barrier 3 (1 and 2 belong to the
/// consumers): the spare warps of a CTA, or a whole CTA that has nothing else to do.
template <int Threads>
struct CopyTeam {
    static constexpr int kBarrier = 3;
    static constexpr int kThreads = Threads;

    /// 16-byte loads in flight per thread in copy: 12 KiB per spare-warp team, to cover the load
    /// latency behind each batch of stores; their 32 registers and the addressing fit
    /// kSpareWarpRegisters (ptxas reports spills otherwise, and the build fails on them).
    static constexpr int kCopyUnroll = 8;

    int thread;

    __device__ bool leader() const { return thread == 0; }
    __device__ void sync() const { sm90::named_barrier_sync(kBarrier, Threads); }
    /// sync, returning on every thread whether `pred` was true on any.
    __device__ bool sync_or(bool pred) const { return sm90::named_barrier_or(kBarrier, Threads, pred); }

    /// Copies rows x cols (cols % 8 == 0) 16-bit elements, 16 bytes per access, kCopyUnroll in
    /// flight per thread; consecutive threads take consecutive pieces of a row.
    __device__ void copy(uint16_t* dst, int64_t ld_dst, const uint16_t* src, int64_t ld_src, int rows, int cols) const {
        const int per_row = cols / 8;
        const int total = rows * per_row;
        for (int v0 = thread; v0 < total; v0 += kCopyUnroll * Threads) {
            uint4 x[kCopyUnroll];
#pragma unroll
            for (int u = 0; u < kCopyUnroll; ++u) {
                const int v = v0 + u * Threads;
                if (v < total) x[u] = *reinterpret_cast<const uint4*>(src + (v / per_row) * ld_src + (v % per_row) * 8);
            }
#pragma unroll
            for (int u = 0; u < kCopyUnroll; ++u) {
                const int v = v0 + u * Threads;
                if (v < total) *reinterpret_cast<uint4*>(dst + (v / per_row) * ld_dst + (v % per_row) * 8) = x[u];
            }
        }
    }
};

/// The spare warps of the producer warpgroup as one team of 96 threads.
struct SpareWarps {
    static constexpr int kWarps = 3;
    static constexpr int kThreads = 32 * kWarps;

    using Team = CopyTeam<kThreads>;

    __device__ static int thread() { return static_cast<int>(threadIdx.x) - 32; }
    __device__ static Team team() { return {thread()}; }
    __device__ static bool leader() { return threadIdx.x == 32; }
    __device__ static void sync() { team().sync(); }
    __device__ static void copy(uint16_t* dst, int64_t ld_dst, const uint16_t* src, int64_t ld_src, int rows, int cols) {
        team().copy(dst, ld_dst, src, ld_src, rows, cols);
    }
};

/// The consumers' side of the handoff: after a warpgroup's last chunk of a tile (tile_done runs
/// after a warpgroup barrier) its leader publishes the tile to the spare warps of this CTA.
/// Publisher and waiter are threads of one CTA, so the flag's release and acquire are at block
/// scope, and each poll hits the SM's L1. At GPU scope each poll invalidated L1 and went to L2,
/// and the tiles reached the spare warps late: the spare-warp all-scatter at 8192^3 took
/// 1120-1154 us (921 with only the release at block scope) instead of 752.
struct Handoff {
    uint64_t* flags;  // this rank's, [tiles][2], values are epochs
    uint64_t epoch;

    __device__ uint64_t* slot(int sequence, int consumer) const { return flags + int64_t(sequence) * 2 + consumer; }
    __device__ void publish(int sequence, int consumer) const {
        if (threadIdx.x % 128 == 0) {
            iris::arch::store<iris::Order::release, iris::Scope::block>(slot(sequence, consumer), epoch);
        }
    }
    /// Spare-warp leader waits, then the team syncs so that every thread sees the tile. A tight
    /// poll: with wait_until_backoff (sleeps up to 2 µs) each tile was noticed late, and the
    /// spare-warp reduce-scatter at N = 4096 ran at 0.81× cuBLAS + NCCL instead of 1.12-1.17×. A local
    /// wait: publisher and waiter are threads of this CTA, and a consumer that never publishes is
    /// itself stuck in a wait (on a peer's partial) whose error names the cause.
    __device__ void await(const iris::Ctx& ctx, int sequence, int consumer) const {
        if (SpareWarps::leader()) {
            iris::wait_until_local<iris::Scope::block>(ctx, slot(sequence, consumer), iris::Cmp::ge, epoch, kSiteHandoff);
        }
        SpareWarps::sync();
    }
};

}  // namespace fused
