// harness_common.cuh: what every native harness needs: checked CUDA calls, 2-D tensor maps encoded
// through the driver entry point (no libcuda link, like iris_tensor_map_2d), and bf16 <-> float.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "iris/abi/tma.h"

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e = (x);                                                                                \
        if (e != cudaSuccess) {                                                                             \
            printf("CUDA %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e));                \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

using TmaDescriptor = iris_tma_descriptor;  // iris/abi/tma.h

/// A bf16 tensor map over a [outer, inner] matrix, 128-byte swizzle, zero fill past the edges.
inline TmaDescriptor map2d(const void* base, uint64_t inner, uint64_t outer, uint64_t stride_bytes, uint32_t box_inner,
                           uint32_t box_outer) {
    using EncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                  const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    static EncodeFn encode = [] {
        EncodeFn fn = nullptr;
        cudaDriverEntryPointQueryResult q;
        CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&fn), 12000,
                                            cudaEnableDefault, &q));
        return fn;
    }();
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer};
    cuuint64_t strides[1] = {stride_bytes};
    cuuint32_t box[2] = {box_inner, box_outer};
    cuuint32_t element_strides[2] = {1, 1};
    CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
                        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("cuTensorMapEncodeTiled failed: %d\n", r);
        exit(1);
    }
    TmaDescriptor d;
    memcpy(&d, &m, sizeof d);
    return d;
}

/// Attention's maps: a [rows, D] matrix in boxes of {64, 128}.
inline TmaDescriptor map_rows(const void* base, uint64_t head_dim, uint64_t rows) {
    return map2d(base, head_dim, rows, head_dim * 2, 64, 128);
}

inline uint16_t f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return u >> 16;
}

inline float bf2f(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
