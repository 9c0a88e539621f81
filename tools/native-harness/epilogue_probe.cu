// Native probe: what storing C costs the GEMM's tiles (128 x 256, 128 x 192, 128 x 128, and 64 x 128
// of one consumer). The same persistent kernel three ways:
// storing C from registers (StoreEpilogue, whose consumers wait for their stores), staging each chunk
// in shared memory as always but storing none of it, and storing C by TMA (TensorStoreEpilogue, the
// library's plain GEMM without alpha/beta); cuBLAS (cublasGemmEx) in the same rounds. Each
// round launches every variant once (CUDA events each), 30 rounds after 5 warm-ups, the median; the L2
// is evicted before each launch (L2Evictor), so that A and B come from HBM as in the GEMM suite (with
// them in L2, a shallower ring ran 4-11 % faster at 1000³ and 127 x 4104 x 1032, where the suite
// found it no faster and 14 % slower).
// Both stored Cs are checked against cuBLAS's. Tiles in pairs run the library's kernel in every mode.
// Built against a copy of the headers whose Config differs (its -I first), the same binary times a
// mainloop variant: run both binaries in turns on the same card.
//   epilogue_probe [M N K LAYOUT]...   LAYOUT: nk or kn, then nothing (128 x 256), m (128 x 192),
//                                      w (128 x 128), s (64 x 128), p or q (128 x 256 or 64 x 128 in pairs)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "iris/abi/gemm.h"
#include "iris/gemm.cuh"
#include "harness_common.cuh"

using namespace iris::gemm;

/// The tiles probed: 128 x 256 (two consumers), 128 x 192, 128 x 128, and 64 x 128 of one consumer;
/// 128 x 256 and 64 x 128 in pairs (clusters of two tiles that share B, which store C from their
/// threads: every mode runs the library's kernel, iris::gemm::run).
enum Tile { kWide, kMid, kNarrow, kShort, kWidePairs, kShortPairs, kTiles };
static const char* kTileNames[] = {"128 x 256", "128 x 192", "128 x 128", "64 x 128", "128 x 256 in pairs", "64 x 128 in pairs"};
constexpr int tile_cols(int tile) {
    return tile == kMid ? IRIS_GEMM_MID_TILE_N
         : tile == kNarrow ? IRIS_GEMM_NARROW_TILE_N
         : tile == kShort || tile == kShortPairs ? IRIS_GEMM_SHORT_TILE_N
                                                 : IRIS_GEMM_TILE_N;
}
constexpr bool is_short(int tile) { return tile == kShort || tile == kShortPairs; }
constexpr bool in_pairs(int tile) { return tile == kWidePairs || tile == kShortPairs; }

/// The library's Config of each tile: 64-row tiles have one consumer, paired ones Pairs.
template <BLayout B, int T>
using Probed = Config<iris::bf16, B, iris::bf16, kTmaProducerRegisters, tile_cols(T), ALayout::mk, is_short(T) ? 1 : 2, in_pairs(T)>;

template <BLayout B, int T>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(Probed<B, T>::kThreads, 1) pairs_probe(const __grid_constant__ iris_gemm_args a) {
    run<Probed<B, T>>(a);
}

struct Discard : NoHooks {
    template <class Out>
    __device__ void store_chunk(const OutputChunk<Out>&) const {}
};

enum Mode { kStore, kStageOnly, kTensorStore, kModes };
static const char* kModeNames[] = {"store", "stage_only", "tensor_store"};

