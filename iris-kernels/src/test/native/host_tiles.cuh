// host_tiles.cuh: gemm.cu's tiles (gemm_tiles.cuh) as Configs, for the host programs beside it.
#pragma once

#include <string>

#include "gemm_tiles.cuh"
#include "iris/gemm.cuh"

namespace host {

template <class Cfg>
struct Tag {
    using type = Cfg;
};

template <iris::gemm::ALayout A, iris::gemm::BLayout B, int Consumers, int TileN, bool SplitK, int ClusterM, int ClusterN>
using Tile = iris::gemm::Config<iris::bf16, B, iris::bf16, iris::gemm::kTmaProducerRegisters, TileN, A, Consumers, false, SplitK,
                                iris::gemm::ClusterShape<ClusterM, ClusterN>>;

/// f(part, threads, Tag<Cfg>) for each of gemm.cu's tiles: the Config of its kernel with A stored as
/// A and B as B. A swapped tile's product takes B as its A and A as its N x K B, so those come with
/// an N x K B only, A being what C's B is stored as (mk for an N x K one, km for K x N).
template <iris::gemm::ALayout A, iris::gemm::BLayout B, class F>
void for_each_tile(F&& f) {
#define IRIS_HOST_TILE(part, threads, consumers, tile_n, split_k, cluster_m, cluster_n, ...) \
    f(std::string(#part), threads, Tag<Tile<A, B, consumers, tile_n, split_k, cluster_m, cluster_n>>{});
#define IRIS_HOST_SWAPPED_TILE(part, rows, cluster_n, ...) \
    f(std::string(#part), IRIS_GEMM_THREADS, Tag<Tile<A, B, 2, rows, true, 1, cluster_n>>{});
    IRIS_GEMM_TILES(IRIS_HOST_TILE, )
    if constexpr (B == iris::gemm::BLayout::nk) {
        IRIS_GEMM_SWAPPED_TILES(IRIS_HOST_SWAPPED_TILE, )
    }
#undef IRIS_HOST_TILE
#undef IRIS_HOST_SWAPPED_TILE
}

/// Where rank r of a cluster computes in its block, as config.cuh's ClusterShape says (row r % M,
/// column r / M) and impl::ClusterPlace::here reads it on the device.
template <class Cfg>
__host__ __device__ iris::gemm::impl::ClusterPlace<Cfg> place_of(int r) {
    return {r % Cfg::kClusterM, r / Cfg::kClusterM};
}

/// A tile's part as the programs print and read it: "-" for the 128 x 256 tile's empty one.
inline std::string shown(const std::string& part) { return part.empty() ? "-" : part; }

}  // namespace host
