// all_gather_gemm.cu: all-gather + GEMM, push (sequence-parallel input into a column-parallel
// layer). A is split by rows over ranks; each rank computes C_rank = A_gathered x B_rank while the
// spare producer warps push this rank's rows of A into the peers' gathered A, piece by piece
// (fused/all_gather_hooks.cuh). The grid may hold more CTAs than units (one per SM); those only
// push, with all their threads. No CTA waits for another CTA of this grid to start: pieces that
// a CTA not yet resident owns are pushed by whichever CTA runs (the hooks' claims), and the two
// halves of a split-K tile meet in whichever order they arrive (fused/split_k_exchange.cuh), so a
// launch that shares the GPU with other work only runs slower.
//
//   iris_all_gather_gemm[_n128]_<in>_<b>[_traced]   in: bf16 | f16 (C has the same type)   b: nk | kn
//   n128: 128 x 128 output tiles instead of 128 x 256 (b_map's N x K box {64, 128}), for shapes
//   whose 128 x 256 tiles would leave most SMs idle when split-K is off (FusedOp.tileN; split-K,
//   FusedOp.splitK, is faster there).
//   (iris_fused_args, iris/abi/fused.h: ctx, a_map, b_map, a, c, bias, flags, partials, epoch,
//    m, n, k, ldc, group_m, slices, trace)
//
// a: symmetric gathered A, M x K, with this rank's M / world rows filled (M % (128 * world) == 0);
// a_map covers it. flags: symmetric, fused::all_gather_flag_words(M, K, world, gridDim.x) u64 (+
// fused::split_exchange_words(tiles) with split-K), zeroed when allocated; peers write them. epoch
// grows by one per call. c: M x ldc, local. slices: 1, or 2 for split-K (K >=
// IRIS_FUSED_MIN_SPLIT_K; fused/split_k_exchange.cuh), with partials: tiles x TileM x TileN f32,
// local (null otherwise).
#include "fused/all_gather_hooks.cuh"
#include "fused/split_k_exchange.cuh"
#include "iris/gemm.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, iris::gemm::BLayout B, int TileN, bool Trace>
__device__ void all_gather_gemm(const iris_fused_args& a) {
#if IRIS_HAS_WGMMA
    using Cfg = iris::gemm::Config<In, B, In, fused::kSpareWarpRegisters, TileN>;  // the spare producer warps copy A
    static_assert(fused::kGatherPieceCols % Cfg::kTileK == 0, "a k-block lies in one piece of A");
    static_assert(fused::kGatherPieceCols == fused::kSplitAlignBlocks * Cfg::kTileK, "a split-K slice starts at a piece");
    static_assert(fused::splits_into_two(IRIS_FUSED_MIN_SPLIT_K / Cfg::kTileK),
                  "from IRIS_FUSED_MIN_SPLIT_K up, both slices have k-blocks");
    const iris::Ctx& ctx = a.ctx;
    const int m = a.m;
    const int n = a.n;
    const int k = a.k;
    const int slices = a.slices;
    uint64_t* flags = a.flags;
    using Tiles = fused::OwnerOrderedScheduler<Cfg::kTileM, Cfg::kTileN>;
    const fused::SplitKScheduler<Tiles> sched{Tiles(m, n, a.group_m, ctx.rank, ctx.world, true), slices};
    if (!fused::launch_fits<Cfg>(ctx)) return;
    const int k_blocks = (k + Cfg::kTileK - 1) / Cfg::kTileK;
    const int second_chunk = fused::gather_second_chunk(k_blocks, slices);
    const fused::Tracer<Trace> tracer{a.trace};
    fused::AllGatherHooks<Trace> hooks{{}, ctx, static_cast<uint16_t*>(a.a), flags, a.epoch, m, k, sched.count(),
                                       second_chunk, sched.tiles.group_m, sched.tiles.owners, tracer};
    iris::gemm::StoreEpilogue<In> store(static_cast<In*>(a.c), a.ldc);
    struct Hooks : fused::AllGatherHooks<Trace> {
        iris::gemm::StoreEpilogue<In> out;
        __device__ void store_chunk(const iris::gemm::OutputChunk<In>& chunk) const { out.store_chunk(chunk); }
    } both{hooks, store};
    if (static_cast<int>(blockIdx.x) >= sched.count()) {
        hooks.push(fused::CopyTeam<Cfg::kThreads>{static_cast<int>(threadIdx.x)});  // no unit here: every thread pushes
        return;
    }
    const fused::SplitPartials<Cfg> split{ctx, static_cast<float4*>(a.partials),
                                          flags + fused::all_gather_flag_words(m, k, ctx.world, static_cast<int>(gridDim.x)),
                                          sched.tiles.count(), a.epoch};
    iris::gemm::persistent<Cfg>(&a.a_map, &a.b_map, static_cast<const In*>(a.bias), m, n, k, sched, both, tracer, split);
#endif
}

}  // namespace

using iris::gemm::BLayout;
using iris::bf16;
using iris::f16;

#define IRIS_ALL_GATHER_GEMM_KERNEL(name, In, B, TileN, Trace)                                                       \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)                                              \
        name(const IRIS_GRID_CONSTANT iris_fused_args a) {                                                           \
        all_gather_gemm<In, B, TileN, Trace>(a);                                                                     \
    }

IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_nk, bf16, BLayout::nk, IRIS_GEMM_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_kn, bf16, BLayout::kn, IRIS_GEMM_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_nk, f16, BLayout::nk, IRIS_GEMM_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_kn, f16, BLayout::kn, IRIS_GEMM_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_nk_traced, bf16, BLayout::nk, IRIS_GEMM_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_bf16_kn_traced, bf16, BLayout::kn, IRIS_GEMM_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_nk_traced, f16, BLayout::nk, IRIS_GEMM_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_f16_kn_traced, f16, BLayout::kn, IRIS_GEMM_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_nk, bf16, BLayout::nk, IRIS_GEMM_NARROW_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_kn, bf16, BLayout::kn, IRIS_GEMM_NARROW_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_nk, f16, BLayout::nk, IRIS_GEMM_NARROW_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_kn, f16, BLayout::kn, IRIS_GEMM_NARROW_TILE_N, false)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_nk_traced, bf16, BLayout::nk, IRIS_GEMM_NARROW_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_bf16_kn_traced, bf16, BLayout::kn, IRIS_GEMM_NARROW_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_nk_traced, f16, BLayout::nk, IRIS_GEMM_NARROW_TILE_N, true)
IRIS_ALL_GATHER_GEMM_KERNEL(iris_all_gather_gemm_n128_f16_kn_traced, f16, BLayout::kn, IRIS_GEMM_NARROW_TILE_N, true)
