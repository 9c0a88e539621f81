// attention_portable.cu: attention forward and the ring-attention step for every NVIDIA GPU since
// Ampere (A100, A10, L4, L40S, RTX 30xx to 50xx, and Hopper when asked for), over
// attention/portable_forward.cuh (mma.sync, ldmatrix, cp.async). Every kernel takes
// iris_attention_args (iris/abi/attention.h) as its one parameter and reads q/k/v (addresses, not
// the tensor maps) and the fields its name says:
//
//   iris_attention_fwd_portable_<in>_d<D>[_causal]          in: bf16 | f16   D: 64 | 128
//     o, lse and the shapes (its mode is IRIS_ATTENTION_FINALIZE, its chunks one each with id 0)
//   iris_ring_attention_step_portable_<in>_d<D>[_causal]
//     the same and the state (o_acc, row_max, row_sum), mode, q_chunks and kv_chunks: the Hopper
//     step's state, so the two kinds of step may follow each other in one ring
//
// There is no portable "last steps" kernel: dev.irisjvm.kernels.attention runs two steps instead.
// Grid (Sq / 128, Hq, B), IRIS_ATTENTION_PORTABLE_THREADS threads and
// IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D<D> of dynamic shared memory (a block given less does
// nothing). A portable module: machine code for sm_80 to sm_120 and compute_80 PTX. AMD has no
// mma.sync: the HIP build leaves it out (iris-kernels/CMakeLists.txt).
#include "attention/portable_forward.cuh"

using iris::bf16;
using iris::f16;

// One block per SM is all the registers are asked to allow: at head size 64, two (128 registers a
// thread) spilled the scores.
#define IRIS_ATTENTION_PORTABLE_KERNELS(in_name, In, D, causal_suffix, Causal)                          \
    extern "C" __global__ void __launch_bounds__(IRIS_ATTENTION_PORTABLE_THREADS, 1)                       \
        iris_attention_fwd_portable_##in_name##_d##D##causal_suffix(const IRIS_GRID_CONSTANT iris_attention_args a) { \
        attention::portable::forward<attention::portable::Config<In, D, Causal>, false>(a);                               \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(IRIS_ATTENTION_PORTABLE_THREADS, 1)                       \
        iris_ring_attention_step_portable_##in_name##_d##D##causal_suffix(                                           \
            const IRIS_GRID_CONSTANT iris_attention_args a) {                                                       \
        attention::portable::forward<attention::portable::Config<In, D, Causal>, true>(a);                               \
    }

IRIS_ATTENTION_PORTABLE_KERNELS(bf16, bf16, 128, , false)
IRIS_ATTENTION_PORTABLE_KERNELS(bf16, bf16, 128, _causal, true)
IRIS_ATTENTION_PORTABLE_KERNELS(bf16, bf16, 64, , false)
IRIS_ATTENTION_PORTABLE_KERNELS(bf16, bf16, 64, _causal, true)
IRIS_ATTENTION_PORTABLE_KERNELS(f16, f16, 128, , false)
IRIS_ATTENTION_PORTABLE_KERNELS(f16, f16, 128, _causal, true)
IRIS_ATTENTION_PORTABLE_KERNELS(f16, f16, 64, , false)
IRIS_ATTENTION_PORTABLE_KERNELS(f16, f16, 64, _causal, true)
