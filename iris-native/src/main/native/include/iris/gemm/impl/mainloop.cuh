// iris/gemm/impl/mainloop.cuh (not API): the producer and consumer halves of the K loop, joined by a
// ring of shared-memory stages. Stage s has two mbarriers: full[s] completes when TMA has delivered
// the stage's bytes, empty[s] when the consumer warpgroups that read it have finished (in a cluster,
// Cfg::kClustered, those of every CTA of this one's row and column of the block, as each of those
// writes its share of an operand into this one).
#pragma once

#include "iris/gemm/config.cuh"
#include "iris/gemm/impl/hopper.cuh"
#include "iris/gemm/impl/k_blocks.cuh"
#include "iris/gemm/tile_scheduler.cuh"

namespace iris::gemm::impl {

/// Position in the stage ring; the parity flips each time the ring wraps.
template <int Stages>
struct RingPosition {
    int stage = 0;
    uint32_t parity = 0;

    __device__ void advance() {
        if (++stage == Stages) {
            stage = 0;
            parity ^= 1;
        }
    }
};

template <class Cfg>
struct Stages {
    uint8_t* base;  // 1024-byte aligned
    uint64_t* full;
    uint64_t* empty;

    __device__ uint8_t* a(int s) const { return base + s * Cfg::kStageBytes; }
    __device__ uint8_t* b(int s) const { return a(s) + Cfg::kABytes; }
};

/// This CTA's tile in its cluster's block of kClusterM x kClusterN tiles (config.cuh ClusterShape):
/// its row m, which share of B it loads, and its column n, which share of A; 0, 0 alone, without
/// reading the rank. In a block of one row or one column the other coordinate is the constant 0.
template <class Cfg>
struct ClusterPlace {
    int m = 0;
    int n = 0;

    __device__ static ClusterPlace here() {
        if constexpr (!Cfg::kClustered) {
            return {};
        } else {
            const int r = static_cast<int>(sm90::cluster_cta_rank());
            const int m = Cfg::kClusterM == 1 ? 0 : Cfg::kClusterN == 1 ? r : r % Cfg::kClusterM;
            const int n = Cfg::kClusterN == 1 ? 0 : Cfg::kClusterM == 1 ? r : r / Cfg::kClusterM;
            return {m, n};
        }
    }

    /// The CTAs of this one's column of the block, which share B.
    __host__ __device__ uint16_t column() const { return uint16_t(((1u << Cfg::kClusterM) - 1) << (n * Cfg::kClusterM)); }

