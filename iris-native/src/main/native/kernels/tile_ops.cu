// tile_ops.cu: the one-sided tile operations behind RemoteTile (loadRemote, storeRemote,
// atomicAdd). The peer rank runs nothing: these kernels read and write its heap directly.
//
// Launch: 1-D grid of 1-D blocks; the whole grid shares one tile (rows spread over warps).
#include <iris/iris.cuh>

namespace {

template <class T>
__device__ __forceinline__ void tile_copy(const iris::Ctx& ctx, T* dst, uint64_t ld_dst, int dst_rank, const T* src,
                          uint64_t ld_src, int src_rank, uint64_t rows, uint64_t cols) {
    const iris::GridGroup grid;
    const iris::Site here = iris::Site::here();
    iris::impl::copy_tile(
        iris::impl::translate_range(ctx, dst, iris::impl::tile_bytes<T>(rows, cols, ld_dst), dst_rank, here), ld_dst,
        iris::impl::translate_range(ctx, src, iris::impl::tile_bytes<T>(rows, cols, ld_src), src_rank, here), ld_src,
        rows, cols, grid.lane(), grid.size());
}

// dst (on dst_rank) += src (local), element by element, each add one relaxed system-scope atomic.
template <class T>
__device__ __forceinline__ void tile_atomic_add(const iris::Ctx& ctx, T* dst, uint64_t ld_dst, int dst_rank, const T* src,
                                uint64_t ld_src, uint64_t rows, uint64_t cols) {
    const iris::GridGroup grid;
    const uint64_t n = rows * cols;
    for (uint64_t i = grid.lane(); i < n; i += grid.size()) {
        const uint64_t r = i / cols, c = i % cols;
        iris::atomic_add(ctx, dst + r * ld_dst + c, src[r * ld_src + c], dst_rank);
    }
}

}  // namespace

// Element width only matters for alignment, so copies are instantiated per width, not per type.
#define IRIS_TILE_COPY(NAME, T)                                                                      \
    extern "C" __global__ void NAME(const IRIS_GRID_CONSTANT iris::Ctx ctx, T* dst, uint64_t ld_dst, int dst_rank, const T* src, \
                                    uint64_t ld_src, int src_rank, uint64_t rows, uint64_t cols) {     \
        tile_copy(ctx, dst, ld_dst, dst_rank, src, ld_src, src_rank, rows, cols);                      \
    }
IRIS_TILE_COPY(iris_tile_copy_b1, uint8_t)
IRIS_TILE_COPY(iris_tile_copy_b2, uint16_t)
IRIS_TILE_COPY(iris_tile_copy_b4, uint32_t)
IRIS_TILE_COPY(iris_tile_copy_b8, uint64_t)
#undef IRIS_TILE_COPY

#define IRIS_TILE_ATOMIC_ADD(NAME, T)                                                                \
    extern "C" __global__ void NAME(const IRIS_GRID_CONSTANT iris::Ctx ctx, T* dst, uint64_t ld_dst, int dst_rank, const T* src, \
                                    uint64_t ld_src, uint64_t rows, uint64_t cols) {                   \
        tile_atomic_add(ctx, dst, ld_dst, dst_rank, src, ld_src, rows, cols);                          \
    }
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_f32, float)
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_f64, double)
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_i32, int32_t)
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_i64, unsigned long long)
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_f16, iris::f16)
IRIS_TILE_ATOMIC_ADD(iris_tile_atomic_add_bf16, iris::bf16)
#undef IRIS_TILE_ATOMIC_ADD
