// iris/gemm/sm80/impl/smem_tile.cuh (not API): a swizzled tile of 16-bit elements in shared memory,
// and the cp.async copy of one from global memory with its ragged edges zero-filled.
//
// A tile is Rows rows of RowBytes bytes (64, 128, 256 or 512), addressed in 16-byte chunks. Chunk c of
// row r lives at chunk c ^ s(r) of that row, s(r) = (r / max(1, 128 / RowBytes)) mod min(8, chunks
// per row): the eight rows an ldmatrix phase reads (or the rows a warp's cp.async writes) at one
// logical chunk land on eight distinct 16-byte bank groups. s depends only on r mod 8, so a row
// offset that is a multiple of 8 commutes with it; and a chunk index XORed with a constant moves
// the byte offset by the same XOR: offset(r + 8i, c ^ x) = (offset(r, c) ^ 16x) + 8i RowBytes. A
// thread can thus compute its swizzled offset once and reach the others with a XOR and an add of
// constants (moved).
#pragma once

#include <cstdint>

#include "iris/gemm/sm80/impl/ptx.cuh"

namespace iris::gemm::sm80 {

template <int Rows, int RowBytes>
struct SwizzledTile {
    static_assert(RowBytes == 64 || RowBytes == 128 || RowBytes == 256 || RowBytes == 512,
                  "rows of 64, 128, 256 or 512 bytes");
    static constexpr int kRows = Rows;
    static constexpr int kRowBytes = RowBytes;
    static constexpr int kChunks = RowBytes / 16;  // 16-byte chunks per row
    static constexpr uint32_t kBytes = Rows * RowBytes;
    static constexpr int kRowsPerBankLine = RowBytes >= 128 ? 1 : 128 / RowBytes;
    static constexpr int kSwizzleMask = (kChunks < 8 ? kChunks : 8) - 1;

    /// Byte offset of logical chunk `chunk` of row `row`.
    __host__ __device__ static constexpr uint32_t offset(int row, int chunk) {
        return static_cast<uint32_t>(row * RowBytes + ((chunk ^ ((row / kRowsPerBankLine) & kSwizzleMask)) * 16));
    }

    /// offset(row + rows, chunk ^ chunk_xor) from offset(row, chunk) = `from`, for rows a multiple of
    /// 8 and 0 <= chunk_xor < kChunks: the XOR stays inside the row's low bits, which the row's
    /// multiple of RowBytes leaves clear.
    __host__ __device__ static constexpr uint32_t moved(uint32_t from, int rows, int chunk_xor) {
        return (from ^ static_cast<uint32_t>(chunk_xor * 16)) + static_cast<uint32_t>(rows * RowBytes);
    }

