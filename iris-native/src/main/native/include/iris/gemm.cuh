// iris/gemm.cuh: the library's GEMM as building blocks, for a GEMM whose epilogue does what your
// kernel needs (store each finished tile to other ranks, add it into a peer's partial, signal a
// consumer...). NVIDIA Hopper only (sm_90a: wgmma and TMA); compile for sm_90a.
//
//   C[m][n] = alpha sum_k A(m, k) * B(k, n) + beta C[m][n] (+ bias[n])
//       A: M x K or K x M, B: N x K or K x N, all row-major; bf16 or f16 in, f32 accumulation,
//       Out = In or f32; alpha and beta only in the plain run(args) (ScaleAccumulators)
//
// What it gives, in namespace iris::gemm:
//
//   Config<In, BLayout, Out[, ProducerRegisters, TileN, ALayout]>   tile shape (128 x 256 by default, K 64
//       per stage), pipeline depth, thread roles, shared memory          gemm/config.cuh
//   iris_gemm_args        the kernel's one argument struct: A's and B's TMA descriptors, C, bias,
//       m, n, k, ldc, group_m, alpha, beta, stream-K's tiles and workspace, C's TMA descriptor; Java
//       fills it (dev.irisjvm.kernels.gemm.GemmKernelArgs)
//                                                                  iris/abi/gemm.h, iris/abi/tma.h
//   run<Cfg>(args[, hooks])   the whole GEMM of one launch in the default tile order; without
//       hooks it stores C by TMA (TensorStoreEpilogue), sharing out by K the tiles args.stream_k_tiles names
//                                                                        gemm/persistent.cuh
//   StreamKScheduler<Cfg>, StreamKFixup<Cfg>   stream-K: whole tiles, then the last ones shared
//       out by k-blocks over every CTA, the last CTA to finish a tile adding the partials in a
//       fixed order (no CTA waits for another); in clusters, blocks of tiles over the clusters
//                                                                        gemm/stream_k.cuh
//   run_swapped<Cfg>(args), TransposedStore<Cfg>   the GEMM of few rows as C^T = B A^T, C's rows on
//       wgmma's narrow N, each tile stored transposed from the accumulators     gemm/swapped.cuh
//   persistent<Cfg>(a_map, b_map, bias, m, n, k, scheduler, hooks[, timeline, combiner])   the
//       same with your own tile order and per-unit hooks                 gemm/persistent.cuh
//   ScaleAccumulators<Cfg>   C = alpha A x B + beta C as persistent's combiner   gemm/scale.cuh
//   NoHooks, StoreEpilogue<Out>, OutputChunk<Out>   the epilogue's hook points: before_loads,
//       spare_warps, begin_tile, store_chunk (each 64 x 128-byte chunk of a finished tile, with its
//       global coordinates), tile_done; TensorStoreEpilogue, C stored by TMA without the consumers
//       waiting on it                                                    gemm/epilogue.cuh
//   GroupedTileScheduler, TileCoord   the default tile order, and what a scheduler of yours
//       provides                                                         gemm/tile_scheduler.cuh
//
// A GEMM whose epilogue stores every finished 16-byte piece into every rank's C (the library's
// fused GEMM + all-scatter; iris-examples' 08_gemm_all_scatter.cu is the whole program):
//
//   #include <iris/gemm.cuh>
//   #include <iris/iris.cuh>
//
//   struct ToEveryRank : iris::gemm::NoHooks {
//       const iris::Ctx& ctx;
//       iris::bf16* c;  // symmetric
//       int ldc;
//       __device__ void store_chunk(const iris::gemm::OutputChunk<iris::bf16>& chunk) const {
//           chunk.for_each_vector([&](int row, int col, const uint4& v) {
//               uint4* p = reinterpret_cast<uint4*>(c + int64_t(row) * ldc + col);
//               for (int r = 0; r < ctx.world; ++r) iris::store(ctx, p, v, (ctx.rank + r) % ctx.world);
//           });
//       }
//   };
//
//   extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)
//   gemm_to_every_rank(const IRIS_GRID_CONSTANT iris::Ctx ctx, const IRIS_GRID_CONSTANT iris_gemm_args args) {
//   #if IRIS_HAS_WGMMA
//       using Cfg = iris::gemm::Config<iris::bf16, iris::gemm::BLayout::nk, iris::bf16>;
//       ToEveryRank hooks{{}, ctx, static_cast<iris::bf16*>(args.c), args.ldc};
//       iris::gemm::run<Cfg>(args, hooks);
//   #endif
//   }
//
// Launch it with IRIS_GEMM_THREADS threads per block, IRIS_GEMM_SHARED_BYTES of dynamic shared
// memory (DeviceModule.setMaxDynamicSharedBytes first) and at most one block per SM
// (GemmKernelArgs.launchShape); a kernel of hooks needs only IRIS_GEMM_HOOKS_SHARED_BYTES (the
// plain store's buffers are larger), which leaves 16 KiB for static shared memory of its own.
// `#if IRIS_HAS_WGMMA` keeps the body out of compiles for other architectures, where the kernel
// is then empty.
//
// Not API: gemm/impl/ (the mainloop, the epilogue's staging, the sm_90a instructions in namespace
// iris::gemm::sm90, the split-K ranges) may change in any release.
#pragma once

#include "iris/abi/gemm.h"
#include "iris/abi/tma.h"
#include "iris/gemm/config.cuh"
#include "iris/gemm/epilogue.cuh"
#include "iris/gemm/persistent.cuh"
#include "iris/gemm/swapped.cuh"
#include "iris/gemm/tile_scheduler.cuh"
