/* iris/abi/moe.h: the interface of the mixture-of-experts token exchange on the symmetric heap
 * (iris-kernels moe_dispatch.cu and moe_combine.cu over moe_common.cuh; Java:
 * dev.irisjvm.kernels.moe.MoeDispatch and MoeCombine), and of its low-latency mode for decode
 * (moe_ll.cu; Java: MoeLowLatency), whose declarations close the file. One declaration of the
 * launch constants, the workspace headers, the overflow policies, the wait sites, the error codes
 * and the argument structs that the MoE kernels take as their one __grid_constant__ parameter; the
 * JavaCPP build generates the Java side from it.
 *
 * Terms: a route is one (token, k) pair of a rank, numbered token * top_k + k; expert e lives on
 * rank e / local_experts as its local expert e % local_experts (local_experts = experts / world);
 * the capacity is the number of rows each local expert's receive buffer holds. */
#ifndef IRIS_ABI_MOE_H
#define IRIS_ABI_MOE_H

#include "iris/abi/ctx.h"
#include "iris/abi/tma.h"

/* Threads of every MoE block; the routing kernels rank this many routes at a time. */
#define IRIS_MOE_THREADS 512
/* Most blocks of a routing launch (dispatch): the per-block count rows are sized for this many. */
#define IRIS_MOE_MAX_BLOCKS 256
/* The host gives a routing launch one block per this many routes (at least 1, at most MAX_BLOCKS). */
#define IRIS_MOE_ROUTES_PER_BLOCK 512
/* Most experts of one layer (the count matrix and the kernels' shared counters are sized for it). */
#define IRIS_MOE_MAX_EXPERTS 1024
/* Threads that copy one row (of hidden elements) together. */
#define IRIS_MOE_ROW_LANES 32
/* Rows of a receive-buffer tile: the unit in which the copying kernel sends rows and counts them
 * arrived (iris_moe_args.arrivals), and the expert GEMM's tile (IRIS_GEMM_TILE_M). */
#define IRIS_MOE_TILE_ROWS 128

/* The workspace header, bytes from its start (symmetric; zeroed once at creation, never reset).
 * Local: only this rank's kernels touch it; remote: peers write this rank's copy. */
#define IRIS_MOE_WS_EPOCH 0           /* uint64, local: the epoch of the last dispatch */
#define IRIS_MOE_WS_TICKETS 8         /* uint32[4], local: blocks done in this call (count, place, combine, copy) */
#define IRIS_MOE_WS_CLAIMS 24         /* int32, local: the fed expert GEMM's next unit (zeroed by the counting kernel) */
#define IRIS_MOE_WS_STATS 64          /* iris_moe_stats, local: what the last dispatch did not deliver */
#define IRIS_MOE_WS_ARRIVE 128        /* uint64[IRIS_MAX_RANKS], remote: [src] = epoch once rank src's dispatch started */
#define IRIS_MOE_WS_COUNTS_READY 192  /* uint64[IRIS_MAX_RANKS], remote: [src] = epoch once rank src's counts are here */
#define IRIS_MOE_WS_ROWS_SENT 256     /* uint64[IRIS_MAX_RANKS], remote: [src] = epoch once rank src's rows are here */
#define IRIS_MOE_WS_RESULTS_SENT 320  /* uint64[IRIS_MAX_RANKS], remote: [src] = epoch once rank src's expert outputs are here */
#define IRIS_MOE_WS_MATRIX 1024       /* int32[IRIS_MAX_RANKS][IRIS_MOE_MAX_EXPERTS], remote: row src = rank src's routes per expert */
#define IRIS_MOE_WS_HEADER_BYTES 33792

/* iris_moe_args.policy: what happens to a route whose expert is full (its position in the
 * expert's rows, in the deterministic order, is at or beyond the capacity). Either way the row is
 * not delivered, combine gives it no contribution, and the stats count it. */
enum iris_moe_policy {
    IRIS_MOE_POLICY_FAIL = 0, /* also record IRIS_MOE_ERROR_CODE_OVER_CAPACITY on every rank (an exception) */
    IRIS_MOE_POLICY_DROP = 1  /* only count it */
};

