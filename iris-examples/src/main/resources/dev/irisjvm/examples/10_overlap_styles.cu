// 10 GEMM + all-scatter in the other three overlap styles of the Iris paper (08 is the fourth, fused
// sequential: each finished piece stored to every rank from the epilogue). The problem is 08's: each
// rank computes its n_local columns of C = A B_r^T into its column block of the symmetric C, and
// every rank must end with all of C. What differs is when the columns leave:
//
//   bulk_synchronous   the plain GEMM; then, after the kernel boundary, a scatter kernel
//   producer_consumer  the GEMM counts each finished tile in a flag; a scatter kernel on a second
//                      stream, on SMs the GEMM leaves free, waits for each tile's flag and sends it
//   wg_specialized     one persistent kernel whose CTAs are split between the GEMM and the scatter
//
// args (iris_gemm_args, GemmKernelArgs on the host): A, this rank's B, c = C + rank * n_local with
// ldc = world * n_local, n = n_local. flags: one u64 per tile of this rank's block, zeroed once and
// only ever increased; `call` counts the calls from 1, so a call waits for counts of its own.
// Example10OverlapStyles runs every style and checks C against a double-precision reference.
//
// Markers (comments only): a `// style: NAME` section holds what only that style needs, a
// `// shared: NAME` section defines NAME for the styles that use it, and the code outside both is the
// plain GEMM. `bin/iris-bench report jit` counts from them the device lines each style adds to the
// plain GEMM (docs/benchmarks/jit.md).
#include <iris/gemm.cuh>
#include <iris/iris.cuh>

using iris::bf16;
using Cfg = iris::gemm::Config<bf16, iris::gemm::BLayout::nk, bf16>;  // 128 x 256 tiles, B is N x K

// shared: send_tile
/// Sends `tile` of this rank's column block of C to every other rank, 16 bytes at a time, spread
/// over the CTA's threads.
__device__ inline void send_tile(const iris::Ctx& ctx, const iris_gemm_args& args, iris::gemm::TileCoord tile) {
    constexpr int kVectors = Cfg::kTileN / 8;  // 16-byte pieces per tile row
    bf16* c = static_cast<bf16*>(args.c);
    for (int v = threadIdx.x; v < Cfg::kTileM * kVectors; v += blockDim.x) {
        const int row = tile.m * Cfg::kTileM + v / kVectors;
        const int col = tile.n * Cfg::kTileN + v % kVectors * 8;
        if (row >= args.m || col >= args.n) continue;
        uint4* piece = reinterpret_cast<uint4*>(c + int64_t(row) * args.ldc + col);
        const uint4 value = *piece;
        for (int j = 1; j < ctx.world; ++j) iris::store(ctx, piece, value, (ctx.rank + j) % ctx.world);
    }
}
// end shared

// shared: gemm_order
/// The GEMM's tile order: the senders walk the tiles in the order in which they finish.
__device__ inline iris::gemm::GroupedTileScheduler<Cfg::kTileM, Cfg::kTileN> gemm_order(const iris_gemm_args& args) {
    return {args.m, args.n, args.group_m};
}
// end shared

// shared: flag_of
/// A tile's flag: one per tile, row by row.
__device__ inline uint64_t* flag_of(uint64_t* flags, const iris_gemm_args& args, iris::gemm::TileCoord tile) {
    return flags + tile.m * ((args.n + Cfg::kTileN - 1) / Cfg::kTileN) + tile.n;
}
// end shared

// The plain GEMM, which bulk_synchronous and producer_consumer launch as it is.
extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1) gemm(const IRIS_GRID_CONSTANT iris_gemm_args args) {
#if IRIS_HAS_WGMMA
    iris::gemm::run<Cfg>(args);
#endif
}

// style: bulk_synchronous
// After the GEMM kernel: every tile of this rank's block to every peer, a CTA per tile.
extern "C" __global__ void scatter(const IRIS_GRID_CONSTANT iris::Ctx ctx, const IRIS_GRID_CONSTANT iris_gemm_args args) {
    const auto order = gemm_order(args);
    for (int t = blockIdx.x; t < order.count(); t += gridDim.x) send_tile(ctx, args, order.coord(t));
}
// end style

