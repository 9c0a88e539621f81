/* iris/abi/gemm_portable.h: the interface of the portable GEMM (iris-kernels gemm_portable.cu; Java:
 * dev.irisjvm.kernels.gemm.Gemm with Gemm.Mainloop.PORTABLE), the mainloop for GPUs without wgmma
 * and TMA (compute capability 8.0 and later: mma.sync, ldmatrix, cp.async), and of the skinny GEMM
 * built from the same parts for problems of few rows on every GPU, Hopper included. One
 * declaration of the launch constants and of the argument structs the iris_gemm_portable_* and
 * iris_gemm_skinny_* kernels take as their one __grid_constant__ parameter; the JavaCPP build
 * generates the Java side. */
#ifndef IRIS_ABI_GEMM_PORTABLE_H
#define IRIS_ABI_GEMM_PORTABLE_H

#include <stddef.h>
#include <stdint.h>

/* Threads of every block of the 128 x 128 tile: four warps in a 2 x 2 grid, each owning 64 x 64
 * outputs of the tile. */
#define IRIS_GEMM_PORTABLE_THREADS 128
/* Output rows and columns per tile, and K per pipeline stage. */
#define IRIS_GEMM_PORTABLE_TILE_M 128
#define IRIS_GEMM_PORTABLE_TILE_N 128
#define IRIS_GEMM_PORTABLE_TILE_K 32
/* Pipeline stages: cp.async copies of A's and B's k-blocks in flight. */
#define IRIS_GEMM_PORTABLE_STAGES 4
/* Dynamic shared memory every block of that tile is launched with: the stages' A and B tiles, 16 KiB per stage
 * (iris/gemm/sm80/config.cuh asserts it). Under the 99 KiB a block may have on sm_86 / sm_89, and
 * two blocks fit one SM of sm_80 and sm_90. */
#define IRIS_GEMM_PORTABLE_SHARED_BYTES 65536

/* The wide tile, for problems whose wide tiles fill at least one wave of the GPU's SMs (the host
 * chooses; dev.irisjvm.kernels.gemm.PortableGemm says the rule): IRIS_GEMM_PORTABLE_WIDE_TILE_M
 * output rows per tile, with the tile above's columns, K per stage and stages. Each k-block of B
 * copied to shared memory feeds twice the rows. */
#define IRIS_GEMM_PORTABLE_WIDE_TILE_M 256
/* Eight warps in a 4 x 2 grid, each owning 64 x 64 outputs as above. */
#define IRIS_GEMM_PORTABLE_WIDE_THREADS 256
/* The stages' A and B tiles, 24 KiB per stage (iris/gemm/sm80/config.cuh asserts it): under the
 * 99 KiB of sm_86 / sm_89; one block per SM, whose registers its threads fill. */
#define IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES 98304

/* The persistent tile of iris/gemm/sm80/persistent.cuh, the portable GEMM with epilogue hooks that the
 * portable fused kernels (iris-kernels fused_portable.cu) run: 128 x IRIS_GEMM_PORTABLE_PERSISTENT_TILE_N
 * outputs, the Hopper tile, so that the hooks written for it (64-row halves, 256-column tiles) serve
 * both. Eight warps in two groups of four: a group owns 64 rows, as a Hopper consumer warpgroup does,
 * each warp 64 x 64 of them. K per stage and stages as above. */
#define IRIS_GEMM_PORTABLE_PERSISTENT_TILE_N 256
#define IRIS_GEMM_PORTABLE_PERSISTENT_THREADS 256
/* The stages' A and B tiles, 24 KiB per stage; after a tile's mainloop the same bytes stage its
 * outputs for the hooks. Under the 99 KiB of sm_86 / sm_89; one block per SM. */
#define IRIS_GEMM_PORTABLE_PERSISTENT_SHARED_BYTES 98304

/* The one parameter of every iris_gemm_portable_* kernel, wide ones included: C = alpha A x B +
 * beta C (+ bias), plain pointers. */