/* Wait sites (iris_device_status.site of a timeout) and checks (the site of an MoE error code). */
enum iris_moe_site {
    IRIS_MOE_SITE_ARRIVE = 9301,        /* dispatch, counting: waits for a peer's dispatch to start */
    IRIS_MOE_SITE_COUNTS = 9302,        /* dispatch, sending: waits for a peer's routes per expert */
    IRIS_MOE_SITE_ROWS = 9303,          /* dispatch, end: waits for a peer's rows to arrive */
    IRIS_MOE_SITE_RESULTS = 9304,       /* combine, end of sending: waits for a peer's expert outputs */
    IRIS_MOE_SITE_OVER_CAPACITY = 9305, /* check (FAIL policy): an expert was routed more rows than it holds */
    IRIS_MOE_SITE_BAD_EXPERT = 9306,    /* check: a route named an expert outside [0, experts) (both modes) */
    IRIS_MOE_SITE_LL_ROWS = 9307,       /* low-latency dispatch, last block: waits for a source's rows to a local expert */
    IRIS_MOE_SITE_LL_RESULTS = 9308,    /* low-latency combine, reduce: waits for an owner's expert outputs */
    IRIS_MOE_SITE_TILE_ROWS = 9309      /* expert GEMM fed by the dispatch: waits for a receive-buffer tile's rows */
};

/* iris_device_status.code of the MoE checks (kernel families' codes start at 16). The record's
 * fields: over capacity: peer = the expert's rank, observed = routes to it from all ranks,
 * expected = the capacity, elapsed_ns = the expert (global id); the lowest such expert, recorded
 * alike on every rank. Bad expert: peer = -1, observed = the id (as int32, sign-extended),
 * expected = the number of experts, elapsed_ns = the route (token * top_k + k), the first of them. */
enum iris_moe_error_code {
    IRIS_MOE_ERROR_CODE_OVER_CAPACITY = 16,
    IRIS_MOE_ERROR_CODE_BAD_EXPERT = 17
};

/* What the last dispatch did not deliver (IRIS_MOE_WS_STATS). Its counting kernel resets it, its
 * sending kernel fills it; complete once the dispatch has finished on this rank's stream. */
typedef struct iris_moe_stats {
    uint32_t dropped_here;    /* routes of this rank that found their expert full */
    uint32_t dropped_all;     /* the same over all ranks (the same number on every rank) */
    uint32_t bad_here;        /* routes of this rank whose expert id was out of range */
    uint32_t full_experts;    /* experts (all ranks') routed more rows than the capacity */
    uint32_t first_bad_route; /* the lowest such route of this rank, or 0xFFFFFFFF */
    uint32_t first_full;      /* the lowest expert (all ranks') routed more rows than the capacity, or 0xFFFFFFFF */
    uint32_t reserved[2];
} iris_moe_stats;

/* The one parameter of every MoE kernel. Device addresses are untyped, as in every argument struct
 * (the generated Java setters then take any address); the element types are the comments'. Each
 * kernel reads the fields its operation names (moe_dispatch.cu, moe_combine.cu). */
typedef struct iris_moe_args {
    iris_ctx ctx;
    void* workspace;           /* this instance's workspace header, symmetric (IRIS_MOE_WS_*) */
    void* block_counts;        /* int32 [IRIS_MOE_MAX_BLOCKS][experts], local: per-block counts, then bases */
    void* routes;              /* int32 [max_tokens * top_k], local: each route's row in its expert, or -1 */
    void* route_weights;       /* f32 [max_tokens * top_k], local: the routing weights, kept for combine */
    void* recv;                /* bf16 [local_experts][capacity][hidden], symmetric: the rows each local expert got */
    void* sources;             /* int32 [local_experts][capacity][2], symmetric: each row's source rank and route */
    void* counts;              /* int32 [local_experts], local: rows each local expert got (at most the capacity) */
    void* routed;              /* int32 [local_experts], local: routes to each local expert from all ranks */
    void* staging;             /* bf16 [max_tokens * top_k][hidden], symmetric: combine's expert outputs, per route */
    const void* tokens;        /* dispatch: bf16 [tokens][hidden], local */
    const void* expert_ids;    /* dispatch: int32 [tokens][top_k], local */
    const void* weights;       /* dispatch: f32 [tokens][top_k], local */
    const void* expert_out;    /* combine: bf16 [local_experts][capacity][hidden], local */
    void* out;                 /* combine: bf16 [tokens][hidden], local */
    int32_t tokens_n;          /* this rank's tokens in this call (dispatch, and the combine that follows it) */
    int32_t hidden;            /* elements per row, a multiple of 8 */
    int32_t experts;           /* all ranks' experts, a multiple of the world size */
    int32_t top_k;
    int32_t capacity;          /* rows per local expert */
    int32_t policy;            /* iris_moe_policy */
    void* expert_base;         /* int32 [experts], local: where each expert's routes start in by_expert */
    void* by_expert;           /* int32 [max_tokens * top_k], local: this rank's routes grouped by expert, in route order */
    void* arrivals;            /* uint64 [local_experts][ceil(capacity / IRIS_MOE_TILE_ROWS)], symmetric: rows of each
                                  receive-buffer tile that have arrived in this call (zeroed by the counting kernel) */
} iris_moe_args;

