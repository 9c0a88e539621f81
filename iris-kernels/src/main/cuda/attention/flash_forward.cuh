// flash_forward.cuh: single-GPU attention forward for sm_90a (FlashAttention-style: one pass over
// K/V with an online softmax, nothing of size S x S in memory).
//
// One CTA computes 128 query rows of one (batch, head): warpgroup 0 loads Q once and K/V tiles of
// 128 keys with TMA into a two-stage ring (K and V with barriers of their own); warpgroups 1 and 2
// (and 3: the single-GPU forward at head size 64 takes 192 rows, Config's Consumers) each own 64
// query rows and, per K/V tile, compute S = Q K^T with wgmma (both operands in shared
// memory), update the running max and sum, rescale O, and add P V with wgmma taking P straight from
// registers (the accumulator layout of S is the register-operand layout of the next wgmma, so P
// never touches shared memory). The tiles are software-pipelined: S of tile j and P V of tile j - 1
// are issued together, and tile j's softmax runs while P V is on the tensor cores (FlashAttention-3's
// intra-warpgroup overlap; measured 1.12-1.33x over the unpipelined loop on one H200, 2026-12-03).
//
// Layouts: Q [B, Hq, Sq, D], K and V [B, Hkv, Skv, D], O like Q, all row-major 16-bit; the host's
// tensor maps see each as a [rows, D] matrix with boxes of {64, 128}. Grouped-query attention:
// query head h reads K/V head h / (Hq / Hkv). Sq and Skv are multiples of 128.
//
// Ring attention runs this once per K/V shard (its own, then each peer's copy) and carries the
// online-softmax state between launches: un-normalized O in f32, the running max and sum per row
// (Params::o_acc, row_max, row_sum; kLoadState, kFinalize). Its last launch reads two shards
// (forward's Sources = 2): the first in place, then, once Params::second_ready says so, the copy of
// the last one, which lands while the CTAs work through the first; so the state of the last two
// steps never leaves the registers and the ring pays one tail wave fewer. Causal masking compares global
// positions: local row i of a shard lies in chunk i / chunk_len, whose global chunk id the host
// passes (two chunks per shard, for zig-zag sharding); a key is visible when its position is at
// most the query's. The single-GPU causal kernel is the case of one chunk with id 0 (top-left
// aligned, Sq == Skv). Chunk lengths are multiples of 128, so a 128-row tile is visible, diagonal or
// hidden as a whole; hidden tiles are never loaded. A 192-row tile overlaps two or three key tiles
// that need the mask, each at its own offset; its rows past Sq (whole warpgroups) sit out.
#pragma once

#include <cmath>

#include <iris/abi/attention.h>

#include "common.cuh"
#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/sync.cuh"

