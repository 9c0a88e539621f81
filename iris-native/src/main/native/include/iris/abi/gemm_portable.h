/* iris/abi/gemm_portable.h: the interface of the portable GEMM (iris-kernels gemm_portable.cu; Java:
 * dev.irisjvm.kernels.gemm.Gemm with Gemm.Mainloop.PORTABLE), the mainloop for GPUs without wgmma
 * and TMA (compute capability 8.0 and later: mma.sync, ldmatrix, cp.async). One declaration of the
 * launch constants and of the argument struct every iris_gemm_portable_* kernel takes as its one
 * __grid_constant__ parameter; the JavaCPP build generates the Java side. */
#ifndef IRIS_ABI_GEMM_PORTABLE_H
#define IRIS_ABI_GEMM_PORTABLE_H

#include <stddef.h>
#include <stdint.h>

/* Threads of every block: four warps in a 2 x 2 grid, each owning 64 x 64 outputs of the tile. */
#define IRIS_GEMM_PORTABLE_THREADS 128
/* Output rows and columns per tile, and K per pipeline stage. */
#define IRIS_GEMM_PORTABLE_TILE_M 128
#define IRIS_GEMM_PORTABLE_TILE_N 128
#define IRIS_GEMM_PORTABLE_TILE_K 32
/* Pipeline stages: cp.async copies of A's and B's k-blocks in flight. */
#define IRIS_GEMM_PORTABLE_STAGES 4
/* Dynamic shared memory every block is launched with: the stages' A and B tiles, 16 KiB per stage
 * (iris/gemm/sm80/config.cuh asserts it). Under the 99 KiB a block may have on sm_86 / sm_89, and
 * two blocks fit one SM of sm_80 and sm_90. */
#define IRIS_GEMM_PORTABLE_SHARED_BYTES 65536

/* The one parameter of every iris_gemm_portable_* kernel: C = A x B (+ bias), plain pointers. */
typedef struct iris_gemm_portable_args {
    const void* a;    /* A, M x K */
    const void* b;    /* B, N x K (nk) or K x N (kn) */
    void* c;          /* C, M x N of the output type */
    const void* bias; /* N elements of the output type, or null */
    int64_t lda;      /* elements between rows of A */
    int64_t ldb;      /* elements between rows of B */
    int64_t ldc;      /* elements between rows of C */
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t group_m; /* tile rows per group of the grouped tile order */
} iris_gemm_portable_args;

#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_gemm_portable_args, lda) == 32 && offsetof(iris_gemm_portable_args, m) == 56 &&
                  offsetof(iris_gemm_portable_args, group_m) == 68 && sizeof(iris_gemm_portable_args) == 72,
              "iris_gemm_portable_args: a 64-bit layout");
#endif

#endif