    /// The layout's laws, for every coordinate: each row's chunks stay in the row, one each (a
    /// permutation); the eight rows of any 8-row block at one logical chunk (an ldmatrix phase)
    /// cover the eight 16-byte bank groups of a 128-byte line; s depends on row mod 8 only; and
    /// moved agrees with offset.
    static constexpr bool conflict_free() {
        for (int r = 0; r < Rows; ++r) {
            unsigned seen = 0;
            for (int c = 0; c < kChunks; ++c) {
                const uint32_t o = offset(r, c);
                if (o / RowBytes != static_cast<uint32_t>(r) || (seen >> ((o % RowBytes) / 16)) & 1u) return false;
                seen |= 1u << ((o % RowBytes) / 16);
                if (r >= 8 && offset(r, c) - offset(r % 8, c) != static_cast<uint32_t>((r - r % 8) * RowBytes)) return false;
                for (int x = 0; x < kChunks; ++x) {
                    if (moved(offset(r % 8, c), r - r % 8, x) != offset(r, c ^ x)) return false;
                }
            }
        }
        for (int r0 = 0; r0 < Rows; r0 += 8) {
            for (int c = 0; c < kChunks; ++c) {
                unsigned groups = 0;
                for (int r = r0; r < r0 + 8; ++r) groups |= 1u << ((offset(r, c) / 16) % 8);
                if (groups != 0xffu) return false;
            }
        }
        return true;
    }
    static_assert(Rows % 8 == 0, "whole 8-row blocks");
    static_assert(conflict_free(), "the swizzle is a permutation of each row and conflict-free for ldmatrix");
};

/// One thread's share of copying a Tile from a row-major global matrix of 16-bit elements, one
/// k-block after another: chunk column `chunk` of tile rows first_row, first_row + kRowStep, ...
/// (kCopies of them), 16 bytes (8 elements) each. Elements outside the matrix (rows at or beyond
/// its rows, columns at or beyond its columns) are zero-filled by cp.async's src-size 0, so ragged
/// edges read zeros; a column count that is a multiple of 8 keeps a chunk wholly in or out.
/// KAlongRows: the tile's rows run along K (a K x N operand), else its columns do (A, an N x K B).
/// The thread's first swizzled offset is computed once and the others are it plus a constant where
/// its rows are a multiple of 8 apart (they share the swizzle), else each is computed anew.
template <class Tile, int Threads, bool KAlongRows>
struct GlobalToShared {
    static constexpr int kRowStep = Threads / Tile::kChunks;
    static_assert(Threads % Tile::kChunks == 0 && Tile::kRows % kRowStep == 0, "every thread copies whole rows' chunks");
    static constexpr int kCopies = Tile::kRows / kRowStep;
    static constexpr bool kOffsetOnce = kRowStep % 8 == 0;
    static constexpr int kTileK = KAlongRows ? Tile::kRows : Tile::kRowBytes / 2;

    const char* src;      // this thread's first chunk of the current k-block
    const void* base;     // element (0, 0): a readable address for the zero-filled chunks
    int64_t row_stride;   // bytes between kRowStep rows
    int64_t k_step;       // bytes from one k-block to the next
    int first_row;        // in the tile
    int chunk;            // in the row
    int rows_left;        // global rows from first_row's on
    int cols_left;        // global columns from this chunk's first on
    uint32_t dst_offset;  // in the tile, of (first_row, chunk), with kOffsetOnce

    /// The tile whose element (0, 0) is element (row0, col0) of `matrix`, rows x cols 16-bit
    /// elements whose rows are ld elements apart.
    __device__ GlobalToShared(const void* matrix, int64_t ld, int row0, int col0, int rows, int cols) : base(matrix) {
        const int t = static_cast<int>(threadIdx.x) % Threads;
        first_row = t / Tile::kChunks;
        chunk = t % Tile::kChunks;
        rows_left = rows - row0 - first_row;
        cols_left = cols - col0 - chunk * 8;
        row_stride = int64_t(kRowStep) * ld * 2;
        k_step = KAlongRows ? int64_t(kTileK) * ld * 2 : int64_t(kTileK) * 2;
        src = static_cast<const char*>(matrix) + ((int64_t(row0) + first_row) * ld + col0 + chunk * 8) * 2;
        if constexpr (kOffsetOnce) dst_offset = Tile::offset(first_row, chunk);
    }

    /// Issues this thread's cp.async copies of the current k-block into the tile at shared address
    /// `dst`, and moves on to the next k-block.
    __device__ void copy_and_advance(uint32_t dst) {
#pragma unroll
        for (int i = 0; i < kCopies; ++i) {
            const bool inside = i * kRowStep < rows_left && cols_left > 0;
            // An outside chunk still needs a readable address, though cp.async reads 0 bytes of it.
            const void* from = inside ? static_cast<const void*>(src + i * row_stride) : base;
            const uint32_t to = kOffsetOnce ? dst + Tile::moved(dst_offset, i * kRowStep, 0)
                                            : dst + Tile::offset(first_row + i * kRowStep, chunk);
            cp_async_16(to, from, inside);
        }
        src += k_step;
        if constexpr (KAlongRows) {
            rows_left -= kTileK;
        } else {
            cols_left -= kTileK;
        }
    }
};

}  // namespace iris::gemm::sm80
