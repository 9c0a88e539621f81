// bulk.cuh: bulk copies between ranks staged through shared memory by the copy engine of the SM
// (Hopper's cp.async.bulk, the "TMA" without a tensor map).
//
// One thread issues each transfer of up to tens of kilobytes and an mbarrier reports its arrival,
// so a block moves data with a handful of instructions instead of one 16-byte load and store per
// thread per step; over NVLink the transfers also travel as larger requests. A block pipelines
// `Stages` chunks of `ChunkBytes`: while chunk i is written out, chunks i+1 .. i+Stages-1 are
// being read in.
//
//   // dynamic shared memory: iris::bulk_smem_bytes<4, 32768>() per block
//   iris::bulk_copy<4, 32768>(dst, src, bytes);   // every thread of the block calls it
//
// dst and src 16-byte aligned take the bulk path (a remainder of bytes past a multiple of 16 is
// copied by the block's threads); a misaligned dst or src is copied by the threads, 16 bytes at a
// time where it can. sm_90 or newer. Elsewhere (HIP) the same call is a plain cooperative copy.
// The source may have just been written with ordinary stores, by any thread of the block, or by a
// peer whose release the block acquired: bulk_copy meets the block and fences the async proxy first.
#pragma once

#include "tile.cuh"

namespace iris {

template <int Stages, int ChunkBytes>
constexpr int bulk_smem_bytes() {
    return Stages * ChunkBytes + Stages * 8;  // buffers, then one 8-byte mbarrier per stage
}

#if !defined(IRIS_PLATFORM_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

namespace impl {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void mbar_expect_bytes(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n"
        "}\n" ::"r"(smem_addr(bar)),
        "r"(parity)
        : "memory");
}

/// global -> shared, completion counted on bar.
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, uint32_t bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(smem)),
                 "l"(gmem), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

/// shared -> global, tracked by the issuing thread's bulk groups.
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(smem_addr(smem)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most N of this thread's bulk stores still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// Waits until all of this thread's bulk stores are complete (written to global memory).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

}  // namespace impl

/// Block-cooperative copy of `bytes` from src to dst (any ranks' memory, already translated),
/// staged through dynamic shared memory of bulk_smem_bytes<Stages, ChunkBytes>() bytes. Blocks of a
/// grid split the chunks among themselves (chunk c goes to block c % gridDim.x).
template <int Stages, int ChunkBytes>
__device__ void bulk_copy(void* dst, const void* src, uint64_t bytes) {
    static_assert(ChunkBytes % 16 == 0 && Stages >= 2, "bulk_copy: 16-byte chunks, at least two stages");
    extern __shared__ __align__(128) uint8_t bulk_smem[];
    uint64_t* bars = reinterpret_cast<uint64_t*>(bulk_smem + Stages * ChunkBytes);
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    const uint64_t bulk_bytes = bytes & ~uint64_t(15);
    const uint64_t chunks = (bulk_bytes + ChunkBytes - 1) / ChunkBytes;
    const uint64_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    auto chunk_of = [&](uint64_t i) { return blockIdx.x + i * gridDim.x; };
    auto size_of = [&](uint64_t c) {
        return static_cast<uint32_t>(c * ChunkBytes + ChunkBytes <= bulk_bytes ? ChunkBytes : bulk_bytes - c * ChunkBytes);
    };
    // The bulk loads read through the async proxy, which does not see the generic proxy's writes in
    // order unless told: the block's stores (and what it acquired) first reach thread 0 through the
    // barrier, then its proxy fence orders them before its bulk loads (PTX memory model, proxies).
    __syncthreads();
    if (((reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s)) & 15) != 0) {
        // cp.async.bulk faults on addresses that are not 16-byte aligned: the threads copy instead.
        impl::copy_elements(d, s, bytes, blockIdx.x * uint64_t(blockDim.x) + threadIdx.x, uint64_t(gridDim.x) * blockDim.x);
        return;
    }
    if (threadIdx.x == 0 && mine > 0) {
        asm volatile("fence.proxy.async.global;" ::: "memory");
        for (int k = 0; k < Stages; ++k) impl::mbar_init(&bars[k]);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        const uint64_t prologue = mine < Stages ? mine : Stages;
        for (uint64_t i = 0; i < prologue; ++i) {
            const uint64_t c = chunk_of(i);
            impl::mbar_expect_bytes(&bars[i], size_of(c));
            impl::bulk_load(bulk_smem + i * ChunkBytes, s + c * ChunkBytes, size_of(c), &bars[i]);
        }
        for (uint64_t i = 0; i < mine; ++i) {
            const int stage = static_cast<int>(i % Stages);
            const uint64_t c = chunk_of(i);
            impl::mbar_wait(&bars[stage], static_cast<uint32_t>((i / Stages) & 1));
            impl::bulk_store(d + c * ChunkBytes, bulk_smem + stage * ChunkBytes, size_of(c));
            // Refill the stage written out one step ago; its store has had a step to read it.
            if (i >= 1 && i - 1 + Stages < mine) {
                const int prev = static_cast<int>((i - 1) % Stages);
                const uint64_t next = chunk_of(i - 1 + Stages);
                impl::bulk_wait_read<1>();
                impl::mbar_expect_bytes(&bars[prev], size_of(next));
                impl::bulk_load(bulk_smem + prev * ChunkBytes, s + next * ChunkBytes, size_of(next), &bars[prev]);
            }
        }
        impl::bulk_wait_all();
    }
    // The unaligned remainder, if any, by block 0's threads.
    if (blockIdx.x == 0 && bulk_bytes < bytes) {
        for (uint64_t i = bulk_bytes + threadIdx.x; i < bytes; i += blockDim.x) d[i] = s[i];
    }
}

#else

template <int Stages, int ChunkBytes>
__device__ void bulk_copy(void* dst, const void* src, uint64_t bytes) {
    impl::copy_elements(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes,
                        blockIdx.x * uint64_t(blockDim.x) + threadIdx.x, uint64_t(gridDim.x) * blockDim.x);
}

#endif

/// Group-cooperative bulk get: rank from_rank's src into local dst (see bulk_copy).
template <int Stages, int ChunkBytes, class T>
__device__ void bulk_get(const Ctx& ctx, T* dst, const T* src, uint64_t count, int from_rank, Site where = Site::here()) {
    bulk_copy<Stages, ChunkBytes>(dst, impl::translate_range(ctx, src, count * sizeof(T), from_rank, where),
                                  count * sizeof(T));
}

/// Bulk put: local src into rank to_rank's dst (see bulk_copy).
template <int Stages, int ChunkBytes, class T>
__device__ void bulk_put(const Ctx& ctx, T* dst, const T* src, uint64_t count, int to_rank, Site where = Site::here()) {
    bulk_copy<Stages, ChunkBytes>(impl::translate_range(ctx, dst, count * sizeof(T), to_rank, where), src,
                                  count * sizeof(T));
}

}  // namespace iris
