/* iris/abi/ccl.h: the interface of the device-initiated collectives (iris-kernels, ccl_*.cu;
 * Java: dev.irisjvm.kernels.ccl.Collectives). One declaration of the launch constants, the
 * workspace sizes, the wait sites and the argument struct every collective kernel takes as its
 * one __grid_constant__ parameter; the JavaCPP build generates the Java side from it. */
#ifndef IRIS_ABI_CCL_H
#define IRIS_ABI_CCL_H

#include "iris/abi/ctx.h"

/* Threads of every collective block. */
#define IRIS_CCL_THREADS 512
/* Most blocks of one collective launch (the flag arrays are sized for this many). */
#define IRIS_CCL_MAX_BLOCKS 256
/* Bytes of the workspace before the two staging buffers (flags, counters, all-to-all-v meta). */
#define IRIS_CCL_HEADER_BYTES 65536
/* Bytes after the staging buffers for the inline-flag packets of small reductions. */
#define IRIS_CCL_LL_AREA_BYTES 2097152

/* Wait sites: a collective's base plus the wait's offset, so a timeout names both. */
enum iris_ccl_site {
    IRIS_CCL_SITE_ALL_REDUCE_ONE_SHOT = 7100,
    IRIS_CCL_SITE_ALL_REDUCE_TWO_SHOT = 7200,
    IRIS_CCL_SITE_ALL_REDUCE_RING = 7300,
    IRIS_CCL_SITE_ALL_REDUCE_ATOMIC = 7400,
    IRIS_CCL_SITE_ALL_GATHER = 7500,
    IRIS_CCL_SITE_REDUCE_SCATTER = 7600,
    IRIS_CCL_SITE_BROADCAST = 7700,
    IRIS_CCL_SITE_ALL_TO_ALL = 7800,
    IRIS_CCL_SITE_ALL_TO_ALL_V = 7900
};

enum iris_ccl_wait {
    IRIS_CCL_WAIT_ARRIVE = 1,    /* a peer's arrive of this call (entry) */
    IRIS_CCL_WAIT_DATA = 2,      /* a peer's data flag, first phase */
    IRIS_CCL_WAIT_DATA_2 = 3,    /* a peer's data flag, second phase */
    IRIS_CCL_WAIT_ACK = 4,       /* a peer's acknowledgement (ring) */
    IRIS_CCL_COUNT_MISMATCH = 8, /* all-to-all-v: send count != the peer's receive count */
    IRIS_CCL_WAIT_EXIT = 9       /* block 0's exit check of every peer's arrive */
};

/* all-to-all-v counts and displacements, in elements of elem_bytes. */
typedef struct iris_ccl_counts {
    uint64_t send_count[IRIS_MAX_RANKS];
    uint64_t send_displ[IRIS_MAX_RANKS];
    uint64_t recv_count[IRIS_MAX_RANKS];
    uint64_t recv_displ[IRIS_MAX_RANKS];
    uint64_t elem_bytes;
} iris_ccl_counts;

/* The one parameter of every collective kernel. Each kernel reads the fields its operation names. */
typedef struct iris_ccl_args {
    iris_ctx ctx;
    uint8_t* workspace;      /* this instance's workspace on the symmetric heap */
    uint64_t staging_bytes;  /* bytes of each staging parity */
    const void* in;          /* the input (broadcast: unused) */
    void* out;               /* the output (broadcast: the buffer, in place) */
    uint64_t count;          /* reductions: elements of out's... see each kernel; copies: bytes */
    int32_t root;            /* broadcast: the rank whose buffer everyone receives */
    int32_t reserved;
    const void* stage;       /* copy-engine all-reduce, one chunk: the peers' copies, stride bytes apart */
    uint64_t stride;
    uint64_t begin;          /* the chunk's elements [begin, end) */
    uint64_t end;
    iris_ccl_counts counts;  /* all-to-all-v */
} iris_ccl_args;

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(sizeof(iris_ccl_counts) == 264, "iris_ccl_counts: 33 words");
static_assert(offsetof(iris_ccl_args, workspace) == 112 && offsetof(iris_ccl_args, root) == 152 &&
                  offsetof(iris_ccl_args, stage) == 160 && offsetof(iris_ccl_args, counts) == 192 &&
                  sizeof(iris_ccl_args) == 456,
              "iris_ccl_args: a 64-bit layout without padding");
#endif

#endif
