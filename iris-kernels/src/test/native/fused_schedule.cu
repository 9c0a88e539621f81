// fused_schedule.cu: the fused GEMM + communication kernels' orders on the host, for
// FusedScheduleTest (dev.irisjvm.kernels.fused). It runs the kernels' own code (fused/*.cuh) on the
// CPU and holds it against what the kernels need and what the host allocates for them.
//
// One case a line:
//
//   order <m> <n> <tile_n> <group_m> <world> <rows_per_owner>
//     fused_common.cuh's RowOwners and OwnerOrderedScheduler, and split_k_exchange.cuh's
//     SplitKScheduler over it, on every rank, self first (all-gather) and self last (the
//     reductions): every tile once, each owner's tiles together, the owners from this rank on
//     (or from the next, ending with this one), every tile's two halves with split-K; the owners'
//     blocks of whole tile rows, which differ by at most one, the largest rows_per_owner rows (the
//     host's FusedWorkspace.rowsPerOwner, the slots of the reductions' ws).
//   gather <m> <n> <k> <tile_n> <world> <group_m> <slices> <blocks> <flag_words> <pieces>
//     all_gather_hooks.cuh's PushOrder on every rank: each of the rank's pieces once (its tile
//     rows x every column chunk of K), `pieces` of them on the rank with the most (none alone:
//     FusedWorkspace.gatherPieces, the trace's slots for them); flag_words
//     (FusedWorkspace.gatherFlags) the words the kernel indexes: all_gather_flag_words, and
//     split-K's exchange after them.
//
// Answers, one a line: "ok <what was counted>" or "error <what>".
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fused/all_gather_hooks.cuh"
#include "fused/split_k_exchange.cuh"
#include "host_cases.cuh"

