// gemm_all_scatter.cu: GEMM + all-scatter (column-parallel layer), two ways to move the tiles
// (fused/all_scatter_hooks.cuh):
//
//   iris_gemm_all_scatter_epilogue[_n192]_<in>_<b>[_traced]     the epilogue stores to every rank
//   iris_gemm_all_scatter_spare_warps[_n192]_<in>_<b>[_traced]  the spare producer warps copy each
//                                                               finished tile to the other ranks
//   _n192: 128 x 192 tiles instead of 128 x 256 (dev.irisjvm.kernels.fused.FusedOp.tileN)
//   in: bf16 | f16 (C has the same type)   b: nk | kn
//
//   (iris_fused_args, iris/abi/fused.h: ctx, a_map, b_map, c, bias, flags = handoff, epoch,
//    m, n = n_local, k, ldc, group_m, trace)
//
// a_map covers A (M x K), b_map this rank's B (n_local x K or K x n_local); c is symmetric,
// M x ldc, rank r's columns start at r * n_local. flags (spare_warps only; else ignored): this
// rank's handoff, [tiles][2] u64, zeroed when allocated; epoch grows by one per call. trace: the
// _traced kernels' records (fused/trace.cuh). Launch as gemm.cu; then a barrier on the same stream
// publishes the stores (dev.irisjvm.kernels.fused.GemmAllScatter does both).
#include "fused/all_scatter_hooks.cuh"
#include "iris/gemm.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, iris::gemm::BLayout B, int TileN, bool SpareWarps, bool Trace>
__device__ void all_scatter(const iris_fused_args& a) {
#if IRIS_HAS_WGMMA
    const iris::Ctx& ctx = a.ctx;
    auto* c = static_cast<In*>(a.c);
    const auto* bias = static_cast<const In*>(a.bias);
    const int m = a.m;
    const int n_local = a.n;
    const fused::Tracer<Trace> tracer{a.trace};
    if constexpr (SpareWarps) {
        constexpr int kProducer =
            TileN == IRIS_GEMM_MID_TILE_N ? fused::kSpareWarpRegistersMidTiles : fused::kSpareWarpRegisters;
        using Cfg = iris::gemm::Config<In, B, In, kProducer, TileN>;
        if (!fused::launch_fits<Cfg>(ctx)) return;
        using Scheduler = iris::gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN>;
        const Scheduler sched(m, n_local, a.group_m);
        fused::AllScatterSpareWarpHooks<In, TileN, Scheduler, Trace> hooks{
            {}, ctx, c, a.ldc, ctx.rank * n_local, m, n_local, {a.flags, a.epoch}, sched, tracer};
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, bias, m, n_local, a.k, sched, hooks, tracer);
    } else {
        using Cfg = iris::gemm::Config<In, B, In, iris::gemm::kTmaProducerRegisters, TileN>;
        if (!fused::launch_fits<Cfg>(ctx)) return;
        const iris::gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(m, n_local, a.group_m);
        fused::AllScatterHooks<In> hooks{{}, ctx, c, a.ldc, ctx.rank * n_local};
        iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, bias, m, n_local, a.k, sched, hooks, tracer);
    }
#endif
}

}  // namespace

using iris::gemm::BLayout;
using iris::bf16;
using iris::f16;

#define IRIS_ALL_SCATTER_KERNEL(name, In, B, TileN, SpareWarps, Trace)                                       \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)                                      \
        name(const IRIS_GRID_CONSTANT iris_fused_args a) {                                                   \
        all_scatter<In, B, TileN, SpareWarps, Trace>(a);                                                     \
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

IRIS_ALL_SCATTER_KERNELS(epilogue, IRIS_GEMM_TILE_N, false)
IRIS_ALL_SCATTER_KERNELS(spare_warps, IRIS_GEMM_TILE_N, true)
IRIS_ALL_SCATTER_KERNELS(epilogue_n192, IRIS_GEMM_MID_TILE_N, false)
IRIS_ALL_SCATTER_KERNELS(spare_warps_n192, IRIS_GEMM_MID_TILE_N, true)
