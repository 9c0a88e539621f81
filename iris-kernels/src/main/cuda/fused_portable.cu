// fused_portable.cu: the fused GEMM + communication operations on every NVIDIA GPU since Ampere (and
// on Hopper when asked for), on the portable persistent GEMM (iris/gemm/sm80/persistent.cuh) with
// the hooks of the Hopper kernels' epilogue variants:
//
//   iris_gemm_all_scatter_portable_<in>_<b>     fused/all_scatter_hooks.cuh: each piece into every rank's C
//   iris_gemm_all_reduce_portable_<in>_<b>      fused/reduce_hooks.cuh: partials to the tiles' owners,
//   iris_gemm_reduce_scatter_portable_<in>_<b>  which store the sums (into every rank's C / their own rows)
//   iris_all_gather_gemm_portable_<in>_<b>      fused/all_gather_hooks.cuh: every block first pushes its
//                                               share of this rank's rows of A into the peers, then
//                                               computes (no spare warps overlap the two here)
//   in: bf16 | f16 (C has the same type)   b: nk | kn
//
//   (iris_fused_args, iris/abi/fused.h: the fields of the Hopper kernel of the same operation, with
//    A (all-gather: the gathered A) in a and B in b instead of a_map and b_map; no trace, slices 1)
//
// A is M x K and B N x K (nk) or K x N (kn), contiguous. Launch: at most one block per SM (all-gather
// on several ranks: one per SM, as on Hopper), IRIS_GEMM_PORTABLE_PERSISTENT_THREADS threads,
// IRIS_GEMM_PORTABLE_PERSISTENT_SHARED_BYTES of dynamic shared memory; the host's protocol around
// the launch (barriers, epochs, workspace) is the Hopper kernels'. A portable module: machine code
// for sm_80 to sm_120 and compute_80 PTX. AMD has no mma.sync: the HIP build leaves it out
// (iris-kernels/CMakeLists.txt).
#include "fused/all_gather_hooks.cuh"
#include "fused/all_scatter_hooks.cuh"
#include "fused/reduce_hooks.cuh"
#include "iris/gemm/sm80/persistent.cuh"

