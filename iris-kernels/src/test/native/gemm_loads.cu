// gemm_loads.cu: the GEMM mainloop's operand loads (impl/mainloop.cuh load_operand) on the host, for
// MainloopMapsTest and GemmScheduleTest. For every tile of gemm.cu and every way A and B are stored, each CTA of a cluster
// issues one stage's loads of A and B into a recorder instead of TMA; then, for each CTA, the loads
// that land in its shared memory (its own, and its sharers' multicasts that name it) must fill the
// stage exactly once, row by 128-byte row, each row with the global elements its tile reads there,
// each load at a 1024-byte boundary (the 128-byte swizzle's period); and the bytes that land must be
// the stage's bytes, which the CTA's full barrier expects. One line per tile and layouts:
//
//   <part> <a layout> <b layout> a_share <rows> a_box <inner> <outer> b_share <cols> b_box <inner> <outer> ok
//   <part> <a layout> <b layout> ... error <what>
//
// A share is what one CTA loads of the tile's rows of A (columns of B): all of them, or where a
// cluster shares the operand, its part. The boxes are the tensor maps' as the host makes them from
// the share (dev.irisjvm.kernels.MainloopMaps): an operand stored K-contiguous in boxes of 64
// elements of K by the share's rows; one stored K rows first in boxes of 64 columns by 64 K rows, or
// where the share is less than one box, that part of its K rows.
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "host_tiles.cuh"
#include "iris/gemm.cuh"

