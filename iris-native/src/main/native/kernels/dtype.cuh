// dtype.cuh: element types as the host names them (codes shared with Java's DType).
//
// Portable: the 16-bit float types and their conversions come from the architecture switch
// (iris/impl/arch.cuh), so this file builds with nvcc and hipcc alike.
#pragma once

#include <cstdint>

#include <iris/impl/arch.cuh>

namespace iris::core {

enum class DType : int32_t { f32 = 0, f16 = 1, bf16 = 2, f64 = 3, i32 = 4, i64 = 5, u8 = 6 };

/// Stores a double into element i of a buffer of the given type (round to nearest even, from
/// the double directly for the 16-bit types).
__device__ __forceinline__ void store_as(DType t, void* base, uint64_t i, double v) {
    switch (t) {
        case DType::f32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
        case DType::f16: static_cast<iris::f16*>(base)[i] = iris::arch::from_double<iris::f16>(v); break;
        case DType::bf16: static_cast<iris::bf16*>(base)[i] = iris::arch::from_double<iris::bf16>(v); break;
        case DType::f64: static_cast<double*>(base)[i] = v; break;
        case DType::i32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v); break;
        case DType::i64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(v); break;
        case DType::u8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); break;
    }
}

}  // namespace iris::core
