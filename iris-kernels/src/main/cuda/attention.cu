// attention.cu: attention forward on one GPU, and the per-shard step of ring attention
// (attention/flash_forward.cuh). Every kernel takes iris_attention_args (iris/abi/attention.h) as
// its one parameter and reads the fields its name says:
//
//   iris_attention_fwd_<in>_d<D>[_causal]           in: bf16 | f16   D: 64 | 128
//     q/k/v_map, o, lse and the shapes (its mode is kFinalize, its chunks one each, with id 0)
//   iris_ring_attention_step_<in>_d<D>[_causal]
//     the same and the state (o_acc, row_max, row_sum), mode, q_chunks and kv_chunks of the shards
//   iris_ring_attention_last_steps_<in>_d<D>[_causal]: the last two ring steps in one launch
//     the same and ctx, k2/v2_map, second_chunks, second_ready: k/v_map is the first shard, read at
//     once; k2/v2_map the second, read once *second_ready is 1 (a stream write after its copy).
//     mode has kFinalize; kLoadState unless it is a two-rank ring.
//
// Grid (Sq / 128, Hq, B), IRIS_ATTENTION_THREADS threads, IRIS_ATTENTION_SHARED_BYTES_D<D> of
// dynamic shared memory; but the forward kernels at D 64 take 192 query rows a block: grid
// (ceil(Sq / 192), Hq, B), IRIS_ATTENTION_WIDE_THREADS threads, IRIS_ATTENTION_WIDE_SHARED_BYTES_D64.
// The tensor maps view Q, K, V as [rows, D] 16-bit matrices with {IRIS_ATTENTION_BOX_INNER,
// IRIS_ATTENTION_TILE} boxes and 128-byte swizzle.
#include "attention/flash_forward.cuh"

IRIS_NVIDIA_ONLY("sm_90a (wgmma, TMA)");

using iris::bf16;
using iris::f16;

namespace {

template <class In, int D, bool Causal>
using StepConfig = attention::Config<In, D, Causal>;
template <class In, int D, bool Causal>
using ForwardConfig = attention::Config<In, D, Causal, attention::kForwardConsumers<D>>;

template <class Cfg>
__device__ void run(const iris_attention_args& a, const attention::Params& p) {
#if IRIS_HAS_WGMMA
    const attention::KvMaps kv[1] = {{&a.k_map, &a.v_map}};
    attention::forward<Cfg>(&a.q_map, kv, p);
#endif
}

template <class In, int D, bool Causal>
__device__ void run_two(const iris_attention_args& a, const attention::Params& p) {
#if IRIS_HAS_WGMMA
    const attention::KvMaps kv[2] = {{&a.k_map, &a.v_map}, {&a.k2_map, &a.v2_map}};
    attention::forward<StepConfig<In, D, Causal>, 2>(&a.q_map, kv, p, &a.ctx);
#endif
}

}  // namespace

#define IRIS_ATTENTION_KERNELS(in_name, In, D, causal_suffix, Causal)                                                \
    extern "C" __global__ void __launch_bounds__(ForwardConfig<In, D, Causal>::kThreads, 1)                          \
        iris_attention_fwd_##in_name##_d##D##causal_suffix(const IRIS_GRID_CONSTANT iris_attention_args a) {         \
        run<ForwardConfig<In, D, Causal>>(                                                                           \
            a, attention::Params{a.o, static_cast<float*>(a.lse), nullptr, nullptr, nullptr, attention::kFinalize,   \
                                 a.sq, a.skv, a.hq, a.hkv, a.scale_log2, {a.sq, 0, 0}, {a.skv, 0, 0}, {a.skv, 0, 0}, \
                                 nullptr});                                                                          \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(IRIS_ATTENTION_THREADS, 1)                                          \
        iris_ring_attention_step_##in_name##_d##D##causal_suffix(const IRIS_GRID_CONSTANT iris_attention_args a) {   \
        run<StepConfig<In, D, Causal>>(a, attention::state_params(a, {a.kv_chunks.len, 0, 0}, nullptr));             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(IRIS_ATTENTION_THREADS, 1)                                          \
        iris_ring_attention_last_steps_##in_name##_d##D##causal_suffix(                                              \
            const IRIS_GRID_CONSTANT iris_attention_args a) {                                                        \
        run_two<In, D, Causal>(                                                                                      \
            a, attention::state_params(a, a.second_chunks, static_cast<const uint64_t*>(a.second_ready)));           \
    }

IRIS_ATTENTION_KERNELS(bf16, bf16, 128, , false)
IRIS_ATTENTION_KERNELS(bf16, bf16, 128, _causal, true)
IRIS_ATTENTION_KERNELS(bf16, bf16, 64, , false)
IRIS_ATTENTION_KERNELS(bf16, bf16, 64, _causal, true)
IRIS_ATTENTION_KERNELS(f16, f16, 128, , false)
IRIS_ATTENTION_KERNELS(f16, f16, 128, _causal, true)
IRIS_ATTENTION_KERNELS(f16, f16, 64, , false)
IRIS_ATTENTION_KERNELS(f16, f16, 64, _causal, true)
