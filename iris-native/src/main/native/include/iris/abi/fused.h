/* iris/abi/fused.h: the interface of the fused GEMM + communication kernels (iris-kernels
 * gemm_all_scatter.cu, gemm_reduce.cu, all_gather_gemm.cu, and fused_portable.cu for GPUs without
 * wgmma; Java: dev.irisjvm.kernels.fused). One argument struct serves the whole family: every
 * kernel takes it as its one __grid_constant__ parameter and reads the fields its operation names
 * below (the others are null or zero). Beside it the wait sites, the launch checks, and the layouts
 * of the workspace and the trace that Java sizes and reads. Launch constants and tile shapes are
 * the GEMM's (iris/abi/gemm.h; the portable kernels': IRIS_GEMM_PORTABLE_PERSISTENT_*,
 * iris/abi/gemm_portable.h). */
#ifndef IRIS_ABI_FUSED_H
#define IRIS_ABI_FUSED_H

#include "iris/abi/ctx.h"
#include "iris/abi/tma.h"

/* Wait sites (iris_device_status.site of a timeout) and launch checks (the site of an
 * IRIS_ERROR_CODE_BAD_LAUNCH: observed is what the launch gave, expected what the kernel needs). */
enum iris_fused_site {
    IRIS_FUSED_SITE_PARTIAL_FLAG = 9001,  /* reductions: a tile's owner waits for a peer's partial */
    IRIS_FUSED_SITE_GATHERED_ROWS = 9002, /* all-gather: the producer waits for a peer's piece of A */
    IRIS_FUSED_SITE_HANDOFF = 9003,       /* spare warps wait for the consumers' finished tile */
    IRIS_FUSED_SITE_GATHER_CLEAR = 9004,  /* all-gather: the pushers wait for a peer's call to start */
    IRIS_FUSED_SITE_SPLIT_PARTIAL = 9005, /* all-gather split-K: a block waits for the other half of K */
    IRIS_FUSED_SITE_SHARED_BYTES = 9006   /* launch check: dynamic shared memory (bytes) */
    /* 9007 is retired: split-K's launch check of an odd grid, which any grid now passes (the two
       halves of a tile meet in arrival order, fused/split_k_exchange.cuh) */
};

/* Columns of A in one all-gather piece (of 128 rows): the unit a rank pushes into its peers and flags. */
#define IRIS_FUSED_PIECE_COLS 128
/* A split-K slice starts at a multiple of this many k-blocks (a whole piece of A). */
#define IRIS_FUSED_SPLIT_ALIGN_BLOCKS 2
/* The least K that the host splits: from here on both slices have k-blocks (all_gather_gemm.cu asserts it). */
#define IRIS_FUSED_MIN_SPLIT_K 256

/* A trace record: {start_ns, end_ns, what | sm << 32, kind | who << 8}, four u64 (gemm/trace.cuh). */
#define IRIS_FUSED_TRACE_RECORD_BYTES 32
enum iris_fused_trace_kind {
    IRIS_FUSED_TRACE_COMPUTE = 0,     /* a consumer warpgroup's mainloop for one tile */
    IRIS_FUSED_TRACE_COMMUNICATE = 1, /* the same warpgroup's epilogue for that tile */
    IRIS_FUSED_TRACE_COPY = 2         /* the spare warps' copy of a tile half or a piece of A */
};

/* The one parameter of every fused kernel. M x N is the kernel's output, K its products per
 * element: all-scatter's N is this rank's columns (n_local), the reductions' K this rank's share. */
typedef struct iris_fused_args {
    iris_tma_descriptor a_map; /* A as the mainloop loads it (all-gather: the gathered A) */
    iris_tma_descriptor b_map; /* this rank's B */
    iris_ctx ctx;
    void* c;          /* all-scatter: symmetric M x ldc; all-reduce: symmetric M x ldc; reduce-scatter:
                         this rank's M / world rows x ldc; all-gather: local M x ldc */
    const void* bias; /* N elements of C's type, or null (the reductions: on one rank only) */
    void* a;          /* all-gather: the symmetric gathered A, M x K, this rank's rows filled; the portable
                         kernels: A (M x K, contiguous) for every operation; else null */
    void* partials;   /* reductions: the symmetric partial tiles (ws); all-gather with split-K: the local
                         f32 halves; else null */
    uint64_t* flags;  /* all-scatter spare warps: the handoff; reductions: the partials' flags (+ handoff);
                         all-gather: ready, clear and push-claim flags (+ split-K's flags and tickets);
                         zeroed when allocated */
    uint64_t* trace;  /* the _traced kernels' records; else null */
    uint64_t epoch;   /* grows by one per call; flags are compared with it */
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t ldc;     /* elements between rows of C */
    int32_t group_m; /* tile rows per group of the tile order */
    int32_t slices;  /* all-gather: units of K per tile, 1 or 2 (split-K); the others: 1 */
    const void* b;   /* the portable kernels (fused_portable.cu), which read A through a and B through
                        b instead of the maps: this rank's B; else null */
} iris_fused_args;

/* NVRTC has no constant offsetof (iris/gemm.cuh reaches this header through the split-K ranges). */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_fused_args, a_map) % 64 == 0 && offsetof(iris_fused_args, b_map) % 64 == 0,
              "iris_fused_args: TMA descriptors 64-byte aligned");
static_assert(offsetof(iris_fused_args, b_map) == 128 && offsetof(iris_fused_args, ctx) == 256 &&
                  offsetof(iris_fused_args, c) == 368 && offsetof(iris_fused_args, epoch) == 416 &&
                  offsetof(iris_fused_args, m) == 424 && offsetof(iris_fused_args, slices) == 444 &&
                  offsetof(iris_fused_args, b) == 448 && sizeof(iris_fused_args) == 512,
              "iris_fused_args: a 64-bit layout, padded to the descriptors' 64-byte alignment");
#endif

#endif
