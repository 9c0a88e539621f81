// harness_common.cuh: what every native harness needs: checked CUDA calls, 2-D tensor maps encoded
// through the driver entry point (no libcuda link, like iris_tensor_map_2d), bf16 <-> float, random
// bf16 inputs filled on the GPU, an L2 eviction between timed launches, and cuBLAS loaded with dlopen
// for a same-run baseline.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "iris/abi/gemm.h"
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

/// The plain GEMM's tensor map of a row-major bf16 C (m x n, row pitch n; iris_gemm_args' c_map):
/// boxes of IRIS_GEMM_SWIZZLE_BYTES of columns x IRIS_GEMM_STORE_BOX_ROWS rows.
inline TmaDescriptor map_output(const void* c, uint64_t m, uint64_t n) {
    return map2d(c, n, m, n * 2, IRIS_GEMM_SWIZZLE_BYTES / 2, IRIS_GEMM_STORE_BOX_ROWS);
}

__host__ __device__ inline uint16_t f2bf(float f) {
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

/// n standard normal values rounded to bf16, drawn from rng on the host.
inline std::vector<uint16_t> random_normal_bf16(size_t n, std::mt19937& rng) {
    std::normal_distribution<float> normal(0, 1);
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = f2bf(normal(rng));
    return v;
}

/// x[i] uniform in [-amplitude, amplitude), rounded to bf16: a hash of the index and the seed, so
/// that inputs of any size are filled on the GPU in no time.
static __global__ void fill_uniform_bf16_kernel(uint16_t* x, size_t n, uint32_t seed, float amplitude) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        uint32_t h = uint32_t(i) * 0x9E3779B1u ^ uint32_t(i >> 32) * 0x85EBCA77u ^ seed;
        h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
        x[i] = f2bf(((h >> 8) * (2.f / 16777216.f) - 1.f) * amplitude);
    }
}

inline void fill_uniform_bf16(void* x, size_t n, uint32_t seed, float amplitude) {
    fill_uniform_bf16_kernel<<<528, 256>>>(static_cast<uint16_t*>(x), n, seed, amplitude);
    CK(cudaGetLastError());
}

static __global__ void read_through_kernel(const float4* x, size_t n, float* sink) {
    float s = 0.f;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float4 v = x[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 1.f) *sink = s;  // the buffer is zeros: never written, but the reads stay
}

/// Operands read from HBM, as the Java benchmarks read them (their input sets rotate through twice the
/// L2): called before each timed launch, it reads twice the L2's size, evicting what the last launch
/// left there. Reads, not a memset: no dirty lines are written back while the timed launch runs.
struct L2Evictor {
    float4* buffer = nullptr;
    size_t count = 0;
    float* sink = nullptr;

    L2Evictor() {
        int l2 = 0;
        CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        count = 2 * size_t(l2) / sizeof(float4);
        CK(cudaMalloc(&buffer, count * sizeof(float4)));
        CK(cudaMemset(buffer, 0, count * sizeof(float4)));
        CK(cudaMalloc(&sink, sizeof(float)));
    }
    ~L2Evictor() {
        cudaFree(buffer);
        cudaFree(sink);
    }
    L2Evictor(const L2Evictor&) = delete;
    L2Evictor& operator=(const L2Evictor&) = delete;

    void operator()() const {
        read_through_kernel<<<528, 256>>>(buffer, count, sink);
        CK(cudaGetLastError());
    }
};

/// cuBLAS through dlopen (libcublas.so.13, else libcublas.so): a handle, or none where the library
/// is not there, and the row-major bf16 product with f32 accumulation the harnesses compare with.
struct Cublas {
    using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                           const void*, void*, int, int, int, int);
    void* lib = nullptr;
    void* handle = nullptr;
    GemmEx gemm_ex = nullptr;

    static Cublas load() {
        Cublas c;
        for (const char* name : {"libcublas.so.13", "libcublas.so"}) {
            if ((c.lib = dlopen(name, RTLD_NOW)) != nullptr) break;
        }
        if (c.lib == nullptr) {
            printf("no cublas: %s\n", dlerror());
            return c;
        }
        if (reinterpret_cast<int (*)(void**)>(dlsym(c.lib, "cublasCreate_v2"))(&c.handle) != 0) c.handle = nullptr;
        c.gemm_ex = reinterpret_cast<GemmEx>(dlsym(c.lib, "cublasGemmEx"));
        return c;
    }

    void set_stream(cudaStream_t s) const {
        reinterpret_cast<int (*)(void*, cudaStream_t)>(dlsym(lib, "cublasSetStream_v2"))(handle, s);
    }

    /// Row-major C (m x n) = A (m x k) B, B n x k (nk) or k x n (kn): column-major C^T = B^T A^T.
    void gemm_bf16(int m, int n, int k, bool kn, const void* a, const void* b, void* c) const {
        const float one = 1, zero = 0;
        const int r = gemm_ex(handle, kn ? 0 : 1, 0, n, m, k, &one, b, 14, kn ? n : k, a, 14, k, &zero, c, 14, n, 68, -1);
        if (r != 0) {
            printf("cublasGemmEx: %d\n", r);
            exit(1);
        }
    }
};