namespace attention {

namespace sm90 = iris::gemm::sm90;  // the library's own sm_90a instructions (not API)

template <class In_, int HeadDim, bool Causal_, int Consumers = 2>
struct Config {
    using In = In_;
    static_assert(HeadDim == 64 || HeadDim == 128, "head_dim 64 or 128");
    static constexpr int kHeadDim = HeadDim;
    static constexpr bool kCausal = Causal_;
    static_assert(Consumers == 2 || (Consumers == 3 && HeadDim == IRIS_ATTENTION_WIDE_HEAD_DIM),
                  "two consumer warpgroups, or three at head size 64 (their registers hold no more)");
    static constexpr int kConsumers = Consumers;
    static constexpr int kTileQ = 64 * Consumers;  // each consumer warpgroup owns 64 query rows
    static constexpr int kTileKv = IRIS_ATTENTION_TILE;
    static_assert(kTileKv == 128, "the swizzled blocks and the tensor maps' boxes are 128 rows");
    // Three stages for three consumers without a mask: 1.04-1.09x at S 16K and 32K on one H200
    // (2026-12-04); with a mask, 0.88-0.99x.
    static constexpr int kStages = Consumers == 3 && !Causal_ ? 3 : 2;
    static constexpr int kThreads = 128 * (1 + kConsumers);
    static_assert(kThreads == (Consumers == 2 ? IRIS_ATTENTION_THREADS : IRIS_ATTENTION_WIDE_THREADS),
                  "one producer and kConsumers consumer warpgroups");
    static constexpr int kBoxColumns = IRIS_ATTENTION_BOX_INNER;  // a box row: one 128-byte swizzle span
    static_assert(kBoxColumns * 2 == IRIS_ATTENTION_SWIZZLE_BYTES && IRIS_ATTENTION_SWIZZLE_BYTES == 128,
                  "16-bit boxes as wide as the 128-byte swizzle (smem_descriptor_sw128)");
    static constexpr int kColumnBlocks = HeadDim / kBoxColumns;
    static constexpr uint32_t kBlockBytes = 128 * 128;           // 128 rows x 128 bytes
    static constexpr uint32_t kTileBytes = kColumnBlocks * kBlockBytes;  // 128 rows of Q, K or V
    static constexpr int kQBoxes = (kTileQ + 127) / 128;          // Q loads whole boxes of 128 rows
    static constexpr uint32_t kQBytes = kQBoxes * kTileBytes;
    static constexpr uint32_t kStageBytes = 2 * kTileBytes;       // K and V
    // What the host launches with: a Q tile, kStages stages of K and V tiles, 1 KiB to align them
    // (the causal wide kernels, with a stage fewer, leave one unused).
    static constexpr uint32_t kSmemBytes =
        Consumers == 3 ? IRIS_ATTENTION_WIDE_SHARED_BYTES_D64
                       : (HeadDim == 64 ? IRIS_ATTENTION_SHARED_BYTES_D64 : IRIS_ATTENTION_SHARED_BYTES_D128);
    static_assert(kSmemBytes == kQBytes + kStages * kStageBytes + 1024 ||
                      (Causal_ && Consumers == 3 && kSmemBytes == kQBytes + (kStages + 1) * kStageBytes + 1024),
                  "a Q tile, kStages stages of K and V tiles, 1 KiB to align them");
    // Only thread 0 of the producer works. Three consumers need 160 registers each: with the
    // producer at the GEMM's 40 they get 152, and ptxas spills.
    static constexpr int kProducerRegisters = Consumers == 2 ? iris::gemm::kTmaProducerRegisters : 32;
    static constexpr int kConsumerRegisters = iris::gemm::consumer_registers(kConsumers, kProducerRegisters);
};

/// Consumer warpgroups of the single-GPU forward kernels: three at head size 64, whose tiles'
/// products are half as long against the same softmax, so a third warpgroup keeps the tensor cores
/// busy (1.02-1.11x over two on one H200, 2026-12-04, but 0.97x at S 4K without a mask, where the
/// 192-row blocks make a last wave a third full; attention-findings.md); two at 128, where three
/// would not fit their registers. The ring steps keep two (their chunks are 128-row tiles).
template <int HeadDim>
inline constexpr int kForwardConsumers = HeadDim == IRIS_ATTENTION_WIDE_HEAD_DIM ? IRIS_ATTENTION_WIDE_ROWS / 64 : 2;

/// Sites of the host's error message: the wait for second_ready, the shared-memory check.
inline constexpr int kSiteSecondShard = IRIS_ATTENTION_SITE_SECOND_SHARD;
inline constexpr int kSiteSharedBytes = IRIS_ATTENTION_SITE_SHARED_BYTES;

/// What forward reads, built by each kernel from its iris_attention_args (the field meanings are
/// the header's). Built in the kernel rather than read from the argument struct so that the
/// forward kernel's mode and chunks are constants: the compiler then drops the ring state's loads
/// and stores and the chunk arithmetic from it.
struct Params {
    void* o;
    float* lse;
    float* o_acc;
    float* row_max;
    float* row_sum;
    int mode;
    int sq;
    int skv;
    int hq;
    int hkv;
    float scale_log2;
    Chunks q_chunks;
    Chunks kv_chunks;
    // Two sources only: the second shard's chunks, and its flag (the wait has the context's deadline).
    Chunks second_chunks;
    const uint64_t* second_ready;
};

/// A ring step's Params: every field from a, the second shard's as given.
__device__ inline Params state_params(const iris_attention_args& a, Chunks second_chunks,
                                     const uint64_t* second_ready) {
    return {a.o, static_cast<float*>(a.lse), static_cast<float*>(a.o_acc), static_cast<float*>(a.row_max),
            static_cast<float*>(a.row_sum), a.mode, a.sq, a.skv, a.hq, a.hkv, a.scale_log2, a.q_chunks, a.kv_chunks,
            second_chunks, second_ready};
}

/// The chunks of the first K/V shard, or of the second; selected field by field, which keeps
/// Params out of local memory.
__device__ inline Chunks chunks_of(const Params& p, bool second) {
    return {second ? p.second_chunks.len : p.kv_chunks.len, second ? p.second_chunks.first : p.kv_chunks.first,
            second ? p.second_chunks.second : p.kv_chunks.second};
}

/// The K/V tiles of the first shard (or the second) that query tile q_tile sees. Tiles of 128 query
/// rows: VisibleTiles. Wider ones run the single-GPU forward only (one chunk, positions = rows): the
/// tiles up to the one holding the tile's last row, and `diagonal` is the first with keys after
/// some of its queries (every later one has them too).
template <class Cfg>
__device__ inline VisibleTiles visible_tiles(const Params& p, bool second, int q_tile, int tiles) {
    if constexpr (Cfg::kTileQ == Cfg::kTileKv) {
        return VisibleTiles::of<Cfg::kCausal>(p.q_chunks, chunks_of(p, second), q_tile, tiles);
    } else if constexpr (!Cfg::kCausal) {
        return {tiles, tiles, tiles, -1};
    } else {
        const int q0 = q_tile * Cfg::kTileQ;
        const int end = min(tiles, (q0 + Cfg::kTileQ - 1) / Cfg::kTileKv + 1);
        return {end, end, end, q0 / Cfg::kTileKv};
    }
}

/// Loads the [128 rows, D] tile starting at `row` as D / 64 boxes of 64 columns.
template <class Cfg>
__device__ inline void load_tile(uint8_t* dst, const sm90::TmaDescriptor* map, uint64_t* bar, int row) {
#pragma unroll
    for (int c = 0; c < Cfg::kColumnBlocks; ++c) {
        sm90::tma_load_2d(dst + c * Cfg::kBlockBytes, map, bar, c * Cfg::kBoxColumns, row);
    }
}

template <class Cfg>
struct Smem {
    uint8_t* base;
    __device__ uint8_t* q() const { return base; }
    __device__ uint8_t* k(int s) const { return base + Cfg::kQBytes + s * Cfg::kStageBytes; }
    __device__ uint8_t* v(int s) const { return k(s) + Cfg::kTileBytes; }
};

/// The K and V rings' barriers: K and V of a tile land in the same stage but are released apart,
/// K once its scores are in registers, V once P V is done, so the next K loads while P V runs.
struct Barriers {
    uint64_t* full_k;
    uint64_t* full_v;
    uint64_t* empty_k;
    uint64_t* empty_v;
    uint64_t* q_full;
};

/// A position in the stage ring; the producer and the consumers step it once per visible tile.
template <class Cfg>
struct Ring {
    int stage = 0;
    uint32_t parity = 0;
    __device__ void advance() {
        if (++stage == Cfg::kStages) {
            stage = 0;
            parity ^= 1;
        }
    }
};

/// Keeps registers that an in-flight wgmma reads or writes where the code says: the compiler does
/// not know the wgmma is asynchronous, so without this it may move their other uses across the wait.
template <int N>
__device__ inline void pin(float (&v)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(v[i])::"memory");
}
template <int N>
__device__ inline void pin(uint32_t (&v)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(v[i][j])::"memory");
    }
}

