// tile_ops.cu: the one-sided tile operations behind RemoteTile (loadRemote, storeRemote,
// atomicAdd). The peer rank runs nothing: these kernels read and write its heap directly.
//
// Launch: 1-D grid of 1-D blocks; the whole grid shares one tile (rows spread over warps).
#include <iris/abi/core.h>
#include <iris/iris.cuh>

namespace {

template <class T>
__device__ __forceinline__ void tile_copy(const iris_tile_args& a) {
    const iris::GridGroup grid;
    const iris::Site here = iris::Site::here();
    const uint64_t rows = a.rows, cols = a.cols;
    iris::impl::copy_tile(
        iris::impl::translate_range(a.ctx, static_cast<T*>(a.dst), iris::impl::tile_bytes<T>(rows, cols, a.ld_dst), a.dst_rank,
                                    here),
        a.ld_dst,
        iris::impl::translate_range(a.ctx, static_cast<const T*>(a.src), iris::impl::tile_bytes<T>(rows, cols, a.ld_src),
                                    a.src_rank, here),
        a.ld_src, rows, cols, grid.lane(), grid.size());
}

// dst (on dst_rank) += src (local), element by element, each add one relaxed system-scope atomic.
template <class T>
__device__ __forceinline__ void tile_atomic_add(const iris_tile_args& a) {
    const iris::GridGroup grid;
    T* dst = static_cast<T*>(a.dst);
    const T* src = static_cast<const T*>(a.src);
    const uint64_t cols = a.cols, n = a.rows * cols;
    for (uint64_t i = grid.lane(); i < n; i += grid.size()) {
        const uint64_t r = i / cols, c = i % cols;
        iris::atomic_add(a.ctx, dst + r * a.ld_dst + c, src[r * a.ld_src + c], a.dst_rank);
    }
}

}  // namespace

// Element width only matters for alignment, so copies are instantiated per width, not per type.
extern "C" __global__ void iris_tile_copy_b1(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_copy<uint8_t>(a); }
extern "C" __global__ void iris_tile_copy_b2(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_copy<uint16_t>(a); }
extern "C" __global__ void iris_tile_copy_b4(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_copy<uint32_t>(a); }
extern "C" __global__ void iris_tile_copy_b8(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_copy<uint64_t>(a); }

extern "C" __global__ void iris_tile_atomic_add_f32(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_atomic_add<float>(a); }
extern "C" __global__ void iris_tile_atomic_add_f64(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_atomic_add<double>(a); }
extern "C" __global__ void iris_tile_atomic_add_i32(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_atomic_add<int32_t>(a); }
extern "C" __global__ void iris_tile_atomic_add_i64(const IRIS_GRID_CONSTANT iris_tile_args a) {
    tile_atomic_add<unsigned long long>(a);
}
extern "C" __global__ void iris_tile_atomic_add_f16(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_atomic_add<iris::f16>(a); }
extern "C" __global__ void iris_tile_atomic_add_bf16(const IRIS_GRID_CONSTANT iris_tile_args a) { tile_atomic_add<iris::bf16>(a); }
