// 11 a training step: the elementwise pieces around the library's GEMMs, one thread per element
// (grid-stride loops), everything computed in F32 and rounded once to nearest (even) where it is
// stored in BF16. The matrix products and the communication are the library's (AllGatherGemm,
// GemmReduceScatter, Gemm); these are what a framework would write as small fused kernels.
#include <iris/iris.cuh>

using iris::bf16;

#define FOR_EACH_ELEMENT(i, n) \
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += uint64_t(gridDim.x) * blockDim.x)

/// The activation, a = SiLU(h) = h sigmoid(h).
extern "C" __global__ void silu_forward(const bf16* h, bf16* a, uint64_t n) {
    FOR_EACH_ELEMENT(i, n) {
        const float x = __bfloat162float(h[i]);
        a[i] = __float2bfloat16_rn(x / (1.0f + expf(-x)));
    }
}

/// Its gradient, dh = da SiLU'(h), SiLU'(h) = s (1 + h (1 - s)) with s = sigmoid(h); 1 - s is
/// formed as e s (e = exp(-h)), which does not cancel when s is near 1.
extern "C" __global__ void silu_backward(const bf16* da, const bf16* h, bf16* dh, uint64_t n) {
    FOR_EACH_ELEMENT(i, n) {
        const float x = __bfloat162float(h[i]);
        const float e = expf(-x);
        const float s = 1.0f / (1.0f + e);
        dh[i] = __float2bfloat16_rn(__bfloat162float(da[i]) * (s * (1.0f + x * (e * s))));
    }
}

/// The loss L = scale / 2 sum (y - t)^2 over this rank's rows, added into *loss (zeroed before),
/// and its gradient dy = scale (y - t). scale = 1 / (tokens x hidden): the mean over every rank's rows.
extern "C" __global__ void mse_loss(const bf16* y, const bf16* target, bf16* dy, float* loss, float scale, uint64_t n) {
    float sum = 0.0f;
    FOR_EACH_ELEMENT(i, n) {
        const float d = __bfloat162float(y[i]) - __bfloat162float(target[i]);
        dy[i] = __float2bfloat16_rn(scale * d);
        sum += d * d;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(loss, 0.5f * scale * sum);  // one add per warp
    }
}

/// Gradients are accumulated (the GEMMs run with beta = 1): zeroed at the start of every step.
extern "C" __global__ void zero_grad(float* grad, uint64_t n) {
    FOR_EACH_ELEMENT(i, n) {
        grad[i] = 0.0f;
    }
}

/// The working copy of F32 master weights, in BF16.
extern "C" __global__ void cast_to_bf16(const float* master, bf16* working, uint64_t n) {
    FOR_EACH_ELEMENT(i, n) {
        working[i] = __float2bfloat16_rn(master[i]);
    }
}

/// SGD on the F32 master weights, w -= lr g (one fused multiply-add, one rounding), and the new
/// working copy in BF16.
extern "C" __global__ void sgd_update(float* master, const float* grad, bf16* working, float lr, uint64_t n) {
    FOR_EACH_ELEMENT(i, n) {
        const float w = fmaf(-lr, grad[i], master[i]);
        master[i] = w;
        working[i] = __float2bfloat16_rn(w);
    }
}