/// O += P V for the V tile in `stage`, P in registers.
template <class Cfg, int N>
__device__ inline void issue_pv(float (&o)[Cfg::kHeadDim / 2], const uint32_t (&pa)[N][4], const Smem<Cfg>& sm,
                                int stage) {
#pragma unroll
    for (int kk = 0; kk < N; ++kk) {
        const uint64_t dv = sm90::smem_descriptor_sw128(sm.v(stage) + kk * 16 * 128, Cfg::kBlockBytes, 1024);
        sm90::wgmma_rs<typename Cfg::In, Cfg::kHeadDim, 1>(o, pa[kk], dv, 1);
    }
    sm90::wgmma_commit_group();
}

/// The online softmax of one tile's scores s (this thread's rows r): masks keys after the query
/// where the tile needs it (a key in column col lies after the query in row r when col > r + shift,
/// shift being the query tile's first position less the key tile's), moves the running max, rescales
/// the running sum by alpha (which the caller applies to O) and writes P, rounded to In, as the next
/// wgmma's register operand.
template <class Cfg>
__device__ inline void softmax(float (&s)[Cfg::kTileKv / 2], bool masked, int shift, const int (&r)[2], int lane,
                               float scale_log2, float (&row_max)[2], float (&row_sum)[2], float (&alpha)[2],
                               uint32_t (&pa)[Cfg::kTileKv / 16][4]) {
    if (masked) {  // hide keys after the query
#pragma unroll
        for (int i = 0; i < Cfg::kTileKv / 2; ++i) {
            const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
            if (col > r[(i / 2) % 2] + shift) s[i] = -INFINITY;
        }
    }
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < Cfg::kTileKv / 2; ++i) tile_max[(i / 2) % 2] = fmaxf(tile_max[(i / 2) % 2], s[i]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float next = fmaxf(row_max[h], quad_max(tile_max[h]) * scale_log2);
        alpha[h] = exp2_ftz(row_max[h] - next);
        row_max[h] = next;
        row_sum[h] *= alpha[h];
    }