    /// The CTAs of this one's row of the block, which share A.
    __host__ __device__ uint16_t row() const {
        uint32_t mask = 0;
#pragma unroll
        for (int j = 0; j < Cfg::kClusterN; ++j) mask |= 1u << (j * Cfg::kClusterM);
        return uint16_t(mask << m);
    }
};

/// How load_operand issues a box's load: TMA, into this CTA or into every CTA of `sharers`.
struct TmaLoads {
    __device__ static void load(uint8_t* to, const sm90::TmaDescriptor* map, uint64_t* full, int inner, int outer) {
        sm90::tma_load_2d(to, map, full, inner, outer);
    }
    __device__ static void multicast(uint8_t* to, const sm90::TmaDescriptor* map, uint64_t* full, int inner, int outer,
                                     uint16_t sharers) {
        sm90::tma_load_2d_multicast(to, map, full, inner, outer, sharers);
    }
};

/// Loads one operand's k-block at K offset k0 into `dst`, starting at row or column `at` of its
/// Extent (A: kTileM rows, B: kTileN columns). Stored K-contiguous (an mk A, an nk B): one box of
/// Extent rows of 128 bytes. Stored K rows first (a km A, a kn B): Extent / kKnBoxCols boxes of 64
/// columns, each 64 K-rows of 128 bytes. Shared by Parts CTAs (the row or column of a cluster's
/// block, `sharers`): this CTA's share, `part`, of those rows or boxes, or of a single box, of its K
/// rows, into every sharer; the swizzle repeats every 1024 bytes, so the shares land as one box would.
/// Each box goes through Loads: TMA, or a host test's recorder (iris-kernels/src/test/native/gemm_loads.cu).
template <class Cfg, int Extent, bool KContiguous, int Parts, class Loads = TmaLoads>
__host__ __device__ void load_operand(uint8_t* dst, const sm90::TmaDescriptor* map, uint64_t* full, int k0, int at, int part,
                                      uint16_t sharers) {
    const auto load = [&](uint8_t* to, int inner, int outer) {
        if constexpr (Parts > 1) {
            Loads::multicast(to, map, full, inner, outer, sharers);
        } else {
            Loads::load(to, map, full, inner, outer);
        }
    };
    if constexpr (KContiguous) {
        constexpr int kRows = Extent / Parts;
        load(dst + part * kRows * IRIS_GEMM_SWIZZLE_BYTES, k0, at + part * kRows);
    } else {
        constexpr int kBoxes = Extent / Cfg::kKnBoxCols;
        if constexpr (kBoxes < Parts) {
            static_assert(kBoxes == 1, "the sharers of a K-rows-first operand split whole boxes, or the K rows of its one box");
            constexpr int kRows = Cfg::kTileK / Parts;
            load(dst + part * kRows * IRIS_GEMM_SWIZZLE_BYTES, at, k0 + part * kRows);
        } else {
#pragma unroll
            for (int j = part * kBoxes / Parts; j < (part + 1) * kBoxes / Parts; ++j) {
                load(dst + j * Cfg::kTileK * IRIS_GEMM_SWIZZLE_BYTES, at + j * Cfg::kKnBoxCols, k0);
            }
        }
    }
}

/// One thread loads every stage of every unit this CTA computes (a tile, or its slice of K), running
/// up to kStages stages ahead of the consumers (into the next unit while they run the epilogue).
template <class Cfg, class Scheduler, class Hooks>
__device__ void produce(const Stages<Cfg>& st, const sm90::TmaDescriptor* a_map, const sm90::TmaDescriptor* b_map,
                        const Scheduler& sched, int k_blocks, Hooks& hooks) {
    RingPosition<Cfg::kStages> pos;
    for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
        const TileCoord tile = sched.coord(t);
        const int row = tile.m * Cfg::kTileM;
        const int col = tile.n * Cfg::kTileN;
        const KBlocks range = k_blocks_of(tile, k_blocks);
        for (int kb = range.begin; kb < range.end; ++kb, pos.advance()) {
            const int k0 = kb * Cfg::kTileK;
            hooks.before_loads(tile, k0);
            sm90::mbarrier_wait(&st.empty[pos.stage], pos.parity ^ 1);
            uint64_t* full = &st.full[pos.stage];
            sm90::mbarrier_arrive_expect_tx(full, Cfg::kStageBytes);
            // A km A's box j is consumer j's operand.
            constexpr bool kMkA = Cfg::kALayout == ALayout::mk;
            constexpr bool kNkB = Cfg::kBLayout == BLayout::nk;
            if constexpr (Cfg::kClustered) {
                const ClusterPlace<Cfg> place = ClusterPlace<Cfg>::here();
                load_operand<Cfg, Cfg::kTileM, kMkA, Cfg::kClusterN>(st.a(pos.stage), a_map, full, k0, row, place.n, place.row());
                load_operand<Cfg, Cfg::kTileN, kNkB, Cfg::kClusterM>(st.b(pos.stage), b_map, full, k0, col, place.m, place.column());
            } else {  // constants, not a place: an unclustered kernel's code stays as it was
                load_operand<Cfg, Cfg::kTileM, kMkA, 1>(st.a(pos.stage), a_map, full, k0, row, 0, 0);
                load_operand<Cfg, Cfg::kTileN, kNkB, 1>(st.b(pos.stage), b_map, full, k0, col, 0, 0);
            }
        }
    }
    if constexpr (Cfg::kClustered) {
        // The cluster's consumers arrive on this CTA's empty barriers until their last stage: wait
        // for every stage to be released once more, so that no arrival finds this CTA gone.
        for (int s = 0; s < Cfg::kStages; ++s, pos.advance()) {
            sm90::mbarrier_wait(&st.empty[pos.stage], pos.parity ^ 1);
        }
    }
}

/// Descriptors of the wgmma operands for K-step `kk` (0..3) of a stage: this consumer's 64 rows
/// of A, and all kTileN columns of B.
template <class Cfg>
struct OperandDescriptors {
    __device__ static uint64_t a(const uint8_t* stage_a, int consumer, int kk) {
        if constexpr (Cfg::kALayout == ALayout::mk) {
            // K-major rows of 128 bytes; 8-row swizzle atoms 1024 bytes apart. A K-step moves 32 bytes
            // inside the atom, which the hardware swizzles like the TMA did.
            return sm90::smem_descriptor_sw128(stage_a + consumer * Cfg::kConsumerRows * 128 + kk * 32, 16, 1024);
        } else {
            // M-major, as an N-major B: this consumer's 64 rows are one box (8 KiB), whose 8-row K
            // groups are 1 KiB apart (stride); a K-step is 16 rows. The leading offset (between
            // 64-row blocks) is never used by an M of 64, but is the boxes' distance all the same.
            constexpr uint32_t kBox = Cfg::kKnBoxCols * Cfg::kTileK * sizeof(typename Cfg::In);
            return sm90::smem_descriptor_sw128(stage_a + consumer * kBox + kk * Cfg::kWgmmaK * 128, kBox, 1024);
        }
    }
    __device__ static uint64_t b(const uint8_t* stage_b, int kk) {
        if constexpr (Cfg::kBLayout == BLayout::nk) {
            return sm90::smem_descriptor_sw128(stage_b + kk * 32, 16, 1024);
        } else {
            // N-major: 64-column blocks 8 KiB apart (leading), 8-row K groups 1 KiB apart (stride);
            // a K-step is 16 rows.
            return sm90::smem_descriptor_sw128(stage_b + kk * Cfg::kWgmmaK * 128, Cfg::kKnBoxCols * Cfg::kTileK * 2, 1024);
        }
    }
};

