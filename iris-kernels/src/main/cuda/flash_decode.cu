// flash_decode.cu: attention for one new token per sequence (decode) with the KV cache of every
// sequence split across ranks, combined across ranks inside the kernel.
//
//   iris_flash_decode_<in>_d<D>           fused: partials to every rank, flags, combine
//   (const Ctx ctx, const void* q, const void* k, const void* v, void* o, float* partials,
//    uint64_t* arrived, uint64_t epoch, int b, int hq, int hkv, int len, int chunk_len, float scale_log2)
//   iris_flash_decode_partial_<in>_d<D>   baseline, step 1: this rank's partials only (slot 0)
//   (const void* q, const void* k, const void* v, float* partials, int b, int hq, int hkv, int len,
//    int chunk_len, float scale_log2)
//   iris_flash_decode_combine_<in>_d<D>   baseline, step 3 (after an all-gather of the partials);
//   (const float* partials, void* o, int world, int b, int hq, int hkv, int chunks)   grid (Hkv, B)
//   in: bf16 | f16   D: 64 | 128
//
// q [B, Hq, D]; k, v [B, Hkv, len, D] (this rank's part of each sequence's cache; every rank holds
// the same len); o [B, Hq, D], the full result, on every rank. G = Hq / Hkv query heads share a K/V
// head (GQA), G <= 8. The keys are cut into chunks of chunk_len (a multiple of 64, at most 1024):
// one CTA of 128 threads per (chunk, K/V head, sequence), grid (chunks, Hkv, B), no dynamic shared
// memory. Each CTA writes a partial per query head: D floats of un-normalized output, then the
// chunk's max score (log2 units) and sum of exponentials; partials is [world][B][Hkv][chunks][G][D + 2].
//
// Fused: every CTA stores its partial into slot [rank] of every rank's partials (symmetric) and
// adds one to every rank's arrived[b][h] (release, system scope); on each rank the CTA of chunk 0
// waits until all world * chunks partials of its (b, h) have arrived (epoch * world * chunks: the
// counters only grow, epoch is the call number) and combines them into o.
#include "iris/iris.cuh"

IRIS_NVIDIA_ONLY("32-lane warp shuffles");

namespace {

constexpr int kThreads = 128;
constexpr int kMaxGroup = 8;        // query heads per K/V head
constexpr int kMaxChunk = 1024;     // keys per CTA
constexpr int kSiteArrived = 9101;  // wait site for the host's timeout message

template <class In>
__device__ inline void load8(const In* p, float (&x)[8]) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const In* e = reinterpret_cast<const In*>(&raw);
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = iris::arch::to_float(e[i]);
}

struct Shape {
    int b;
    int hq;
    int hkv;
    int len;
    int chunk_len;
    __device__ int group() const { return hq / hkv; }
    __device__ int chunks() const { return (len + chunk_len - 1) / chunk_len; }
};