#pragma unroll
    for (int i = 0; i < Cfg::kTileKv / 2; i += 2) {
        const int h = (i / 2) % 2;
        const float e0 = exp2_ftz(s[i] * scale_log2 - row_max[h]);
        const float e1 = exp2_ftz(s[i + 1] * scale_log2 - row_max[h]);
        row_sum[h] += e0 + e1;
        // Keys 16k..16k+15 are accumulator elements 8k..8k+7: registers a0..a3 in that order.
        pa[i / 8][(i % 8) / 2] = pack(e0, e1, typename Cfg::In{});
    }
}

/// One consumer warpgroup: 64 query rows against every visible K/V tile.
///
/// Software-pipelined across tiles: one issue starts S = Q K^T of tile j and O += P V of tile
/// j - 1; the softmax of tile j then runs while that P V is still on the tensor cores.
///
/// Accumulator layout (m64nNk16): in warp w, lane l, element i is row 16w + l/4 + 8*((i/2)%2), column
/// 8*(i/4) + 2*(l%4) + i%2; "half" below is (i/2)%2, i.e. which of the thread's two rows.
template <class Cfg, int Sources>
__device__ void consume(const Smem<Cfg>& sm, const Barriers& bar, const Params& p, int consumer, int q_tile,
                        int kv_tiles, int64_t o_row0) {
    // Rows of this thread: r[h] for h = 0, 1; element i of a fragment belongs to r[(i / 2) % 2].
    using In = typename Cfg::In;
    constexpr int D = Cfg::kHeadDim;
    constexpr int kKeySteps = Cfg::kTileKv / 16;
    const int t = threadIdx.x % 128;
    const int warp = t / 32;
    const int lane = t % 32;
    const int r[2] = {consumer * 64 + 16 * warp + lane / 4, consumer * 64 + 16 * warp + lane / 4 + 8};
    float o[D / 2];
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.f, 0.f};  // this thread's share; summed over the quad at the end
    if (p.mode & kLoadState) {
#pragma unroll
        for (int i = 0; i < D / 2; i += 2) {
            const float2 v = *reinterpret_cast<const float2*>(p.o_acc + (o_row0 + r[(i / 2) % 2]) * D + 8 * (i / 4) +
                                                              2 * (lane % 4));
            o[i] = v.x;
            o[i + 1] = v.y;
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            row_max[h] = p.row_max[o_row0 + r[h]];
            row_sum[h] = lane % 4 == 0 ? p.row_sum[o_row0 + r[h]] : 0.f;
        }
    } else {
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
    }

    // This consumer's 64 rows of Q: in box (consumer * 64) / 128, from row (consumer * 64) % 128.
    // Written out for one box, so that the two-consumer kernels' code stays what was measured.
    const uint8_t* q_rows = Cfg::kQBoxes == 1 ? sm.q() + consumer * 64 * 128
                                              : sm.q() + (consumer / 2) * Cfg::kTileBytes + (consumer % 2) * 64 * 128;
    sm90::mbarrier_wait(bar.q_full, 0);
    Ring<Cfg> ring;     // the tile being scored
    Ring<Cfg> held;     // the tile before it, whose V waits for pa
    bool first = true;  // no tile scored yet, so no P V to issue with this one
    uint32_t pa[kKeySteps][4];
    // S = Q K^T of the tile in ring's stage, issued (not waited for).
    const auto issue_s = [&](float (&s)[Cfg::kTileKv / 2]) {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            const uint32_t offset = (kk / 4) * Cfg::kBlockBytes + (kk % 4) * 32;
            const uint64_t dq = sm90::smem_descriptor_sw128(q_rows + offset, 16, 1024);
            const uint64_t dk = sm90::smem_descriptor_sw128(sm.k(ring.stage) + offset, 16, 1024);
            sm90::wgmma_ss<In, Cfg::kTileKv, 0>(s, dq, dk, kk > 0);
        }
        sm90::wgmma_commit_group();
    };
    // With a mask, shard by shard (each has its own chunks); without one the shards' tiles run as
    // one loop, the very loop of a single shard: nested loops over two shards measured 0.5-1%
    // slower at S = 128K.
    constexpr int kShardLoops = Cfg::kCausal ? Sources : 1;
    const int tiles_per_loop = Cfg::kCausal ? kv_tiles : Sources * kv_tiles;
    // One K/V tile: its scores issued with the previous tile's P V, its softmax, O rescaled.
    const auto tile = [&](bool masked, int shift) {
        float s[Cfg::kTileKv / 2];
        float alpha[2];
        // Each branch waits for every wgmma it issues, so the compiler sees no wgmma in flight
        // across the branches and serializes none.
        if (first) {
            sm90::mbarrier_wait(&bar.full_k[ring.stage], ring.parity);
            sm90::wgmma_fence();
            issue_s(s);
            sm90::wgmma_wait_group<0>();
            pin(s);
            if (t == 0) sm90::mbarrier_arrive(&bar.empty_k[ring.stage]);
            softmax<Cfg>(s, masked, shift, r, lane, p.scale_log2, row_max, row_sum, alpha, pa);
            first = false;
        } else {
            sm90::mbarrier_wait(&bar.full_k[ring.stage], ring.parity);
            sm90::mbarrier_wait(&bar.full_v[held.stage], held.parity);
            sm90::wgmma_fence();
            issue_s(s);
            issue_pv<Cfg>(o, pa, sm, held.stage);
            sm90::wgmma_wait_group<1>();
            pin(s);
            if (t == 0) sm90::mbarrier_arrive(&bar.empty_k[ring.stage]);
            uint32_t next_pa[kKeySteps][4];
            softmax<Cfg>(s, masked, shift, r, lane, p.scale_log2, row_max, row_sum, alpha, next_pa);
            sm90::wgmma_wait_group<0>();  // the previous tile's P V: its V is free, O may be rescaled
            pin(o);
            pin(pa);
            if (t == 0) sm90::mbarrier_arrive(&bar.empty_v[held.stage]);
#pragma unroll
            for (int k = 0; k < kKeySteps; ++k) {
#pragma unroll
                for (int x = 0; x < 4; ++x) pa[k][x] = next_pa[k][x];
            }
        }
        // Once the running max settles, alpha is exactly 1 on most tiles: skip the multiply then.
        if (__any_sync(0xffffffff, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
            for (int i = 0; i < D / 2; ++i) o[i] *= alpha[(i / 2) % 2];
        }
        held = ring;
        ring.advance();
    };
    for (int src = 0; src < kShardLoops; ++src) {
        const VisibleTiles tiles = visible_tiles<Cfg>(p, src == 1, q_tile, tiles_per_loop);
        if constexpr (Cfg::kTileQ == Cfg::kTileKv) {
            // Two tiles a turn: the compiler then overlaps one tile's end (the rescale, the barrier
            // arrivals) with the next one's softmax. On one H200 (2026-12-03): 1.00-1.03x at head
            // size 128 and 1.03-1.06x at 64 in probes; by three or four, 0.71-0.81x without a mask
            // (attention-findings.md). Only the diagonal tile has keys after a query.
#pragma unroll 2
            for (int j = tiles.first(); !tiles.done(j); j = tiles.next(j)) tile(j == tiles.diagonal, 0);
        } else {
            // Wide query tiles (one chunk, positions = rows): the tiles before `diagonal` need no
            // mask, every one from it does (at its own shift). The tiles without a mask go two a
            // turn: without a mask 1.03-1.05x as fast as one at S 4K-32K on one H100 (2026-12-06;
            // on one H200, 2026-12-04, one a turn had been 1.03-1.04x as fast at 16K and 32K); the
            // causal kernels lost 5-15 % with one a turn throughout (H200), and spilled with two a
            // turn over the masked tiles.
            const int unmasked = Cfg::kCausal ? tiles.diagonal : tiles.end0;
#pragma unroll 2
            for (int j = 0; j < unmasked; ++j) tile(false, 0);
#pragma unroll 1
            for (int j = unmasked; j < tiles.end0; ++j) tile(true, q_tile * Cfg::kTileQ - j * Cfg::kTileKv);
        }
    }
    if (!first) {  // the last tile's P V
        sm90::mbarrier_wait(&bar.full_v[held.stage], held.parity);
        sm90::wgmma_fence();
        issue_pv<Cfg>(o, pa, sm, held.stage);
        sm90::wgmma_wait_group<0>();
        pin(o);
        if (t == 0) sm90::mbarrier_arrive(&bar.empty_v[held.stage]);
    }

    if (!(p.mode & kFinalize)) {  // hand the state to the next step
#pragma unroll
        for (int i = 0; i < D / 2; i += 2) {
            *reinterpret_cast<float2*>(p.o_acc + (o_row0 + r[(i / 2) % 2]) * D + 8 * (i / 4) + 2 * (lane % 4)) =
                make_float2(o[i], o[i + 1]);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float sum = quad_sum(row_sum[h]);
            if (lane % 4 == 0) {
                p.row_max[o_row0 + r[h]] = row_max[h];
                p.row_sum[o_row0 + r[h]] = sum;
            }
        }
        return;
    }
    // O / l, rounded once; the log-sum-exp in natural log.
    In* out = static_cast<In*>(p.o);
#pragma unroll
    for (int h = 0; h < 2; ++h) row_sum[h] = quad_sum(row_sum[h]);
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) {
        const float inv = 1.f / row_sum[(i / 2) % 2];
        *reinterpret_cast<uint32_t*>(out + (o_row0 + r[(i / 2) % 2]) * D + 8 * (i / 4) + 2 * (lane % 4)) =
            pack(o[i] * inv, o[i + 1] * inv, In{});
    }
    if (p.lse != nullptr && lane % 4 == 0) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            p.lse[o_row0 + r[h]] = log_sum_exp(row_max[h], row_sum[h]);
        }
    }
}

