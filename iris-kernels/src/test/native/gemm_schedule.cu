// gemm_schedule.cu: the plain GEMM's tiles and its scheduler on the host, for GemmScheduleTest.
//
// `gemm_schedule --tiles` lists gemm.cu's tiles (gemm_tiles.cuh) as their Configs have them, one line
// each, for the test to hold dev.irisjvm.kernels.gemm.GemmTile against:
//
//   tile <part> <rows> <cols> <threads> <cluster_m> <cluster_n>
//
// Otherwise it runs iris/gemm/stream_k.cuh's scheduler as every CTA of a launch would, and holds
// what the launch computes against what a GEMM must: every k-block of every tile exactly once, the
// CTAs of a cluster in step on the tiles of one block, each shared tile's pieces counted and summed
// by the clusters that hold them, and no two pieces in one partial slot or on one counter. One
// launch a line, as the kernel gets it in iris_gemm_args (a swapped tile's m and n those of its
// product):
//
//   <part> <m> <n> <k> <group_m> <grid> <stream_k_tiles>
//
// and one answer a line:
//
//   ok units U shared S k_blocks K pieces P..Q range R slots_floats F counters C
//   error <what>
//
// <part>: what follows iris_gemm_ in the tile's kernel names, "-" for none (the 128 x 256 tile).
// shared: the units the kernel shares out by K (0 where the scheduler ran every unit whole: the
// host's plan was not taken); pieces: the fewest and most clusters on a shared unit; range: the
// fewest k-blocks of any cluster's stream-K range; slots_floats and counters: the workspace the
// launch touches (the host allocates it).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "host_tiles.cuh"
#include "iris/gemm.cuh"