/// Partial of this CTA's (chunk, head, sequence), written to `out` ([G][D + 2]) by thread 0..
template <class In, int D>
__device__ void partial(const In* q, const In* k, const In* v, const Shape& s, float scale_log2, float* out) {
    __shared__ float q_s[kMaxGroup][D];
    __shared__ float scores[kMaxGroup * kMaxChunk];  // scores, then exponentials, then the V-pass reduction
    __shared__ float stats[kMaxGroup][2];           // max, sum
    constexpr int kLanesPerKey = D / 8;             // 16-byte pieces of one key
    constexpr int kKeysPerPass = kThreads / kLanesPerKey;
    const int G = s.group();
    const int chunk = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int j0 = chunk * s.chunk_len;
    const int n = min(s.chunk_len, s.len - j0);
    const In* kh = k + ((int64_t(b) * s.hkv + h) * s.len + j0) * D;
    const In* vh = v + ((int64_t(b) * s.hkv + h) * s.len + j0) * D;
    for (int i = threadIdx.x; i < G * D; i += kThreads) {
        q_s[i / D][i % D] = iris::arch::to_float(q[(int64_t(b) * s.hq + h * G + i / D) * D + i % D]);
    }
    __syncthreads();

    // Scores: kLanesPerKey threads share a key, each with 8 of its D elements. Every thread runs
    // the same number of passes (keys past n read as zeros and are not stored): the shuffles below
    // need the whole warp.
    const int seg = threadIdx.x % kLanesPerKey;
    const int passes = (n + kKeysPerPass - 1) / kKeysPerPass;
    for (int pass = 0; pass < passes; ++pass) {
        const int j = pass * kKeysPerPass + threadIdx.x / kLanesPerKey;
        float x[8] = {};
        if (j < n) load8(kh + int64_t(j) * D + seg * 8, x);
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
            if (g >= G) break;
            float dot = 0.f;
#pragma unroll
            for (int e = 0; e < 8; ++e) dot += x[e] * q_s[g][seg * 8 + e];
#pragma unroll
            for (int m = kLanesPerKey / 2; m > 0; m /= 2) dot += __shfl_xor_sync(0xffffffff, dot, m);
            if (seg == 0 && j < n) scores[g * kMaxChunk + j] = dot * scale_log2;
        }
    }
    __syncthreads();

    // Max and exponentials per query head: warp w takes heads w, w + 4.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int g = warp; g < G; g += kThreads / 32) {
        float m = -INFINITY;
        for (int j = lane; j < n; j += 32) m = fmaxf(m, scores[g * kMaxChunk + j]);
        for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
        float sum = 0.f;
        for (int j = lane; j < n; j += 32) {
            const float p = exp2f(scores[g * kMaxChunk + j] - m);
            scores[g * kMaxChunk + j] = p;
            sum += p;
        }
        for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
        if (lane == 0) {
            stats[g][0] = m;
            stats[g][1] = sum;
        }
    }
    __syncthreads();

    // P V: thread (key group, seg) sums over its keys; the groups are then added through scores[].
    float acc[kMaxGroup][8] = {};
    const int key_group = threadIdx.x / kLanesPerKey;
    for (int j = key_group; j < n; j += kKeysPerPass) {
        float x[8];
        load8(vh + int64_t(j) * D + seg * 8, x);
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
            if (g >= G) break;
            const float p = scores[g * kMaxChunk + j];
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[g][e] += p * x[e];
        }
    }
    __syncthreads();  // every exponential has been read; scores[] now holds [key group][g][D]
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
        if (g >= G) break;
#pragma unroll
        for (int e = 0; e < 8; ++e) scores[(key_group * kMaxGroup + g) * D + seg * 8 + e] = acc[g][e];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G * D; i += kThreads) {
        const int g = i / D, d = i % D;
        float sum = 0.f;
        for (int kg = 0; kg < kKeysPerPass; ++kg) sum += scores[(kg * kMaxGroup + g) * D + d];
        out[g * (D + 2) + d] = sum;
    }
    if (threadIdx.x < G) {
        out[threadIdx.x * (D + 2) + D] = stats[threadIdx.x][0];
        out[threadIdx.x * (D + 2) + D + 1] = stats[threadIdx.x][1];
    }
}

/// o[b, h * G + g, :] from the world * chunks partials of (b, h).
template <class In, int D>
__device__ void combine(const float* partials, In* o, int world, const Shape& s, int chunks, int b, int h) {
    const int G = s.group();
    const int64_t per_slot = int64_t(s.b) * s.hkv * chunks * G * (D + 2);
    for (int i = threadIdx.x; i < G * D; i += kThreads) {
        const int g = i / D, d = i % D;
        float m = -INFINITY;
        for (int w = 0; w < world; ++w) {
            for (int c = 0; c < chunks; ++c) {
                const float* p = partials + w * per_slot + ((int64_t(b) * s.hkv + h) * chunks + c) * G * (D + 2) + g * (D + 2);
                m = fmaxf(m, p[D]);
            }
        }
        float num = 0.f, den = 0.f;
        for (int w = 0; w < world; ++w) {
            for (int c = 0; c < chunks; ++c) {
                const float* p = partials + w * per_slot + ((int64_t(b) * s.hkv + h) * chunks + c) * G * (D + 2) + g * (D + 2);
                const float f = exp2f(p[D] - m);
                num += f * p[d];
                den += f * p[D + 1];
            }
        }
        o[(int64_t(b) * s.hq + h * G + g) * D + d] = iris::arch::from_float<In>(num / den);
    }
}