/// A consumer's release of a stage it has read: to this CTA's producer, and in a cluster to every
/// CTA of its row and column of the block, since each of those loads into it.
template <class Cfg>
__device__ inline void release(uint64_t* empty) {
    if constexpr (!Cfg::kClustered) {
        sm90::mbarrier_arrive(empty);
    } else if constexpr (Cfg::kClusterM == 1 || Cfg::kClusterN == 1) {
        // A block of one row or one column: every CTA of the cluster, without reading this one's rank.
#pragma unroll
        for (int r = 0; r < Cfg::kClusterSize; ++r) {
            sm90::mbarrier_arrive_cluster(empty, r);
        }
    } else {
        const ClusterPlace<Cfg> place = ClusterPlace<Cfg>::here();
#pragma unroll
        for (int i = 0; i < Cfg::kClusterM; ++i) {
            sm90::mbarrier_arrive_cluster(empty, place.n * Cfg::kClusterM + i);
        }
#pragma unroll
        for (int j = 0; j < Cfg::kClusterN; ++j) {
            if (j != place.n) sm90::mbarrier_arrive_cluster(empty, j * Cfg::kClusterM + place.m);
        }
    }
}

/// One consumer warpgroup's K loop for one unit (k_blocks of them): acc = A(rows) x B. Keeps one
/// wgmma group in flight and frees a stage as soon as the group that read it has retired. With
/// SplitK, consumer c takes k-blocks c, c + 2, ... of the same rows (and has acc = 0 where it gets
/// none); both leave `pos` past the unit's last stage.
template <class Cfg>
__device__ void consume(const Stages<Cfg>& st, RingPosition<Cfg::kStages>& pos, float (&acc)[Cfg::kAccumulators],
                        int consumer, int k_blocks) {
    constexpr int kTransB = Cfg::kBLayout == BLayout::kn ? 1 : 0;
    constexpr int kTransA = Cfg::kALayout == ALayout::km ? 1 : 0;
    constexpr int kStep = Cfg::kSplitK ? 2 : 1;
    const int first = Cfg::kSplitK ? consumer : 0;
    const int rows = Cfg::kSplitK ? 0 : consumer;  // which 64 rows of the stage's A
    const bool leader = threadIdx.x % 128 == 0;
    RingPosition<Cfg::kStages> end = pos;
    if constexpr (Cfg::kSplitK) {
        for (int kb = 0; kb < k_blocks; ++kb) end.advance();
        if (first >= k_blocks) {
#pragma unroll
            for (int i = 0; i < Cfg::kAccumulators; ++i) acc[i] = 0.f;
        }
        if (first > 0) pos.advance();
    }
    int previous = -1;
    for (int kb = first; kb < k_blocks; kb += kStep) {
        sm90::mbarrier_wait(&st.full[pos.stage], pos.parity);
        sm90::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < Cfg::kTileK / Cfg::kWgmmaK; ++kk) {
            sm90::wgmma_ss<typename Cfg::In, Cfg::kTileN, kTransB, kTransA>(
                acc, OperandDescriptors<Cfg>::a(st.a(pos.stage), rows, kk),
                OperandDescriptors<Cfg>::b(st.b(pos.stage), kk), kb > first || kk > 0);
        }
        sm90::wgmma_commit_group();
        sm90::wgmma_wait_group<1>();
        if (previous >= 0 && leader) {
            release<Cfg>(&st.empty[previous]);
        }
        previous = pos.stage;
#pragma unroll
        for (int s = 0; s < kStep; ++s) pos.advance();
    }
    sm90::wgmma_wait_group<0>();
    if (leader && (!Cfg::kSplitK || previous >= 0)) {  // only a SplitK consumer can have had no k-block
        release<Cfg>(&st.empty[previous]);
    }
    if constexpr (Cfg::kSplitK) pos = end;
}

}  // namespace iris::gemm::impl
