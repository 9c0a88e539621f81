// gemm.cu: the library's GEMM, C = alpha A x B + beta C (+ bias), as sixteen variants, each in
// fourteen tiles (and for A stored M x K, six more): 128 x 256 (the default), 128 x 192 ("mid", for shapes whose wide tiles leave a
// wave mostly empty), 128 x 128 ("narrow", for shapes whose wide tiles leave SMs idle), 64 x 128
// ("short", one consumer warpgroup) and 64 x 64 ("short_thin", two consumer warpgroups on every
// other k-block) for every tile of a problem of at most 64 rows and of larger ones where 128-row
// tiles would leave SMs idle; and clusters of CTAs on blocks of adjacent tiles that share A along
// a row of the block and B along a column: 128 x 256, 128 x 192, 128 x 128, 64 x 128 and 64 x 64
// in pairs of vertically adjacent tiles ("pair", "mid_pair", "narrow_pair", "short_pair",
// "short_thin_pair"), and 64 x 64 in blocks of 1 x 2, 2 x 2, 4 x 1 and 1 x 4 tiles
// ("short_thin_1x2", ...). For few rows, swapped kernels compute C^T = B A^T in tiles of 64
// columns of C by 8, 16, 32 or 48 of its rows ("swap8" ... "swap48"; iris/gemm/swapped.cuh), and by
// 32 or 16 rows in clusters of two, one tile above the other, that share B ("swap32_1x2",
// "swap16_1x2").
//
//   iris_gemm_[<tile>_]<in>[_km]_<b>_<out>   tile: mid | narrow | short | short_thin | pair | mid_pair | narrow_pair
//                                                  | short_pair | short_thin_pair | short_thin_1x2 | short_thin_2x2
//                                                  | short_thin_4x1 | short_thin_1x4
//                                                  | swap8 | swap16 | swap32 | swap48 | swap32_1x2 | swap16_1x2 (no km)
//                                            in: bf16 | f16   km: A is K x M (else M x K)
//                                            b: nk (B is N x K) | kn (B is K x N)   out: in | f32
//
//   (iris_gemm_args: a_map, b_map, c, bias, m, n, k, ldc, group_m, alpha, beta; iris/abi/gemm.h)
//
// The kernel is iris::gemm::run with the grouped tile scheduler, the plain store epilogue and the
// alpha/beta scaling (iris/gemm.cuh, the same building blocks a user's GEMM kernel takes);
// dev.irisjvm.kernels.gemm.Gemm builds the descriptors (boxes of the tile's rows of A and columns
// of B) and launches it with IRIS_GEMM_THREADS threads (IRIS_GEMM_SHORT_THREADS for 64 x 128 tiles)
// and IRIS_GEMM_SHARED_BYTES of dynamic shared memory.
#include "gemm_tiles.cuh"
#include "iris/abi/gemm.h"
#include "iris/gemm.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

namespace {

// One tile's kernel body: iris::gemm::run, in clusters of ClusterM x ClusterN CTAs on blocks of
// adjacent tiles that share A along a row and B along a column where ClusterM x ClusterN > 1.
template <class In, iris::gemm::ALayout A, iris::gemm::BLayout B, class Out, int Consumers, int TileN, bool SplitK, int ClusterM,
          int ClusterN>
__device__ void gemm_entry(const iris_gemm_args& a) {
#if IRIS_HAS_WGMMA
    // No context to record an error in: the library launches with IRIS_GEMM_SHARED_BYTES, which every
    // Config fits (config.cuh), so only a launch from outside it gives less, and then run returns
    // without writing C; running on would overrun shared memory.
    using Cfg = iris::gemm::Config<In, B, Out, iris::gemm::kTmaProducerRegisters, TileN, A, Consumers, false, SplitK,
                                   iris::gemm::ClusterShape<ClusterM, ClusterN>>;
    iris::gemm::run<Cfg>(a);
#endif
}

// A swapped kernel's body: C^T = B A^T in tiles of 64 columns of C by Rows of its rows, two consumers
// on every other k-block, in clusters of ClusterN tiles (of C, one above another) that share B's
// k-blocks. B is the product's A: N x K as an mk A, K x N as a km A.
template <class In, iris::gemm::BLayout B, class Out, int Rows, int ClusterN>
__device__ void gemm_swapped_entry(const iris_gemm_args& a) {
#if IRIS_HAS_WGMMA
    constexpr iris::gemm::ALayout kBAsA = B == iris::gemm::BLayout::nk ? iris::gemm::ALayout::mk : iris::gemm::ALayout::km;
    using Cfg = iris::gemm::Config<In, iris::gemm::BLayout::nk, Out, iris::gemm::kTmaProducerRegisters, Rows, kBAsA, 2, false, true,
                                   iris::gemm::ClusterShape<1, ClusterN>>;
    iris::gemm::run_swapped<Cfg>(a);
#endif
}
}  // namespace

using iris::gemm::ALayout;
using iris::gemm::BLayout;
using iris::bf16;
using iris::f16;

