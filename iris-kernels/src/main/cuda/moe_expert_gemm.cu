// moe_expert_gemm.cu: the grouped expert GEMM of a MoE layer, one launch for every local expert,
// over the receive buffer that moe_dispatch.cu filled (Java: dev.irisjvm.kernels.moe.MoeExpertGemm):
//
//   Y[l][j] = recv[l][j] x W[l]^T    for every local expert l and every row j < counts[l]
//
//   moe_expert_gemm_n<tile>          Y goes to out, bf16 [local_experts][capacity][n]
//   moe_expert_gemm_combine_n<tile>  combine as the epilogue: row j of expert l goes straight into
//                                    its source rank's combine staging, at the route it came from
//                                    (sources[l][j]), where moe_combine_send would have put it;
//                                    then moe_combine_publish and moe_combine_reduce (moe_combine.cu)
//   moe_expert_gemm_fed_n<tile>, moe_expert_gemm_fed_combine_n<tile>
//                                    the same, fed by the dispatch (below)
//   tile: 256 or 128 output columns per tile (n is a multiple of it)
//
//   (iris_moe_gemm_args, iris/abi/moe.h: a_map, b_map, ctx, counts, sources, out, local_experts,
//    capacity, n, k; the fed kernels also arrivals and claims)
//
// The GEMM is the library's (iris/gemm/persistent.cuh) with a tile scheduler over (expert, tile)
// units and epilogue hooks that mask and place the rows. A is the whole receive buffer as one
// (local_experts * capacity) x k matrix and B the weights as one (local_experts * n) x k matrix: with
// capacity a multiple of 128 and n one of the tile width (the host checks both), a tile's rows and
// columns belong to one expert, so one pair of tensor maps serves every expert. The counts stay on
// the device: every CTA reads them once into a per-expert unit table in shared memory, so the
// producer and the consumers walk the same units. Units cover each expert's real rows rounded up
// to a tile; the rows of a tile past its expert's count are computed from stale rows and never
// stored. Launch as gemm.cu, at most one CTA per unit of the capacity bound.
//
// The kernels that are not fed wait for nothing: they read only what the dispatch finished before
// them on the stream, so they make progress whether or not the peers' kernels run at the same time
// (ranks sharing a GPU). The one wait of their fused combine, for the peers' rows, is
// moe_combine_publish's bounded one.
//
// Fed by the dispatch: launched to start beside moe_dispatch_copy (programmatic dependent launch,
// once every block of the copy runs), the kernel finds the counts (moe_dispatch_place, done before
// the copy started) but not every row. Its CTAs claim units in the table's order as they become
// free (ClaimingExpertScheduler), the order in which the copy sends the tiles, and the producer
// waits before a tile's first loads until the tile's arrival count (added to by every source after
// its rows, with release) reaches the rows its expert's count puts in it (FedByDispatch, wait site
// 9309). The kernel ends only after the copy has (griddepcontrol.wait), so that the kernels after
// it on the stream find every row, as they would after the copy.
#include "fused/fused_common.cuh"
#include "moe_common.cuh"
#include "moe_expert_schedule.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

using iris::gemm::OutputChunk;
using iris::gemm::TileCoord;
using moe::ExpertTileScheduler;

/// The unit table of one launch (moe_expert_schedule.cuh), in shared memory. Every thread of the
/// CTA calls it; it returns once the table is complete.
template <int TileM>
__device__ void plan_units(int32_t* table, const int32_t* counts, int local_experts, int capacity, int tiles_n) {
    for (int l = static_cast<int>(threadIdx.x); l < local_experts; l += static_cast<int>(blockDim.x)) {
        table[l + 1] = moe::expert_units<TileM>(counts[l], capacity, tiles_n);
    }
    if (threadIdx.x == 0) table[0] = 0;
    __syncthreads();
    if (threadIdx.x < 32) {  // warp 0: an inclusive scan of table[1 ..], 32 experts at a time
        const int lane = static_cast<int>(threadIdx.x);
        int carry = 0;
        for (int base = 1; base <= local_experts; base += 32) {
            const int i = base + lane;
            int v = i <= local_experts ? table[i] : 0;
#pragma unroll
            for (int d = 1; d < 32; d *= 2) {
                const int below = __shfl_up_sync(0xFFFFFFFFu, v, d);
                if (lane >= d) v += below;
            }
            if (i <= local_experts) table[i] = carry + v;
            carry += __shfl_sync(0xFFFFFFFFu, v, 31);
        }
    }
    __syncthreads();
}

