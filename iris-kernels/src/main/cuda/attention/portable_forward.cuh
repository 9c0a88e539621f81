// portable_forward.cuh: attention forward for every NVIDIA GPU since Ampere (FlashAttention-2 style:
// mma.sync m16n8k16, ldmatrix from swizzled shared memory, a cp.async double buffer), computing what
// flash_forward.cuh computes on Hopper: the same online softmax in base 2, the same rounding of the
// probabilities before P V, the same ring state, so that a ring may mix steps of either kernel.
//
// One CTA computes 128 query rows of one (batch, head), as the Hopper kernel does (the host's grid
// is the same): eight warps of 16 rows each, every warp holding its Q fragments, its scores and its
// O in registers. K/V advance 64 keys at a time: the 128-key tiles that VisibleTiles (common.cuh)
// lets the query tile see, each as two halves, so a causal launch skips exactly what Hopper skips.
// On the diagonal tile the first four warps see none of the second half and skip it.
//
// Layouts: Q [B, Hq, Sq, D], K and V [B, Hkv, Skv, D], O like Q, all row-major 16-bit through raw
// addresses; query head h reads K/V head h / (Hq / Hkv). Sq and Skv are multiples of 128.
#pragma once

#include <cmath>
#include <type_traits>

#include "common.cuh"
#include "iris/gemm/sm80/impl/ptx.cuh"
#include "iris/gemm/sm80/impl/smem_tile.cuh"

namespace attention::portable {

namespace sm80 = iris::gemm::sm80;  // the library's sm_80 instructions and tiles (not API)

template <class In_, int HeadDim, bool Causal_>
struct Config {
    using In = In_;
    static_assert(std::is_same_v<In, iris::bf16> || std::is_same_v<In, iris::f16>, "inputs are bf16 or f16");
    static_assert(HeadDim == 64 || HeadDim == 128, "head_dim 64 or 128");
    static constexpr int kHeadDim = HeadDim;
    static constexpr bool kCausal = Causal_;
    static constexpr int kTileQ = IRIS_ATTENTION_TILE;
    static_assert(kTileQ == 128, "VisibleTiles and the diagonal mask count in tiles of 128 rows");
    static constexpr int kTileKv = 64;  // half a visible tile: keeps S, P and O of a warp in registers
    static constexpr int kWarps = kTileQ / 16;
    static constexpr int kThreads = kWarps * 32;
    static_assert(kThreads == IRIS_ATTENTION_PORTABLE_THREADS, "the host launches IRIS_ATTENTION_PORTABLE_THREADS");
    static constexpr int kDimSteps = HeadDim / 16;  // k-steps of Q K^T
    static constexpr int kKeySteps = kTileKv / 16;  // k-steps of P V
    static constexpr int kKeyFrags = kTileKv / 8;   // n8 tiles of S
    static constexpr int kDimFrags = HeadDim / 8;   // n8 tiles of O

    using QTile = sm80::SwizzledTile<kTileQ, HeadDim * 2>;
    using KvTile = sm80::SwizzledTile<kTileKv, HeadDim * 2>;
    static constexpr uint32_t kStages = 2;
    static constexpr uint32_t kStageBytes = 2 * KvTile::kBytes;  // K and V
    static constexpr uint32_t kSmemBytes = QTile::kBytes + kStages * kStageBytes;
    static_assert(kSmemBytes == (HeadDim == 64 ? IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D64
                                               : IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D128),
                  "the host launches the header's shared bytes");
    static_assert(kSmemBytes <= 99 * 1024, "fits a block on every GPU since sm_80 (sm_86 / sm_89 allow 99 KiB)");
};

/// Shared-memory addresses of the Q tile and of each stage's K and V tiles.
template <class Cfg>
struct Smem {
    uint32_t base;
    __device__ uint32_t q() const { return base; }
    __device__ uint32_t k(int stage) const { return base + Cfg::QTile::kBytes + stage * Cfg::kStageBytes; }
    __device__ uint32_t v(int stage) const { return k(stage) + Cfg::KvTile::kBytes; }
};

/// Copies the [Tile::kRows, D] rows at `src` (row-major, D elements a row) into the tile at shared
/// address `dst`, every thread its share of 16-byte chunks; lengths are whole tiles, so nothing is
/// ragged.
template <class Cfg, class Tile>
__device__ inline void copy_tile(uint32_t dst, const typename Cfg::In* src) {
    constexpr int kChunks = Tile::kChunks;
    constexpr int kRowStep = Cfg::kThreads / kChunks;
    static_assert(Tile::kRows % kRowStep == 0, "every thread copies whole rows' chunks");
    const int row = static_cast<int>(threadIdx.x) / kChunks;
    const int chunk = static_cast<int>(threadIdx.x) % kChunks;
#pragma unroll
    for (int r = row; r < Tile::kRows; r += kRowStep) {
        sm80::cp_async_16(dst + Tile::offset(r, chunk), src + int64_t(r) * Cfg::kHeadDim + chunk * 8, true);
    }
}

/// The 64-key tiles one query tile reads, in order: each visible 128-key tile as two halves.
struct KeyCursor {
    int tile;  // the 128-key tile
    int half;  // 0 or 1

