/* iris/abi/ctx.h: the context every kernel receives, in the layout both sides read.
 *
 * Plain C, so that one declaration serves the device headers (iris/ctx.cuh names it iris::Ctx),
 * the host compiler, and Java: the JavaCPP build parses this header into the generated classes
 * dev.irisjvm.runtime.abi.iris_ctx and iris_device_status, whose native accessors are compiled
 * against this very declaration. The static_asserts pin the layout in every compiler that reads
 * it (nvcc, hipcc, the JNI build), so a change that moves a field fails to build rather than
 * passing a wrong offset at run time. */
#ifndef IRIS_ABI_CTX_H
#define IRIS_ABI_CTX_H

#include <stddef.h>
#include <stdint.h>

/* Most ranks one context can address (one node: 8 GPUs). */
#define IRIS_MAX_RANKS 8

/* Where a device-side failure is recorded. It lives in mapped host memory, so the host reads it
 * after a synchronize without a copy and raises an exception with these facts. The host also
 * writes into it: `abort` (with `lost_rank`) once this rank must stop waiting for its peers,
 * because one of them is gone; every bounded wait polls it. */
typedef struct iris_device_status {
    uint32_t code;        /* 0 while all is well, otherwise an iris_error_code */
    int32_t site;         /* waits: caller-chosen id of the wait; bad_address: source line */
    int32_t rank;         /* the rank that recorded the error */
    int32_t peer;         /* waits: the rank it was waiting for, or -1; bad_address: the target rank */
    uint64_t observed;    /* waits: the flag value last seen; bad_address: offset into the heap */
    uint64_t expected;    /* waits: the value waited for; bad_address: the heap size */
    uint64_t elapsed_ns;  /* waits: how long it waited; bad_address: bytes of the access */
    uint32_t abort;       /* written by the host: nonzero once a peer rank was lost (never cleared) */
    int32_t lost_rank;    /* written by the host before abort: the rank that was lost */
    const char* file;     /* bad_address: source file of the call (device memory of the module) */
    const char* function; /* bad_address: function that made the call, usually the kernel */
} iris_device_status;

/* iris_device_status.code. Kernel families add their own codes from 16 up. */
enum iris_error_code {
    IRIS_ERROR_CODE_OK = 0,
    IRIS_ERROR_CODE_WAIT_TIMEOUT = 1,    /* a wait passed the context's deadline */
    IRIS_ERROR_CODE_BARRIER_TIMEOUT = 2, /* a peer did not reach the barrier in time */
    IRIS_ERROR_CODE_COUNT_MISMATCH = 3,  /* all-to-all-v: a send count differs from the peer's receive count */
    IRIS_ERROR_CODE_ABORTED = 4,         /* a wait gave up because the host set abort (a rank was lost) */
    IRIS_ERROR_CODE_BAD_ADDRESS = 5,     /* checked builds: a translated address outside the heap or the ranks */
    IRIS_ERROR_CODE_BAD_LAUNCH = 6       /* a kernel refused a launch it cannot run (site: the check; observed: what the
                                            launch gave; expected: what the kernel needs) and returned */
};

/* What a kernel needs to reach every rank's symmetric heap. Passed by value (inside each kernel
 * family's argument struct), so it lives in the kernel parameter space: reading bases[] is a
 * constant bank load, not a trip to global memory. */
typedef struct iris_ctx {
    int32_t rank;                      /* this rank's index in its node (the node team) */
    int32_t world;                     /* number of ranks on this node: the ranks bases[] maps */
    uint64_t heap_size;                /* bytes in each rank's heap */
    uint64_t timeout_ns;               /* bound on every device-side wait */
    iris_device_status* status;        /* this rank's error record */
    uint64_t* barrier_flags;           /* symmetric: IRIS_MAX_RANKS arrival slots in every rank's heap */
    uint64_t* barrier_epoch;           /* this rank's barrier counter (never accessed remotely) */
    uint64_t bases[IRIS_MAX_RANKS];    /* each rank's heap base as mapped in this process */
} iris_ctx;

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(sizeof(iris_ctx) == 112 && offsetof(iris_ctx, heap_size) == 8 && offsetof(iris_ctx, timeout_ns) == 16 &&
                  offsetof(iris_ctx, status) == 24 && offsetof(iris_ctx, barrier_flags) == 32 &&
                  offsetof(iris_ctx, barrier_epoch) == 40 && offsetof(iris_ctx, bases) == 48,
              "iris_ctx: a 64-bit layout without padding");
static_assert(sizeof(iris_device_status) == 64 && offsetof(iris_device_status, observed) == 16 &&
                  offsetof(iris_device_status, abort) == 40 && offsetof(iris_device_status, file) == 48 &&
                  offsetof(iris_device_status, function) == 56,
              "iris_device_status: a 64-bit layout without padding");
#endif

#endif
