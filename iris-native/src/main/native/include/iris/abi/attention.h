/* iris/abi/attention.h: the interface of attention forward and ring attention (iris-kernels,
 * attention.cu over attention/flash_forward.cuh; Java: dev.irisjvm.kernels.attention.Attention).
 * One declaration of the launch constants, the mode bits, the sites and the argument struct every
 * attention kernel takes as its one __grid_constant__ parameter; the JavaCPP build generates the
 * Java side from it. */
#ifndef IRIS_ABI_ATTENTION_H
#define IRIS_ABI_ATTENTION_H

#include "iris/abi/ctx.h"
#include "iris/abi/tma.h"

/* Threads of every attention block: a TMA producer warpgroup and two consumer warpgroups. */
#define IRIS_ATTENTION_THREADS 384
/* Query rows of a block and keys of a K/V tile: sequence and chunk lengths are multiples of it. */
#define IRIS_ATTENTION_TILE 128
/* Every tensor map reads boxes of IRIS_ATTENTION_TILE rows of this many elements: 128 bytes of a
 * 16-bit type, the span of the 128-byte swizzle the kernels' shared-memory layout expects. */
#define IRIS_ATTENTION_BOX_INNER 64
#define IRIS_ATTENTION_SWIZZLE_BYTES 128
/* Dynamic shared memory of a block, per head dimension: a Q tile, two stages of K and V tiles, and
 * 1 KiB to align them. The host launches with exactly this; a kernel given less does nothing. */
#define IRIS_ATTENTION_SHARED_BYTES_D64 82944
#define IRIS_ATTENTION_SHARED_BYTES_D128 164864
/* The forward kernels at head size IRIS_ATTENTION_WIDE_HEAD_DIM
 * (iris_attention_fwd_<in>_d64[_causal], not the ring steps) run blocks of IRIS_ATTENTION_WIDE_ROWS
 * query rows: three consumer warpgroups, so that the tensor cores have a third warpgroup's
 * products to run while two compute their softmax. Grid
 * (ceil(Sq / IRIS_ATTENTION_WIDE_ROWS), Hq, B); the last block's rows past Sq (none, 64 or 128) are
 * neither computed nor written. Dynamic shared memory: Q as two 128-row boxes, three stages of K
 * and V (the causal kernels use two), 1 KiB to align them. */
#define IRIS_ATTENTION_WIDE_HEAD_DIM 64
#define IRIS_ATTENTION_WIDE_ROWS 192
#define IRIS_ATTENTION_WIDE_THREADS 512
#define IRIS_ATTENTION_WIDE_SHARED_BYTES_D64 132096

/* The portable kernels (attention_portable.cu: mma.sync, every NVIDIA GPU since Ampere): eight
 * warps of 16 query rows each, so a block covers IRIS_ATTENTION_TILE query rows as the Hopper one
 * does and the two share their grid. Dynamic shared memory: a Q tile and two stages of 64-key K and
 * V tiles, at most 99 KiB so that a block fits sm_86 and sm_89. A kernel given less does nothing. */
#define IRIS_ATTENTION_PORTABLE_THREADS 256
#define IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D64 49152
#define IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D128 98304

/* iris_attention_args.mode: how a ring step starts and ends (attention forward: FINALIZE). */
enum iris_attention_mode {
    IRIS_ATTENTION_LOAD_STATE = 1, /* start from o_acc / row_max / row_sum instead of zero */
    IRIS_ATTENTION_FINALIZE = 2    /* write O and the log-sum-exp; otherwise write the state back */
};

/* Sites a recorded error names (iris_device_status.site). */
enum iris_attention_site {
    IRIS_ATTENTION_SITE_SECOND_SHARD = 9201, /* last steps: the wait for second_ready */
    IRIS_ATTENTION_SITE_SHARED_BYTES = 9202  /* last steps: launched with less dynamic shared memory than it needs */
};

/* Global positions of a shard's rows: local row i lies in chunk i / len (0 or 1), whose global
 * chunk id is first or second, so its position is id * len + i % len. A causal kernel shows a key
 * to a query when the key's position is at most the query's. */
typedef struct iris_attention_chunks {
    int32_t len;    /* rows per chunk, a multiple of IRIS_ATTENTION_TILE */
    int32_t first;  /* global id of local rows [0, len) */
    int32_t second; /* global id of local rows [len, 2 len) */
} iris_attention_chunks;

/* The one parameter of every attention kernel. Q [B, Hq, Sq, D], K and V [B, Hkv, Skv, D], O like
 * Q, all row-major 16-bit; the maps see each as a [rows, D] matrix. Each kernel reads the fields its
 * name says: forward the maps q/k/v, o, lse and the shapes (it finalizes, its chunks are one each
 * with id 0); a ring step also mode, the state and q/kv_chunks; the last steps everything. The
 * portable kernels read q/k/v (raw addresses) instead of the maps, and have no last steps. */
typedef struct iris_attention_args {
    iris_tma_descriptor q_map;
    iris_tma_descriptor k_map;  /* the (first) K/V shard, read at once */
    iris_tma_descriptor v_map;
    iris_tma_descriptor k2_map; /* last steps: the second shard, read once *second_ready is 1 */
    iris_tma_descriptor v2_map;
    iris_ctx ctx;               /* last steps: bounds the wait for second_ready and records errors */
    /* Device addresses the host sets per call, untyped as in every argument struct (the generated
     * Java setters then take any address); the element types are the comments'. */
    void* o;                    /* like Q */
    void* lse;                  /* f32 per query row: natural log of the softmax denominator, or null */
    void* o_acc;                /* ring state: f32 like O, un-normalized O */
    void* row_max;              /* ring state: f32 per query row, running max, log2 units, scaled */
    void* row_sum;              /* ring state: f32 per query row, running sum */
    const void* second_ready;   /* last steps: a uint64_t whose low half a stream write sets to 1 */
    int32_t mode;               /* iris_attention_mode bits */
    int32_t sq;
    int32_t skv;
    int32_t hq;
    int32_t hkv;
    float scale_log2;           /* softmax scale * log2(e) */
    iris_attention_chunks q_chunks;
    iris_attention_chunks kv_chunks;
    iris_attention_chunks second_chunks; /* last steps: the second shard's */
    const void* q;              /* portable kernels: Q, K and V of the (first) shard, 16-byte aligned */
    const void* k;
    const void* v;
} iris_attention_args;

#ifdef __cplusplus
static_assert(sizeof(iris_attention_chunks) == 12, "iris_attention_chunks: three ints");
static_assert(offsetof(iris_attention_args, q_map) % 64 == 0 && offsetof(iris_attention_args, k_map) % 64 == 0 &&
                  offsetof(iris_attention_args, v_map) % 64 == 0 && offsetof(iris_attention_args, k2_map) % 64 == 0 &&
                  offsetof(iris_attention_args, v2_map) % 64 == 0,
              "iris_attention_args: TMA reads its descriptors 64-byte aligned");
static_assert(offsetof(iris_attention_args, ctx) == 640 && offsetof(iris_attention_args, o) == 752 &&
                  offsetof(iris_attention_args, mode) == 800 && offsetof(iris_attention_args, q_chunks) == 824 &&
                  offsetof(iris_attention_args, second_chunks) == 848 && offsetof(iris_attention_args, q) == 864 &&
                  offsetof(iris_attention_args, v) == 880 && sizeof(iris_attention_args) == 896,
              "iris_attention_args: five descriptors, the context, then a 64-bit layout (the size rounds up to 64)");
static_assert(sizeof(iris_attention_args) <= 4096, "iris_attention_args: inside the kernel parameter space");
#endif

#endif