namespace {

using iris::gemm::ALayout;
using iris::gemm::BLayout;
namespace impl = iris::gemm::impl;

/// One load as load_operand issued it: where in the stage, from where in the matrix, into whom.
struct Load {
    int64_t offset;  // bytes into the operand's part of the stage
    int inner;
    int outer;
    int sharers;  // -1: the issuer's own shared memory only
};
std::vector<Load> g_loads;
uint8_t g_stage[IRIS_GEMM_SHARED_BYTES];  // the base the offsets count from (a stage fits); nothing is written

/// The recorder load_operand issues through (impl::TmaLoads on the device, which this program never runs).
struct RecordedLoads {
    __host__ __device__ static void load(uint8_t* to, const iris::gemm::sm90::TmaDescriptor*, uint64_t*, int inner, int outer) {
        record(to, inner, outer, -1);
    }
    __host__ __device__ static void multicast(uint8_t* to, const iris::gemm::sm90::TmaDescriptor*, uint64_t*, int inner, int outer,
                                              uint16_t sharers) {
        record(to, inner, outer, sharers);
    }
    __host__ __device__ static void record(uint8_t* to, int inner, int outer, int sharers) {
#ifndef __CUDA_ARCH__
        g_loads.push_back({to - g_stage, inner, outer, sharers});
#endif
    }
};

/// A box of a tensor map: elements of its contiguous dimension by rows.
struct Box {
    int inner;
    int outer;
};

/// The box of an operand of `extent` rows (K-contiguous) or columns (K rows first) that `parts` CTAs share.
template <class Cfg>
Box box_of(int extent, bool k_contiguous, int parts) {
    if (k_contiguous) return {Cfg::kTileK, extent / parts};
    return {Cfg::kKnBoxCols, extent / Cfg::kKnBoxCols < parts ? Cfg::kTileK / parts : Cfg::kTileK};
}

/// A CTA's share of an operand and those it shares with, as impl::produce gives them to load_operand.
struct Share {
    int part;
    uint16_t sharers;
};

/// One operand of a stage, for each CTA of the cluster: the loads every CTA issues (load_operand with
/// the place and sharers the producer gives it), then what lands in each CTA against its tile.
/// `origin(rank)`: the first row (K-contiguous) or column of the CTA's tile in this operand.
template <class Cfg, int Extent, bool KContiguous, int Parts, class Origin, class ShareOf>
std::string check_operand(const char* name, int k0, Origin origin, ShareOf share_of, int64_t& landed_bytes, int rank) {
    const Box box = box_of<Cfg>(Extent, KContiguous, Parts);
    g_loads.clear();
    std::vector<int> issuers;
    for (int r = 0; r < Cfg::kClusterSize; ++r) {
        const auto share = share_of(r);
        impl::load_operand<Cfg, Extent, KContiguous, Parts, RecordedLoads>(g_stage, nullptr, nullptr, k0, origin(r), share.part, share.sharers);
        issuers.resize(g_loads.size(), r);
    }
    const int rows = KContiguous ? Extent : Extent / Cfg::kKnBoxCols * Cfg::kTileK;  // 128-byte rows of the operand's stage part
    std::vector<int> filled(rows, 0);
    for (size_t i = 0; i < g_loads.size(); ++i) {
        const Load& l = g_loads[i];
        const bool here = l.sharers < 0 ? issuers[i] == rank : ((l.sharers >> rank) & 1) != 0;
        if (!here) continue;
        if (l.offset % 1024 != 0) return std::string(name) + " load at byte " + std::to_string(l.offset) + " is off the swizzle's period";
        if (l.sharers >= 0 && ((l.sharers >> issuers[i]) & 1) == 0) return std::string(name) + " multicast leaves out its issuer";
        landed_bytes += int64_t(box.inner) * box.outer * sizeof(typename Cfg::In);
        for (int j = 0; j < box.outer; ++j) {
            const int row = static_cast<int>(l.offset / IRIS_GEMM_SWIZZLE_BYTES) + j;
            if (row >= rows) return std::string(name) + " load past the stage";
            ++filled[row];
            // The elements this CTA's consumers read in that row: K-contiguous, row `row` of the tile
            // at k0; K rows first, K row row % 64 of the box of 64 columns row / 64.
            const int inner = KContiguous ? k0 : origin(rank) + row / Cfg::kTileK * Cfg::kKnBoxCols;
            const int outer = KContiguous ? origin(rank) + row : k0 + row % Cfg::kTileK;
            if (l.inner != inner || l.outer + j != outer) {
                return std::string(name) + " row " + std::to_string(row) + " of rank " + std::to_string(rank) + " holds (" + std::to_string(l.inner) +
                       ", " + std::to_string(l.outer + j) + "), not (" + std::to_string(inner) + ", " + std::to_string(outer) + ")";
            }
        }
    }
    for (int row = 0; row < rows; ++row) {
        if (filled[row] != 1) {
            return std::string(name) + " row " + std::to_string(row) + " of rank " + std::to_string(rank) + " is loaded " + std::to_string(filled[row]) +
                   " times";
        }
    }
    return "";
}

/// One stage of Cfg's kernel, as every CTA of a cluster on the block at the origin loads it.
template <class Cfg>
std::string check() {
    constexpr bool kMkA = Cfg::kALayout == ALayout::mk;
    constexpr bool kNkB = Cfg::kBLayout == BLayout::nk;
    constexpr int k0 = 3 * Cfg::kTileK;
    // Rank r's tile row (A) or column (B), and its share as impl::produce gives it to load_operand.
    const auto a_origin = [](int r) { return host::place_of<Cfg>(r).m * Cfg::kTileM; };
    const auto b_origin = [](int r) { return host::place_of<Cfg>(r).n * Cfg::kTileN; };
    const auto a_share = [](int r) {
        const auto p = host::place_of<Cfg>(r);
        return Cfg::kClustered ? Share{p.n, p.row()} : Share{0, 0};
    };
    const auto b_share = [](int r) {
        const auto p = host::place_of<Cfg>(r);
        return Cfg::kClustered ? Share{p.m, p.column()} : Share{0, 0};
    };
    for (int rank = 0; rank < Cfg::kClusterSize; ++rank) {
        int64_t landed = 0;
        std::string a = check_operand<Cfg, Cfg::kTileM, kMkA, Cfg::kClusterN>("A", k0, a_origin, a_share, landed, rank);
        if (!a.empty()) return a;
        std::string b = check_operand<Cfg, Cfg::kTileN, kNkB, Cfg::kClusterM>("B", k0, b_origin, b_share, landed, rank);
        if (!b.empty()) return b;
        if (landed != Cfg::kStageBytes) {
            return "rank " + std::to_string(rank) + " receives " + std::to_string(landed) + " bytes a stage, its barrier expects " +
                   std::to_string(Cfg::kStageBytes);
        }
    }
    return "";
}

template <ALayout A, BLayout B>
void check_all() {
    host::for_each_tile<A, B>([](const std::string& part, int, auto tag) {
        using Cfg = typename decltype(tag)::type;
        const Box a = box_of<Cfg>(Cfg::kTileM, A == ALayout::mk, Cfg::kClusterN);
        const Box b = box_of<Cfg>(Cfg::kTileN, B == BLayout::nk, Cfg::kClusterM);
        const std::string error = check<Cfg>();
        std::cout << host::shown(part) << " " << (A == ALayout::mk ? "mk" : "km") << " " << (B == BLayout::nk ? "nk" : "kn") << " a_share "
                  << Cfg::kTileM / Cfg::kClusterN << " a_box " << a.inner << " " << a.outer << " b_share " << Cfg::kTileN / Cfg::kClusterM
                  << " b_box " << b.inner << " " << b.outer << (error.empty() ? " ok" : " error " + error) << std::endl;
    });
}

}  // namespace

int main() {
    check_all<ALayout::mk, BLayout::nk>();
    check_all<ALayout::mk, BLayout::kn>();
    check_all<ALayout::km, BLayout::nk>();
    check_all<ALayout::km, BLayout::kn>();
    return 0;
}