// shared: CountTiles
// The GEMM's epilogue stores C as the plain GEMM does and counts each warpgroup's half of a tile in
// flags[tile] (release: the stores come first).
struct CountTiles : iris::gemm::StoreEpilogue<bf16> {
    const iris::Ctx& ctx;
    const iris_gemm_args& args;
    uint64_t* flags;

    __device__ CountTiles(const iris::Ctx& x, const iris_gemm_args& a, uint64_t* f)
        : StoreEpilogue(static_cast<bf16*>(a.c), a.ldc), ctx(x), args(a), flags(f) {}

    __device__ void tile_done(iris::gemm::TileCoord tile, int) const {
        if (threadIdx.x % 128 == 0) iris::signal(ctx, flag_of(flags, args, tile), 1, ctx.rank, iris::SignalOp::add);
    }
};
// end shared

// shared: send_when_counted
/// Waits until both warpgroups counted `tile` in this call, then sends it; false where the wait
/// failed (the error is recorded for the host).
__device__ inline bool send_when_counted(const iris::Ctx& ctx, const iris_gemm_args& args, uint64_t* flags,
                                         uint64_t call, iris::gemm::TileCoord tile, int site) {
    const bool failed = threadIdx.x == 0 && !iris::wait_until_local(ctx, flag_of(flags, args, tile), iris::Cmp::ge, 2 * call, site);
    if (__syncthreads_or(failed)) return false;
    send_tile(ctx, args, tile);
    return true;
}
// end shared

// style: producer_consumer
extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)
    gemm_counting(const IRIS_GRID_CONSTANT iris::Ctx ctx, const IRIS_GRID_CONSTANT iris_gemm_args args, uint64_t* flags) {
#if IRIS_HAS_WGMMA
    CountTiles hooks(ctx, args, flags);
    iris::gemm::run<Cfg>(args, hooks);
#endif
}

// On its own stream beside gemm_counting: sends each tile once both warpgroups counted it.
extern "C" __global__ void scatter_when_counted(const IRIS_GRID_CONSTANT iris::Ctx ctx,
                                                const IRIS_GRID_CONSTANT iris_gemm_args args, uint64_t* flags,
                                                uint64_t call) {
    const auto order = gemm_order(args);
    for (int t = blockIdx.x; t < order.count(); t += gridDim.x) {
        if (!send_when_counted(ctx, args, flags, call, order.coord(t), /*site=*/1001)) return;
    }
}
// end style

// style: wg_specialized
// One launch of one CTA per SM. Each CTA takes a ticket as it starts: the first `gemm_ctas` tickets
// run the GEMM (as CountTiles), the others send. Roles by ticket, not by blockIdx: a CTA that
// waits for tiles then only waits for CTAs that already run, whatever else holds SMs.
template <int TileM, int TileN>
struct TicketScheduler : iris::gemm::GroupedTileScheduler<TileM, TileN> {
    int ticket;
    int ctas;
    __device__ TicketScheduler(const iris_gemm_args& args, int t, int n)
        : iris::gemm::GroupedTileScheduler<TileM, TileN>(args.m, args.n, args.group_m), ticket(t), ctas(n) {}
    __device__ int first() const { return ticket; }
    __device__ int next(int tile) const { return tile + ctas; }
};

extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)
    gemm_and_scatter(const IRIS_GRID_CONSTANT iris::Ctx ctx, const IRIS_GRID_CONSTANT iris_gemm_args args,
                     uint64_t* flags, uint32_t* tickets, uint64_t call, int gemm_ctas) {
#if IRIS_HAS_WGMMA
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = int(atomicAdd(tickets, 1u) - uint32_t(call - 1) * gridDim.x);
    __syncthreads();
    if (ticket < gemm_ctas) {
        if (!iris::gemm::shared_memory_fits<Cfg>()) return;
        CountTiles hooks(ctx, args, flags);
        iris::gemm::persistent<Cfg>(&args.a_map, &args.b_map, static_cast<const bf16*>(args.bias), args.m, args.n,
                                    args.k, TicketScheduler<Cfg::kTileM, Cfg::kTileN>(args, ticket, gemm_ctas), hooks);
        return;
    }
    const auto order = gemm_order(args);
    for (int t = ticket - gemm_ctas; t < order.count(); t += gridDim.x - gemm_ctas) {
        if (!send_when_counted(ctx, args, flags, call, order.coord(t), /*site=*/1002)) return;
    }
#endif
}
// end style