namespace {

using iris::bf16;
using iris::f16;
using iris::gemm::BLayout;
namespace sm80 = iris::gemm::sm80;

// fused::launch_fits checks these Configs too: it reads only their kSmemBytes.
template <class In, BLayout B>
using Cfg = sm80::Config<In, B, In, sm80::PersistentShape>;

/// B's leading dimension: B is contiguous, N x K or K x N.
template <BLayout B>
__device__ int64_t ldb(const iris_fused_args& a) {
    return B == BLayout::nk ? a.k : a.n;
}

template <class In, BLayout B>
__device__ void all_scatter(const iris_fused_args& a) {
    using C = Cfg<In, B>;
    const iris::Ctx& ctx = a.ctx;
    if (!fused::launch_fits<C>(ctx)) return;
    const iris::gemm::GroupedTileScheduler<C::kTileM, C::kTileN> sched(a.m, a.n, a.group_m);
    sm80::persistent<C>(a.a, a.k, a.b, ldb<B>(a), static_cast<const In*>(a.bias), a.m, a.n, a.k, sched, [&] {
        return fused::AllScatterHooks<In>{{}, ctx, static_cast<In*>(a.c), a.ldc, ctx.rank * a.n};
    });
}

template <class In, BLayout B, bool AllGatherSum>
__device__ void reduce(const iris_fused_args& a) {
    using C = Cfg<In, B>;
    static_assert(C::kTileN == fused::ReduceBuffers<In>::kTileCols, "the hooks index partials by 256-column tiles");
    const iris::Ctx& ctx = a.ctx;
    if (!fused::launch_fits<C>(ctx)) return;
    using Scheduler = fused::OwnerOrderedScheduler<C::kTileM, C::kTileN>;
    const Scheduler sched(a.m, a.n, a.group_m, ctx.rank, ctx.world, false);
    // No producer runs ahead of the mainloop here: the partials are prefetched as the tile starts.
    sm80::persistent<C>(a.a, a.k, a.b, ldb<B>(a), static_cast<const In*>(a.bias), a.m, a.n, a.k, sched, [&] {
        const fused::ReduceBuffers<In> buffers{ctx,     static_cast<In*>(a.c), a.ldc, static_cast<In*>(a.partials),
                                               a.flags, a.epoch,               a.n,   sched.tiles_n,
                                               sched.owners, 0};
        return fused::ReduceHooks<In, AllGatherSum>{{}, buffers};
    });
}

template <class In, BLayout B>
__device__ void all_gather(const iris_fused_args& a) {
    using C = Cfg<In, B>;
    static_assert(fused::kGatherPieceCols % C::kTileK == 0, "a k-block lies in one piece of A");
    const iris::Ctx& ctx = a.ctx;
    if (!fused::launch_fits<C>(ctx)) return;
    using Scheduler = fused::OwnerOrderedScheduler<C::kTileM, C::kTileN>;
    const Scheduler sched(a.m, a.n, a.group_m, ctx.rank, ctx.world, true);
    const auto gather = [&] {
        return fused::AllGatherHooks<false>{{}, ctx, static_cast<uint16_t*>(a.a), a.flags, a.epoch, a.m, a.k, sched.count(),
                                            0, sched.group_m, sched.owners, {}};
    };
    // Every block pushes before it computes: with no spare warps the push cannot overlap this block's
    // mainloop, and a block that computed first could wait for a piece only a block behind it pushes.
    gather().push(fused::CopyTeam<C::kThreads>{static_cast<int>(threadIdx.x)});
    struct Hooks : fused::AllGatherHooks<false> {
        iris::gemm::StoreEpilogue<In> out;
        __device__ void store_chunk(const iris::gemm::OutputChunk<In>& chunk) const { out.store_chunk(chunk); }
    };
    sm80::persistent<C>(a.a, a.k, a.b, ldb<B>(a), static_cast<const In*>(a.bias), a.m, a.n, a.k, sched, [&] {
        return Hooks{gather(), {static_cast<In*>(a.c), a.ldc}};
    });
}

template <class In, BLayout B>
__device__ void all_reduce(const iris_fused_args& a) {
    reduce<In, B, true>(a);
}

template <class In, BLayout B>
__device__ void reduce_scatter(const iris_fused_args& a) {
    reduce<In, B, false>(a);
}

}  // namespace

#define IRIS_FUSED_PORTABLE_KERNEL(name, ...)                                                             \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_PORTABLE_PERSISTENT_THREADS, 1)                \
        name(const IRIS_GRID_CONSTANT iris_fused_args a) {                                                 \
        __VA_ARGS__(a);                                                                                    \
    }
#define IRIS_FUSED_PORTABLE_KERNELS(name, op)                                                             \
    IRIS_FUSED_PORTABLE_KERNEL(name##_bf16_nk, op<bf16, BLayout::nk>)                                     \
    IRIS_FUSED_PORTABLE_KERNEL(name##_bf16_kn, op<bf16, BLayout::kn>)                                     \
    IRIS_FUSED_PORTABLE_KERNEL(name##_f16_nk, op<f16, BLayout::nk>)                                       \
    IRIS_FUSED_PORTABLE_KERNEL(name##_f16_kn, op<f16, BLayout::kn>)

IRIS_FUSED_PORTABLE_KERNELS(iris_gemm_all_scatter_portable, all_scatter)
IRIS_FUSED_PORTABLE_KERNELS(iris_gemm_all_reduce_portable, all_reduce)
IRIS_FUSED_PORTABLE_KERNELS(iris_gemm_reduce_scatter_portable, reduce_scatter)
IRIS_FUSED_PORTABLE_KERNELS(iris_all_gather_gemm_portable, all_gather)