// IRIS_GEMM_DEFINE: a kernel `name` of `threads` threads whose body is the entry after the cluster's
// block (a template call, commas and all); a clustered kernel is declared with its cluster's size
// (IRIS_GEMM_CLUSTER_<M>_<N>), an unclustered one with none.
#define IRIS_GEMM_CLUSTER_1_1
#define IRIS_GEMM_CLUSTER_2_1 __cluster_dims__(2, 1, 1)
#define IRIS_GEMM_CLUSTER_1_2 __cluster_dims__(2, 1, 1)
#define IRIS_GEMM_CLUSTER_2_2 __cluster_dims__(4, 1, 1)
#define IRIS_GEMM_CLUSTER_4_1 __cluster_dims__(4, 1, 1)
#define IRIS_GEMM_CLUSTER_1_4 __cluster_dims__(4, 1, 1)
#define IRIS_GEMM_DEFINE(name, threads, ClusterM, ClusterN, ...)                                  \
    extern "C" __global__ void IRIS_GEMM_CLUSTER_##ClusterM##_##ClusterN __launch_bounds__(threads, 1) \
        name(const IRIS_GRID_CONSTANT iris_gemm_args a) {                                          \
        __VA_ARGS__(a);                                                                            \
    }

// iris_gemm_<part><variant> of one line of IRIS_GEMM_TILES (gemm_tiles.cuh), and of
// IRIS_GEMM_SWAPPED_TILES (A stored M x K only).
#define IRIS_GEMM_KERNEL(part, threads, Consumers, TileN, SplitK, ClusterM, ClusterN, variant, In, A, B, Out) \
    IRIS_GEMM_DEFINE(iris_gemm_##part##variant, threads, ClusterM, ClusterN,                                \
                     gemm_entry<In, A, B, Out, Consumers, TileN, SplitK, ClusterM, ClusterN>)
#define IRIS_GEMM_SWAPPED_KERNEL(part, Rows, ClusterN, variant, In, B, Out) \
    IRIS_GEMM_DEFINE(iris_gemm_##part##variant, IRIS_GEMM_THREADS, 1, ClusterN, gemm_swapped_entry<In, B, Out, Rows, ClusterN>)

// Every tile of one variant, and every swapped one.
#define IRIS_GEMM_KERNELS(v, In, A, B, Out) IRIS_GEMM_TILES(IRIS_GEMM_KERNEL, v, In, A, B, Out)
#define IRIS_GEMM_SWAPPED_KERNELS(v, In, B, Out) IRIS_GEMM_SWAPPED_TILES(IRIS_GEMM_SWAPPED_KERNEL, v, In, B, Out)

IRIS_GEMM_KERNELS(bf16_nk_bf16, bf16, ALayout::mk, BLayout::nk, bf16)
IRIS_GEMM_KERNELS(bf16_nk_f32, bf16, ALayout::mk, BLayout::nk, float)
IRIS_GEMM_KERNELS(bf16_kn_bf16, bf16, ALayout::mk, BLayout::kn, bf16)
IRIS_GEMM_KERNELS(bf16_kn_f32, bf16, ALayout::mk, BLayout::kn, float)
IRIS_GEMM_KERNELS(f16_nk_f16, f16, ALayout::mk, BLayout::nk, f16)
IRIS_GEMM_KERNELS(f16_nk_f32, f16, ALayout::mk, BLayout::nk, float)
IRIS_GEMM_KERNELS(f16_kn_f16, f16, ALayout::mk, BLayout::kn, f16)
IRIS_GEMM_KERNELS(f16_kn_f32, f16, ALayout::mk, BLayout::kn, float)
IRIS_GEMM_KERNELS(bf16_km_nk_bf16, bf16, ALayout::km, BLayout::nk, bf16)
IRIS_GEMM_KERNELS(bf16_km_nk_f32, bf16, ALayout::km, BLayout::nk, float)
IRIS_GEMM_KERNELS(bf16_km_kn_bf16, bf16, ALayout::km, BLayout::kn, bf16)
IRIS_GEMM_KERNELS(bf16_km_kn_f32, bf16, ALayout::km, BLayout::kn, float)
IRIS_GEMM_KERNELS(f16_km_nk_f16, f16, ALayout::km, BLayout::nk, f16)
IRIS_GEMM_KERNELS(f16_km_nk_f32, f16, ALayout::km, BLayout::nk, float)
IRIS_GEMM_KERNELS(f16_km_kn_f16, f16, ALayout::km, BLayout::kn, f16)
IRIS_GEMM_KERNELS(f16_km_kn_f32, f16, ALayout::km, BLayout::kn, float)

IRIS_GEMM_SWAPPED_KERNELS(bf16_nk_bf16, bf16, BLayout::nk, bf16)
IRIS_GEMM_SWAPPED_KERNELS(bf16_nk_f32, bf16, BLayout::nk, float)
IRIS_GEMM_SWAPPED_KERNELS(bf16_kn_bf16, bf16, BLayout::kn, bf16)
IRIS_GEMM_SWAPPED_KERNELS(bf16_kn_f32, bf16, BLayout::kn, float)
IRIS_GEMM_SWAPPED_KERNELS(f16_nk_f16, f16, BLayout::nk, f16)
IRIS_GEMM_SWAPPED_KERNELS(f16_nk_f32, f16, BLayout::nk, float)
IRIS_GEMM_SWAPPED_KERNELS(f16_kn_f16, f16, BLayout::kn, f16)
IRIS_GEMM_SWAPPED_KERNELS(f16_kn_f32, f16, BLayout::kn, float)
