// tile.cuh: cooperative copies between ranks, 1-D ranges and 2-D tiles.
//
// Every thread of the group calls these with the same arguments; each moves its share. Where
// both sides are 16-byte aligned the body moves 16 bytes per thread per step and the masked tail
// finishes element by element; otherwise the whole copy goes element by element.
//
//   __global__ void pull(const IRIS_GRID_CONSTANT iris::Ctx ctx, float* buf, float* local, size_t n) {
//       iris::get(ctx, local, buf, n, (ctx.rank + 1) % ctx.world);   // block-cooperative
//   }
#pragma once

#include "ctx.cuh"
#include "rma.cuh"

namespace iris {

/// The threads of one block, in linear order: the default group for tile operations.
struct BlockGroup {
    __device__ unsigned lane() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
    __device__ unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    __device__ void sync() const { __syncthreads(); }
};

/// Every thread of the launch (1-D grids of 1-D blocks): for kernels that spread one copy
/// across the whole GPU. sync() is not available for a grid.
struct GridGroup {
    __device__ unsigned lane() const { return threadIdx.x + blockIdx.x * blockDim.x; }
    __device__ unsigned size() const { return blockDim.x * gridDim.x; }
};

namespace impl {

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

/// Copies count elements; lane/lanes partition the work.
template <class T>
__device__ __forceinline__ void copy_elements(T* dst, const T* src, size_t count, size_t lane, size_t lanes) {
    size_t done = 0;
    if constexpr (16 % sizeof(T) == 0) {
        if (aligned16(dst) && aligned16(src)) {
            constexpr size_t per_vec = 16 / sizeof(T);
            const size_t vecs = count / per_vec;
            auto* d = reinterpret_cast<vec16*>(dst);
            const auto* s = reinterpret_cast<const vec16*>(src);
            // Four independent 16-byte loads in flight per thread before the first store.
            size_t i = lane;
            for (; i + 3 * lanes < vecs; i += 4 * lanes) {
                const vec16 a = s[i], b = s[i + lanes], c = s[i + 2 * lanes], e = s[i + 3 * lanes];
                d[i] = a; d[i + lanes] = b; d[i + 2 * lanes] = c; d[i + 3 * lanes] = e;
            }
            for (; i < vecs; i += lanes) d[i] = s[i];
            done = vecs * per_vec;
        }
    }
    for (size_t i = done + lane; i < count; i += lanes) dst[i] = src[i];  // masked tail
}

/// Copies a rows x cols tile between row-major layouts with leading dimensions ld_dst, ld_src
/// (in elements). Rows are spread over the group; within a row the 1-D copy applies.
template <class T>
__device__ __forceinline__ void copy_tile(T* dst, size_t ld_dst, const T* src, size_t ld_src, size_t rows,
                                          size_t cols, size_t lane, size_t lanes) {
    if (rows == 1 || (ld_dst == cols && ld_src == cols)) {  // contiguous: one long copy
        copy_elements(dst, src, rows * cols, lane, lanes);
        return;
    }
    // Give each row a whole warp-multiple of threads when there are enough, else share rows.
    const size_t per_row = lanes >= 32 ? 32 : lanes;
    const size_t row_groups = lanes / per_row;
    const size_t group = lane / per_row;
    if (group >= row_groups) return;
    for (size_t r = group; r < rows; r += row_groups)
        copy_elements(dst + r * ld_dst, src + r * ld_src, cols, lane % per_row, per_row);
}

}  // namespace impl

/// Group-cooperative copy of `count` elements from rank `from_rank`'s copy of `src` into the
/// local buffer `dst` (dst may be any device memory of this rank, not only the heap).
template <class T, class Group = BlockGroup>
__device__ void get(const Ctx& ctx, T* dst, const T* src, size_t count, int from_rank, Group g = {},
                    Site where = Site::here()) {
    impl::copy_elements(dst, impl::translate_range(ctx, src, count * sizeof(T), from_rank, where), count, g.lane(),
                        g.size());
}

/// Group-cooperative copy of `count` local elements at `src` into rank `to_rank`'s copy of `dst`.
template <class T, class Group = BlockGroup>
__device__ void put(const Ctx& ctx, T* dst, const T* src, size_t count, int to_rank, Group g = {},
                    Site where = Site::here()) {
    impl::copy_elements(impl::translate_range(ctx, dst, count * sizeof(T), to_rank, where), src, count, g.lane(),
                        g.size());
}

/// Group-cooperative copy from rank `from_rank`'s `src` to rank `to_rank`'s `dst` (both symmetric);
/// neither rank needs to be this one.
template <class T, class Group = BlockGroup>
__device__ void copy(const Ctx& ctx, T* dst, const T* src, size_t count, int from_rank, int to_rank, Group g = {},
                     Site where = Site::here()) {
    impl::copy_elements(impl::translate_range(ctx, dst, count * sizeof(T), to_rank, where),
                        impl::translate_range(ctx, src, count * sizeof(T), from_rank, where), count, g.lane(),
                        g.size());
}

/// 2-D form of get: a rows x cols tile, leading dimensions in elements.
template <class T, class Group = BlockGroup>
__device__ void get_tile(const Ctx& ctx, T* dst, size_t ld_dst, const T* src, size_t ld_src, size_t rows,
                         size_t cols, int from_rank, Group g = {}, Site where = Site::here()) {
    impl::copy_tile(dst, ld_dst,
                    impl::translate_range(ctx, src, impl::tile_bytes<T>(rows, cols, ld_src), from_rank, where), ld_src,
                    rows, cols, g.lane(), g.size());
}

/// 2-D form of put.
template <class T, class Group = BlockGroup>
__device__ void put_tile(const Ctx& ctx, T* dst, size_t ld_dst, const T* src, size_t ld_src, size_t rows,
                         size_t cols, int to_rank, Group g = {}, Site where = Site::here()) {
    impl::copy_tile(impl::translate_range(ctx, dst, impl::tile_bytes<T>(rows, cols, ld_dst), to_rank, where), ld_dst,
                    src, ld_src, rows, cols, g.lane(), g.size());
}

}  // namespace iris
