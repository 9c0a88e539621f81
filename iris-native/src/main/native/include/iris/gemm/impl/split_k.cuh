// iris/gemm/impl/split_k.cuh (not API): the hand-over between the two consumers of a SplitK tile
// (config.cuh), each of which has summed every other k-block of the unit: the second writes its
// accumulators to the epilogue buffers, the first adds them to its own and runs the epilogue. Two
// named barriers order it: the sum is there, and the first is done with the buffers (so that the
// second's next sum does not overwrite what the epilogue still reads).
#pragma once

#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/vectors.cuh"

namespace iris::gemm::impl {

/// Named barriers of the hand-over, of both consumers' 256 threads (the epilogue and stream-K's
/// fix-up take 1 + consumer, 128 threads each).
inline constexpr int kHandedBarrier = 6;
inline constexpr int kBuffersFreeBarrier = 7;

/// Per consumer thread; for a Config without SplitK every call is nothing and add_halves is true.
template <class Cfg>
struct SplitKHandOver {
    float4* buffers;      // the epilogue buffers, as [vector][128 threads] float4
    bool handed = false;  // the second consumer has handed a sum over: its next one waits for the buffers

    /// After a unit's k-blocks: the second consumer writes its sum and returns false; the first adds
    /// it to `acc` and returns true.
    __device__ bool add_halves(float (&acc)[Cfg::kAccumulators], int consumer) {
        if constexpr (Cfg::kSplitK) {
            constexpr int kVectors = Cfg::kAccumulators / 4;
            float4* mine = buffers + threadIdx.x % 128;  // the same thread of each consumer holds the same elements
            if (consumer == 1) {
                if (handed) named_barrier_sync(kBuffersFreeBarrier, 256);
#pragma unroll
                for (int v = 0; v < kVectors; ++v) {
                    mine[v * 128] = vector_of(acc, v);
                }
                named_barrier_arrive(kHandedBarrier, 256);
                handed = true;
                return false;
            }
            named_barrier_sync(kHandedBarrier, 256);
#pragma unroll
            for (int v = 0; v < kVectors; ++v) {
                add_vector(acc, v, mine[v * 128]);
            }
        }
        return true;
    }

    /// The first consumer, done with a unit (its epilogue's last read of the buffers is behind it).
    __device__ void release_buffers() const {
        if constexpr (Cfg::kSplitK) named_barrier_arrive(kBuffersFreeBarrier, 256);
    }

    /// The second consumer after its last unit: meets the first's last release_buffers.
    __device__ void finish(int consumer) const {
        if constexpr (Cfg::kSplitK) {
            if (consumer == 1 && handed) named_barrier_sync(kBuffersFreeBarrier, 256);
        }
    }
};

}  // namespace iris::gemm::impl
