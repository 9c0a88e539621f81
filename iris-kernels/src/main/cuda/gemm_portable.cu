// gemm_portable.cu: the library's GEMM for every NVIDIA GPU since Ampere (A100, A10, L40S, RTX 30xx
// to 50xx, and Hopper when asked for), C = alpha A x B + beta C (+ bias), as sixteen variants in
// 128 x 128 tiles and in 256 x 128, and the skinny GEMM for few rows (bands of 16; A stored M x K) that
// every GPU runs, Hopper included, as eight more
//
//   iris_gemm_portable[_wide]_<in>[_km]_<b>_<out>   in: bf16 | f16   km: A is K x M (else M x K)
//                                                   b: nk (B is N x K) | kn (B is K x N)   out: in | f32
//   iris_gemm_skinny_<in>_<b>_<out>
//
//   (iris_gemm_portable_args: a, b, c, bias, lda, ldb, ldc, m, n, k, group_m, alpha, beta;
//   iris_gemm_skinny_args adds the split of K and its partials; iris/abi/gemm_portable.h)
//
// The kernel is iris::gemm::sm80::run (iris/gemm/sm80/gemm.cuh: mma.sync, ldmatrix, a cp.async
// pipeline); dev.irisjvm.kernels.gemm.Gemm launches it with Mainloop.PORTABLE, one block per output
// tile: IRIS_GEMM_PORTABLE_THREADS threads and IRIS_GEMM_PORTABLE_SHARED_BYTES of dynamic shared
// memory per 128 x 128 tile, IRIS_GEMM_PORTABLE_WIDE_THREADS and IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES
// per 256 x 128 one (the wide tiles where they make at least one full wave, PortableGemm's rule);
// the skinny kernel is iris::gemm::sm80::skinny (iris/gemm/sm80/skinny.cuh), one block per column
// tile and slice of K. A portable module: machine code for sm_80 to sm_120 and compute_80 PTX.
// AMD has no mma.sync: the HIP build leaves it out (iris-kernels/CMakeLists.txt).
#include "iris/abi/gemm_portable.h"
#include "iris/gemm/sm80/gemm.cuh"
#include "iris/gemm/sm80/skinny.cuh"

using iris::bf16;
using iris::f16;
using iris::gemm::ALayout;
using iris::gemm::BLayout;

// Shape: config.cuh's DefaultShape or WideShape. 128 x 128: two blocks per SM, as 2 x 64 KiB of
// shared memory fit sm_80 and sm_90 and one block's epilogue overlaps the other's mainloop.
// 256 x 128: one, whose 256 threads may then take up to 255 registers each (its 128 accumulators
// and double-buffered fragments need about 240).
#define IRIS_GEMM_PORTABLE_KERNEL(name, Shape, min_blocks, In, A, B, Out)                              \
    extern "C" __global__ void __launch_bounds__(iris::gemm::sm80::Shape::kThreads, min_blocks)       \
        name(const IRIS_GRID_CONSTANT iris_gemm_portable_args a) {                                     \
        iris::gemm::sm80::run<iris::gemm::sm80::Config<In, B, Out, iris::gemm::sm80::Shape, A>>(a);    \
    }

// Both tiles of one variant: iris_gemm_portable_<variant> and iris_gemm_portable_wide_<variant>.
#define IRIS_GEMM_PORTABLE_KERNELS(variant, In, A, B, Out)                                             \
    IRIS_GEMM_PORTABLE_KERNEL(iris_gemm_portable_##variant, DefaultShape, 2, In, A, B, Out)            \
    IRIS_GEMM_PORTABLE_KERNEL(iris_gemm_portable_wide_##variant, WideShape, 1, In, A, B, Out)

IRIS_GEMM_PORTABLE_KERNELS(bf16_nk_bf16, bf16, ALayout::mk, BLayout::nk, bf16)
IRIS_GEMM_PORTABLE_KERNELS(bf16_nk_f32, bf16, ALayout::mk, BLayout::nk, float)
IRIS_GEMM_PORTABLE_KERNELS(bf16_kn_bf16, bf16, ALayout::mk, BLayout::kn, bf16)
IRIS_GEMM_PORTABLE_KERNELS(bf16_kn_f32, bf16, ALayout::mk, BLayout::kn, float)
IRIS_GEMM_PORTABLE_KERNELS(f16_nk_f16, f16, ALayout::mk, BLayout::nk, f16)
IRIS_GEMM_PORTABLE_KERNELS(f16_nk_f32, f16, ALayout::mk, BLayout::nk, float)
IRIS_GEMM_PORTABLE_KERNELS(f16_kn_f16, f16, ALayout::mk, BLayout::kn, f16)
IRIS_GEMM_PORTABLE_KERNELS(f16_kn_f32, f16, ALayout::mk, BLayout::kn, float)
IRIS_GEMM_PORTABLE_KERNELS(bf16_km_nk_bf16, bf16, ALayout::km, BLayout::nk, bf16)
IRIS_GEMM_PORTABLE_KERNELS(bf16_km_nk_f32, bf16, ALayout::km, BLayout::nk, float)
IRIS_GEMM_PORTABLE_KERNELS(bf16_km_kn_bf16, bf16, ALayout::km, BLayout::kn, bf16)
IRIS_GEMM_PORTABLE_KERNELS(bf16_km_kn_f32, bf16, ALayout::km, BLayout::kn, float)
IRIS_GEMM_PORTABLE_KERNELS(f16_km_nk_f16, f16, ALayout::km, BLayout::nk, f16)
IRIS_GEMM_PORTABLE_KERNELS(f16_km_nk_f32, f16, ALayout::km, BLayout::nk, float)
IRIS_GEMM_PORTABLE_KERNELS(f16_km_kn_f16, f16, ALayout::km, BLayout::kn, f16)
IRIS_GEMM_PORTABLE_KERNELS(f16_km_kn_f32, f16, ALayout::km, BLayout::kn, float)

// Three blocks per SM where shared memory allows (sm_80, sm_90): bytes of B in flight are what a
// skinny GEMM's speed is made of.
#define IRIS_GEMM_SKINNY_KERNEL(name, In, B, Out)                                                     \
    extern "C" __global__ void __launch_bounds__(IRIS_GEMM_SKINNY_THREADS, 3)                        \
        name(const IRIS_GRID_CONSTANT iris_gemm_skinny_args a) {                                      \
        iris::gemm::sm80::skinny<iris::gemm::sm80::SkinnyConfig<In, B, Out>>(a);                      \
    }

IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_bf16_nk_bf16, bf16, BLayout::nk, bf16)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_bf16_nk_f32, bf16, BLayout::nk, float)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_bf16_kn_bf16, bf16, BLayout::kn, bf16)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_bf16_kn_f32, bf16, BLayout::kn, float)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_f16_nk_f16, f16, BLayout::nk, f16)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_f16_nk_f32, f16, BLayout::nk, float)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_f16_kn_f16, f16, BLayout::kn, f16)
IRIS_GEMM_SKINNY_KERNEL(iris_gemm_skinny_f16_kn_f32, f16, BLayout::kn, float)
