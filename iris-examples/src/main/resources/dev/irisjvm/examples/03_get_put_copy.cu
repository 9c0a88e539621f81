// 03 get, put, copy: block-cooperative transfers of n elements, each block moving its own slice.
//   get:  mine[...]           = previous rank's src[...]
//   put:  next rank's dst[...] = my src[...]
//   copy: next rank's out[...] = previous rank's src[...]   (a third party moves data between two peers)
#include <iris/iris.cuh>

__device__ void slice(uint64_t n, uint64_t& begin, uint64_t& count) {
    const uint64_t per_block = (n + gridDim.x - 1) / gridDim.x;
    begin = blockIdx.x * per_block;
    count = begin < n ? min(per_block, n - begin) : 0;
}

extern "C" __global__ void get_put_copy(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* src, float* got,
                                        float* put_into, float* copied_into, uint64_t n) {
    const int next = (ctx.rank + 1) % ctx.world;
    const int previous = (ctx.rank + ctx.world - 1) % ctx.world;
    uint64_t begin, count;
    slice(n, begin, count);
    if (count == 0) return;
    iris::get(ctx, got + begin, src + begin, count, previous);
    iris::put(ctx, put_into + begin, src + begin, count, next);
    iris::copy(ctx, copied_into + begin, src + begin, count, previous, next);
}
