// iris/gemm/config.cuh: the GEMM's tile shape, pipeline depth, thread roles and shared-memory
// layout, in one place. Every other part of the kernel reads its sizes from here; the ones the host
// shares (threads, shared bytes, tile sizes, the boxes of the tensor maps) come from iris/abi/gemm.h.
//
// One CTA computes a 128 x 256 output tile with three warpgroups: warpgroup 0 is the producer (one
// thread issues the TMA loads), warpgroups 1 and 2 are consumers, each owning 64 rows of the tile
// (one wgmma m64n256k16 accumulator, 128 f32 registers per thread). K advances 64 at a time through
// a 4-stage ring of shared-memory buffers.
//
// A kernel may take 128 x 128 tiles instead (TileN = 128: m64n128k16, 64 accumulators), for problems
// whose 128 x 256 tiles would leave most SMs idle, or 128 x 192 (96 accumulators), for problems
// whose last wave of 128 x 256 tiles would be mostly empty. The same 192 KiB hold 6 stages of
// 128 x 128 and 4 of 128 x 192 (160 KiB), so every shape launches with the same shared memory.
// The short thin tile (64 x 64: m64n64k16, 32 accumulators, 12 stages; SplitK, two consumers on every
// other k-block) is for few rows, where 64 x 128 tiles would leave most SMs idle.
//
// A kernel of short tiles (Consumers = 1: 64 x TileN, IRIS_GEMM_SHORT_THREADS threads; the library's
// are 64 x IRIS_GEMM_SHORT_TILE_N, in 8 stages) has the producer and one consumer: for M <= 64 the
// second consumer's rows are all past C, and a tile of two costs the wgmma time of 128 rows for the
// rows of one. A separate instantiation, not a branch in the consumers' loop: a second path among
// 128 live accumulators makes ptxas serialize wgmma.
//
// In clusters (Cluster = ClusterShape<M, N>; Pairs is <2, 1>), M x N CTAs compute a block of adjacent
// tiles: those of a row of the block share A's k-blocks, those of a column B's, each CTA loading its
// share of an operand into every CTA that reads it (TMA multicast), so that the L2 serves each
// shared k-block once per block row or column rather than once per tile.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iris/abi/gemm.h"
#include "iris/impl/arch.cuh"