/// The fed kernels' order: the same units, each taken by the first CTA to ask, from a counter the
/// dispatch's counting kernel zeroed. The fed GEMM starts beside the dispatch's copy, whose blocks
/// hold some SMs until it ends: the CTAs that start late take the units that are left, instead of a
/// fixed share that would only start then. The producer thread claims each unit and hands it to the
/// consumer warpgroups through a ring of slots in shared memory (each thread keeps its own count of
/// units taken: every thread has its own copy of the scheduler).
template <int TileM, int TileN, int ConsumerThreads>
struct ClaimingExpertScheduler : ExpertTileScheduler<TileM, TileN> {
    static constexpr int kSlots = 4;
    struct Ring {
        int unit[kSlots];
        uint64_t filled[kSlots];   // the producer has written the slot
        uint64_t drained[kSlots];  // every consumer thread has read it
    };

    int32_t* claims;  // global: the next unit
    Ring* ring;       // shared
    mutable int taken = 0;

    /// One thread, before the GEMM, followed by a barrier of the CTA.
    __device__ static void init(Ring& r) {
        for (int s = 0; s < kSlots; ++s) {
            iris::gemm::sm90::mbarrier_init(&r.filled[s], 1);
            iris::gemm::sm90::mbarrier_init(&r.drained[s], ConsumerThreads);
        }
    }

    __device__ int first() const { return take(); }
    __device__ int next(int) const { return take(); }

  private:
    __device__ int take() const {
        using namespace iris::gemm::sm90;
        const int slot = taken % kSlots;
        const uint32_t parity = static_cast<uint32_t>(taken / kSlots) & 1u;
        ++taken;
        if (threadIdx.x < 128) {  // the producer thread (the rest of its warpgroup never asks)
            mbarrier_wait(&ring->drained[slot], parity ^ 1u);
            const int u = min(atomicAdd(claims, 1), this->count());
            ring->unit[slot] = u;
            mbarrier_arrive(&ring->filled[slot]);  // release: the slot before the arrival
            return u;
        }
        mbarrier_wait(&ring->filled[slot], parity);
        const int u = *reinterpret_cast<volatile const int*>(&ring->unit[slot]);
        mbarrier_arrive(&ring->drained[slot]);
        return u;
    }
};

/// Where a chunk of output lies: its expert, and how many of its 64 rows are real rows.
struct ChunkPlace {
    int expert;
    int real_rows;

    /// A chunk's rows are of one expert: capacity is a multiple of the tile's 128 rows.
    __device__ static ChunkPlace of(const OutputChunk<iris::bf16>& chunk, const int32_t* counts, int capacity) {
        const int l = chunk.row0 / capacity;
        const int count = min(counts[l], capacity);
        return {l, count - (chunk.row0 - l * capacity)};
    }
};

/// The expert GEMM's store of Y[l][j], row j of expert l (nothing past a count). moe_expert_gemm
/// (Combine false): into out, bf16 [local_experts][capacity][n]. moe_expert_gemm_combine: into
/// row sources[l][j].y of rank sources[l][j].x's staging, out being the symmetric staging (routes,
/// n): remote stores, that rank's previous combine being over, as the dispatch's arrive said. The
/// staging rows are what moe_combine_send would have written, bit for bit.
template <bool Combine>
struct ExpertRows : iris::gemm::NoHooks {
    const iris::Ctx& ctx;
    uint16_t* out;
    const int2* sources;
    const int32_t* counts;
    int capacity;
    int n;

    __device__ void store_chunk(const OutputChunk<iris::bf16>& chunk) const {
        const ChunkPlace place = ChunkPlace::of(chunk, counts, capacity);
        const int col_shift = place.expert * n;  // B's rows of expert l are its columns 0 .. n-1
        chunk.for_each_vector([&](int row, int col, const uint4& v) {
            if (row - chunk.row0 >= place.real_rows) return;
            if constexpr (Combine) {
                const int2 from = moe::load_cg(sources + row);  // written by the source rank during the dispatch
                uint16_t* home = out + int64_t(from.y) * n + (col - col_shift);
                *reinterpret_cast<uint4*>(iris::translate(ctx, home, from.x)) = v;
            } else {
                *reinterpret_cast<uint4*>(out + int64_t(row) * n + (col - col_shift)) = v;
            }
        });
    }
};