/* ---- The low-latency mode (moe_ll.cu; Java: dev.irisjvm.kernels.moe.MoeLowLatency) ------------
 * No count exchange before the rows: on every owner, each local expert l has a fixed region per
 * source rank src of region_rows = max_tokens * top_k rows, row (l, src, j) at index
 * (l * world + src) * region_rows + j of the receive buffer [local_experts][world][region_rows].
 * Source src writes its routes to l there in route order, then the count it wrote and a release
 * signal of the call's epoch. A region holds all of a source's routes, so nothing overflows. */

/* The low-latency workspace header, bytes from its start (symmetric; zeroed once, never reset). The
 * epoch and the tickets lie where IRIS_MOE_WS_EPOCH and IRIS_MOE_WS_TICKETS do, so that the two
 * modes share moe_common.cuh's epoch and last-block code. */
#define IRIS_MOE_LL_WS_RESULTS 64        /* uint64[IRIS_MAX_RANKS], remote: [owner] = epoch once its outputs for this rank are here */
#define IRIS_MOE_LL_WS_ROWS_SIGNAL 1024  /* uint64[IRIS_MOE_MAX_EXPERTS], remote: [l * world + src] = epoch once src's rows to l are here */
#define IRIS_MOE_LL_WS_ROWS_COUNT 9216   /* int32[IRIS_MOE_MAX_EXPERTS], remote: [l * world + src] = rows src wrote to l (valid with the signal) */
#define IRIS_MOE_LL_WS_HEADER_BYTES 13312

/* The one parameter of the low-latency kernels (moe_ll.cu). */
typedef struct iris_moe_ll_args {
    iris_ctx ctx;
    void* workspace;           /* the low-latency header, symmetric (IRIS_MOE_LL_WS_*) */
    void* routes;              /* int32 [max_tokens * top_k], local: each route's row in its region, or -1 */
    void* route_weights;       /* f32 [max_tokens * top_k], local: the routing weights, kept for combine */
    void* recv;                /* bf16 [local_experts][world][region_rows][hidden], symmetric */
    void* recv_routes;         /* int32 [local_experts][world][region_rows], symmetric: each row's route at its source */
    void* counts;              /* int32 [local_experts][world], local: rows of each region valid in this call */
    void* staging;             /* bf16 [max_tokens * top_k][hidden], symmetric: combine's expert outputs, per route */
    const void* tokens;        /* dispatch: bf16 [tokens][hidden], local */
    const void* expert_ids;    /* dispatch: int32 [tokens][top_k], local */
    const void* weights;       /* dispatch: f32 [tokens][top_k], local */
    const void* expert_out;    /* combine: bf16, the receive buffer's shape, local */
    void* out;                 /* combine: bf16 [tokens][hidden], local */
    int32_t tokens_n;          /* this rank's tokens in this call (dispatch, and the combine that follows it) */
    int32_t hidden;            /* elements per row, a multiple of 8 */
    int32_t experts;           /* all ranks' experts, a multiple of the world size */
    int32_t top_k;
    int32_t region_rows;       /* rows of one (local expert, source) region: max_tokens * top_k */
    int32_t reserved;          /* zero: keeps the struct free of tail padding */
} iris_moe_ll_args;

/* ---- The expert GEMM (moe_expert_gemm.cu; Java: dev.irisjvm.kernels.moe.MoeExpertGemm) --------
 * One launch computes, for every local expert l and every received row j < counts[l],
 *   Y[l][j] = recv[l][j] x W[l]^T        (recv: [local_experts][capacity][k], W: [local_experts][n][k])
 * on the GEMM mainloop (iris/gemm/persistent.cuh): A is the whole receive buffer as one
 * (local_experts * capacity) x k matrix, B the weights as one (local_experts * n) x k matrix. A tile
 * never straddles two experts: capacity and n are multiples of the tile (IRIS_GEMM_TILE_M, and the
 * kernel's tile width), which the host checks. Tiles are scheduled over the rows the counts say
 * (read on the device), rows past a count are computed from stale rows and never stored.
 *   moe_expert_gemm_n<tile>          Y goes to out, bf16 [local_experts][capacity][n]
 *   moe_expert_gemm_combine_n<tile>  row j of expert l goes straight to its source's combine staging
 *                                    (sources[l][j] = {rank, route}: out is the symmetric staging,
 *                                    bf16 [routes][n], n = hidden); moe_combine_publish and
 *                                    moe_combine_reduce (iris_moe_args) then finish the combine.
 *   moe_expert_gemm_fed_n<tile>, moe_expert_gemm_fed_combine_n<tile>
 *                                    the same, fed by the dispatch: launched to start beside
 *                                    moe_dispatch_copy (programmatic dependent launch), its CTAs
 *                                    claim units in order as they become free (claims), the
 *                                    producer waits before a tile's first loads until arrivals
 *                                    holds the rows the tile's expert count puts in it (site
 *                                    9309); the kernel finishes after moe_dispatch_copy. */

