// fault_test.cu: kernels that fail on purpose, driven by RankLossScenarios and
// CheckedModeScenarios: a kernel that waits on peers' flags (for a rank that dies), and kernels
// that reach outside the symmetric heap (for checked mode, module fault_test.checked).
//
// Portable: only the device API, so the HIP build compiles it too (compile-only).
#include <iris/iris.cuh>

using iris::Ctx;

// ---- a kernel that waits on its peers ---------------------------------------------------------
// Stands in for a fused kernel (GEMM + communication; none exists yet) in the rank-loss tests:
// every block of a grid signals its slot in every peer's flag array, then thread t waits until
// peer t's block has signalled this rank. A rank that never launches it (or dies) leaves every
// other rank's blocks spinning in iris::wait_until (even blocks) or iris::wait_until_backoff (odd
// blocks, as the fused kernels wait), which only the watchdog's abort, or the device timeout, ends.
//
// flags: symmetric, gridDim.x x iris::kMaxRanks uint64_t; epoch: grows by one per launch.
extern "C" __global__ void ft_wait_peer_flags(const IRIS_GRID_CONSTANT Ctx ctx, uint64_t* flags, uint64_t epoch,
                                              int site) {
    uint64_t* block_flags = flags + size_t(blockIdx.x) * iris::kMaxRanks;
    const int t = static_cast<int>(threadIdx.x);
    if (t < ctx.world && t != ctx.rank) iris::signal(ctx, block_flags + ctx.rank, epoch, t);
    if (t < ctx.world && t != ctx.rank) {
        if (blockIdx.x % 2 == 0) iris::wait_until(ctx, block_flags + t, iris::Cmp::ge, epoch, site, t);
        else iris::wait_until_backoff(ctx, block_flags + t, iris::Cmp::ge, epoch, site, t);
    }
    __syncthreads();
}

// ---- checked mode: addresses outside the heap -------------------------------------------------
// Thread 0 of block 0 stores one word at `base + offset_bytes` of rank `to_rank`'s heap; every
// other block's thread 0 waits for a flag nobody sets. In the checked module the store stops
// thread 0 and records the bad address, and the error makes the waiting blocks give up long
// before the device timeout. (Only ever launched from the checked module with a bad address.)
extern "C" __global__ void ft_store_at(const IRIS_GRID_CONSTANT Ctx ctx, uint8_t* base, int64_t offset_bytes,
                                       int to_rank, const uint64_t* never, int site) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) iris::store(ctx, reinterpret_cast<uint32_t*>(base + offset_bytes), 0xBADu, to_rank);
    } else if (threadIdx.x == 0) {
        iris::wait_until(ctx, never, iris::Cmp::ge, 1, site, -1);
    }
}

// Block-cooperative get of `count` floats from rank `from_rank`'s `src` into local `dst`: the
// checked module checks the whole range, so a range that runs past the heap's end is caught even
// though its first element is inside.
extern "C" __global__ void ft_get_range(const IRIS_GRID_CONSTANT Ctx ctx, float* dst, const float* src, uint64_t count,
                                        int from_rank) {
    iris::get(ctx, dst, src, count, from_rank);
}