namespace iris::gemm {

/// How B is stored in global memory: nk = N x K row-major (K contiguous, a Linear layer's weight),
/// kn = K x N row-major (N contiguous).
enum class BLayout { nk, kn };

/// How A is stored in global memory: mk = M x K row-major (K contiguous, the usual activation),
/// km = K x M row-major (M contiguous: A is the transpose of a stored matrix, as X in the weight
/// gradient X^T dY). wgmma reads a km A from shared memory M-major (its transpose-A bit).
enum class ALayout { mk, km };

/// What the producer warpgroup keeps after setmaxnreg when only its TMA thread works.
inline constexpr int kTmaProducerRegisters = 40;

/// The registers each of `consumers` warpgroups may claim with setmaxnreg once the producer
/// warpgroup has dropped to `producer`. The CTA is launched with 65536 / threads per thread,
/// rounded down to a multiple of 8, by __launch_bounds__(threads, 1); setmaxnreg only moves
/// registers between the warpgroups of that allocation, and an increase that the others' decreases
/// do not cover waits forever. The result is a multiple of 8, as setmaxnreg requires.
constexpr int consumer_registers(int consumers, int producer) {
    const int threads = 128 * (1 + consumers);
    const int launch = 65536 / threads / 8 * 8;
    return (launch * threads - producer * 128) / (128 * consumers) / 8 * 8;
}

/// What both mainloops' Configs (this one and sm80/config.cuh's) take first: In_, the inputs' type,
/// iris::bf16 or iris::f16 (A and B alike); B_ and A_, how B and A are stored; Out_, C's type, In_ or
/// float (accumulation is f32 either way, rounded once).
template <class In_, BLayout B_, class Out_, ALayout A_>
struct Operands {
    static constexpr BLayout kBLayout = B_;
    static constexpr ALayout kALayout = A_;
    static_assert(std::is_same_v<In_, iris::bf16> || std::is_same_v<In_, iris::f16>, "inputs are bf16 or f16");
    static_assert(std::is_same_v<Out_, In_> || std::is_same_v<Out_, float>, "output is the input type or f32");
};

/// A block of ClusterM x ClusterN adjacent output tiles computed by one cluster of CTAs (Config's
/// Cluster): the ClusterN CTAs of one of its rows share A's k-blocks, the ClusterM of one of its
/// columns B's. Cluster rank r is the tile at row r % ClusterM, column r / ClusterM of the block.
template <int ClusterM, int ClusterN>
struct ClusterShape {
    static constexpr int kM = ClusterM;
    static constexpr int kN = ClusterN;
    static_assert((kM == 1 || kM == 2 || kM == 4) && (kN == 1 || kN == 2 || kN == 4) && kM * kN <= 8,
                  "1, 2 or 4 tiles each way, at most 8 CTAs (the portable cluster size)");
};

/// In_, B_, Out_: as Operands.
/// ProducerRegisters: what the producer warpgroup keeps after setmaxnreg; kernels whose spare
/// producer warps do work of their own (the fused kernels' copies) need more than the TMA thread.
/// TileN: columns of the output tile, IRIS_GEMM_TILE_N (256), IRIS_GEMM_MID_TILE_N (192) or
/// IRIS_GEMM_NARROW_TILE_N (128) or IRIS_GEMM_THIN_TILE_N (64), which a K x N B needs (a multiple of
/// IRIS_GEMM_KN_BOX_COLS); or, with an N x K B, 8, 16, 32 or 48: a product narrower than one epilogue
/// chunk, which persistent's combiner stores (the swapped kernels, swapped.cuh).
/// A_: how A is stored (after the others, so that the kernels written before it name the same Config).
/// Consumers: consumer warpgroups, each of 64 rows: 2 (IRIS_GEMM_TILE_M rows, IRIS_GEMM_THREADS
/// threads) or 1 (IRIS_GEMM_SHORT_TILE_M rows, IRIS_GEMM_SHORT_THREADS threads).
/// SplitK: two consumers on the same 64 rows (IRIS_GEMM_SHORT_TILE_M rows, IRIS_GEMM_THREADS threads),
/// each on every other k-block, the second handing its sum to the first (impl/split_k.cuh): two
/// chains of dependent wgmma where one warpgroup has one.
/// Pairs: clusters of two CTAs on vertically adjacent tiles that share B, the same as Cluster
/// ClusterShape<2, 1>. Cluster: the block of tiles one cluster computes (ClusterShape, above).
template <class In_, BLayout B_, class Out_, int ProducerRegisters = kTmaProducerRegisters, int TileN = IRIS_GEMM_TILE_N,
          ALayout A_ = ALayout::mk, int Consumers = 2, bool Pairs = false, bool SplitK = false,
          class Cluster = ClusterShape<Pairs ? 2 : 1, 1>>
struct Config : Operands<In_, B_, Out_, A_> {
    using In = In_;
    using Out = Out_;

    static_assert(Consumers == 1 || Consumers == 2, "one or two consumer warpgroups");
    static_assert(!SplitK || Consumers == 2, "K is split between two consumers");
    static constexpr int kConsumers = Consumers;
    static constexpr bool kSplitK = SplitK;
    static constexpr int kTileM = Consumers == 2 && !SplitK ? IRIS_GEMM_TILE_M : IRIS_GEMM_SHORT_TILE_M;
    static constexpr int kTileN = TileN;
    static_assert(kTileN == IRIS_GEMM_TILE_N || kTileN == IRIS_GEMM_MID_TILE_N || kTileN == IRIS_GEMM_NARROW_TILE_N ||
                      kTileN == IRIS_GEMM_THIN_TILE_N || kTileN == 8 || kTileN == 16 || kTileN == 32 || kTileN == 48,
                  "one wgmma n256, n192, n128 or n64 per consumer and k-step, or n8 to n48 for C's few rows in a "
                  "swapped kernel (swapped.cuh)");
    static constexpr int kTileK = IRIS_GEMM_TILE_K;
    static_assert(kTileK * sizeof(In) == IRIS_GEMM_SWIZZLE_BYTES, "a k-block is one swizzle row of A and of an nk B");
    static constexpr int kWgmmaK = 16;
    static constexpr int kConsumerRows = SplitK ? kTileM : kTileM / kConsumers;  // 64: one wgmma M
    static constexpr int kStageReaders = SplitK ? 1 : kConsumers;  // consumers that read (and release) each stage
    static_assert(kConsumerRows == 64, "one wgmma M per consumer");
    static constexpr int kThreads = 128 * (1 + kConsumers);
    static_assert(kThreads == (Consumers == 2 ? IRIS_GEMM_THREADS : IRIS_GEMM_SHORT_THREADS),
                  "the host launches IRIS_GEMM_THREADS (IRIS_GEMM_SHORT_THREADS for short tiles) threads");

