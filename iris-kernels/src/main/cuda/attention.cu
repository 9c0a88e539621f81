// attention.cu: attention forward on one GPU, and the per-shard step of ring attention
// (attention/flash_forward.cuh).
//
//   iris_attention_fwd_<in>_d<D>[_causal]           in: bf16 | f16   D: 64 | 128
//   (TmaDescriptor q_map, TmaDescriptor k_map, TmaDescriptor v_map, void* o, float* lse,
//    int sq, int skv, int hq, int hkv, float scale_log2)
//
//   iris_ring_attention_step_<in>_d<D>[_causal]
//   (TmaDescriptor q_map, TmaDescriptor k_map, TmaDescriptor v_map, void* o, float* lse,
//    float* o_acc, float* row_max, float* row_sum, int mode, int sq, int skv, int hq, int hkv,
//    float scale_log2, int q_chunk_len, int q_chunk0, int q_chunk1,
//    int kv_chunk_len, int kv_chunk0, int kv_chunk1)
//
//   iris_ring_attention_last_steps_<in>_d<D>[_causal]: the last two ring steps in one launch
//   (const Ctx ctx, TmaDescriptor q_map, TmaDescriptor k_map, TmaDescriptor v_map,
//    TmaDescriptor k2_map, TmaDescriptor v2_map, void* o, float* lse, float* o_acc,
//    float* row_max, float* row_sum, const uint64_t* second_ready, int mode, int sq, int skv,
//    int hq, int hkv, float scale_log2, int q_chunk_len, int q_chunk0, int q_chunk1,
//    int kv_chunk_len, int kv_chunk0, int kv_chunk1, int kv2_chunk_len, int kv2_chunk0, int kv2_chunk1)
//   k/v_map: the first shard, read at once; k2/v2_map: the second, read once *second_ready is 1
//   (a stream write after its copy). mode has kFinalize; kLoadState unless it is a two-rank ring.
//
// Grid (Sq / 128, Hq, B), 384 threads, Config::kSmemBytes of dynamic shared memory (D = 128:
// 164864 bytes, D = 64: 82944). The tensor maps view Q, K, V as [rows, D] 16-bit matrices with
// {64, 128} boxes and 128-byte swizzle. mode: kLoadState | kFinalize (flash_forward.cuh).
#include "attention/flash_forward.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

using gemm::sm90::TmaDescriptor;
using iris::bf16;
using iris::f16;

namespace {

template <class In, int D, bool Causal>
__device__ void run(const TmaDescriptor& q_map, const TmaDescriptor& k_map, const TmaDescriptor& v_map,
                    const attention::Params& p) {
#if IRIS_HAS_WGMMA
    const attention::KvMaps kv[1] = {{&k_map, &v_map}};
    attention::forward<attention::Config<In, D, Causal>>(&q_map, kv, p);
#endif
}

template <class In, int D, bool Causal>
__device__ void run_two(const iris::Ctx& ctx, const TmaDescriptor& q_map, const TmaDescriptor& k_map,
                        const TmaDescriptor& v_map, const TmaDescriptor& k2_map, const TmaDescriptor& v2_map,
                        const attention::Params& p) {
#if IRIS_HAS_WGMMA
    const attention::KvMaps kv[2] = {{&k_map, &v_map}, {&k2_map, &v2_map}};
    attention::forward<attention::Config<In, D, Causal>, 2>(&q_map, kv, p, &ctx);
#endif
}

}  // namespace

#define IRIS_ATTENTION_KERNELS(in_name, In, D, causal_suffix, Causal)                                                \
    extern "C" __global__ void __launch_bounds__(384, 1) iris_attention_fwd_##in_name##_d##D##causal_suffix(         \
        const __grid_constant__ TmaDescriptor q_map, const __grid_constant__ TmaDescriptor k_map,                    \
        const __grid_constant__ TmaDescriptor v_map, void* o, float* lse, int sq, int skv, int hq, int hkv,          \
        float scale_log2) {                                                                                          \
        run<In, D, Causal>(q_map, k_map, v_map,                                                                      \
                           attention::Params{o, lse, nullptr, nullptr, nullptr, attention::kFinalize, sq, skv, hq,   \
                                             hkv, scale_log2, {sq, 0, 0}, {skv, 0, 0}, {skv, 0, 0}, nullptr});   \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(384, 1) iris_ring_attention_step_##in_name##_d##D##causal_suffix(   \
        const __grid_constant__ TmaDescriptor q_map, const __grid_constant__ TmaDescriptor k_map,                    \
        const __grid_constant__ TmaDescriptor v_map, void* o, float* lse, float* o_acc, float* row_max,              \
        float* row_sum, int mode, int sq, int skv, int hq, int hkv, float scale_log2, int q_chunk_len, int q_chunk0, \
        int q_chunk1, int kv_chunk_len, int kv_chunk0, int kv_chunk1) {                                              \
        run<In, D, Causal>(q_map, k_map, v_map,                                                                      \
                           attention::Params{o, lse, o_acc, row_max, row_sum, mode, sq, skv, hq, hkv, scale_log2,    \
                                             {q_chunk_len, q_chunk0, q_chunk1},                                    \
                                             {kv_chunk_len, kv_chunk0, kv_chunk1}, {kv_chunk_len, 0, 0}, nullptr});\
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(384, 1)                                                             \
        iris_ring_attention_last_steps_##in_name##_d##D##causal_suffix(                                              \
            const IRIS_GRID_CONSTANT iris::Ctx ctx, const __grid_constant__ TmaDescriptor q_map,                     \
            const __grid_constant__ TmaDescriptor k_map, const __grid_constant__ TmaDescriptor v_map,                \
            const __grid_constant__ TmaDescriptor k2_map, const __grid_constant__ TmaDescriptor v2_map, void* o,     \
            float* lse, float* o_acc, float* row_max, float* row_sum, const uint64_t* second_ready, int mode,      \
            int sq, int skv, int hq, int hkv, float scale_log2, int q_chunk_len, int q_chunk0, int q_chunk1,       \
            int kv_chunk_len, int kv_chunk0, int kv_chunk1, int kv2_chunk_len, int kv2_chunk0, int kv2_chunk1) {   \
        run_two<In, D, Causal>(ctx, q_map, k_map, v_map, k2_map, v2_map,                                             \
                               attention::Params{o, lse, o_acc, row_max, row_sum, mode, sq, skv, hq, hkv,           \
                                                 scale_log2, {q_chunk_len, q_chunk0, q_chunk1},                    \
                                                 {kv_chunk_len, kv_chunk0, kv_chunk1},                             \
                                                 {kv2_chunk_len, kv2_chunk0, kv2_chunk1}, second_ready});          \
    }

IRIS_ATTENTION_KERNELS(bf16, bf16, 128, , false)
IRIS_ATTENTION_KERNELS(bf16, bf16, 128, _causal, true)
IRIS_ATTENTION_KERNELS(bf16, bf16, 64, , false)
IRIS_ATTENTION_KERNELS(bf16, bf16, 64, _causal, true)
IRIS_ATTENTION_KERNELS(f16, f16, 128, , false)
IRIS_ATTENTION_KERNELS(f16, f16, 128, _causal, true)
IRIS_ATTENTION_KERNELS(f16, f16, 64, , false)
IRIS_ATTENTION_KERNELS(f16, f16, 64, _causal, true)