/* The one parameter of the expert GEMM kernels (moe_expert_gemm.cu). */
typedef struct iris_moe_gemm_args {
    iris_tma_descriptor a_map; /* the receive buffer, (local_experts * capacity) x k, bf16 */
    iris_tma_descriptor b_map; /* the weights, (local_experts * n) x k, bf16 */
    iris_ctx ctx;
    const void* counts;        /* int32 [local_experts], local: rows of each expert (at most the capacity) */
    const void* sources;       /* combine: int32 [local_experts][capacity][2], symmetric: each row's source rank and route */
    void* out;                 /* gemm: bf16 [local_experts][capacity][n], local; combine: the staging, symmetric */
    int32_t local_experts;
    int32_t capacity;          /* rows per local expert, a multiple of IRIS_GEMM_TILE_M */
    int32_t n;                 /* output columns per expert, a multiple of the kernel's tile width */
    int32_t k;                 /* products per output element (hidden), a multiple of 8 */
    const void* arrivals;      /* fed kernels: iris_moe_args.arrivals, rows of each tile arrived */
    void* claims;              /* fed kernels: the workspace's IRIS_MOE_WS_CLAIMS, the next unit a CTA takes */
    int32_t reserved[6];       /* zero: keeps the struct free of tail padding */
} iris_moe_gemm_args;

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(sizeof(iris_moe_stats) == 32, "iris_moe_stats: eight words");
static_assert(offsetof(iris_moe_args, workspace) == 112 && offsetof(iris_moe_args, staging) == 176 &&
                  offsetof(iris_moe_args, out) == 216 && offsetof(iris_moe_args, tokens_n) == 224 &&
                  offsetof(iris_moe_args, policy) == 244 && offsetof(iris_moe_args, arrivals) == 264 &&
                  sizeof(iris_moe_args) == 272,
              "iris_moe_args: a 64-bit layout without padding");
static_assert(IRIS_MOE_WS_MATRIX + IRIS_MAX_RANKS * IRIS_MOE_MAX_EXPERTS * 4 == IRIS_MOE_WS_HEADER_BYTES,
              "moe workspace header: the count matrix ends it");
static_assert(IRIS_MOE_WS_TICKETS + 16 <= IRIS_MOE_WS_CLAIMS && IRIS_MOE_WS_CLAIMS + 4 <= IRIS_MOE_WS_STATS &&
                  IRIS_MOE_WS_STATS + sizeof(iris_moe_stats) <= IRIS_MOE_WS_ARRIVE &&
                  IRIS_MOE_WS_RESULTS_SENT + IRIS_MAX_RANKS * 8 <= IRIS_MOE_WS_MATRIX,
              "moe workspace header: fields overlap");
static_assert(offsetof(iris_moe_ll_args, workspace) == 112 && offsetof(iris_moe_ll_args, out) == 200 &&
                  offsetof(iris_moe_ll_args, tokens_n) == 208 && sizeof(iris_moe_ll_args) == 232,
              "iris_moe_ll_args: a 64-bit layout without padding");
static_assert(IRIS_MOE_WS_TICKETS + 16 <= IRIS_MOE_LL_WS_RESULTS &&
                  IRIS_MOE_LL_WS_RESULTS + IRIS_MAX_RANKS * 8 <= IRIS_MOE_LL_WS_ROWS_SIGNAL &&
                  IRIS_MOE_LL_WS_ROWS_SIGNAL + IRIS_MOE_MAX_EXPERTS * 8 == IRIS_MOE_LL_WS_ROWS_COUNT &&
                  IRIS_MOE_LL_WS_ROWS_COUNT + IRIS_MOE_MAX_EXPERTS * 4 == IRIS_MOE_LL_WS_HEADER_BYTES,
              "moe low-latency workspace header: fields overlap");
static_assert(offsetof(iris_moe_gemm_args, b_map) == 128 && offsetof(iris_moe_gemm_args, ctx) == 256 &&
                  offsetof(iris_moe_gemm_args, counts) == 368 && offsetof(iris_moe_gemm_args, local_experts) == 392 &&
                  offsetof(iris_moe_gemm_args, arrivals) == 408 && offsetof(iris_moe_gemm_args, claims) == 416 &&
                  offsetof(iris_moe_gemm_args, reserved) == 424 &&
                  sizeof(iris_moe_gemm_args) == 448,
              "iris_moe_gemm_args: a 64-bit layout without padding");
#endif

#endif