template <class In, int D>
__device__ void fused(const iris::Ctx& ctx, const In* q, const In* k, const In* v, In* o, float* partials,
                      uint64_t* arrived, uint64_t epoch, const Shape& s, float scale_log2) {
    __shared__ float mine[kMaxGroup * (D + 2)];
    const int G = s.group();
    const int chunks = s.chunks();
    const int chunk = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    partial<In, D>(q, k, v, s, scale_log2, mine);
    __syncthreads();
    const int64_t per_slot = int64_t(s.b) * s.hkv * chunks * G * (D + 2);
    float* slot = partials + ctx.rank * per_slot + ((int64_t(b) * s.hkv + h) * chunks + chunk) * G * (D + 2);
    for (int p = 0; p < ctx.world; ++p) {
        float* dst = iris::translate(ctx, slot, p);
        for (int i = threadIdx.x; i < G * (D + 2); i += kThreads) dst[i] = mine[i];
    }
    __syncthreads();
    uint64_t* counter = arrived + int64_t(b) * s.hkv + h;
    if (threadIdx.x == 0) {
        for (int p = 0; p < ctx.world; ++p) iris::signal(ctx, counter, 1, p, iris::SignalOp::add);
    }
    if (chunk != 0) return;
    if (threadIdx.x == 0) {
        iris::wait_until(ctx, counter, iris::Cmp::ge, epoch * ctx.world * chunks, kSiteArrived);
    }
    __syncthreads();
    combine<In, D>(partials, o, ctx.world, s, chunks, b, h);
}

}  // namespace

using iris::bf16;
using iris::f16;

#define IRIS_FLASH_DECODE_KERNELS(name, In, D)                                                                       \
    extern "C" __global__ void __launch_bounds__(kThreads) iris_flash_decode_##name##_d##D(                         \
        const IRIS_GRID_CONSTANT iris::Ctx ctx, const void* q, const void* k, const void* v, void* o,               \
        float* partials, uint64_t* arrived, uint64_t epoch, int b, int hq, int hkv, int len, int chunk_len,          \
        float scale_log2) {                                                                                          \
        fused<In, D>(ctx, static_cast<const In*>(q), static_cast<const In*>(k), static_cast<const In*>(v),          \
                     static_cast<In*>(o), partials, arrived, epoch, Shape{b, hq, hkv, len, chunk_len}, scale_log2); \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kThreads) iris_flash_decode_partial_##name##_d##D(                 \
        const void* q, const void* k, const void* v, float* partials, int b, int hq, int hkv, int len, int chunk_len, \
        float scale_log2) {                                                                                          \
        const Shape s{b, hq, hkv, len, chunk_len};                                                                   \
        const int G = hq / hkv;                                                                                      \
        float* out = partials + ((int64_t(blockIdx.z) * hkv + blockIdx.y) * s.chunks() + blockIdx.x) * G * (D + 2); \
        partial<In, D>(static_cast<const In*>(q), static_cast<const In*>(k), static_cast<const In*>(v), s,          \
                       scale_log2, out);                                                                             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kThreads) iris_flash_decode_combine_##name##_d##D(                 \
        const float* partials, void* o, int world, int b, int hq, int hkv, int chunks) {                             \
        combine<In, D>(partials, static_cast<In*>(o), world, Shape{b, hq, hkv, 0, 1}, chunks, blockIdx.y,          \
                       blockIdx.x);                                                                                  \
    }

IRIS_FLASH_DECODE_KERNELS(bf16, bf16, 128)
IRIS_FLASH_DECODE_KERNELS(bf16, bf16, 64)
IRIS_FLASH_DECODE_KERNELS(f16, f16, 128)
IRIS_FLASH_DECODE_KERNELS(f16, f16, 64)