typedef struct iris_gemm_portable_args {
    const void* a;    /* A, M x K (mk) or K x M (km) */
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
    float alpha;     /* alpha 1 and beta 0: the plain product; beta 0 never reads C. A zeroed struct has alpha 0: set both */
    float beta;
} iris_gemm_portable_args;

/* The skinny GEMM: a decode step's or a small batch's rows against a layer's weights, which only
 * streams B. Each block computes a IRIS_GEMM_SKINNY_TILE_M x IRIS_GEMM_SKINNY_TILE_N tile (rows past M
 * read zeros and are never stored) of one band of IRIS_GEMM_SKINNY_TILE_M rows over one slice of K;
 * few column tiles are split into slices so that enough blocks stream B at once. */
#define IRIS_GEMM_SKINNY_TILE_M 16
#define IRIS_GEMM_SKINNY_TILE_N 128
#define IRIS_GEMM_SKINNY_TILE_K 64
#define IRIS_GEMM_SKINNY_STAGES 4
/* Four warps side by side along N, each 16 x 32 outputs. */
#define IRIS_GEMM_SKINNY_THREADS 128
/* The stages' A and B tiles: (16 + 128) rows x 128 bytes each. Three blocks fit one SM of sm_80 and
 * sm_90, one of sm_86 / sm_89. */
#define IRIS_GEMM_SKINNY_SHARED_BYTES 73728

/* The one parameter of every iris_gemm_skinny_* kernel: C = alpha A x B + beta C (+ bias), A stored
 * M x K, its rows in bands = ceil(M / IRIS_GEMM_SKINNY_TILE_M) bands. Block b computes band b % bands
 * of column tile (b / bands) / slices over k-blocks [s x k_blocks_per_slice, (s + 1) x
 * k_blocks_per_slice) of K, s = (b / bands) % slices (a tile's bands run side by side, so B's
 * k-blocks come from L2 for all but the first); the grid is bands x ceil(N / IRIS_GEMM_SKINNY_TILE_N)
 * x slices blocks, and no slice may be empty. With slices > 1 the last block of a band's tile to
 * finish adds every slice's f32 partial in slice order (the same sum on every run) and stores the
 * tile. Partials: bands x ceil(N / TILE_N) x slices x IRIS_GEMM_SKINNY_TILE_M x
 * IRIS_GEMM_SKINNY_TILE_N floats; counters: one u32 per band and column tile, zero before the launch
 * and left zero after it. */
typedef struct iris_gemm_skinny_args {
    const void* a;    /* A, M x K */
    const void* b;    /* B, N x K (nk) or K x N (kn) */
    void* c;          /* C, M x N of the output type */
    const void* bias; /* N elements of the output type, or null */
    void* partials;   /* f32 partials, with slices > 1 */
    void* counters;   /* u32 per column tile, with slices > 1 */
    int64_t lda;      /* elements between rows of A */
    int64_t ldb;      /* elements between rows of B */
    int64_t ldc;      /* elements between rows of C */
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t slices;             /* blocks per column tile, >= 1 */
    int32_t k_blocks_per_slice; /* IRIS_GEMM_SKINNY_TILE_K blocks of K per slice, the last one's may be fewer */
    float alpha;                /* alpha 1 and beta 0: the plain product; beta 0 never reads C */
    float beta;
} iris_gemm_skinny_args;

#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_gemm_skinny_args, lda) == 48 && offsetof(iris_gemm_skinny_args, m) == 72 &&
                  offsetof(iris_gemm_skinny_args, slices) == 84 && offsetof(iris_gemm_skinny_args, beta) == 96 &&
                  sizeof(iris_gemm_skinny_args) == 104,
              "iris_gemm_skinny_args: a 64-bit layout");
static_assert(offsetof(iris_gemm_portable_args, lda) == 32 && offsetof(iris_gemm_portable_args, m) == 56 &&
                  offsetof(iris_gemm_portable_args, group_m) == 68 && offsetof(iris_gemm_portable_args, beta) == 76 &&
                  sizeof(iris_gemm_portable_args) == 80,
              "iris_gemm_portable_args: a 64-bit layout");
#endif

#endif