namespace {

using host::fail;

using fused::OwnerOrderedScheduler;
using fused::RowOwners;
using iris::gemm::TileCoord;

constexpr int kTileM = IRIS_GEMM_TILE_M;  // every fused kernel's tile rows

std::string where(int rank, bool self_first) {
    return " (rank " + std::to_string(rank) + ", self " + (self_first ? "first" : "last") + ")";
}

/// The owners' blocks: whole tile rows from 0 to tiles_m, each owner's rows its own.
std::string check_owners(const RowOwners& owners, int rows_per_owner) {
    if (owners.first_row(0) != 0 || owners.first_row(owners.world) != owners.tiles_m) return fail("the blocks do not cover the tile rows");
    int most = 0;
    for (int o = 0; o < owners.world; ++o) {
        const int rows = owners.first_row(o + 1) - owners.first_row(o);
        if (rows < owners.tiles_m / owners.world || rows > owners.most_rows()) {
            return fail("owner ", o, " has ", rows, " tile rows");
        }
        most = std::max(most, rows);
        for (int r = owners.first_row(o); r < owners.first_row(o + 1); ++r) {
            if (owners.owner_of(r) != o) return fail("tile row ", r, " is owned by ", o, ", owner_of says ", owners.owner_of(r));
        }
    }
    if (most != owners.most_rows()) return fail("most_rows ", owners.most_rows(), ", the largest block ", most);
    if (most * kTileM != rows_per_owner) {
        return fail("the host's rows per owner ", rows_per_owner, ", the kernel's ", most * kTileM);
    }
    return "";
}

/// One rank's tile order: every tile once, the owners' tiles in runs from the first owner on.
template <int TileN>
std::string check_order(const OwnerOrderedScheduler<kTileM, TileN>& s, int rank, bool self_first) {
    const RowOwners& owners = s.owners;
    std::set<std::pair<int, int>> seen;
    std::vector<int> runs;  // the owner of each run of tiles
    for (int u = 0; u < s.count(); ++u) {
        const TileCoord t = s.coord(u);
        if (t.m < 0 || t.m >= owners.tiles_m || t.n < 0 || t.n >= s.tiles_n) {
            return fail("unit ", u, " is tile (", t.m, ", ", t.n, "), outside C", where(rank, self_first));
        }
        if (!seen.insert({t.m, t.n}).second) {
            return fail("tile (", t.m, ", ", t.n, ") twice", where(rank, self_first));
        }
        const int o = owners.owner_of(t.m);
        if (runs.empty() || runs.back() != o) runs.push_back(o);
    }
    if (static_cast<int>(seen.size()) != owners.tiles_m * s.tiles_n) return fail("tiles missed", where(rank, self_first));
    std::vector<int> expected;  // owners with rows, in the order the kernel visits them
    for (int j = 0; j < owners.world; ++j) {
        const int o = (rank + (self_first ? j : j + 1)) % owners.world;
        if (owners.first_row(o + 1) > owners.first_row(o)) expected.push_back(o);
    }
    if (runs != expected) {
        std::ostringstream got;
        for (int o : runs) got << " " << o;
        return fail("owners visited in the order", got.str(), where(rank, self_first));
    }
    for (int slices = 1; slices <= 2; ++slices) {
        const fused::SplitKScheduler<OwnerOrderedScheduler<kTileM, TileN>> split{s, slices};
        if (split.count() != s.count() * slices) return fail("split-K by ", slices, " counts ", split.count(), " units");
        for (int u = 0; u < split.count(); ++u) {
            const TileCoord t = split.coord(u);
            const TileCoord whole = s.coord(u / slices);
            if (t.m != whole.m || t.n != whole.n || t.slice != u % slices || t.slices != slices) {
                return fail("split-K unit ", u, " is not half ", u % slices, " of tile ", u / slices, where(rank, self_first));
            }
        }
    }
    return "";
}

template <int TileN>
std::string order(int m, int n, int group_m, int world, int rows_per_owner) {
    int units = 0;
    for (int rank = 0; rank < world; ++rank) {
        for (bool self_first : {true, false}) {
            const OwnerOrderedScheduler<kTileM, TileN> s(m, n, group_m, rank, world, self_first);
            if (std::string e = check_owners(s.owners, rows_per_owner); !e.empty()) return e;
            if (std::string e = check_order(s, rank, self_first); !e.empty()) return e;
            units = s.count();
        }
    }
    return "ok tiles " + std::to_string(units);
}

std::string order(std::istringstream& in) {
    int m, n, tile_n, group_m, world, rows_per_owner;
    if (!(in >> m >> n >> tile_n >> group_m >> world >> rows_per_owner)) return fail("order wants m n tile_n group_m world rows_per_owner");
    if (m < 1 || n < 1 || world < 1) return fail("a problem of m, n >= 1 on world >= 1 ranks");
    switch (tile_n) {
        case IRIS_GEMM_TILE_N: return order<IRIS_GEMM_TILE_N>(m, n, group_m, world, rows_per_owner);
        case IRIS_GEMM_NARROW_TILE_N: return order<IRIS_GEMM_NARROW_TILE_N>(m, n, group_m, world, rows_per_owner);
        default: return fail("no fused kernel has tiles of ", tile_n, " columns");
    }
}

std::string gather(std::istringstream& in) {
    int64_t m, n, k, flag_words, most_pieces;
    int tile_n, world, group_m, slices, blocks;
    if (!(in >> m >> n >> k >> tile_n >> world >> group_m >> slices >> blocks >> flag_words >> most_pieces)) {
        return fail("gather wants m n k tile_n world group_m slices blocks flag_words pieces");
    }
    constexpr int kTileK = IRIS_GEMM_TILE_K;  // the mainloop's k-block
    const int k_blocks = static_cast<int>((k + kTileK - 1) / kTileK);
    const int pieces_per_row = static_cast<int>((k + fused::kGatherPieceCols - 1) / fused::kGatherPieceCols);
    const RowOwners owners{static_cast<int>((m + kTileM - 1) / kTileM), world};
    const int second_chunk = fused::gather_second_chunk(k_blocks, slices);
    if (slices == 2) {
        const iris::gemm::impl::KBlocks second = iris::gemm::impl::k_blocks_of(TileCoord{0, 0, 0, 1, 2}, k_blocks);
        if (second.begin * kTileK != second_chunk * fused::kGatherPieceCols) {
            return fail("the second half starts at k-block ", second.begin, ", its first chunk is ", second_chunk);
        }
    }
    const int64_t tiles = owners.tiles_m * ((n + tile_n - 1) / tile_n);
    const int64_t words = fused::all_gather_flag_words(m, k, world, blocks) + (slices == 2 ? fused::split_exchange_words(tiles) : 0);
    if (words != flag_words) return fail("the host allocates ", flag_words, " flag words, the kernel indexes ", words);
    int most = 0;
    for (int rank = 0; rank < world; ++rank) {
        const fused::PushOrder push{owners, rank, group_m, static_cast<int>(k), second_chunk};
        std::set<std::pair<int, int>> seen;
        for (int p = 0; p < push.pieces(); ++p) {
            const fused::GatherPiece piece = push.piece(p);
            const int chunk = piece.col0 / fused::kGatherPieceCols;
            if (piece.tile_row < owners.first_row(rank) || piece.tile_row >= owners.first_row(rank + 1) ||
                piece.col0 % fused::kGatherPieceCols != 0 || chunk < 0 || chunk >= pieces_per_row) {
                return fail("rank ", rank, "'s piece ", p, " is (", piece.tile_row, ", ", piece.col0, "), not its own");
            }
            if (!seen.insert({piece.tile_row, chunk}).second) return fail("rank ", rank, " pushes piece ", p, " twice");
        }
        const int own = (owners.first_row(rank + 1) - owners.first_row(rank)) * pieces_per_row;
        if (static_cast<int>(seen.size()) != own) return fail("rank ", rank, " pushes ", seen.size(), " of its ", own, " pieces");
        if (world > 1) most = std::max(most, push.pieces());  // alone, AllGatherHooks::push has no peer to push to
    }
    if (most != most_pieces) return fail("the host counts ", most_pieces, " pieces for the rank with the most, the kernel ", most);
    return "ok pieces " + std::to_string(most) + " flag_words " + std::to_string(words);
}

}  // namespace

int main() {
    return host::answer_cases([](const std::string& what, std::istringstream& in) {
        return what == "order" ? order(in) : what == "gather" ? gather(in) : fail("unknown case ", what);
    });
}