    // setmaxnreg budgets: the consumers, holding 128 accumulators each, get what the producer frees.
    // A lone consumer has no need: __launch_bounds__(256, 1) already allows every thread 255.
    static constexpr bool kMovesRegisters = kConsumers > 1;
    static constexpr int kProducerRegisters = ProducerRegisters;
    static constexpr int kConsumerRegisters = kMovesRegisters ? consumer_registers(kConsumers, kProducerRegisters) : 0;

    // The host's tensor maps (dev.irisjvm.kernels.MainloopMaps; for your own kernel,
    // dev.irisjvm.kernels.gemm.GemmKernelArgs) have boxes of {kTileK, kTileM} (M x K) or kTileM /
    // kKnBoxCols boxes of {kKnBoxCols, kTileK} (K x M) for A, and {kTileK, kTileN} (N x K) or
    // kTileN / kKnBoxCols boxes of {kKnBoxCols, kTileK} (K x N) for B, matching the loads in
    // impl/mainloop.cuh.
    static constexpr int kKnBoxCols = IRIS_GEMM_KN_BOX_COLS;
    static_assert(kKnBoxCols * sizeof(In) == IRIS_GEMM_SWIZZLE_BYTES, "a kn box row is one swizzle row");
    static_assert(kConsumerRows == kKnBoxCols, "a km A box holds one consumer's rows");

    // Clusters: the kernel runs in clusters of kClusterM x kClusterN CTAs on a block of adjacent
    // tiles; the CTAs of a row of the block share A's k-blocks, those of a column B's. Each CTA loads
    // its part of each shared operand's k-block into the shared memory of every CTA that shares it
    // (TMA multicast), dividing the L2 requests for it: stored K-contiguous (mk A, nk B), its share
    // of the rows; stored K rows first (km A, kn B), its share of the boxes of kKnBoxCols columns (the
    // later CTAs the larger shares of an uneven count), or of a single box, its share of the K rows
    // (a box of fewer columns would have rows under the swizzle's 128 bytes). impl/mainloop.cuh's
    // load_operand; the host's boxes match. A stage is free again once the consumers of every CTA
    // it was written into have read it: kStageReaders of each of the kClusterM + kClusterN - 1 CTAs
    // of this CTA's row and column.
    static constexpr int kClusterM = Cluster::kM;
    static constexpr int kClusterN = Cluster::kN;
    static_assert(!Pairs || (kClusterM == 2 && kClusterN == 1), "Pairs is the cluster of two tiles that share B");
    static constexpr int kClusterSize = kClusterM * kClusterN;
    static constexpr bool kClustered = kClusterSize > 1;
    static constexpr int kStageReleases = kStageReaders * (kClusterM + kClusterN - 1);
    static_assert((B_ == BLayout::nk || kTileN % kKnBoxCols == 0) && kTileM % kKnBoxCols == 0, "whole boxes of a kn B and a km A");
    static_assert(kTileM / kClusterN * IRIS_GEMM_SWIZZLE_BYTES % 1024 == 0 && kTileN / kClusterM * IRIS_GEMM_SWIZZLE_BYTES % 1024 == 0 &&
                      kTileK / kClusterM * IRIS_GEMM_SWIZZLE_BYTES % 1024 == 0 && kTileK / kClusterN * IRIS_GEMM_SWIZZLE_BYTES % 1024 == 0,
                  "each CTA's share of a shared operand keeps the swizzle's 1024-byte alignment");

