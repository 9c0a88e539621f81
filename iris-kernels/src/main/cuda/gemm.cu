// gemm.cu: the library's GEMM, C = A x B (+ bias), as eight kernels
//
//   iris_gemm_<in>_<b>_<out>   in: bf16 | f16   b: nk (B is N x K) | kn (B is K x N)   out: in | f32
//
//   (const TmaDescriptor a_map, const TmaDescriptor b_map, void* c, const void* bias,
//    int m, int n, int k, int ldc, int group_m)
//
// The kernel is gemm::persistent with the grouped tile scheduler and the plain store epilogue
// (gemm/gemm_kernel.cuh); dev.irisjvm.kernels.gemm.Gemm builds the descriptors and launches it.
#include "gemm/gemm_kernel.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

template <class In, gemm::BLayout B, class Out>
__device__ void gemm_entry(const gemm::sm90::TmaDescriptor& a_map, const gemm::sm90::TmaDescriptor& b_map, void* c,
                           const void* bias, int m, int n, int k, int ldc, int group_m) {
#if IRIS_HAS_WGMMA
    using Cfg = gemm::Config<In, B, Out>;
    const gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> sched(m, n, group_m);
    gemm::StoreEpilogue<Out> epi(static_cast<Out*>(c), ldc);
    gemm::persistent<Cfg>(&a_map, &b_map, static_cast<const Out*>(bias), m, n, k, sched, epi);
#endif
}

}  // namespace

using gemm::BLayout;
using gemm::sm90::TmaDescriptor;
using iris::bf16;
using iris::f16;

#define IRIS_GEMM_KERNEL(name, In, B, Out)                                                                           \
    extern "C" __global__ void __launch_bounds__(384, 1)                                                            \
        name(const __grid_constant__ TmaDescriptor a_map, const __grid_constant__ TmaDescriptor b_map, void* c,      \
             const void* bias, int m, int n, int k, int ldc, int group_m) {                                          \
        gemm_entry<In, B, Out>(a_map, b_map, c, bias, m, n, k, ldc, group_m);                                        \
    }

IRIS_GEMM_KERNEL(iris_gemm_bf16_nk_bf16, bf16, BLayout::nk, bf16)
IRIS_GEMM_KERNEL(iris_gemm_bf16_nk_f32, bf16, BLayout::nk, float)
IRIS_GEMM_KERNEL(iris_gemm_bf16_kn_bf16, bf16, BLayout::kn, bf16)
IRIS_GEMM_KERNEL(iris_gemm_bf16_kn_f32, bf16, BLayout::kn, float)
IRIS_GEMM_KERNEL(iris_gemm_f16_nk_f16, f16, BLayout::nk, f16)
IRIS_GEMM_KERNEL(iris_gemm_f16_nk_f32, f16, BLayout::nk, float)
IRIS_GEMM_KERNEL(iris_gemm_f16_kn_f16, f16, BLayout::kn, f16)
IRIS_GEMM_KERNEL(iris_gemm_f16_kn_f32, f16, BLayout::kn, float)
