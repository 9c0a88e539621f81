/* iris/abi/gemm.h: the interface of the library's GEMM (iris-kernels gemm.cu; Java:
 * dev.irisjvm.kernels.gemm.Gemm), of the mainloop the fused kernels share with it (iris/abi/fused.h),
 * and of GEMM kernels of your own built on iris/gemm.cuh (Java: dev.irisjvm.kernels.gemm.GemmKernelArgs).
 * One declaration of the launch constants, the tile shapes and the argument struct every iris_gemm_*
 * kernel takes as its one __grid_constant__ parameter; the JavaCPP build generates the Java side. */
#ifndef IRIS_ABI_GEMM_H
#define IRIS_ABI_GEMM_H

#include "iris/abi/tma.h"

/* Threads of every block: a producer warpgroup and two consumer warpgroups. */
#define IRIS_GEMM_THREADS 384
/* Threads of a block of the short tiles (IRIS_GEMM_SHORT_TILE_M rows): a producer warpgroup and one consumer. */
#define IRIS_GEMM_SHORT_THREADS 256
/* Dynamic shared memory every block is launched with: what the widest tile's pipeline and the plain store's
 * buffers need (iris/gemm/config.cuh asserts that every configuration fits and that the widest needs exactly
 * this), so no launch can give less. */
#define IRIS_GEMM_SHARED_BYTES 230400
/* What a kernel whose hooks take the epilogue's chunks needs (the fused kernels, the MoE expert GEMM): the
 * widest pipeline and its padded chunks, leaving the rest of the 227 KiB for static shared memory of its own. */
#define IRIS_GEMM_HOOKS_SHARED_BYTES 216064
/* Output rows per tile: the default (one 64-row wgmma per consumer warpgroup, two of them), and the short
 * tile of one consumer for problems of at most 64 rows, whose second consumer would only multiply zeros. */
#define IRIS_GEMM_TILE_M 128
#define IRIS_GEMM_SHORT_TILE_M 64
/* Output columns per tile: the default, and the 128 x 192 and 128 x 128 tiles (GEMM's and the fused kernels'). */
#define IRIS_GEMM_TILE_N 256
#define IRIS_GEMM_MID_TILE_N 192
#define IRIS_GEMM_NARROW_TILE_N 128
/* Output columns of the short thin tile, 64 x 64 (GEMM's only): for few rows, where even 64 x 128 tiles leave
 * most SMs idle and slices of K would add a fix-up as long as the mainloop. */
#define IRIS_GEMM_THIN_TILE_N 64
/* Output columns of the short tile: narrow, so that a layer of few rows makes twice the tiles (and CTAs that
 * stream B) that 256 columns would, before any of its K has to be shared out. */
#define IRIS_GEMM_SHORT_TILE_N 128
/* K per pipeline stage: one 128-byte swizzle row of 16-bit elements. */
#define IRIS_GEMM_TILE_K 64
/* Shared-memory swizzle of every operand's tensor map, in bytes. */
#define IRIS_GEMM_SWIZZLE_BYTES 128
/* Columns of one box of an MN-major operand, a K x N (kn) B or a K x M (km) A: a tile's columns take
 * IRIS_GEMM_TILE_N / this many boxes, its rows IRIS_GEMM_TILE_M / this many. */
#define IRIS_GEMM_KN_BOX_COLS 64

/* Rows of a box of C's tensor map (iris_gemm_args' c_map; its columns: IRIS_GEMM_SWIZZLE_BYTES of them): one
 * consumer warpgroup's rows of a tile, the chunk the plain store's epilogue stages and stores at a time. */
#define IRIS_GEMM_STORE_BOX_ROWS 64

/* The one parameter of every iris_gemm_* kernel: C = alpha A x B + beta C (+ bias). */
typedef struct iris_gemm_args {
    iris_tma_descriptor a_map; /* A, M x K (mk) or K x M (km): boxes as iris/gemm/config.cuh says */
    iris_tma_descriptor b_map; /* B, N x K (nk) or K x N (kn): boxes as iris/gemm/config.cuh says */
    void* c;                   /* C, M x ldc, of the output type */
    const void* bias;          /* N elements of the output type, or null */
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t ldc;     /* elements between rows of C */
    int32_t group_m; /* tile rows per group of the grouped tile order */
    /* The plain store's scaling (iris::gemm::run(args) without hooks; kernels with hooks of their own
     * ignore both): alpha 1 and beta 0 are the plain product. beta 0 never reads C, so C may hold
     * anything (NaN included) before the launch. A zeroed struct has alpha 0: set both. */
    float alpha;
    float beta;
    /* Stream-K, the plain GEMM's schedule (iris::gemm::run(args) without hooks; kernels with hooks of
     * their own ignore these three): the last stream_k_tiles tiles of the tile order are shared out by
     * k-blocks over every CTA of the grid, the others run whole, round robin; 0 runs every tile whole.
     * Partials: IRIS_GEMM_STREAM_K_SLOTS_PER_CTA x gridDim.x x IRIS_GEMM_TILE_M x IRIS_GEMM_TILE_N
     * floats. Counters: 2 u32 per stream-K tile, zero before the launch and left zero after it. */
    int32_t stream_k_tiles;
    void* stream_k_partials;
    void* stream_k_counters;
    /* C as a tensor map for the plain store's TMA writes (iris::gemm::run(args) without hooks): C's n
     * columns by m rows, row pitch ldc elements, boxes of IRIS_GEMM_SWIZZLE_BYTES of columns by
     * IRIS_GEMM_STORE_BOX_ROWS rows, 128-byte swizzle. Kernels with hooks of their own ignore it. */
    iris_tma_descriptor c_map;
} iris_gemm_args;

/* Partial slots of stream-K per CTA: a CTA's k-range starts inside one tile and ends inside another,
 * and only those two pieces can be partial (iris/gemm/stream_k.cuh). */
#define IRIS_GEMM_STREAM_K_SLOTS_PER_CTA 2
/* The least k-blocks of a CTA's stream-K range: the host never shares out so few iterations that the
 * pipeline fill and the partial's round trip would cost more than the k-blocks they save. */
#define IRIS_GEMM_STREAM_K_MIN_BLOCKS 4

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_gemm_args, a_map) % 64 == 0 && offsetof(iris_gemm_args, b_map) % 64 == 0 &&
                  offsetof(iris_gemm_args, c_map) % 64 == 0,
              "iris_gemm_args: TMA descriptors 64-byte aligned");
static_assert(offsetof(iris_gemm_args, b_map) == 128 && offsetof(iris_gemm_args, c) == 256 &&
                  offsetof(iris_gemm_args, m) == 272 && offsetof(iris_gemm_args, group_m) == 288 &&
                  offsetof(iris_gemm_args, alpha) == 292 && offsetof(iris_gemm_args, beta) == 296 &&
                  offsetof(iris_gemm_args, stream_k_tiles) == 300 && offsetof(iris_gemm_args, stream_k_partials) == 304 &&
                  offsetof(iris_gemm_args, stream_k_counters) == 312 && offsetof(iris_gemm_args, c_map) == 320 &&
                  sizeof(iris_gemm_args) == 448,
              "iris_gemm_args: a 64-bit layout, padded at the end to the descriptors' alignment");
#endif

#endif