    static constexpr uint32_t kABytes = kTileM * kTileK * sizeof(In);
    static constexpr uint32_t kBBytes = kTileN * kTileK * sizeof(In);
    static constexpr uint32_t kStageBytes = kABytes + kBBytes;
    static constexpr int kStages = 192 * 1024 / kStageBytes;  // 4 of 128 x 256 or 128 x 192, 6 of 128 x 128, 8 of 64 x 128, 12 of 64 x 64
    static constexpr uint32_t kRingBytes = kStages * kStageBytes;
    static_assert(kStageBytes % 1024 == 0, "stages keep the 1024-byte alignment of the 128-byte swizzle");
    static constexpr int kAccumulators = kTileN / 2;  // f32 per consumer thread: 64 x kTileN over 128 threads

    // The epilogue stages 64 rows x 128 bytes of output per consumer at a time; rows are padded by
    // 16 bytes so that the fragment writes and the 16-byte row reads hit distinct banks.
    static constexpr int kChunkCols = 128 / sizeof(Out);
    static constexpr int kChunks = kTileN / kChunkCols;
    // Whether finished tiles go through the chunked epilogue: the swapped kernels' narrow ones are
    // stored by their combiner instead (swapped.cuh).
    static constexpr bool kEpilogue = kTileN >= IRIS_GEMM_THIN_TILE_N;
    static constexpr uint32_t kChunkPitch = 128 + 16;
    static constexpr uint32_t kChunkBytes = kConsumerRows * kChunkPitch;

    // What a kernel whose hooks take the chunks needs (IRIS_GEMM_HOOKS_SHARED_BYTES for the widest).
    static constexpr uint32_t kEpilogueOffset = kRingBytes;
    static constexpr uint32_t kSmemBytes = kEpilogueOffset + kConsumers * kChunkBytes + 1024;  // + alignment slack

    // The plain store (TensorStoreEpilogue) writes C by TMA from chunks of 64 unpadded rows in the
    // 128-byte swizzle (which spreads the fragment writes over the banks as the padding does), two
    // per consumer, in place of the padded ones: a chunk's store runs while the next one is staged,
    // the last one's while the next tile's mainloop runs. One per consumer measured no faster than
    // storing from registers (2026-12-06). Not with SplitK: its hand-over reuses these buffers. Not
    // in clusters: the GEMM suite's paired shapes ran 1.6-2.7 % slower with it (gemm-suite-findings.md).
    static constexpr bool kTensorStore = kEpilogue && !SplitK && !kClustered;
    static constexpr uint32_t kStoreChunkBytes = kConsumerRows * IRIS_GEMM_SWIZZLE_BYTES;
    static_assert(kConsumerRows == IRIS_GEMM_STORE_BOX_ROWS && kChunkCols * sizeof(Out) == IRIS_GEMM_SWIZZLE_BYTES,
                  "a stored chunk is one box of C's tensor map");
    static constexpr int kStoreChunkSlots = 2;
    static constexpr uint32_t kStoreSmemBytes =
        kTensorStore ? kEpilogueOffset + kConsumers * kStoreChunkSlots * kStoreChunkBytes + 1024 : kSmemBytes;
    // SplitK: the second consumer's accumulators pass through the epilogue buffers.
    static_assert(!SplitK || kAccumulators * 128 * sizeof(float) <= kConsumers * kChunkBytes, "the handed sum fits the epilogue buffers");
    static_assert(kSmemBytes <= IRIS_GEMM_HOOKS_SHARED_BYTES && kStoreSmemBytes <= IRIS_GEMM_SHARED_BYTES,
                  "every launch gives IRIS_GEMM_SHARED_BYTES, or a kernel of hooks IRIS_GEMM_HOOKS_SHARED_BYTES (iris/abi/gemm.h)");
};

// The widest configuration needs all of IRIS_GEMM_SHARED_BYTES for the plain store and all of
// IRIS_GEMM_HOOKS_SHARED_BYTES for hooks, and the former fits one sm_90 CTA.
static_assert(Config<iris::bf16, BLayout::nk, iris::bf16>::kStoreSmemBytes == IRIS_GEMM_SHARED_BYTES &&
                  Config<iris::bf16, BLayout::nk, iris::bf16>::kSmemBytes == IRIS_GEMM_HOOKS_SHARED_BYTES &&
                  IRIS_GEMM_SHARED_BYTES <= 227 * 1024,
              "IRIS_GEMM_SHARED_BYTES and IRIS_GEMM_HOOKS_SHARED_BYTES are the widest tile's");

}  // namespace iris::gemm
