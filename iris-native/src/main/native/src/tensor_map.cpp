// tensor_map.cpp: TMA descriptors (CUtensorMap) for kernels that copy tiles with Hopper's tensor
// memory accelerator, e.g. the GEMM's mainloop.
//
// The descriptor is encoded on the host by the driver's cuTensorMapEncodeTiled (driver_api.h). The
// arguments are checked here first, against the rules the driver documents, so that a bad argument
// fails with a message naming it rather than with the driver's bare CUDA_ERROR_INVALID_VALUE. HIP
// has no tensor maps: IRIS_ERROR_UNSUPPORTED.
#include <atomic>
#include <cstdio>
#include <cstring>

#include "check.h"
#include "driver_api.h"

namespace {

constexpr const char* kFunction = "iris_tensor_map_2d";

#if !defined(IRIS_PLATFORM_HIP)
// Driver limits of cuTensorMapEncodeTiled (cuda.h).
constexpr uint64_t kMaxDim = 1ull << 32;
constexpr uint64_t kMaxStride = 1ull << 40;
constexpr uint32_t kMaxBox = 256;

int element_bytes(int element_type) {
    switch (element_type) {
        case IRIS_TMA_F32: return 4;
        case IRIS_TMA_F16: return 2;
        case IRIS_TMA_BF16: return 2;
        default: return 0;
    }
}

// Records "iris_tensor_map_2d: <formatted message>" and returns IRIS_ERROR_INVALID_ARGUMENT.
template <class... Args>
int invalid(const char* format, Args... args) {
    char message[320];
    std::snprintf(message, sizeof(message), format, args...);
    return iris::fail(IRIS_ERROR_INVALID_ARGUMENT, kFunction, message);
}

int validate(const uint8_t* descriptor, int element_type, uint64_t base, uint64_t inner, uint64_t outer,
             uint64_t stride, uint32_t box_inner, uint32_t box_outer, int swizzle) {
    using ull = unsigned long long;
    if (descriptor == nullptr) return invalid("NULL descriptor (it needs %d bytes)", IRIS_TENSOR_MAP_BYTES);
    const int bytes = element_bytes(element_type);
    if (bytes == 0) {
        return invalid("element_type %d is not IRIS_TMA_F32 (0), IRIS_TMA_F16 (1) or IRIS_TMA_BF16 (2)", element_type);
    }
    if (base == 0) return invalid("base is NULL");
    if (base % 16 != 0) return invalid("base 0x%llx is not 16-byte aligned", static_cast<ull>(base));
    if (inner < 1 || inner > kMaxDim) return invalid("inner_elements %llu is outside [1, 2^32]", static_cast<ull>(inner));
    if (outer < 1 || outer > kMaxDim) return invalid("outer_elements %llu is outside [1, 2^32]", static_cast<ull>(outer));
    if (stride % 16 != 0) {
        return invalid("outer_stride_bytes %llu is not a multiple of 16", static_cast<ull>(stride));
    }
    if (stride >= kMaxStride) return invalid("outer_stride_bytes %llu is not below 2^40", static_cast<ull>(stride));
    if (stride < inner * bytes) {
        return invalid("outer_stride_bytes %llu is less than a row (inner_elements %llu x %d bytes)",
                       static_cast<ull>(stride), static_cast<ull>(inner), bytes);
    }
    if (box_inner < 1 || box_inner > kMaxBox) return invalid("box_inner %u is outside [1, 256]", box_inner);
    if (box_outer < 1 || box_outer > kMaxBox) return invalid("box_outer %u is outside [1, 256]", box_outer);
    if (box_inner * bytes % 16 != 0) {
        return invalid("box_inner %u x %d bytes is not a multiple of 16 bytes", box_inner, bytes);
    }
    if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
        return invalid("swizzle_bytes %d is not 0, 32, 64 or 128", swizzle);
    }
    if (swizzle != 0 && box_inner * static_cast<uint32_t>(bytes) > static_cast<uint32_t>(swizzle)) {
        return invalid("box_inner %u x %d bytes exceeds the %d-byte swizzle span", box_inner, bytes, swizzle);
    }
    return IRIS_SUCCESS;
}

std::atomic<PFN_cuTensorMapEncodeTiled_v12000> encode_tiled{nullptr};

CUtensorMapDataType data_type(int element_type) {
    switch (element_type) {
        case IRIS_TMA_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        case IRIS_TMA_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    }
}

CUtensorMapSwizzle swizzle_mode(int swizzle_bytes) {
    switch (swizzle_bytes) {
        case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
        case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
        case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
        default: return CU_TENSOR_MAP_SWIZZLE_NONE;
    }
}

static_assert(sizeof(CUtensorMap) == IRIS_TENSOR_MAP_BYTES, "IRIS_TENSOR_MAP_BYTES must match CUtensorMap");
#endif

}  // namespace

extern "C" {

int iris_tensor_map_2d(uint8_t* descriptor, int element_type, uint64_t base, uint64_t inner_elements,
                       uint64_t outer_elements, uint64_t outer_stride_bytes, uint32_t box_inner,
                       uint32_t box_outer, int swizzle_bytes) {
    iris::clear_error();
#if defined(IRIS_PLATFORM_HIP)
    (void)descriptor, (void)element_type, (void)base, (void)inner_elements, (void)outer_elements;
    (void)outer_stride_bytes, (void)box_inner, (void)box_outer, (void)swizzle_bytes;
    return iris::fail(IRIS_ERROR_UNSUPPORTED, kFunction,
                      "tensor maps (TMA) need an NVIDIA GPU of compute capability 9.0; HIP has none");
#else
    int status = validate(descriptor, element_type, base, inner_elements, outer_elements, outer_stride_bytes,
                          box_inner, box_outer, swizzle_bytes);
    if (status != IRIS_SUCCESS) return status;
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    status = iris::driver_function(encode_tiled, "cuTensorMapEncodeTiled", 12000, kFunction, &encode);
    if (status != IRIS_SUCCESS) return status;
    status = iris::ensure_context(kFunction);
    if (status != IRIS_SUCCESS) return status;

    alignas(64) CUtensorMap map;
    std::memset(&map, 0, sizeof(map));
    const cuuint64_t dims[2] = {inner_elements, outer_elements};
    const cuuint64_t strides[1] = {outer_stride_bytes};  // the innermost stride is the element size
    const cuuint32_t box[2] = {box_inner, box_outer};
    const cuuint32_t element_strides[2] = {1, 1};
    CUresult r = encode(&map, data_type(element_type), 2, reinterpret_cast<void*>(base), dims, strides, box,
                        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle_bytes),
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return iris::fail_driver(kFunction, "cuTensorMapEncodeTiled(&map, ...)", r);
    std::memcpy(descriptor, &map, sizeof(map));
    return IRIS_SUCCESS;
#endif
}

}  // extern "C"