    __device__ void advance(const VisibleTiles& v) {
        half ^= 1;
        if (half == 0) tile = v.next(tile);
    }
};

/// One warp's running softmax state for its 16 rows, g = lane / 4 and g + 8 (h = 0, 1): O in the
/// m16n8 accumulator layout (ptx.cuh's mma_16816: element e of an n8 tile is row g + 8 (e / 2),
/// column 2 (lane % 4) + e % 2), the running max in log2 units of the scaled score, and this lane's
/// share of the running sum (summed over the quad at the end, as on Hopper).
template <class Cfg>
struct RowState {
    float o[Cfg::kDimFrags][4];
    float row_max[2];
    float row_sum[2];
};

/// The warp's Q fragments (rows 16 warp .. + 15, all of D) from the Q tile: the A operand of every
/// Q K^T k-step, loaded once.
template <class Cfg>
__device__ inline void load_q(uint32_t (&qf)[Cfg::kDimSteps][4], const Smem<Cfg>& sm, int warp, int lane) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kDimSteps; ++kk) {
        // Matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15): a0..a3 of mma_16816.
        sm80::ldmatrix_x4<false>(qf[kk], sm.q() + Cfg::QTile::offset(16 * warp + lane % 16, 2 * kk + lane / 16));
    }
}

/// S = Q K^T for the warp's 16 rows and the stage's 64 keys, unscaled.
template <class Cfg>
__device__ inline void scores(float (&s)[Cfg::kKeyFrags][4], const uint32_t (&qf)[Cfg::kDimSteps][4], uint32_t k_tile,
                              int lane) {
#pragma unroll
    for (int n = 0; n < Cfg::kKeyFrags; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = 0.f;
    }
#pragma unroll
    for (int kk = 0; kk < Cfg::kDimSteps; ++kk) {
#pragma unroll
        for (int n = 0; n < Cfg::kKeyFrags; n += 2) {
            // K rows are keys (B column-major): matrices (keys 0-7, k 0-7), (0-7, 8-15), (8-15, 0-7),
            // (8-15, 8-15) give b0, b1 of key tile n, then of n + 1.
            uint32_t b[4];
            sm80::ldmatrix_x4<false>(b, k_tile + Cfg::KvTile::offset(8 * n + lane % 8 + 8 * (lane / 16), 2 * kk + (lane / 8) % 2));
            const uint32_t b0[2] = {b[0], b[1]};
            const uint32_t b1[2] = {b[2], b[3]};
            sm80::mma_16816<typename Cfg::In>(s[n], qf[kk], b0);
            sm80::mma_16816<typename Cfg::In>(s[n + 1], qf[kk], b1);
        }
    }
}

/// Folds the scores of one tile into the running max and sum, rescales O, and returns the tile's
/// probabilities rounded to the input type as the A operands of P V (key step k: keys 16k..16k+15).
/// On the diagonal, a key after its query is hidden: `key0` is the tile's first key and `row0`
/// the warp's first row, both counted from the 128-row tile's start.
template <class Cfg>
__device__ inline void softmax(float (&s)[Cfg::kKeyFrags][4], RowState<Cfg>& st, uint32_t (&pa)[Cfg::kKeySteps][4],
                               bool diagonal, int key0, int row0, int lane, float scale_log2) {
    if (diagonal) {
#pragma unroll
        for (int n = 0; n < Cfg::kKeyFrags; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = key0 + 8 * n + 2 * (lane % 4) + e % 2;
                const int row = row0 + lane / 4 + 8 * (e / 2);
                if (col > row) s[n][e] = -INFINITY;
            }
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int n = 0; n < Cfg::kKeyFrags; ++n) tile_max = fmaxf(tile_max, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
        const float next = fmaxf(st.row_max[h], quad_max(tile_max) * scale_log2);
        const float alpha = exp2_ftz(st.row_max[h] - next);
        st.row_max[h] = next;
        st.row_sum[h] *= alpha;
#pragma unroll
        for (int d = 0; d < Cfg::kDimFrags; ++d) {
            st.o[d][2 * h] *= alpha;
            st.o[d][2 * h + 1] *= alpha;
        }
#pragma unroll
        for (int n = 0; n < Cfg::kKeyFrags; ++n) {
            const float e0 = exp2_ftz(s[n][2 * h] * scale_log2 - next);
            const float e1 = exp2_ftz(s[n][2 * h + 1] * scale_log2 - next);
            st.row_sum[h] += e0 + e1;
            // A of key step n / 2: a0 (g, keys 2t..), a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..).
            pa[n / 2][h + 2 * (n % 2)] = pack(e0, e1, typename Cfg::In{});
        }
    }
}