/// The maps of one K/V shard.
struct KvMaps {
    const sm90::TmaDescriptor* k;
    const sm90::TmaDescriptor* v;
};

/// Causal launches run tile-major (all heads' last query tiles first) when every head's K and V fit
/// in this many bytes together, head-major otherwise. Measured on one H200 (2026-12-03): tile-major
/// was 1.11x at S 4K (16 MiB of K and V) and 1.05x at 2 x 8K (32 MiB), but 0.98x at 16K (64 MiB),
/// where head-major keeps each head's K/V in L2 while its query tiles read it.
inline constexpr int64_t kTileMajorKvBytes = int64_t(32) << 20;

/// The query tile, head and batch of this CTA.
struct QueryTile {
    int tile;
    int head;
    int batch;
};

/// Without a mask, in launch order (blockIdx.x the tile). With one, later query tiles (more visible
/// keys) first, so that short ones fill the tail: within each head (head-major), or across all
/// heads (tile-major), which balances the waves better where K and V stay in L2 either way.
template <class Cfg>
__device__ inline QueryTile query_tile(const Params& p, int q_tiles) {
    if constexpr (!Cfg::kCausal) {
        return {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};
    } else {
        const int64_t kv_bytes = int64_t(gridDim.z) * p.hkv * p.skv * Cfg::kHeadDim * 2 * sizeof(typename Cfg::In);
        if (kv_bytes > kTileMajorKvBytes) {
            return {q_tiles - 1 - static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),
                    static_cast<int>(blockIdx.z)};
        }
        const int lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        const int heads = gridDim.y * gridDim.z;  // (head, batch) pairs
        return {q_tiles - 1 - lin / heads, lin % heads % static_cast<int>(gridDim.y),
                lin % heads / static_cast<int>(gridDim.y)};
    }
}

