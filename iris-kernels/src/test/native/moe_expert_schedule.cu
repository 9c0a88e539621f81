// moe_expert_schedule.cu: the expert GEMM's units and tile order (moe_expert_schedule.cuh) on the
// host, for MoeExpertScheduleTest (dev.irisjvm.kernels.moe).
//
// One launch a line:
//
//   experts <tile_n> <capacity> <n> <max_units> <count of expert 0> <count of expert 1> ...
//
// builds the unit table from the counts as plan_units does (expert_units, then the prefix sums) and
// runs ExpertTileScheduler over it: every tile of every expert's received rows once (its tile rows
// up to the count, at most the capacity, by every tile column of its weights), inside the expert's
// part of the receive buffer and of the weights, tile rows first within a column; at most
// max_units units (the host's bound, MoeExpertGemm's grid).
//
// Answers, one a line: "ok units <U>" or "error <what>".
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "host_cases.cuh"
#include "iris/abi/gemm.h"
#include "moe_expert_schedule.cuh"

namespace {

using host::fail;

using iris::gemm::TileCoord;

constexpr int kTileM = IRIS_GEMM_TILE_M;  // the expert GEMM's tile rows (moe_expert_gemm.cu's Config)

template <int TileN>
std::string experts(int capacity, int n, long long max_units, const std::vector<int>& counts) {
    const int local = static_cast<int>(counts.size());
    const int tiles_n = n / TileN;
    std::vector<int32_t> table(local + 1, 0);
    for (int l = 0; l < local; ++l) table[l + 1] = table[l] + moe::expert_units<kTileM>(counts[l], capacity, tiles_n);
    const moe::ExpertTileScheduler<kTileM, TileN> s{table.data(), local, tiles_n, capacity / kTileM};
    if (s.count() > max_units) return fail(s.count(), " units, more than the host's bound ", max_units);

    std::set<std::pair<int, int>> seen;
    TileCoord previous{-1, -1};
    for (int u = 0; u < s.count(); ++u) {
        const TileCoord t = s.coord(u);
        const int l = t.n / tiles_n;
        if (l < 0 || l >= local) return fail("unit ", u, " is in tile column ", t.n, ", past the experts' weights");
        const int rows = counts[l] < 0 ? 0 : std::min(counts[l], capacity);
        const int tile_row = t.m - l * s.rows_per_expert;
        if (tile_row < 0 || tile_row * kTileM >= rows) {
            return fail("unit ", u, " is tile row ", t.m, ", outside expert ", l, "'s ", rows, " received rows");
        }
        if (!seen.insert({t.m, t.n}).second) return fail("tile (", t.m, ", ", t.n, ") twice");
        // Tile rows first: the next unit of the same column is the next row.
        const bool next_row = t.n == previous.n && t.m == previous.m + 1;
        const bool next_column = tile_row == 0 && (previous.n < 0 || t.n != previous.n);
        if (!next_row && !next_column) {
            return fail("unit ", u, " (", t.m, ", ", t.n, ") does not follow (", previous.m, ", ", previous.n, ") row by row");
        }
        previous = t;
    }
    long long expected = 0;
    for (int l = 0; l < local; ++l) {
        const int rows = counts[l] < 0 ? 0 : std::min(counts[l], capacity);
        expected += static_cast<long long>((rows + kTileM - 1) / kTileM) * tiles_n;
    }
    if (static_cast<long long>(seen.size()) != expected) return fail(seen.size(), " tiles, the counts make ", expected);
    return "ok units " + std::to_string(s.count());
}

std::string experts(std::istringstream& in) {
    int tile_n, capacity, n;
    long long max_units;
    if (!(in >> tile_n >> capacity >> n >> max_units)) return fail("experts wants tile_n capacity n max_units counts...");
    std::vector<int> counts;
    for (int c; in >> c;) counts.push_back(c);
    if (counts.empty() || capacity % kTileM != 0 || n % tile_n != 0) {
        return fail("experts wants counts, a capacity of whole tiles and n of whole tile columns");
    }
    switch (tile_n) {
        case IRIS_GEMM_TILE_N: return experts<IRIS_GEMM_TILE_N>(capacity, n, max_units, counts);
        case IRIS_GEMM_NARROW_TILE_N: return experts<IRIS_GEMM_NARROW_TILE_N>(capacity, n, max_units, counts);
        default: return fail("no expert GEMM has tiles of ", tile_n, " columns");
    }
}

}  // namespace

int main() {
    return host::answer_cases([](const std::string& what, std::istringstream& in) {
        return what == "experts" ? experts(in) : fail("unknown case ", what);
    });
}