template <BLayout B, int T, int M>
__global__ void __launch_bounds__(Probed<B, T>::kThreads, 1) probe(const __grid_constant__ iris_gemm_args a) {
    using Cfg = Probed<B, T>;
    if (dynamic_smem_bytes() < Cfg::kStoreSmemBytes) return;
    const WholeUnits<Cfg> whole(a.m, a.n, a.group_m);
    iris::bf16* c = static_cast<iris::bf16*>(a.c);
    if constexpr (M == kStore) {
        StoreEpilogue<iris::bf16> store(c, a.ldc);
        persistent<Cfg>(&a.a_map, &a.b_map, nullptr, a.m, a.n, a.k, whole, store);
    } else if constexpr (M == kTensorStore) {
        TensorStoreEpilogue store(&a.c_map);
        persistent<Cfg>(&a.a_map, &a.b_map, nullptr, a.m, a.n, a.k, whole, store);
    } else {
        Discard discard;
        persistent<Cfg>(&a.a_map, &a.b_map, nullptr, a.m, a.n, a.k, whole, discard);
    }
}

typedef void (*Kern)(iris_gemm_args);
template <BLayout B, int T>
static Kern kernel(int mode) {
    static const Kern k[kModes] = {probe<B, T, kStore>, probe<B, T, kStageOnly>, probe<B, T, kTensorStore>};
    return k[mode];
}

template <BLayout B>
static Kern kernel(int tile, int mode) {
    switch (tile) {
        case kWide: return kernel<B, kWide>(mode);
        case kMid: return kernel<B, kMid>(mode);
        case kNarrow: return kernel<B, kNarrow>(mode);
        case kShort: return kernel<B, kShort>(mode);
        case kWidePairs: return pairs_probe<B, kWidePairs>;
        default: return pairs_probe<B, kShortPairs>;
    }
}

static Kern kernel(bool kn, int tile, int mode) { return kn ? kernel<BLayout::kn>(tile, mode) : kernel<BLayout::nk>(tile, mode); }

struct Shape {
    int m, n, k;
    bool kn;
    int tile;  // Tile
};

