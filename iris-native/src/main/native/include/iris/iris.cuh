// iris.cuh: the device API in one include.
//
//   #include <iris/iris.cuh>
//   extern "C" __global__ void hello(const IRIS_GRID_CONSTANT iris::Ctx ctx, int* buf) {
//       if (ctx.rank == 0) iris::store(ctx, buf + threadIdx.x, int(threadIdx.x), 1);
//   }
//
// ctx.cuh      Ctx, DeviceStatus, translate
// rma.cuh      load / store of one value (up to 16 bytes)
// tile.cuh     cooperative get / put / copy, 1-D and 2-D, vectorized with a masked tail
// atomics.cuh  add, sub, xchg, cas, and, or, xor, min, max with Order and Scope
// sync.cuh     signal, wait_until, wait_until_backoff, wait_until_local and wait_for (bounded), barrier
// bulk.cuh     bulk_get / bulk_put / bulk_copy staged through shared memory (Hopper bulk copies)
#pragma once

#include "atomics.cuh"
#include "bulk.cuh"
#include "ctx.cuh"
#include "rma.cuh"
#include "sync.cuh"
#include "tile.cuh"