/// O += P V for the warp's rows and the stage's 64 keys.
template <class Cfg>
__device__ inline void add_pv(RowState<Cfg>& st, const uint32_t (&pa)[Cfg::kKeySteps][4], uint32_t v_tile, int lane) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kKeySteps; ++kk) {
#pragma unroll
        for (int d = 0; d < Cfg::kDimFrags; d += 2) {
            // V rows are keys (B row-major, so transposed): matrices (keys 0-7, dims 0-7), (8-15, 0-7),
            // (0-7, 8-15), (8-15, 8-15) give b0, b1 of dim tile d, then of d + 1.
            uint32_t b[4];
            sm80::ldmatrix_x4<true>(b, v_tile + Cfg::KvTile::offset(16 * kk + lane % 8 + 8 * ((lane / 8) % 2), d + lane / 16));
            const uint32_t b0[2] = {b[0], b[1]};
            const uint32_t b1[2] = {b[2], b[3]};
            sm80::mma_16816<typename Cfg::In>(st.o[d], pa[kk], b0);
            sm80::mma_16816<typename Cfg::In>(st.o[d + 1], pa[kk], b1);
        }
    }
}

/// The state a ring step starts from: loaded (kLoadState) or empty. `row` is the global row of g.
template <class Cfg>
__device__ inline void start_state(RowState<Cfg>& st, const iris_attention_args& a, int mode, int64_t row, int lane) {
    if (mode & kLoadState) {
        const float* o_acc = static_cast<const float*>(a.o_acc);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int d = 0; d < Cfg::kDimFrags; ++d) {
                const float2 v = *reinterpret_cast<const float2*>(o_acc + (row + 8 * h) * Cfg::kHeadDim + 8 * d + 2 * (lane % 4));
                st.o[d][2 * h] = v.x;
                st.o[d][2 * h + 1] = v.y;
            }
            st.row_max[h] = static_cast<const float*>(a.row_max)[row + 8 * h];
            st.row_sum[h] = lane % 4 == 0 ? static_cast<const float*>(a.row_sum)[row + 8 * h] : 0.f;
        }
    } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int d = 0; d < Cfg::kDimFrags; ++d) st.o[d][2 * h] = st.o[d][2 * h + 1] = 0.f;
            st.row_max[h] = -INFINITY;
            st.row_sum[h] = 0.f;
        }
    }
}

/// The end of a step: the state handed to the next one, or (kFinalize) O / l rounded once and the
/// log-sum-exp in natural log.
template <class Cfg>
__device__ inline void finish(RowState<Cfg>& st, const iris_attention_args& a, int mode, int64_t row, int lane) {
#pragma unroll
    for (int h = 0; h < 2; ++h) st.row_sum[h] = quad_sum(st.row_sum[h]);
    if (!(mode & kFinalize)) {
        float* o_acc = static_cast<float*>(a.o_acc);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int d = 0; d < Cfg::kDimFrags; ++d) {
                *reinterpret_cast<float2*>(o_acc + (row + 8 * h) * Cfg::kHeadDim + 8 * d + 2 * (lane % 4)) =
                    make_float2(st.o[d][2 * h], st.o[d][2 * h + 1]);
            }
            if (lane % 4 == 0) {
                static_cast<float*>(a.row_max)[row + 8 * h] = st.row_max[h];
                static_cast<float*>(a.row_sum)[row + 8 * h] = st.row_sum[h];
            }
        }
        return;
    }
    using In = typename Cfg::In;
    In* out = static_cast<In*>(a.o);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float inv = 1.f / st.row_sum[h];
#pragma unroll
        for (int d = 0; d < Cfg::kDimFrags; ++d) {
            *reinterpret_cast<uint32_t*>(out + (row + 8 * h) * Cfg::kHeadDim + 8 * d + 2 * (lane % 4)) =
                pack(st.o[d][2 * h] * inv, st.o[d][2 * h + 1] * inv, In{});
        }
        if (a.lse != nullptr && lane % 4 == 0) {
            static_cast<float*>(a.lse)[row + 8 * h] = log_sum_exp(st.row_max[h], st.row_sum[h]);
        }
    }
}