/// Attention of a Q tile against Sources K/V shards in order: kv[0] laid out as p.kv_chunks, and
/// with two, kv[1] as p.second_chunks once p.second_ready is set (ctx bounds that wait).
template <class Cfg, int Sources = 1>
__device__ void forward(const sm90::TmaDescriptor* q_map, const KvMaps (&kv)[Sources], const Params& p,
                        const iris::Ctx* ctx = nullptr) {
    static_assert(Sources == 1 || Sources == 2, "one K/V shard, or two");
    extern __shared__ uint8_t smem_raw[];
    __shared__ uint64_t full_k[Cfg::kStages];
    __shared__ uint64_t full_v[Cfg::kStages];
    __shared__ uint64_t empty_k[Cfg::kStages];
    __shared__ uint64_t empty_v[Cfg::kStages];
    __shared__ uint64_t q_full;
    if (sm90::dynamic_smem_bytes() < Cfg::kSmemBytes) {
        // The host launches with the header's shared bytes, so only a launch by other means gets
        // here. Without a context the block returns with O unwritten (the caller's poisoned
        // outputs show it); with one it also records the launch, which the host raises. Never a
        // trap: it would take down the CUDA context, and with it the rank.
        if (ctx != nullptr && threadIdx.x == 0) {
            iris::impl::record_error(*ctx, iris::ErrorCode::bad_launch, kSiteSharedBytes, -1,
                                     sm90::dynamic_smem_bytes(), Cfg::kSmemBytes, 0);
        }
        return;
    }
    const Smem<Cfg> sm{reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023))};

    static_assert(Cfg::kTileQ == Cfg::kTileKv || Sources == 1, "wide query tiles run the single-GPU forward only");
    const int q_tiles = Cfg::kTileQ == Cfg::kTileKv ? p.sq / Cfg::kTileQ : (p.sq + Cfg::kTileQ - 1) / Cfg::kTileQ;
    const QueryTile at = query_tile<Cfg>(p, q_tiles);
    const int q_tile = at.tile;
    const int head = at.head;
    const int batch = at.batch;
    const int kv_head = head / (p.hq / p.hkv);
    const int kv_tiles = p.skv / Cfg::kTileKv;
    const int64_t q_row0 = (int64_t(batch) * p.hq + head) * p.sq + int64_t(q_tile) * Cfg::kTileQ;
    const int64_t kv_row0 = (int64_t(batch) * p.hkv + kv_head) * p.skv;
    // Sq is a multiple of 128, so a wide tile's rows past it are whole warpgroups': they sit out.
    const int consumers =
        Cfg::kTileQ == Cfg::kTileKv ? Cfg::kConsumers : min(Cfg::kConsumers, (p.sq - q_tile * Cfg::kTileQ) / 64);

    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::kStages; ++s) {
            sm90::mbarrier_init(&full_k[s], 1);
            sm90::mbarrier_init(&full_v[s], 1);
            sm90::mbarrier_init(&empty_k[s], consumers);
            sm90::mbarrier_init(&empty_v[s], consumers);
        }
        sm90::mbarrier_init(&q_full, 1);
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        sm90::warpgroup_release_registers<Cfg::kProducerRegisters>();
        if (threadIdx.x == 0) {
            // A wide tile's boxes may run into the next head's rows, or past Q (TMA fills zeros).
            sm90::mbarrier_arrive_expect_tx(&q_full, Cfg::kQBytes);
#pragma unroll
            for (int b = 0; b < Cfg::kQBoxes; ++b) {
                load_tile<Cfg>(sm.q() + b * Cfg::kTileBytes, q_map, &q_full, static_cast<int>(q_row0) + 128 * b);
            }
            Ring<Cfg> ring;
            // Unrolled over the shards, so that each TMA load names its map's kernel parameter
            // directly rather than a pointer picked at run time.
#pragma unroll
            for (int src = 0; src < Sources; ++src) {
                if (src == 1) {
                    // A failed wait is recorded (the host throws); the loads go on regardless so
                    // that the consumers finish instead of waiting on the stages forever.
                    iris::wait_until_backoff(*ctx, p.second_ready, iris::Cmp::eq, 1, kSiteSecondShard);
                    // The copy engine wrote the shard; TMA reads it through the async proxy.
                    asm volatile("fence.proxy.async.global;" ::: "memory");
                }
                const VisibleTiles tiles = visible_tiles<Cfg>(p, src == 1, q_tile, kv_tiles);
                for (int j = tiles.first(); !tiles.done(j); j = tiles.next(j)) {
                    const int row = static_cast<int>(kv_row0 + int64_t(j) * Cfg::kTileKv);
                    sm90::mbarrier_wait(&empty_k[ring.stage], ring.parity ^ 1);
                    sm90::mbarrier_arrive_expect_tx(&full_k[ring.stage], Cfg::kTileBytes);
                    load_tile<Cfg>(sm.k(ring.stage), kv[src].k, &full_k[ring.stage], row);
                    sm90::mbarrier_wait(&empty_v[ring.stage], ring.parity ^ 1);
                    sm90::mbarrier_arrive_expect_tx(&full_v[ring.stage], Cfg::kTileBytes);
                    load_tile<Cfg>(sm.v(ring.stage), kv[src].v, &full_v[ring.stage], row);
                    ring.advance();
                }
            }
        }
    } else if (Cfg::kTileQ == Cfg::kTileKv || warpgroup <= consumers) {
        sm90::warpgroup_claim_registers<Cfg::kConsumerRegisters>();
        const Barriers bar{full_k, full_v, empty_k, empty_v, &q_full};
        consume<Cfg, Sources>(sm, bar, p, warpgroup - 1, q_tile, kv_tiles, q_row0);
    }
}

}  // namespace attention
