// fill.cu: the factories of SymmetricHeap (zeros, ones, full, arange, rand, randn, randint,
// uniform), generated on the device so that gigabyte tensors do not cross PCIe.
//
// Random numbers are counter-based (SplitMix64 of seed and index): the value of element i depends
// only on (seed, i), so any launch shape gives the same tensor and the host can reproduce it.
#include <cstdint>

#include "dtype.cuh"

namespace {

using iris::core::DType;

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits.
__device__ __forceinline__ double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

enum class Distribution : int32_t { uniform = 0, normal = 1, integer = 2 };

template <class T>
__device__ void fill(T* dst, uint64_t n, T value) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        dst[i] = value;
}

}  // namespace

#define IRIS_FILL(NAME, T) \
    extern "C" __global__ void NAME(T* dst, uint64_t n, T value) { fill(dst, n, value); }
IRIS_FILL(iris_fill_b1, uint8_t)
IRIS_FILL(iris_fill_b2, uint16_t)
IRIS_FILL(iris_fill_b4, uint32_t)
IRIS_FILL(iris_fill_b8, uint64_t)
#undef IRIS_FILL

/// dst[i] = start + i * step, converted to the element type.
extern "C" __global__ void iris_arange(void* dst, uint64_t n, int32_t dtype, double start, double step) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        iris::core::store_as(static_cast<DType>(dtype), dst, i, start + static_cast<double>(i) * step);
}

/// uniform: [a, b); normal: mean a, standard deviation b (Box-Muller); integer: [a, b).
extern "C" __global__ void iris_random(void* dst, uint64_t n, int32_t dtype, int32_t distribution, double a,
                                       double b, uint64_t seed) {
    const auto t = static_cast<DType>(dtype);
    const auto d = static_cast<Distribution>(distribution);
    const uint64_t key = splitmix64(seed);
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t r1 = splitmix64(key ^ (2 * i));
        double v;
        if (d == Distribution::normal) {
            const uint64_t r2 = splitmix64(key ^ (2 * i + 1));
            const double u1 = 1.0 - unit(r1);  // (0, 1]: log is finite
            const double u2 = unit(r2);
            v = a + b * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
        } else if (d == Distribution::integer) {
            v = floor(a + unit(r1) * (b - a));
        } else {
            v = a + unit(r1) * (b - a);
        }
        iris::core::store_as(t, dst, i, v);
    }
}