/// The fed kernels' producer: before the first loads of a tile, waits until every row of the tile
/// that its expert's count says is there has arrived (moe_dispatch_copy's count of that tile), then
/// lets TMA read what the generic proxy wrote.
template <class Hooks>
struct FedByDispatch : Hooks {
    const uint64_t* arrivals;  // (local_experts, capacity / kTileRows): one per tile row of A
    int rows_per_expert;       // capacity / kTileRows

    __device__ void before_loads(TileCoord t, int k0) const {
        if (k0 != 0) return;
        const int tile = t.m % rows_per_expert;
        const int count = min(this->counts[t.m / rows_per_expert], this->capacity);
        const uint64_t rows = uint64_t(min(moe::kTileRows, count - tile * moe::kTileRows));
        iris::wait_until(this->ctx, arrivals + t.m, iris::Cmp::ge, rows, moe::kSiteTileRows);
#if IRIS_HAS_TMA
        asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
    }
};

template <int TileN, bool Combine, bool Fed>
__device__ void expert_gemm(const iris_moe_gemm_args& a) {
#if IRIS_HAS_WGMMA
    using Cfg = iris::gemm::Config<iris::bf16, iris::gemm::BLayout::nk, iris::bf16, iris::gemm::kTmaProducerRegisters, TileN>;
    __shared__ int32_t table[IRIS_MOE_MAX_EXPERTS + 1];
    const iris::Ctx& ctx = a.ctx;
    if (!fused::launch_fits<Cfg>(ctx)) return;
    const auto* counts = static_cast<const int32_t*>(a.counts);  // (local_experts)
    const int tiles_n = a.n / TileN;
    plan_units<Cfg::kTileM>(table, counts, a.local_experts, a.capacity, tiles_n);
    const ExpertTileScheduler<Cfg::kTileM, TileN> sched{table, a.local_experts, tiles_n, a.capacity / Cfg::kTileM};
    const int m = a.local_experts * a.capacity;
    const int n = a.local_experts * a.n;
    using Hooks = ExpertRows<Combine>;
    Hooks hooks{{}, ctx, static_cast<uint16_t*>(a.out), static_cast<const int2*>(a.sources), counts, a.capacity, a.n};
    if constexpr (Fed) {
        using Claiming = ClaimingExpertScheduler<Cfg::kTileM, TileN, Cfg::kConsumers * 128>;
        __shared__ typename Claiming::Ring ring;
        if (threadIdx.x == 0) Claiming::init(ring);
        __syncthreads();
        const Claiming claiming{sched, static_cast<int32_t*>(a.claims), &ring};
        const FedByDispatch<Hooks> fed{hooks, static_cast<const uint64_t*>(a.arrivals), a.capacity / Cfg::kTileM};
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, nullptr, m, n, a.k, claiming, fed);
        // The copying kernel ahead is still running when this one starts: finish after it, so that
        // what follows on the stream finds every row of the call in place.
        moe::wait_for_previous_kernel();
    } else {
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, nullptr, m, n, a.k, sched, hooks);
    }
#endif
}

}  // namespace

#define IRIS_MOE_EXPERT_GEMM_KERNEL(name, TileN, Combine, Fed)                                     \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)                             \
        name(const IRIS_GRID_CONSTANT iris_moe_gemm_args a) {                                      \
        expert_gemm<TileN, Combine, Fed>(a);                                                       \
    }

IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_n256, IRIS_GEMM_TILE_N, false, false)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_n128, IRIS_GEMM_NARROW_TILE_N, false, false)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_combine_n256, IRIS_GEMM_TILE_N, true, false)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_combine_n128, IRIS_GEMM_NARROW_TILE_N, true, false)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_fed_n256, IRIS_GEMM_TILE_N, false, true)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_fed_n128, IRIS_GEMM_NARROW_TILE_N, false, true)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_fed_combine_n256, IRIS_GEMM_TILE_N, true, true)
IRIS_MOE_EXPERT_GEMM_KERNEL(moe_expert_gemm_fed_combine_n128, IRIS_GEMM_NARROW_TILE_N, true, true)
