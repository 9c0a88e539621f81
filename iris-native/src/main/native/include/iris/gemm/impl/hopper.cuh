// iris/gemm/impl/hopper.cuh (not API): the sm_90a instructions the GEMM and attention kernels are
// built from, one small function each: shared-memory mbarriers, TMA tile loads, wgmma descriptors
// and fences (the wgmma instructions themselves are generated into wgmma.cuh), register
// reallocation and warpgroup-local named barriers. Nothing here knows about tiles or pipelines.
#pragma once

#include <cstdint>

#include "iris/abi/tma.h"
#include "iris/gemm/impl/block.cuh"
#include "iris/gemm/impl/wgmma.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm::sm90 {

/// A CUtensorMap as the host encodes it (iris_tensor_map_2d): opaque, 128 bytes, 64-aligned, declared
/// for both sides in iris/abi/tma.h. Kernels take it inside their __grid_constant__ argument struct so
/// that TMA reads it from the parameter space.
using TmaDescriptor = iris_tma_descriptor;

// Shared with the portable mainloop (impl/block.cuh), under the names the kernels call them by.
using iris::gemm::dynamic_smem_bytes;
using iris::gemm::named_barrier_sync;
using iris::gemm::named_barrier_arrive;

__device__ inline uint32_t smem_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers ------------------------------------------------------------------------------

__device__ inline void mbarrier_init(uint64_t* bar, int arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals));
}

/// The producer's arrival on a full-barrier, announcing how many bytes TMA will deliver.
__device__ inline void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
                 : "memory");
}

__device__ inline void mbarrier_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
}

__device__ inline bool mbarrier_try_wait(uint64_t* bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
    return done != 0;
}

/// Waits until the barrier's phase of the given parity has completed. Only threads of this CTA (and,
/// in a cluster of two, of its pair) arrive on these barriers, so a wait that never ends is a bug in
/// the pipeline, not a peer fault.
__device__ inline void mbarrier_wait(uint64_t* bar, uint32_t parity) {
    while (!mbarrier_try_wait(bar, parity)) {
    }
}

// ---- clusters -----------------------------------------------------------------------------------

/// This CTA's rank in its cluster.
__device__ inline uint32_t cluster_cta_rank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

/// Makes this thread's mbarrier initializations visible to the other CTAs of the cluster (before
/// cluster_sync).
__device__ inline void fence_mbarrier_init_cluster() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Every thread of every CTA of the cluster meets here, all of them converged.
__device__ inline void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// Arrives on the mbarrier at `bar`'s shared-memory offset in cluster CTA `cta` (this one included),
/// with the default release at CTA scope: what a consumer announces is that it has read a stage,
/// which needs no ordering of its memory operations at cluster scope. A release at cluster scope
/// made the paired GEMM 0.6 x as fast on an H200 (2026-12-03).
__device__ inline void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}"
        ::"r"(smem_address(bar)), "r"(cta)
        : "memory");
}

// ---- TMA --------------------------------------------------------------------------------------

/// Loads the box at (inner, outer) of a 2-D tensor map into shared memory; completion is counted
/// in bytes on `bar`. Coordinates past the tensor's edge read as zeros.
__device__ inline void tma_load_2d(void* smem_dst, const TmaDescriptor* map, uint64_t* bar, int inner, int outer) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
        ::"r"(smem_address(smem_dst)), "l"(map), "r"(smem_address(bar)), "r"(inner), "r"(outer)
        : "memory");
}

/// tma_load_2d into the same shared-memory offset of every CTA of the cluster in `cta_mask`, the
/// bytes counted on each one's mbarrier at `bar`'s offset.
__device__ inline void tma_load_2d_multicast(void* smem_dst, const TmaDescriptor* map, uint64_t* bar, int inner, int outer,
                                             uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        ::"r"(smem_address(smem_dst)), "l"(map), "r"(smem_address(bar)), "r"(inner), "r"(outer), "h"(cta_mask)
        : "memory");
}

/// Stores shared memory's box to (inner, outer) of a 2-D tensor map, in this thread's current bulk
/// group (bulk_commit_group); the parts of the box past the tensor's edge are not written. The
/// writes to `smem_src` must be visible to the async proxy first (fence_proxy_async_shared).
__device__ inline void tma_store_2d(const TmaDescriptor* map, const void* smem_src, int inner, int outer) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(map), "r"(smem_address(smem_src)), "r"(inner), "r"(outer)
                 : "memory");
}

/// Closes this thread's current bulk group of stores.
__device__ inline void bulk_commit_group() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most `Pending` of this thread's bulk groups still read their shared memory (the
/// buffers of the others may be written again).
template <int Pending>
__device__ inline void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

/// Makes this thread's ordinary writes to shared memory visible to the TMA unit's reads (the async
/// proxy), as a tma_store_2d of them needs.
__device__ inline void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ inline void tma_prefetch_descriptor(const TmaDescriptor* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// ---- wgmma ----------------------------------------------------------------------------------

/// A shared-memory matrix descriptor for a 128-byte-swizzled operand. start: the operand's
/// address (its 1024-byte swizzle atom aligned, or offset inside the atom along K);
/// leading/stride: the byte offsets between 8x(128 B) core-matrix groups (see the callers).
__device__ inline uint64_t smem_descriptor_sw128(const void* start, uint32_t leading_bytes, uint32_t stride_bytes) {
    uint64_t d = 0;
    d |= uint64_t((smem_address(start) & 0x3FFFF) >> 4);
    d |= uint64_t((leading_bytes & 0x3FFFF) >> 4) << 16;
    d |= uint64_t((stride_bytes & 0x3FFFF) >> 4) << 32;
    d |= uint64_t(1) << 62;  // 128-byte swizzle
    return d;
}

/// Orders this warpgroup's register accesses before the wgmma that follow.
__device__ inline void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ inline void wgmma_commit_group() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// Waits until at most `Pending` committed wgmma groups of this warpgroup are still running.
template <int Pending>
__device__ inline void wgmma_wait_group() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// ---- warp roles -------------------------------------------------------------------------------

/// Gives this warpgroup's registers back (producer) or takes more (consumers); every warp of the
/// warpgroup executes it. Needs a register cap at entry (__launch_bounds__(threads, 1)).
template <int Registers>
__device__ inline void warpgroup_release_registers() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}

template <int Registers>
__device__ inline void warpgroup_claim_registers() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

/// named_barrier_sync that also ORs `pred` over the threads that meet: true on each of them when it
/// was true on any. One instruction is both the meeting and the broadcast of one thread's decision.
__device__ inline bool named_barrier_or(int id, int threads, bool pred) {
    uint32_t any;
    asm volatile(
        "{\n\t.reg .pred p, q;\n\t"
        "setp.ne.u32 p, %1, 0;\n\t"
        "bar.red.or.pred q, %2, %3, p;\n\t"
        "selp.u32 %0, 1, 0, q;\n\t}"
        : "=r"(any)
        : "r"(static_cast<uint32_t>(pred)), "r"(id), "r"(threads)
        : "memory");
    return any != 0;
}

}  // namespace iris::gemm::sm90
