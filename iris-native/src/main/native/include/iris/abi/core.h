/* iris/abi/core.h: the interface of the kernels behind the host API (iris-native, kernels/tile_ops.cu,
 * fill.cu, barrier.cu; Java: dev.irisjvm.core.CoreKernels, DType). One declaration of the element
 * type codes, the launch constants, the barrier's wait site and the argument struct each of these
 * kernels takes as its one __grid_constant__ parameter; the JavaCPP build generates the Java side. */
#ifndef IRIS_ABI_CORE_H
#define IRIS_ABI_CORE_H

#include "iris/abi/ctx.h"

/* Element types of symmetric tensors: the codes of Java's DType. */
enum iris_dtype {
    IRIS_DTYPE_F32 = 0,
    IRIS_DTYPE_F16 = 1,
    IRIS_DTYPE_BF16 = 2,
    IRIS_DTYPE_F64 = 3,
    IRIS_DTYPE_I32 = 4,
    IRIS_DTYPE_I64 = 5,
    IRIS_DTYPE_U8 = 6
};

/* Threads of every tile-operation and factory block. */
#define IRIS_CORE_THREADS 512
/* Threads of the barrier's one block: a lane per rank. */
#define IRIS_CORE_BARRIER_THREADS 32

/* The wait site of Iris.barrier(), so that a timeout names it. */
enum iris_core_site { IRIS_CORE_SITE_BARRIER = 1 };

/* Distributions of iris_random. */
enum iris_distribution {
    IRIS_DISTRIBUTION_UNIFORM = 0, /* [a, b) */
    IRIS_DISTRIBUTION_NORMAL = 1,  /* mean a, standard deviation b */
    IRIS_DISTRIBUTION_INTEGER = 2  /* integers in [a, b) */
};

/* tile_ops.cu: a rows x cols window, leading dimensions in elements. Copies: dst (on dst_rank) = src
 * (on src_rank). Atomic adds: dst (on dst_rank) += src, which is local (src_rank unused). */
typedef struct iris_tile_args {
    iris_ctx ctx;
    void* dst;
    uint64_t ld_dst;
    const void* src;
    uint64_t ld_src;
    uint64_t rows;
    uint64_t cols;
    int32_t dst_rank;
    int32_t src_rank;
} iris_tile_args;

/* fill.cu: n elements at dst. Fill: the bit pattern in the element's low bytes. Arange: dst[i] =
 * a + i b. Random: the distribution with a, b, seed. */
typedef struct iris_fill_args {
    void* dst;
    uint64_t n;
    uint64_t pattern;
    int32_t dtype;        /* an iris_dtype (arange, random) */
    int32_t distribution; /* an iris_distribution (random) */
    double a;
    double b;
    uint64_t seed;
} iris_fill_args;

/* barrier.cu: all ranks of ctx meet. */
typedef struct iris_barrier_args {
    iris_ctx ctx;
    int32_t site;
    int32_t reserved;
} iris_barrier_args;

/* NVRTC has no constant offsetof: the layout is pinned by every nvcc and host compile instead. */
#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
static_assert(offsetof(iris_tile_args, dst) == sizeof(iris_ctx) && offsetof(iris_tile_args, dst_rank) == sizeof(iris_ctx) + 48 &&
                  sizeof(iris_tile_args) == sizeof(iris_ctx) + 56,
              "iris_tile_args: the context, then a 64-bit layout without padding");
static_assert(offsetof(iris_fill_args, dtype) == 24 && offsetof(iris_fill_args, a) == 32 && sizeof(iris_fill_args) == 56,
              "iris_fill_args: a 64-bit layout without padding");
static_assert(offsetof(iris_barrier_args, site) == sizeof(iris_ctx) && sizeof(iris_barrier_args) == sizeof(iris_ctx) + 8,
              "iris_barrier_args: the context, then the site");
#endif

#endif
