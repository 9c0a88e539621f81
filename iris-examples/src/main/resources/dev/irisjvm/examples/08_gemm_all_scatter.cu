// 08 GEMM + all-scatter, fused by hand from the library's GEMM building blocks (iris/gemm.cuh): C =
// A x B with B split by columns over the ranks (a column-parallel layer). Each rank computes its
// n_local columns of C, and its epilogue stores every finished 16-byte piece of them into every
// rank's C, so that all ranks end with the whole of C without a separate all-gather. The host puts a
// device barrier after the kernel: its release and acquire publish the remote stores.
//
// args (iris_gemm_args of iris/abi/gemm.h, filled by GemmKernelArgs): A (M x K) and this rank's B
// (n_local x K, a Linear layer's weight shard) as TMA descriptors; c: this rank's column block of
// the symmetric C (M x ldc, ldc = world * n_local), that is C + rank * n_local; n = n_local.
//
// The `// style: fused_sequential` section is what this overlap style adds to the plain GEMM, whose
// other styles are in 10_overlap_styles.cu; `bin/iris-bench report jit` counts its device lines
// (docs/benchmarks/jit.md).
#include <iris/gemm.cuh>
#include <iris/iris.cuh>

using iris::bf16;

// style: fused_sequential
/// The epilogue: every 16-byte piece of a finished tile into every rank's copy of C, the next rank
/// first, so that the ranks' stores spread over the links.
struct StoreToEveryRank : iris::gemm::NoHooks {
    const iris::Ctx& ctx;
    bf16* c;  // symmetric: this rank's column block of C
    int ldc;

    __device__ void store_chunk(const iris::gemm::OutputChunk<bf16>& chunk) const {
        chunk.for_each_vector([&](int row, int col, const uint4& piece) {
            uint4* target = reinterpret_cast<uint4*>(c + int64_t(row) * ldc + col);
            for (int j = 1; j <= ctx.world; ++j) {
                iris::store(ctx, target, piece, (ctx.rank + j) % ctx.world);
            }
        });
    }
};

extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)
    gemm_all_scatter(const IRIS_GRID_CONSTANT iris::Ctx ctx, const IRIS_GRID_CONSTANT iris_gemm_args args) {
#if IRIS_HAS_WGMMA  // sm_90a: wgmma and TMA
    using Cfg = iris::gemm::Config<bf16, iris::gemm::BLayout::nk, bf16>;  // 128 x 256 tiles, B is N x K
    StoreToEveryRank hooks{{}, ctx, static_cast<bf16*>(args.c), args.ldc};
    iris::gemm::run<Cfg>(args, hooks);
#endif
}
// end style
