// gemm_skinny_split.cu: the skinny GEMM's blocks (iris/gemm/sm80/skinny.cuh) on the host, for
// SkinnySplitTest (dev.irisjvm.kernels.gemm). One launch a line, as the host fills
// iris_gemm_skinny_args and sizes its grid and workspace:
//
//   split <m> <n> <k> <slices> <k_blocks_per_slice> <grid> <partial_floats> <counters>
//
// runs the kernel's skinny_block, slice_k_blocks, band_args and partial_row for every block of the
// grid and holds what they compute against what the launch must: every k-block of every band's
// column tile once; no block past C and no empty slice (the tile's last block would never count
// itself, and its sum would never be stored); with slices, every row of every partial inside the
// host's partial_floats floats and apart from every other, every counter inside its counters.
//
// Answers, one a line: "ok blocks <grid>" or "error <what>".
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "host_cases.cuh"
#include "iris/gemm/sm80/skinny.cuh"

namespace {

using host::fail;

using Cfg = iris::gemm::sm80::SkinnyConfig<iris::bf16, iris::gemm::BLayout::nk, iris::bf16>;
namespace skinny = iris::gemm::sm80::skinny_impl;

/// Where the host's workspace starts, as the kernel sees it: any address will do, the checks are offsets.
const uintptr_t kPartials = uintptr_t(1) << 40;
const uintptr_t kCounters = uintptr_t(2) << 40;

std::string split(std::istringstream& in) {
    iris_gemm_skinny_args args{};
    int grid;
    long long partial_floats, counters;
    if (!(in >> args.m >> args.n >> args.k >> args.slices >> args.k_blocks_per_slice >> grid >> partial_floats >> counters)) {
        return fail("split wants m n k slices k_blocks_per_slice grid partial_floats counters");
    }
    args.ldc = args.n;
    args.partials = args.slices > 1 ? reinterpret_cast<void*>(kPartials) : nullptr;
    args.counters = args.slices > 1 ? reinterpret_cast<void*>(kCounters) : nullptr;
    const int slices = args.slices < 1 ? 1 : args.slices;  // as skinny() clamps it
    const int k_blocks = (args.k + Cfg::kTileK - 1) / Cfg::kTileK;

    std::set<std::tuple<int, int, int>> k_blocks_run;  // (band, tile, k-block)
    std::set<int64_t> partial_rows;  // the first float of each
    for (int block = 0; block < grid; ++block) {
        const std::string who = "block " + std::to_string(block);
        const skinny::SkinnyBlock b = skinny::skinny_block<Cfg>(args, slices, block);
        if (b.col0 >= args.n) return fail(who, " lies past C (column ", b.col0, ")");
        const skinny::SliceKBlocks ks = skinny::slice_k_blocks<Cfg>(args, b.slice);
        if (ks.count < 1) return fail(who, " runs an empty slice ", b.slice);
        for (int kb = ks.kb0; kb < ks.kb0 + ks.count; ++kb) {
            if (kb >= k_blocks) return fail(who, " runs k-block ", kb, " of ", k_blocks);
            if (!k_blocks_run.insert({b.band, b.tile, kb}).second) {
                return fail("k-block ", kb, " of band ", b.band, "'s tile ", b.tile, " twice");
            }
        }
        const iris_gemm_skinny_args own = skinny::band_args<Cfg>(args, b.band, slices);
        if (own.m < 1 || own.m > Cfg::kTileM) return fail(who, "'s band has ", own.m, " rows");
        if (static_cast<typename Cfg::Out*>(own.c) - static_cast<typename Cfg::Out*>(args.c) != int64_t(b.band) * Cfg::kTileM * args.ldc) {
            return fail(who, "'s band does not start at its first row of C");
        }
        if (slices == 1) continue;
        const int64_t counter = static_cast<uint32_t*>(own.counters) + b.tile - reinterpret_cast<uint32_t*>(kCounters);
        if (counter < 0 || counter >= counters) return fail(who, " counts on counter ", counter, " of ", counters);
        for (int row = 0; row < own.m; ++row) {
            const float* at = reinterpret_cast<float*>(skinny::partial_row<Cfg>(own, b.tile, b.slice, row));
            const int64_t first = at - reinterpret_cast<float*>(kPartials);
            if (first < 0 || first + Cfg::kTileN > partial_floats) {
                return fail(who, "'s partial row ", row, " at float ", first, ", outside the host's ", partial_floats);
            }
            if (!partial_rows.insert(first).second) return fail(who, "'s partial row ", row, " at float ", first, " is another's too");
        }
    }
    const int64_t tiles = (args.n + Cfg::kTileN - 1) / Cfg::kTileN;
    const int64_t bands = args.m < 1 ? 1 : (args.m + Cfg::kTileM - 1) / Cfg::kTileM;
    if (static_cast<int64_t>(k_blocks_run.size()) != bands * tiles * k_blocks) {
        return fail(k_blocks_run.size(), " k-blocks run of ", bands * tiles * k_blocks);
    }
    return "ok blocks " + std::to_string(grid);
}

}  // namespace

int main() {
    return host::answer_cases([](const std::string& what, std::istringstream& in) {
        return what == "split" ? split(in) : fail("unknown case ", what);
    });
}