namespace {

using iris::gemm::ALayout;
using iris::gemm::BLayout;
using iris::gemm::TileCoord;

/// The simulated CTA: blockIdx.x of a grid of gridDim.x.
struct Cta {
    unsigned grid = 0;
    unsigned block = 0;
};
Cta g_cta;

/// g_cta, where the scheduler's __host__ __device__ functions read it. nvcc compiles them for the
/// device too, where this program runs nothing (it has no kernels).
__host__ __device__ inline Cta cta() {
#ifdef __CUDA_ARCH__
    return {};
#else
    return g_cta;
#endif
}

/// LaunchPlace on the host: the simulated CTA's cluster, rank and tile in its cluster's block.
template <class Cfg>
struct HostPlace {
    __host__ __device__ static unsigned clusters() { return cta().grid / Cfg::kClusterSize; }
    __host__ __device__ static unsigned cluster() { return cta().block / Cfg::kClusterSize; }
    __host__ __device__ static int rank() { return static_cast<int>(cta().block) % Cfg::kClusterSize; }
    __host__ __device__ static iris::gemm::impl::ClusterPlace<Cfg> tile() { return host::place_of<Cfg>(rank()); }
};

struct Launch {
    int m, n, k, group, grid, sk_tiles;
};

/// What one CTA runs of one unit.
struct Piece {
    int unit;
    TileCoord tile;
};

std::string fail(const std::string& what) { return "error " + what; }

/// One launch of Cfg's kernel: the scheduler of every CTA, then the checks the header comment names.
template <class Cfg>
std::string check(const Launch& l) {
    using Scheduler = iris::gemm::StreamKScheduler<Cfg, HostPlace<Cfg>>;
    constexpr int size = Cfg::kClusterSize;
    if (l.grid <= 0 || l.grid % size != 0) return fail("grid " + std::to_string(l.grid) + " is not whole clusters of " + std::to_string(size));

    const auto at = [&](int block) {
        g_cta = {static_cast<unsigned>(l.grid), static_cast<unsigned>(block)};
        return Scheduler(l.m, l.n, l.k, l.group, l.sk_tiles);
    };
    const Scheduler s0 = at(0);
    const int units = s0.order.count();
    const int shared = units - s0.whole_tiles;
    const int k_blocks = s0.k_blocks;
    const int clusters = l.grid / size;

    // Every CTA's units in the order persistent runs them: by WholeUnits where none is shared, as run_units does.
    std::vector<std::vector<Piece>> runs(l.grid);
    for (int b = 0; b < l.grid; ++b) {
        const Scheduler s = at(b);
        if (s.whole_tiles != s0.whole_tiles || s.k_blocks != k_blocks) return fail("CTA " + std::to_string(b) + " sees other units");
        const auto walk = [&](const auto& sched) {
            for (int t = sched.first(); t < sched.count(); t = sched.next(t)) {
                if (runs[b].size() > static_cast<size_t>(units)) return false;
                TileCoord c = sched.coord(t);
                c.index = t;
                runs[b].push_back({t, c});
            }
            return true;
        };
        if (!(s.shares() ? walk(s) : walk(iris::gemm::WholeUnits<Cfg, HostPlace<Cfg>>(l.m, l.n, l.group)))) {
            return fail("CTA " + std::to_string(b) + " runs more units than there are");
        }
    }

    // The CTAs of a cluster: the same units and k-blocks, each on its own tile of the unit's block.
    for (int b = 0; b < l.grid; ++b) {
        const std::vector<Piece>& lead = runs[b - b % size];
        const std::vector<Piece>& mine = runs[b];
        if (mine.size() != lead.size()) return fail("CTA " + std::to_string(b) + " runs a different number of units than its cluster");
        const auto place = host::place_of<Cfg>(b % size);
        for (size_t i = 0; i < mine.size(); ++i) {
            const TileCoord& c = mine[i].tile;
            const TileCoord block = s0.order.coord(mine[i].unit);
            if (mine[i].unit != lead[i].unit || c.k_begin != lead[i].tile.k_begin || c.k_end != lead[i].tile.k_end) {
                return fail("CTA " + std::to_string(b) + " is out of step with its cluster at unit " + std::to_string(mine[i].unit));
            }
            if (c.m != block.m * Cfg::kClusterM + place.m || c.n != block.n * Cfg::kClusterN + place.n) {
                return fail("CTA " + std::to_string(b) + " computes a tile outside its place in unit " + std::to_string(mine[i].unit));
            }
        }
    }

    // Every k-block of every tile of the units' blocks, exactly once.
    const int tiles_m = s0.order.tiles_m * Cfg::kClusterM;
    const int tiles_n = s0.order.tiles_n * Cfg::kClusterN;
    std::vector<int> done(static_cast<size_t>(tiles_m) * tiles_n * k_blocks, 0);
    for (int b = 0; b < l.grid; ++b) {
        for (const Piece& p : runs[b]) {
            const TileCoord& c = p.tile;
            const bool whole = p.unit < s0.whole_tiles;
            if (whole != (c.k_end < 0)) return fail("unit " + std::to_string(p.unit) + " is whole to one part and shared to another");
            const int begin = whole ? 0 : c.k_begin;
            const int end = whole ? k_blocks : c.k_end;
            if (begin < 0 || end > k_blocks || begin >= end) {
                return fail("CTA " + std::to_string(b) + " runs k-blocks [" + std::to_string(begin) + ", " + std::to_string(end) + ") of unit " +
                            std::to_string(p.unit));
            }
            for (int kb = begin; kb < end; ++kb) ++done[(static_cast<size_t>(c.m) * tiles_n + c.n) * k_blocks + kb];
        }
    }
    for (size_t i = 0; i < done.size(); ++i) {
        if (done[i] != 1) {
            const size_t tile = i / k_blocks;
            return fail("tile " + std::to_string(tile / tiles_n) + "," + std::to_string(tile % tiles_n) + " k-block " + std::to_string(i % k_blocks) +
                        " runs " + std::to_string(done[i]) + " times");
        }
    }

    // The shared units: pieces and the first owner as the fix-up reads them, against the clusters
    // that run a piece; slots and counters distinct, inside the workspace.
    std::map<int, std::vector<int>> owners;  // unit -> clusters with a piece of it, ascending
    for (int c = 0; c < clusters; ++c) {
        for (const Piece& p : runs[c * size]) {
            if (p.unit >= s0.whole_tiles) owners[p.unit].push_back(c);
        }
    }
    int fewest = shared > 0 ? clusters : 0;
    int most = 0;
    std::set<int64_t> slots;
    std::set<int64_t> counters;
    int64_t slot_end = 0;
    int64_t counter_end = 0;
    for (int t = 0; t < units; ++t) {
        if (t < s0.whole_tiles) {
            if (s0.pieces(t) != 1) return fail("whole unit " + std::to_string(t) + " has " + std::to_string(s0.pieces(t)) + " pieces");
            continue;
        }
        const std::vector<int>& own = owners[t];
        const int pieces = static_cast<int>(own.size());
        if (pieces == 0 || s0.pieces(t) != pieces || s0.first_owner(t) != own.front() || own.back() - own.front() + 1 != pieces) {
            return fail("unit " + std::to_string(t) + ": the fix-up counts " + std::to_string(s0.pieces(t)) + " pieces from cluster " +
                        std::to_string(s0.first_owner(t)) + ", " + std::to_string(pieces) + " clusters run one");
        }
        fewest = std::min(fewest, pieces);
        most = std::max(most, pieces);
        if (pieces == 1) continue;  // finished where it ran: no slot, no counter
        for (int c : own) {
            for (int r = 0; r < size; ++r) {
                const Scheduler s = at(c * size + r);
                const int64_t slot = s.slot(c, t);
                if (!slots.insert(slot).second) return fail("slot " + std::to_string(slot) + " holds two pieces");
                slot_end = std::max(slot_end, slot + 1);
                if (c == own.front()) {
                    for (int consumer = 0; consumer < Cfg::kConsumers; ++consumer) {
                        const int64_t counter = s.counter(t, consumer);
                        if (!counters.insert(counter).second) return fail("counter " + std::to_string(counter) + " counts two tiles");
                        counter_end = std::max(counter_end, counter + 1);
                    }
                }
            }
        }
    }
    if (slot_end > int64_t(IRIS_GEMM_STREAM_K_SLOTS_PER_CTA) * l.grid) return fail("slot " + std::to_string(slot_end - 1) + " is past the grid's");

    int range = shared > 0 ? k_blocks * shared : 0;
    for (int c = 0; shared > 0 && c < clusters; ++c) range = std::min(range, s0.start(c + 1) - s0.start(c));

    std::ostringstream out;
    out << "ok units " << units << " shared " << shared << " k_blocks " << k_blocks << " pieces " << fewest << ".." << most << " range " << range
        << " slots_floats " << slot_end * Cfg::kConsumers * Cfg::kAccumulators * 128 << " counters " << counter_end;
    return out.str();
}

}  // namespace

