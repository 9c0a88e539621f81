// gemm_all_scatter.cu: GEMM + all-scatter (column-parallel layer), two ways to move the tiles
// (gemm/all_scatter_hooks.cuh):
//
//   iris_gemm_all_scatter_sequential[_n192]_<in>_<b>[_traced]   the epilogue stores to every rank
//   iris_gemm_all_scatter_spare_warps[_n192]_<in>_<b>[_traced]  the spare producer warps copy each
//                                                               finished tile to the other ranks
//   _n192: 128 x 192 tiles instead of 128 x 256 (dev.irisjvm.kernels.fused.FusedOp.tileN)
//   in: bf16 | f16 (C has the same type)   b: nk | kn
//
//   (const Ctx ctx, TmaDescriptor a_map, TmaDescriptor b_map, void* c, const void* bias,
//    uint64_t* handoff, uint64_t epoch, int m, int n_local, int k, int ldc, int group_m, uint64_t* trace)
//
// a_map covers A (M x K), b_map this rank's B (n_local x K or K x n_local); c is symmetric,
// M x ldc, rank r's columns start at r * n_local. handoff (spare_warps only; else ignored): this
// rank's [tiles][2] u64, zeroed when allocated; epoch grows by one per call. trace: the _traced
// kernels' records (gemm/trace.cuh). Launch as gemm.cu; then a barrier on the same stream
// publishes the stores (dev.irisjvm.kernels.fused.GemmAllScatter does both).
#include "gemm/all_scatter_hooks.cuh"
#include "gemm/gemm_kernel.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, gemm::BLayout B, int TileN, bool SpareWarps, bool Trace>
__device__ void all_scatter(const iris::Ctx& ctx, const gemm::sm90::TmaDescriptor& a_map,
                            const gemm::sm90::TmaDescriptor& b_map, void* c_v, const void* bias, uint64_t* handoff,
                            uint64_t epoch, int m, int n_local, int k, int ldc, int group_m, uint64_t* trace) {
#if IRIS_HAS_WGMMA
    auto* c = static_cast<In*>(c_v);
    const gemm::Tracer<Trace> tracer{trace};
    if constexpr (SpareWarps) {
        constexpr int kProducer = TileN == 192 ? gemm::kSpareWarpRegistersMidTiles : gemm::kSpareWarpRegisters;
        using Cfg = gemm::Config<In, B, In, kProducer, TileN>;
        using Scheduler = gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN>;
        const Scheduler sched(m, n_local, group_m);
        gemm::AllScatterSpareWarpHooks<In, TileN, Scheduler, Trace> hooks{
            {}, ctx, c, ldc, ctx.rank * n_local, m, n_local, {handoff, epoch}, sched, tracer};
        gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const In*>(bias), m, n_local, k, sched, hooks, tracer);
    } else {
        using Cfg = gemm::Config<In, B, In, gemm::kTmaProducerRegisters, TileN>;
        const gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(m, n_local, group_m);
        gemm::AllScatterHooks<In> hooks{{}, ctx, c, ldc, ctx.rank * n_local};
        gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const In*>(bias), m, n_local, k, sched, hooks, tracer);
    }
#endif
}

}  // namespace

using gemm::BLayout;
using gemm::sm90::TmaDescriptor;
using iris::bf16;
using iris::f16;

#define IRIS_ALL_SCATTER_KERNEL(name, In, B, TileN, SpareWarps, Trace)                                       \
    extern "C" __global__ void __launch_bounds__(384, 1)                                                    \
        name(const IRIS_GRID_CONSTANT iris::Ctx ctx, const __grid_constant__ TmaDescriptor a_map,            \
             const __grid_constant__ TmaDescriptor b_map, void* c, const void* bias, uint64_t* handoff,      \
             uint64_t epoch, int m, int n_local, int k, int ldc, int group_m, uint64_t* trace) {             \
        all_scatter<In, B, TileN, SpareWarps, Trace>(ctx, a_map, b_map, c, bias, handoff, epoch, m, n_local, \
                                                     k, ldc, group_m, trace);                                \
    }
#define IRIS_ALL_SCATTER_KERNELS(v, TileN, Spare)                                                               \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_bf16_nk, bf16, BLayout::nk, TileN, Spare, false)       \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_bf16_kn, bf16, BLayout::kn, TileN, Spare, false)       \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_f16_nk, f16, BLayout::nk, TileN, Spare, false)         \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_f16_kn, f16, BLayout::kn, TileN, Spare, false)         \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_bf16_nk_traced, bf16, BLayout::nk, TileN, Spare, true) \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_bf16_kn_traced, bf16, BLayout::kn, TileN, Spare, true) \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_f16_nk_traced, f16, BLayout::nk, TileN, Spare, true)   \
    IRIS_ALL_SCATTER_KERNEL(iris_gemm_all_scatter_##v##_f16_kn_traced, f16, BLayout::kn, TileN, Spare, true)

IRIS_ALL_SCATTER_KERNELS(sequential, 256, false)
IRIS_ALL_SCATTER_KERNELS(spare_warps, 256, true)
IRIS_ALL_SCATTER_KERNELS(sequential_n192, 192, false)
IRIS_ALL_SCATTER_KERNELS(spare_warps_n192, 192, true)
