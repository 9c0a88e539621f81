/* iris/abi/rma_bench.h: the interface of the remote-memory-access microbenchmarks (iris-bench,
 * rma_bench.cu; Java: dev.irisjvm.bench.rma.RmaKernels). One declaration of the launch constants,
 * the atomic operation codes, the wait sites and the argument struct every RMA kernel takes as its
 * one __grid_constant__ parameter; the JavaCPP build of iris-native generates the Java side from it.
 * It sits with the library's interface headers, although only the benchmark module uses it, so
 * that one generator and one JNI library serve every kernel interface: the device code stays in
 * iris-bench. */
#ifndef IRIS_ABI_RMA_BENCH_H
#define IRIS_ABI_RMA_BENCH_H

#include "iris/abi/ctx.h"

/* Independent 16-byte loads each thread issues before its first store. A remote load takes about
 * 1-2 us over NVLink; at ~400 GB/s the link's bandwidth-delay product is under 1 MB, and 8 words x
 * 16 B x 2048 threads x 132 SMs keeps ~34 MB in flight, so the copy is never latency-bound, at the
 * price of 32 data registers per thread. The host sizes copy grids by it. */
#define IRIS_RMA_BENCH_VECS_IN_FLIGHT 8
/* Atomics each thread issues per pass before it needs any result (distinct slots, so none of them
 * waits for another). Four keep the fetch-and-op forms (xchg, cas) from serializing on their round
 * trip while the per-thread state stays in a few registers. */
#define IRIS_RMA_BENCH_ATOMICS_IN_FLIGHT 4
/* The bulk copies' pipeline: stages of chunk bytes in dynamic shared memory (iris::bulk_smem_bytes). */
#define IRIS_RMA_BENCH_BULK_STAGES 4
#define IRIS_RMA_BENCH_BULK_CHUNK 16384

/* iris_rma_bench_args.op of the atomics. */
enum iris_rma_bench_atomic_op {
    IRIS_RMA_BENCH_ATOMIC_ADD_U64 = 0,  /* relaxed add of 1 to a uint64 slot, result unused */
    IRIS_RMA_BENCH_ATOMIC_XCHG_U64 = 1, /* exchange on a uint64 slot, the old value checked */
    IRIS_RMA_BENCH_ATOMIC_CAS_U64 = 2,  /* compare-and-swap on a uint64 slot, the old value checked */
    IRIS_RMA_BENCH_ATOMIC_ADD_F32 = 3   /* add of 1.0f to a float slot, result unused */
};

/* Wait sites (iris_device_status.site of a timeout). */
enum iris_rma_bench_site {
    IRIS_RMA_BENCH_SITE_GATE = 101,          /* rma_gate: the host word */
    IRIS_RMA_BENCH_SITE_PAIR_SYNC = 102,     /* rma_pair_sync: the peer's arrival */
    IRIS_RMA_BENCH_SITE_PRODUCER_ACK = 103,  /* producers: the consumer's acknowledgement */
    IRIS_RMA_BENCH_SITE_CONSUMER_FLAG = 104, /* consumers: the producer's flag (inline: its word) */
    IRIS_RMA_BENCH_SITE_PING_INITIATOR = 105,
    IRIS_RMA_BENCH_SITE_PING_RESPONDER = 106
};

/* The one parameter of every RMA benchmark kernel. Each kernel reads the fields its comment in
 * rma_bench.cu names; "symmetric" pointers point into this rank's heap and are translated to the
 * rank named, the others are device memory of this rank. */
typedef struct iris_rma_bench_args {
    iris_ctx ctx;
    void* dst;            /* copies: the destination; consumers, the all-reduce check: out; atomics: the slots; compare: a */
    const void* src;      /* copies, producers: the source; the all-reduce check: in; compare: b */
    void* landing;        /* message passing: the landing buffer, one range per channel */
    void* flags;          /* message passing: a uint64 per channel; ping-pong: the flag; pair sync: IRIS_MAX_RANKS slots;
                             gate: the host word */
    void* acks;           /* message passing: a uint64 per channel */
    void* result;         /* unsigned long long: done (producers, ping-pong), errors (consumers), failures (rma_atomic),
                             {mismatches, first} (compare, the checks) */
    uint64_t bytes;       /* copies, messages, compare */
    uint64_t count;       /* atomics: operations (slots); the all-reduce check: elements */
    uint64_t stride;      /* all-peer copies: bytes between the ranks' slots */
    uint64_t rows;        /* store_tiles: a rows x ld matrix of 2-byte elements */
    uint64_t ld;
    uint64_t seed;        /* atomics: the slots' starting values */
    uint64_t value;       /* atomics: the generation (the check: generations done); pair sync, gate: the value to reach */
    uint64_t seq0;        /* message passing, ping-pong: the sequence number earlier launches ended at */
    uint64_t iterations;  /* message passing: messages; ping-pong: rounds */
    uint32_t tile_rows;   /* store_tiles: the tile */
    uint32_t tile_cols;
    int32_t peer;         /* the rank the kernel reaches */
    int32_t op;           /* atomics: an iris_rma_bench_atomic_op */
    int32_t initiator;    /* ping-pong: nonzero on the rank that serves first */
    int32_t reserved;
} iris_rma_bench_args;

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_rma_bench_args, dst) == 112 && offsetof(iris_rma_bench_args, result) == 152 &&
                  offsetof(iris_rma_bench_args, bytes) == 160 && offsetof(iris_rma_bench_args, iterations) == 224 &&
                  offsetof(iris_rma_bench_args, tile_rows) == 232 && offsetof(iris_rma_bench_args, peer) == 240 &&
                  offsetof(iris_rma_bench_args, initiator) == 248 && sizeof(iris_rma_bench_args) == 256,
              "iris_rma_bench_args: a 64-bit layout without padding");
#endif

#endif
