// fill.cu: the factories of SymmetricHeap (zeros, ones, full, arange, rand, randn, randint,
// uniform), generated on the device so that gigabyte tensors do not cross PCIe.
//
// Random numbers are counter-based (SplitMix64 of seed and index): the value of element i depends
// only on (seed, i), so any launch shape gives the same tensor and the host can reproduce it.
#include <cstdint>

#include <iris/abi/core.h>
#include <iris/impl/arch.cuh>

namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits.
__device__ __forceinline__ double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Element i of a buffer of the given type = v (round to nearest even, from the double directly for
// the 16-bit types).
__device__ __forceinline__ void store_as(int32_t type, void* base, uint64_t i, double v) {
    switch (type) {
        case IRIS_DTYPE_F32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
        case IRIS_DTYPE_F16: static_cast<iris::f16*>(base)[i] = iris::arch::from_double<iris::f16>(v); break;
        case IRIS_DTYPE_BF16: static_cast<iris::bf16*>(base)[i] = iris::arch::from_double<iris::bf16>(v); break;
        case IRIS_DTYPE_F64: static_cast<double*>(base)[i] = v; break;
        case IRIS_DTYPE_I32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v); break;
        case IRIS_DTYPE_I64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(v); break;
        case IRIS_DTYPE_U8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); break;
    }
}

// The element width is all a fill needs: one kernel per width, the pattern in the low bytes.
template <class T>
__device__ void fill(const iris_fill_args& a) {
    T* dst = static_cast<T*>(a.dst);
    const T value = static_cast<T>(a.pattern);
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < a.n; i += uint64_t(gridDim.x) * blockDim.x)
        dst[i] = value;
}

}  // namespace

extern "C" __global__ void iris_fill_b1(const IRIS_GRID_CONSTANT iris_fill_args a) { fill<uint8_t>(a); }
extern "C" __global__ void iris_fill_b2(const IRIS_GRID_CONSTANT iris_fill_args a) { fill<uint16_t>(a); }
extern "C" __global__ void iris_fill_b4(const IRIS_GRID_CONSTANT iris_fill_args a) { fill<uint32_t>(a); }
extern "C" __global__ void iris_fill_b8(const IRIS_GRID_CONSTANT iris_fill_args a) { fill<uint64_t>(a); }

/// dst[i] = a + i * b, converted to the element type.
extern "C" __global__ void iris_arange(const IRIS_GRID_CONSTANT iris_fill_args a) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < a.n; i += uint64_t(gridDim.x) * blockDim.x)
        store_as(a.dtype, a.dst, i, a.a + static_cast<double>(i) * a.b);
}

/// uniform: [a, b); normal: mean a, standard deviation b (Box-Muller); integer: [a, b).
extern "C" __global__ void iris_random(const IRIS_GRID_CONSTANT iris_fill_args args) {
    const double a = args.a, b = args.b;
    const uint64_t key = splitmix64(args.seed);
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < args.n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t r1 = splitmix64(key ^ (2 * i));
        double v;
        if (args.distribution == IRIS_DISTRIBUTION_NORMAL) {
            const uint64_t r2 = splitmix64(key ^ (2 * i + 1));
            const double u1 = 1.0 - unit(r1);  // (0, 1]: log is finite
            const double u2 = unit(r2);
            v = a + b * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
        } else if (args.distribution == IRIS_DISTRIBUTION_INTEGER) {
            v = floor(a + unit(r1) * (b - a));
        } else {
            v = a + unit(r1) * (b - a);
        }
        store_as(args.dtype, args.dst, i, v);
    }
}
