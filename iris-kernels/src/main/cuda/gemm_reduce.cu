// gemm_reduce.cu: GEMM + all-reduce and GEMM + reduce-scatter (row-parallel layer: K split over
// ranks), reduced by tile owners as the tiles finish (gemm/reduce_hooks.cuh), in two variants:
//
//   iris_gemm_<op>_epilogue_<in>_<b>[_traced]      the epilogue sends partials and sums itself
//   iris_gemm_<op>_spare_warps_<in>_<b>[_traced]   the epilogue stores locally; the spare producer
//                                                  warps send partials and sums
//   op: all_reduce (C: symmetric M x ldc, the sum on every rank)
//       reduce_scatter (C: this rank's M / world rows x ldc)
//   in: bf16 | f16 (C has the same type)   b: nk | kn
//
//   (const Ctx ctx, TmaDescriptor a_map, TmaDescriptor b_map, void* c, const void* bias, void* ws,
//    uint64_t* flags, uint64_t epoch, int m, int n, int k, int ldc, int group_m, uint64_t* trace)
//
// a_map covers this rank's A columns (M x K_local), b_map its B rows; k is K_local. ws and flags:
// symmetric, sized as reduce_hooks.cuh says (rows_per_owner = ceil(tiles_m / world) * 128), flags
// zeroed when allocated; epoch grows by one per call. bias (optional) is added once: pass it on one
// rank only. Partials travel in the output type, so on two ranks the sum is rounded exactly as
// GEMM-then-NCCL rounds it. The host ends with a barrier: the all-reduce's stores must be
// published, and the next call reuses the partial buffers.
#include "gemm/gemm_kernel.cuh"
#include "gemm/reduce_hooks.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, gemm::BLayout B, bool AllGatherSum, bool SpareWarps, bool Trace>
__device__ void reduce(const iris::Ctx& ctx, const gemm::sm90::TmaDescriptor& a_map,
                       const gemm::sm90::TmaDescriptor& b_map, void* c, const void* bias, void* ws, uint64_t* flags,
                       uint64_t epoch, int m, int n, int k, int ldc, int group_m, uint64_t* trace) {
#if IRIS_HAS_WGMMA
    using Cfg = gemm::Config<In, B, In, SpareWarps ? gemm::kSpareWarpRegisters : gemm::kTmaProducerRegisters>;
    static_assert(Cfg::kTileN == gemm::ReduceBuffers<In>::kTileCols, "the hooks index partials by 256-column tiles");
    using Scheduler = gemm::OwnerOrderedScheduler<Cfg::kTileM, Cfg::kTileN>;
    const Scheduler sched(m, n, group_m, ctx.rank, ctx.world, false);
    const gemm::Tracer<Trace> tracer{trace};
    // The owned tiles' partials are prefetched into L2 this many k-blocks before the mainloop ends.
    constexpr int kPrefetchLead = 8;
    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int prefetch_k0 = max(0, k_blocks - kPrefetchLead) * Cfg::kTileK;
    const gemm::ReduceBuffers<In> buffers{ctx, static_cast<In*>(c), ldc, static_cast<In*>(ws), flags, epoch, n,
                                          sched.tiles_n, sched.owners, prefetch_k0};
    if constexpr (SpareWarps) {
        const gemm::Handoff handoff{flags + int64_t(ctx.world) * sched.count() * 2, epoch};
        gemm::ReduceSpareWarpHooks<In, AllGatherSum, Scheduler, Trace> hooks{{}, buffers, handoff, sched, m, tracer};
        gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const In*>(bias), m, n, k, sched, hooks, tracer);
    } else {
        gemm::ReduceHooks<In, AllGatherSum> hooks{{}, buffers};
        gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const In*>(bias), m, n, k, sched, hooks, tracer);
    }
#endif
}

}  // namespace

using gemm::BLayout;
using gemm::sm90::TmaDescriptor;
using iris::bf16;
using iris::f16;

#define IRIS_REDUCE_KERNEL(name, In, B, AllGatherSum, SpareWarps, Trace)                                             \
    extern "C" __global__ void __launch_bounds__(384, 1)                                                            \
        name(const IRIS_GRID_CONSTANT iris::Ctx ctx, const __grid_constant__ TmaDescriptor a_map,                    \
             const __grid_constant__ TmaDescriptor b_map, void* c, const void* bias, void* ws, uint64_t* flags,      \
             uint64_t epoch, int m, int n, int k, int ldc, int group_m, uint64_t* trace) {                           \
        reduce<In, B, AllGatherSum, SpareWarps, Trace>(ctx, a_map, b_map, c, bias, ws, flags, epoch, m, n, k, ldc,   \
                                                       group_m, trace);                                              \
    }
#define IRIS_REDUCE_KERNELS(op, AllGatherSum, variant, SpareWarps)                                                   \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_bf16_nk, bf16, BLayout::nk, AllGatherSum, SpareWarps, false)     \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_bf16_kn, bf16, BLayout::kn, AllGatherSum, SpareWarps, false)     \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_f16_nk, f16, BLayout::nk, AllGatherSum, SpareWarps, false)       \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_f16_kn, f16, BLayout::kn, AllGatherSum, SpareWarps, false)       \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_bf16_nk_traced, bf16, BLayout::nk, AllGatherSum, SpareWarps, true) \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_bf16_kn_traced, bf16, BLayout::kn, AllGatherSum, SpareWarps, true) \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_f16_nk_traced, f16, BLayout::nk, AllGatherSum, SpareWarps, true) \
    IRIS_REDUCE_KERNEL(iris_gemm_##op##_##variant##_f16_kn_traced, f16, BLayout::kn, AllGatherSum, SpareWarps, true)

IRIS_REDUCE_KERNELS(all_reduce, true, epilogue, false)
IRIS_REDUCE_KERNELS(all_reduce, true, spare_warps, true)
IRIS_REDUCE_KERNELS(reduce_scatter, false, epilogue, false)
IRIS_REDUCE_KERNELS(reduce_scatter, false, spare_warps, true)