/// Attention of one query tile against one K/V shard. A ring step (Step) starts from and ends in
/// what a.mode says and places rows by a.q_chunks and a.kv_chunks; forward finalizes and has one
/// chunk each with id 0 whatever the struct holds, constants that let the compiler drop the state's
/// loads and stores and the chunk arithmetic. Does nothing where the launch gave less dynamic
/// shared memory than Cfg needs (the same in every thread): never __trap, which would kill the
/// context and with it the rank.
template <class Cfg, bool Step>
__device__ void forward(const iris_attention_args& a) {
    using In = typename Cfg::In;
    extern __shared__ __align__(128) uint8_t smem[];  // 128-byte aligned: the swizzle's bank lines
    if (sm80::dynamic_smem_bytes() < Cfg::kSmemBytes) return;
    const Smem<Cfg> sm{sm80::shared_address(smem)};

    // Causal: later query tiles (more visible keys) first, so that short ones fill the tail.
    const int q_tiles = a.sq / Cfg::kTileQ;
    const int q_tile = Cfg::kCausal ? q_tiles - 1 - static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x);
    const int head = static_cast<int>(blockIdx.y);
    const int batch = static_cast<int>(blockIdx.z);
    const int kv_head = head / (a.hq / a.hkv);
    const int64_t q_row0 = (int64_t(batch) * a.hq + head) * a.sq + int64_t(q_tile) * Cfg::kTileQ;
    const int64_t kv_row0 = (int64_t(batch) * a.hkv + kv_head) * a.skv;
    const In* mQ = static_cast<const In*>(a.q) + q_row0 * Cfg::kHeadDim;   // (kTileQ, D)
    const In* mK = static_cast<const In*>(a.k) + kv_row0 * Cfg::kHeadDim;  // (Skv, D)
    const In* mV = static_cast<const In*>(a.v) + kv_row0 * Cfg::kHeadDim;  // (Skv, D)

    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int64_t row = q_row0 + 16 * warp + lane / 4;  // global row of g; g + 8 is row + 8
    RowState<Cfg> st;
    const int mode = Step ? a.mode : kFinalize;
    start_state<Cfg>(st, a, mode, row, lane);

    const Chunks q_chunks = Step ? a.q_chunks : Chunks{a.sq, 0, 0};
    const Chunks kv_chunks = Step ? a.kv_chunks : Chunks{a.skv, 0, 0};
    const VisibleTiles tiles = VisibleTiles::of<Cfg::kCausal>(q_chunks, kv_chunks, q_tile, a.skv / Cfg::kTileQ);
    const auto key_row = [](const KeyCursor& c) { return c.tile * 128 + c.half * Cfg::kTileKv; };
    KeyCursor at{tiles.first(), 0};
    copy_tile<Cfg, typename Cfg::QTile>(sm.q(), mQ);
    if (!tiles.done(at.tile)) {
        copy_tile<Cfg, typename Cfg::KvTile>(sm.k(0), mK + int64_t(key_row(at)) * Cfg::kHeadDim);
        copy_tile<Cfg, typename Cfg::KvTile>(sm.v(0), mV + int64_t(key_row(at)) * Cfg::kHeadDim);
    }
    sm80::cp_async_commit();
    sm80::cp_async_wait<0>();
    __syncthreads();
    uint32_t qf[Cfg::kDimSteps][4];
    load_q<Cfg>(qf, sm, warp, lane);

    // One barrier a tile: past it, this tile has landed for everyone and everyone is done with the
    // other stage, which the next tile's copies then fill while this one is computed.
    for (int stage = 0; !tiles.done(at.tile); stage ^= 1) {
        KeyCursor next = at;
        next.advance(tiles);
        if (!tiles.done(next.tile)) {
            copy_tile<Cfg, typename Cfg::KvTile>(sm.k(stage ^ 1), mK + int64_t(key_row(next)) * Cfg::kHeadDim);
            copy_tile<Cfg, typename Cfg::KvTile>(sm.v(stage ^ 1), mV + int64_t(key_row(next)) * Cfg::kHeadDim);
        }
        sm80::cp_async_commit();
        const bool diagonal = Cfg::kCausal && at.tile == tiles.diagonal;
        const int key0 = at.half * Cfg::kTileKv;
        // On the diagonal, a warp whose last row precedes the tile's first key sees none of it.
        if (!diagonal || key0 <= 16 * warp + 15) {
            float s[Cfg::kKeyFrags][4];
            scores<Cfg>(s, qf, sm.k(stage), lane);
            uint32_t pa[Cfg::kKeySteps][4];
            softmax<Cfg>(s, st, pa, diagonal, key0, 16 * warp, lane, a.scale_log2);
            add_pv<Cfg>(st, pa, sm.v(stage), lane);
        }
        sm80::cp_async_wait<0>();
        __syncthreads();
        at = next;
    }
    finish<Cfg>(st, a, mode, row, lane);
}

}  // namespace attention::portable
