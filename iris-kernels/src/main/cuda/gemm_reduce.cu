// gemm_reduce.cu: GEMM + all-reduce and GEMM + reduce-scatter (row-parallel layer: K split over
// ranks), reduced by tile owners as the tiles finish (fused/reduce_hooks.cuh), in two variants:
//
//   iris_gemm_<op>_epilogue_<in>_<b>[_traced]      the epilogue sends partials and sums itself
//   iris_gemm_<op>_spare_warps_<in>_<b>[_traced]   the epilogue stores locally; the spare producer
//                                                  warps send partials and sums
//   op: all_reduce (C: symmetric M x ldc, the sum on every rank)
//       reduce_scatter (C: this rank's M / world rows x ldc)
//   in: bf16 | f16 (C has the same type)   b: nk | kn
//
//   (iris_fused_args, iris/abi/fused.h: ctx, a_map, b_map, c, bias, partials = ws, flags, epoch,
//    m, n, k, ldc, group_m, trace)
//
// a_map covers this rank's A columns (M x K_local), b_map its B rows; k is K_local. ws and flags:
// symmetric, sized as reduce_hooks.cuh says (rows_per_owner = ceil(tiles_m / world) * 128), flags
// zeroed when allocated; epoch grows by one per call. bias (optional) is added once: pass it on one
// rank only. Partials travel in the output type, so on two ranks the sum is rounded exactly as
// GEMM-then-NCCL rounds it. The host ends with a barrier: the all-reduce's stores must be
// published, and the next call reuses the partial buffers.
#include "fused/reduce_hooks.cuh"
#include "iris/gemm.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, iris::gemm::BLayout B, bool AllGatherSum, bool SpareWarps, bool Trace>
__device__ void reduce(const iris_fused_args& a) {
#if IRIS_HAS_WGMMA
    using Cfg = iris::gemm::Config<In, B, In, SpareWarps ? fused::kSpareWarpRegisters : iris::gemm::kTmaProducerRegisters>;
    static_assert(Cfg::kTileN == fused::ReduceBuffers<In>::kTileCols, "the hooks index partials by 256-column tiles");
    const iris::Ctx& ctx = a.ctx;
    if (!fused::launch_fits<Cfg>(ctx)) return;
    const int m = a.m;
    const int n = a.n;
    const int k = a.k;
    const uint64_t epoch = a.epoch;
    uint64_t* flags = a.flags;
    const auto* bias = static_cast<const In*>(a.bias);
    using Scheduler = fused::OwnerOrderedScheduler<Cfg::kTileM, Cfg::kTileN>;
    const Scheduler sched(m, n, a.group_m, ctx.rank, ctx.world, false);
    const fused::Tracer<Trace> tracer{a.trace};
    // The owned tiles' partials are prefetched into L2 this many k-blocks before the mainloop ends.
    constexpr int kPrefetchLead = 8;
    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int prefetch_k0 = max(0, k_blocks - kPrefetchLead) * Cfg::kTileK;
    const fused::ReduceBuffers<In> buffers{ctx, static_cast<In*>(a.c), a.ldc, static_cast<In*>(a.partials),
                                           flags, epoch, n, sched.tiles_n, sched.owners, prefetch_k0};
    if constexpr (SpareWarps) {
        const fused::Handoff handoff{flags + int64_t(ctx.world) * sched.count() * 2, epoch};
        fused::ReduceSpareWarpHooks<In, AllGatherSum, Scheduler, Trace> hooks{{}, buffers, handoff, sched, m, tracer};
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, bias, m, n, k, sched, hooks, tracer);
    } else {
        fused::ReduceHooks<In, AllGatherSum> hooks{{}, buffers};
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, bias, m, n, k, sched, hooks, tracer);
    }
#endif
}

}  // namespace

using iris::gemm::BLayout;
using iris::bf16;
using iris::f16;

#define IRIS_REDUCE_KERNEL(name, In, B, AllGatherSum, SpareWarps, Trace)                                             \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)                                              \
        name(const IRIS_GRID_CONSTANT iris_fused_args a) {                                                           \
        reduce<In, B, AllGatherSum, SpareWarps, Trace>(a);                                                           \
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