/// With --tiles, one line per tile: "tile <part> <rows> <cols> <threads> <cluster_m> <cluster_n>"
/// (the product's tile; the WIDE tile's empty part as "-"). Otherwise one answer per line of standard
/// input; exits 1 after the first unreadable line.
int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--tiles") {
        host::for_each_tile<ALayout::mk, BLayout::nk>([](const std::string& part, int threads, auto tag) {
            using Cfg = typename decltype(tag)::type;
            std::cout << "tile " << host::shown(part) << " " << Cfg::kTileM << " " << Cfg::kTileN << " " << threads << " "
                      << Cfg::kClusterM << " " << Cfg::kClusterN << std::endl;
        });
        return 0;
    }
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string part;
        Launch l{};
        if (!(in >> part >> l.m >> l.n >> l.k >> l.group >> l.grid >> l.sk_tiles)) {
            std::cout << "error unreadable line: " << line << std::endl;
            return 1;
        }
        std::string answer = fail("no kernels named iris_gemm_" + part + "*");
        host::for_each_tile<ALayout::mk, BLayout::nk>([&](const std::string& name, int, auto tag) {
            if (host::shown(name) == part) answer = check<typename decltype(tag)::type>(l);
        });
        std::cout << answer << std::endl;
    }
    return 0;
}