int main(int argc, char** argv) {
    std::vector<Shape> shapes;
    for (int i = 1; i + 3 < argc; i += 4) {
        const char* l = argv[i + 3];  // LAYOUT, as above
        const int tile = l[2] == 'm' ? kMid : l[2] == 'w' ? kNarrow : l[2] == 's' ? kShort : l[2] == 'p' ? kWidePairs : l[2] == 'q' ? kShortPairs : kWide;
        shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), std::strncmp(l, "kn", 2) == 0, tile});
    }
    if (shapes.empty()) {
        shapes = {{16384, 4096, 512, false, kWide}, {16384, 4096, 1024, false, kWide}, {4000, 5000, 3000, false, kWide},
                  {4000, 5000, 3000, true, kWide},  {2048, 2560, 8192, true, kWide},   {8192, 8192, 8192, false, kWide},
                  {1000, 1000, 1000, false, kShort}};
    }
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const Cublas cublas = Cublas::load();
    if (cublas.handle == nullptr) return 1;
    for (bool kn : {false, true}) {
        for (int tile = 0; tile < kTiles; ++tile) {
            for (int mode = 0; mode < kModes; ++mode) {
                CK(cudaFuncSetAttribute((const void*)kernel(kn, tile, mode), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        IRIS_GEMM_SHARED_BYTES));
            }
        }
    }
    const L2Evictor evict_l2;
    bool ok = true;
    for (const Shape& p : shapes) {
        uint16_t *A, *B, *C, *Cref;
        CK(cudaMalloc(&A, size_t(p.m) * p.k * 2)); CK(cudaMalloc(&B, size_t(p.k) * p.n * 2));
        CK(cudaMalloc(&C, size_t(p.m) * p.n * 2)); CK(cudaMalloc(&Cref, size_t(p.m) * p.n * 2));
        fill_uniform_bf16(A, size_t(p.m) * p.k, 17u + p.m, 1.f);
        fill_uniform_bf16(B, size_t(p.k) * p.n, 29u + p.n, 1.f);
        CK(cudaMemset(C, 0xFF, size_t(p.m) * p.n * 2)); CK(cudaMemset(Cref, 0xFF, size_t(p.m) * p.n * 2));
        iris_gemm_args args{};
        const bool short_tiles = is_short(p.tile);
        const int tile_m = short_tiles ? IRIS_GEMM_SHORT_TILE_M : IRIS_GEMM_TILE_M;
        const int tile_n = tile_cols(p.tile);
        const int pair = in_pairs(p.tile) ? 2 : 1;  // each CTA of a pair loads half of the B they share
        args.a_map = map2d(A, p.k, p.m, uint64_t(p.k) * 2, 64, tile_m);
        args.b_map = p.kn ? map2d(B, p.n, p.k, uint64_t(p.n) * 2, 64, 64) : map2d(B, p.k, p.n, uint64_t(p.k) * 2, 64, tile_n / pair);
        args.c = C; args.m = p.m; args.n = p.n; args.k = p.k; args.ldc = p.n; args.group_m = 8;
        args.alpha = 1; args.beta = 0;
        args.c_map = map_output(C, p.m, p.n);
        const int tiles = ((p.m + tile_m - 1) / tile_m) * ((p.n + tile_n - 1) / tile_n);
        const int units = ((p.m + tile_m * pair - 1) / (tile_m * pair)) * ((p.n + tile_n - 1) / tile_n);
        const int grid = std::min(units, sms / pair) * pair;
        auto launch = [&](int mode) {
            if (mode == kModes) {
                cublas.gemm_bf16(p.m, p.n, p.k, p.kn, A, B, Cref);
            } else {
                kernel(p.kn, p.tile, mode)<<<grid, short_tiles ? IRIS_GEMM_SHORT_THREADS : IRIS_GEMM_THREADS,
                                                    IRIS_GEMM_SHARED_BYTES>>>(args);
                CK(cudaGetLastError());
            }
        };
        launch(kModes);
        std::vector<uint16_t> got(size_t(p.m) * p.n), ref(got.size());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(ref.data(), Cref, ref.size() * 2, cudaMemcpyDeviceToHost));
        long bad = 0;
        double worst = 0;
        for (int mode : {kStore, kTensorStore}) {
            CK(cudaMemset(C, 0xFF, size_t(p.m) * p.n * 2));
            launch(mode);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(got.data(), C, got.size() * 2, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < got.size(); ++i) {
                const double g = bf2f(got[i]), r = bf2f(ref[i]);
                const double tol = std::ldexp(std::fabs(r), -7) + 1e-3 * std::sqrt(double(p.k));
                worst = std::max(worst, std::fabs(g - r) / tol);
                if (!(std::fabs(g - r) <= tol)) ++bad;
            }
        }
        ok &= bad == 0;
        std::vector<std::vector<float>> t(kModes + 1);
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        for (int round = 0; round < 35; ++round) {
            for (int mode = 0; mode <= kModes; ++mode) {
                evict_l2();
                CK(cudaEventRecord(e0)); launch(mode); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (round >= 5) t[mode].push_back(ms * 1000.f);
            }
        }
        std::vector<double> med(kModes + 1);
        for (int mode = 0; mode <= kModes; ++mode) {
            std::sort(t[mode].begin(), t[mode].end());
            med[mode] = t[mode][t[mode].size() / 2];
        }
        printf("%dx%dx%d %s %s: tiles %d on %d blocks; C against cuBLAS %s (%ld bad, worst error / bound %.3f)\n", p.m, p.n,
               p.k, p.kn ? "kn" : "nk", kTileNames[p.tile], tiles, grid, bad ? "FAIL" : "ok", bad, worst);
        for (int mode = 0; mode < kModes; ++mode) {
            printf("  %-12s %9.2f us  cuBLAS / this %.3f  store / this %.3f\n", kModeNames[mode], med[mode],
                   med[kModes] / med[mode], med[kStore] / med[mode]);
        }
        printf("  %-12s %9.2f us\n", "cublas", med[kModes]);
        cudaEventDestroy(e0); cudaEventDestroy(e1);
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(Cref);
    }
    printf(ok ? "every check passed\n" : "CHECKS FAILED\n");
    return ok ? 0 : 1;
}
