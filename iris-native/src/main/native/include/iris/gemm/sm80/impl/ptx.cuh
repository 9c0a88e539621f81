// iris/gemm/sm80/impl/ptx.cuh (not API): the sm_80 instructions the portable GEMM is made of, one
// inline function each: cp.async (global to shared, 16 bytes, zero-fill), its commit and wait,
// ldmatrix (four 8 x 8 matrices of 16-bit elements, plain or transposed) and mma.sync m16n8k16 with
// f32 accumulators; named barriers and the launch's shared memory come from impl/block.cuh. Every
// later NVIDIA architecture runs them too.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/gemm/impl/block.cuh"
#include "iris/impl/arch.cuh"

namespace iris::gemm::sm80 {

using iris::gemm::dynamic_smem_bytes;
using iris::gemm::named_barrier_sync;

/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ inline uint32_t shared_address(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

/// Copies 16 bytes from global `src` to shared `dst` asynchronously (L2 only, .cg), or writes 16
/// zero bytes where `fill` is false (src-size 0: nothing is read).
__device__ inline void cp_async_16(uint32_t dst, const void* src, bool fill) {
    const int bytes = fill ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

/// Closes the group of this thread's cp.async copies issued since the last commit.
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

/// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ inline void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

/// Four 8 x 8 matrices of 16-bit elements from shared memory: lane l gives the address of row l % 8
/// of matrix l / 8; register i receives matrix i's elements (row lane / 4, columns 2 (lane % 4) and
/// + 1), or with Transposed those of its transpose.
template <bool Transposed>
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
    if constexpr (Transposed) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address));
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address));
    }
}

/// d += a b for one m16n8k16 tile: a row-major 16 x 16 (four registers of two elements), b
/// column-major 16 x 8 (two registers), d 16 x 8 in f32. In lane l with g = l / 4, t = l % 4: a
/// holds (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8) and the next column of each; b holds
/// rows 2t and 2t + 8 (and the next) of column g; d holds (g, 2t), (g, 2t + 1), (g + 8, 2t),
/// (g + 8, 2t + 1).
template <class In>
__device__ inline void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    // Not volatile: it touches only registers, so the compiler may schedule it among the loads.
    if constexpr (std::is_same_v<In, iris::bf16>) {
        asm(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

}  // namespace iris::gemm::sm80
