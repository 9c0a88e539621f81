// all_gather_gemm.cu: all-gather + GEMM, push (sequence-parallel input into a column-parallel
// layer). A is split by rows over ranks; each rank computes C_rank = A_gathered x B_rank while the
// spare producer warps push this rank's rows of A into the peers' gathered A, piece by piece
// (gemm/all_gather_hooks.cuh). The grid may hold more CTAs than units (one per SM); those only
// push, with all their threads.
//
//   iris_all_gather_gemm[_n128]_<in>_<b>[_traced]   in: bf16 | f16 (C has the same type)   b: nk | kn
//   n128: 128 x 128 output tiles instead of 128 x 256 (b_map's N x K box {64, 128}), for shapes
//   whose 128 x 256 tiles would leave most SMs idle when split-K is off (FusedOp.tileN; split-K,
//   FusedOp.splitK, is faster there).
//   (const Ctx ctx, TmaDescriptor a_map, TmaDescriptor b_map, void* a, void* c, const void* bias,
//    uint64_t* flags, void* partials, uint64_t epoch, int m, int n, int k, int ldc, int group_m,
//    int slices, uint64_t* trace)
//
// a: symmetric gathered A, M x K, with this rank's M / world rows filled (M % (128 * world) == 0);
// a_map covers it. flags: symmetric, gemm::all_gather_flag_words(M, K, world) u64 (+ tiles x 2 with
// split-K), zeroed when allocated; peers write them. epoch grows by one per call. c: M x ldc, local.
// slices: 1, or 2 for split-K (K >= 256; an even grid or one wave; gemm/split_k_exchange.cuh), with
// partials: tiles x TileM x TileN f32, local (null otherwise).
#include "gemm/all_gather_hooks.cuh"
#include "gemm/gemm_kernel.cuh"
#include "gemm/split_k_exchange.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, gemm::BLayout B, int TileN, bool Trace>
__device__ void all_gather_gemm(const iris::Ctx& ctx, const gemm::sm90::TmaDescriptor& a_map,
                                const gemm::sm90::TmaDescriptor& b_map, void* a, void* c, const void* bias,
                                uint64_t* flags, void* partials, uint64_t epoch, int m, int n, int k, int ldc,
                                int group_m, int slices, uint64_t* trace) {
#if IRIS_HAS_WGMMA
    using Cfg = gemm::Config<In, B, In, gemm::kSpareWarpRegisters, TileN>;  // the spare producer warps copy A
    static_assert(gemm::kGatherPieceCols % Cfg::kTileK == 0, "a k-block lies in one piece of A");
    static_assert(gemm::kGatherPieceCols == gemm::kSplitAlignBlocks * Cfg::kTileK, "a split-K slice starts at a piece");
    using Tiles = gemm::OwnerOrderedScheduler<Cfg::kTileM, Cfg::kTileN>;
    const gemm::SplitKScheduler<Tiles> sched{Tiles(m, n, group_m, ctx.rank, ctx.world, true), slices};
    if (!sched.launch_ok()) {
        __trap();  // split-K on an odd grid of several rounds: a host bug, never a silent deadlock
    }
    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int second_chunk = slices == 1 ? 0 : gemm::split_boundary(k_blocks) / gemm::kSplitAlignBlocks;
    const gemm::Tracer<Trace> tracer{trace};
    gemm::AllGatherHooks<Trace> hooks{{}, ctx, static_cast<uint16_t*>(a), flags, epoch, m, k, sched.count(),
                                      second_chunk, sched.tiles.group_m, sched.tiles.owners, tracer};
    gemm::StoreEpilogue<In> store(static_cast<In*>(c), ldc);
    struct Hooks : gemm::AllGatherHooks<Trace> {
        gemm::StoreEpilogue<In> out;
        __device__ void store_chunk(const gemm::OutputChunk<In>& chunk) const { out.store_chunk(chunk); }
    } both{hooks, store};
    if (static_cast<int>(blockIdx.x) >= sched.count()) {
        hooks.push(gemm::CopyTeam<Cfg::kThreads>{static_cast<int>(threadIdx.x)});  // no unit here: every thread pushes
        return;
    }
    const gemm::SplitPartials<Cfg> split{ctx, static_cast<float4*>(partials),
                                         flags + gemm::all_gather_flag_words(m, k, ctx.world), epoch};
    gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const In*>(bias), m, n, k, sched, both, tracer, split);
#endif
}

}  // namespace

using gemm::BLayout;
using gemm::sm90::TmaDescriptor;
using iris::bf16;
using iris::f16;

#define IRIS_ALL_GATHER_GEMM_KERNEL(name, In, B, TileN, Trace)                                                       \
    extern "C" __global__ void __launch_bounds__(384, 1)                                                            \
        name(const IRIS_GRID_CONSTANT iris::Ctx ctx, const __grid_constant__ TmaDescriptor a_map,                    \
             const __grid_constant__ TmaDescriptor b_map, void* a, void* c, const void* bias, uint64_t* flags,       \
             void* partials, uint64_t epoch, int m, int n, int k, int ldc, int group_m, int slices,                  \
             uint64_t* trace) {                                                                                      \
        all_gather_gemm<In, B, TileN, Trace>(ctx, a_map, b_map, a, c, bias, flags, partials, epoch, m, n, k, ldc,    \
                                             group_m, slices, trace);                                                \
    }

IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_nk, bf16, BLayout::nk, 256, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_kn, bf16, BLayout::kn, 256, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_nk, f16, BLayout::nk, 256, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_kn, f16, BLayout::kn, 256, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_nk_traced, bf16, BLayout::nk, 256, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_kn_traced, bf16, BLayout::kn, 256, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_nk_traced, f16, BLayout::nk, 256, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_kn_traced, f16, BLayout::kn, 256, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_nk, bf16, BLayout::nk, 128, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_kn, bf16, BLayout::kn, 128, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_nk, f16, BLayout::nk, 128, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_kn, f16, BLayout::kn, 128, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_nk_traced, bf16, BLayout::nk, 128, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_kn_traced, bf16, BLayout::kn, 128, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_nk_traced, f16, BLayout::nk, 128, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_kn_traced, f16, BLayout::kn, 128, true)
