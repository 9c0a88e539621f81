// flash_decode.cu: attention for one new token per sequence (decode) with the KV cache of every
// sequence split across ranks, combined across ranks inside the kernel. Every kernel takes
// iris_flash_decode_args (iris/abi/flash_decode.h) as its one parameter:
//
//   iris_flash_decode_<in>_d<D>           fused: partials to every rank, flags, combine
//     ctx, q, k, v, o, partials (two sets), arrived (two sets of counters, then the claims), epoch,
//     the shapes, scale_log2
//   iris_flash_decode_partial_<in>_d<D>   unfused, step 1: this rank's partials only (one slot)
//     q, k, v, partials (one slot), the shapes, scale_log2
//   iris_flash_decode_merge_d<D>          conventional, step 2: this rank's chunks merged into one
//     partials (one slot), merged, the shapes        (O, LSE) entry per query head; grid (Hkv, B, G)
//   iris_flash_decode_combine_<in>_d<D>   unfused, last step, after an all-gather of every rank's
//     partials (world slots), o, world, slot_chunks, the shapes       slot         grid (Hkv, B, G)
//   in: bf16 | f16   D: 64 | 128
//
// The two unfused paths (Java: FlashDecode.conventional, FlashDecode.baseline) differ in what they
// all-gather: the conventional decode merges its chunks first and gathers one entry per query head
// (the combine then reads slot_chunks = 1), the all-partials baseline gathers every chunk's partial
// (slot_chunks = chunks), about chunks times the bytes.
//
// q [B, Hq, D]; k, v [B, Hkv, len, D] (this rank's part of each sequence's cache; every rank holds
// the same len); o [B, Hq, D], the full result, on every rank. G = Hq / Hkv query heads share a K/V
// head (GQA), G <= IRIS_FLASH_DECODE_MAX_GROUP. The keys are cut into chunks of chunk_len (a
// multiple of 64, at most 1024): one CTA of 128 threads per (chunk, K/V head, sequence), grid
// (chunks, Hkv, B), no dynamic shared memory. Each CTA writes a partial per query head: D floats of
// un-normalized output, then the chunk's max score (log2 units) and sum of exponentials, then two
// unused floats that keep every partial 16-byte aligned for the combine's vector loads; partials is
// [world][B][Hkv][chunks][G][D + IRIS_FLASH_DECODE_PARTIAL_EXTRA].
//
// Fused: every CTA stores its partial into slot [rank] of every rank's partials (symmetric) and
// adds one to every rank's arrived[b][h] (release, system scope); on each rank the CTAs of chunks
// 0 .. min(chunks, G) - 1 (the combiners) wait until all world * chunks partials of their (b, h)
// have arrived and combine them into o, one query head each (more when chunks < G). Partials and
// counters come in two sets, [2][world][B][Hkv][chunks][G][D + 4] and [2][B][Hkv], used by odd and
// even calls (epoch is the call number, from 1): a rank that starts call e + 1 has received every
// peer's partials of call e, so every peer has finished call e - 1, the last reader of the set that
// call e + 1 writes. No barrier is needed between calls. The counters only grow: call e waits for
// ((e + 1) / 2) * world * chunks arrivals in its set.
//
// Who computes a partial. A combiner waits for the other chunks of its (b, h), whose CTAs CUDA
// need not have started: SMs held by other work (another stream, another process, an MPS limit)
// can leave fewer free slots than combiners, all of them waiting for CTAs that only start once a
// waiter leaves. So every CTA claims its chunk as it starts (an exchange of the epoch into
// claims[b][h][chunk], after the counters: one set, since a call's claims are this rank's alone and
// calls on a rank run in stream order), and computes it only if the claim was its own; a combiner
// whose (b, h) is not complete after kStealAfterNs claims the first unclaimed chunk, computes and
// publishes it itself, and looks again, until every local chunk is claimed; only then does it
// wait without bound (up to the deadline). It then waits only for CTAs that run, and for the other
// ranks. A CTA that finds its chunk taken leaves at once.
//
// Cost: one exchange per CTA, issued before q is staged and read after it, so the two round trips
// overlap; in a launch whose chunks all start together the combiners never look for unclaimed
// chunks (the partials are in before kStealAfterNs) and nothing else changes.
#include <iris/abi/flash_decode.h>

#include "iris/iris.cuh"

namespace {

constexpr int kThreads = IRIS_FLASH_DECODE_THREADS;
constexpr int kMaxGroup = IRIS_FLASH_DECODE_MAX_GROUP;      // query heads per K/V head
constexpr int kMaxChunk = IRIS_FLASH_DECODE_MAX_CHUNK;      // keys per CTA
constexpr int kSiteArrived = IRIS_FLASH_DECODE_SITE_ARRIVED;  // wait site for the host's timeout message
// The partial kernel's occupancy, which its bandwidth depends on. Its compiler left alone takes 96
// registers when its arguments arrive one by one and 100 (four blocks per SM) when they arrive as
// iris_flash_decode_args; the bound keeps it at 96 without spills. The fused kernel has the bound
// too: its partial pass sits in a loop (a combiner computes the chunks nobody claimed), and left
// alone it took 107-123 registers, four CTAs per SM. That is Hopper's bound. Other GPUs take four:
// their compilers spill at 96 registers (4-80 bytes at sm_80, 89, 100 and 120 with nvcc 13), and on
// most of them shared memory holds fewer than five CTAs of up to 44 KiB anyway (A100: three;
// sm_86, 89 and 120: two).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
constexpr int kBlocksPerSm = IRIS_FLASH_DECODE_BLOCKS_PER_SM;
#else
constexpr int kBlocksPerSm = 4;
#endif
// 16-byte loads each thread keeps in flight in the V pass. One at a time left the partial pass at
// a third of HBM bandwidth (Little's law: too few bytes in flight per SM).
constexpr int kLoadsInFlight = 4;
// Each pass of the K and V loops first asks L2 for the rows of the pass kAheadPasses later, one
// bulk prefetch by one thread (no registers held while they travel); the loads alone keep about
// 8 KiB per CTA in flight, a pass ahead another 8 KiB. Measured on one H100 at world 1
// (tools/native-harness/decode_ahead_harness.cu at the benchmark's ten decode points, 2026-12-06):
// 1 pass ahead was the fastest of 0-4 for both kernels, the fused one 7-8% faster than 0 passes at
// batch 8 and 15-20% faster than 4 passes, which read the cache at 2.3-2.5 TB/s against 2.7-3.0;
// at 1 pass it reads 512K tokens per sequence at batch 8 as fast as a device-to-device copy moves
// bytes. On 2 x H200 (2026-12-01) the fused kernel had been fastest at 4 passes of 0, 4 and 8; 1
// and 2 were not tried there.
constexpr int kAheadPasses = 1;

/// Rows [from, to) of a head's keys or values into L2, one bulk prefetch by one thread.
template <class In, int D>
__device__ inline void prefetch_rows(const In* rows, int from, int to) {
    if (threadIdx.x == 0 && from < to) {
        iris::arch::prefetch_l2(rows + int64_t(from) * D, uint32_t(to - from) * D * sizeof(In));
    }
}

/// Floats of one partial: D numerators, max, sum, two pad floats (16-byte alignment).
template <int D>
constexpr int kEntry = D + IRIS_FLASH_DECODE_PARTIAL_EXTRA;
static_assert(kEntry<64> % 4 == 0 && kEntry<128> % 4 == 0, "partials 16-byte aligned for the combine's float4 loads");

template <class In>
__device__ inline void unpack8(const uint4& raw, float (&x)[8]) {
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
    __device__ static Shape of(const iris_flash_decode_args& a) { return {a.b, a.hq, a.hkv, a.len, a.chunk_len}; }
};

/// Whether this call's claim on `word` (a chunk's claim, whose values are epochs; see the file
/// comment) is the caller's (one thread).
__device__ inline bool take_claim(uint64_t* word, uint64_t epoch) {
    return iris::arch::exchange<iris::Order::relaxed, iris::Scope::gpu>(word, epoch) != epoch;
}

/// Partial of chunk `chunk` of this CTA's (head, sequence), written to `out` ([G][D + 4]) by thread
/// 0... `claim`: null (the chunk is the caller's), or the chunk's claim word, which thread 0 takes
/// for `epoch` while q is staged; returns false, having computed nothing, when another CTA holds
/// it. Every thread calls it alike.
template <class In, int D>
__device__ bool partial(const In* q, const In* k, const In* v, const Shape& s, float scale_log2, int chunk,
                        uint64_t* claim, uint64_t epoch, float* out) {
    // The K pass gives each key to kKeyLanes threads with 32 elements each, so that a score needs
    // log2(kKeyLanes) shuffles: with 8 elements per thread the shuffles, not HBM, bounded the pass.
    // The V pass keeps 8 elements per thread (kLanesPerKey), which keeps its accumulators small.
    constexpr int kKeyLanes = D / 32;
    constexpr int kKeysPerPassK = kThreads / kKeyLanes;
    constexpr int kQRow = 32 + 4;                    // floats per (head, lane) of q_s: padded against bank conflicts
    __shared__ __align__(16) float q_s[kMaxGroup][kKeyLanes][kQRow];
    __shared__ float scores[kMaxGroup * kMaxChunk];  // scores, then exponentials, then the V-pass reduction
    __shared__ float stats[kMaxGroup][2];           // max, sum
    constexpr int kLanesPerKey = D / 8;             // 16-byte pieces of one value row
    constexpr int kKeysPerPass = kThreads / kLanesPerKey;
    const int G = s.group();
    const int h = blockIdx.y, b = blockIdx.z;
    const int j0 = chunk * s.chunk_len;
    const int n = min(s.chunk_len, s.len - j0);
    const In* kh = k + ((int64_t(b) * s.hkv + h) * s.len + j0) * D;
    const In* vh = v + ((int64_t(b) * s.hkv + h) * s.len + j0) * D;
    constexpr int kAheadK = kAheadPasses * kKeysPerPassK;
    const bool ours = threadIdx.x != 0 || claim == nullptr || take_claim(claim, epoch);  // read after q is staged
    prefetch_rows<In, D>(kh, 0, min(n, kAheadK));  // arrives while q is staged
    for (int i = threadIdx.x; i < G * D; i += kThreads) {
        const int g = i / D, d = i % D;
        q_s[g][d / 32][d % 32] = iris::arch::to_float(q[(int64_t(b) * s.hq + h * G + g) * D + d]);
    }
    if (!__syncthreads_and(ours)) return false;

    // Scores. Every thread runs the same number of iterations (keys past n read as zeros and are
    // not stored): the shuffles need the whole warp. A thread has its key's 32 elements, four
    // 16-byte loads, in flight at once (two keys at once spill in the fused kernel).
    const int kseg = threadIdx.x % kKeyLanes;
    for (int base = 0; base < n; base += kKeysPerPassK) {
        prefetch_rows<In, D>(kh, base + kAheadK, min(n, base + kAheadK + kKeysPerPassK));
        const int j = base + threadIdx.x / kKeyLanes;
        uint4 raw[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            raw[c] = j < n ? *reinterpret_cast<const uint4*>(kh + int64_t(j) * D + kseg * 32 + c * 8) : uint4{};
        }
        float dot[kMaxGroup] = {};
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            float x[8];
            unpack8<In>(raw[c], x);
#pragma unroll
            for (int g = 0; g < kMaxGroup; ++g) {
                if (g >= G) break;
                const float4 q0 = *reinterpret_cast<const float4*>(&q_s[g][kseg][c * 8]);
                const float4 q1 = *reinterpret_cast<const float4*>(&q_s[g][kseg][c * 8 + 4]);
                dot[g] += x[0] * q0.x + x[1] * q0.y + x[2] * q0.z + x[3] * q0.w + x[4] * q1.x + x[5] * q1.y + x[6] * q1.z +
                          x[7] * q1.w;
            }
        }
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
            if (g >= G) break;
#pragma unroll
            for (int m = kKeyLanes / 2; m > 0; m /= 2) dot[g] += __shfl_xor_sync(0xffffffff, dot[g], m);
            if (kseg == 0 && j < n) scores[g * kMaxChunk + j] = dot[g] * scale_log2;
        }
    }
    // The first values arrive while the exponentials are computed.
    constexpr int kStepV = kLoadsInFlight * kKeysPerPass;
    constexpr int kAheadV = kAheadPasses * kStepV;
    prefetch_rows<In, D>(vh, 0, min(n, kAheadV));
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
    const int seg = threadIdx.x % kLanesPerKey;
    float acc[kMaxGroup][8] = {};
    const int key_group = threadIdx.x / kLanesPerKey;
    for (int j0 = key_group; j0 < n; j0 += kStepV) {
        const int base = j0 - key_group;
        prefetch_rows<In, D>(vh, base + kAheadV, min(n, base + kAheadV + kStepV));
        uint4 raw[kLoadsInFlight];
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) {
            const int j = j0 + u * kKeysPerPass;
            raw[u] = j < n ? *reinterpret_cast<const uint4*>(vh + int64_t(j) * D + seg * 8) : uint4{};
        }
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) {
            const int j = j0 + u * kKeysPerPass;
            if (j >= n) break;
            float x[8];
            unpack8<In>(raw[u], x);
#pragma unroll
            for (int g = 0; g < kMaxGroup; ++g) {
                if (g >= G) break;
                const float p = scores[g * kMaxChunk + j];
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[g][e] += p * x[e];
            }
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
        out[g * kEntry<D> + d] = sum;
    }
    if (threadIdx.x < G) {
        out[threadIdx.x * kEntry<D> + D] = stats[threadIdx.x][0];
        out[threadIdx.x * kEntry<D> + D + 1] = stats[threadIdx.x][1];
    }
    return true;
}

/// The largest of every thread's `x`, on every thread of the CTA.
__device__ inline float block_max(float x, float* scratch) {
    for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, o));
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = x;
    __syncthreads();
    float m = scratch[0];
    for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, scratch[w]);
    __syncthreads();  // scratch is free again
    return m;
}

/// The softmax-weighted sum of `entries` partials of each query head g = g0, g0 + g_step, ... < G,
/// partial e of head g at entry(e, g); hands each head's sums to store(g, lane, num, den, max) on the
/// D / 4 threads of slot 0, `lane` holding the numerators [4 lane, 4 lane + 4). The CTA reads
/// kThreads / (D / 4) partials at a time, a float4 of numerators per thread, so that every load is
/// independent of the previous ones; a serial walk over the partials by a few threads made this step
/// as slow as the partial pass itself at small batch.
template <int D, class Entry, class Store>
__device__ void reduce_entries(const Entry& entry, int entries, int G, int g0, int g_step, const Store& store) {
    constexpr int kLanes = D / 4;                    // threads per partial
    constexpr int kParallel = kThreads / kLanes;     // partials read at once
    __shared__ float4 num_s[kParallel][kLanes];
    __shared__ float den_s[kParallel];
    __shared__ float scratch[kThreads / 32];
    const int lane = threadIdx.x % kLanes, slot = threadIdx.x / kLanes;
    for (int g = g0; g < G; g += g_step) {
        float m = -INFINITY;
        for (int e = threadIdx.x; e < entries; e += kThreads) m = fmaxf(m, entry(e, g)[D]);
        m = block_max(m, scratch);
        float4 num = {0.f, 0.f, 0.f, 0.f};
        float den = 0.f;
#pragma unroll 4
        for (int e = slot; e < entries; e += kParallel) {
            const float* p = entry(e, g);
            const float2 stats = *reinterpret_cast<const float2*>(p + D);
            const float4 x = reinterpret_cast<const float4*>(p)[lane];
            const float f = exp2f(stats.x - m);
            num.x += f * x.x;
            num.y += f * x.y;
            num.z += f * x.z;
            num.w += f * x.w;
            den += f * stats.y;
        }
        num_s[slot][lane] = num;
        if (lane == 0) den_s[slot] = den;
        __syncthreads();
        if (slot == 0) {
            float4 total = num_s[0][lane];
            float total_den = den_s[0];
            for (int r = 1; r < kParallel; ++r) {
                total.x += num_s[r][lane].x;
                total.y += num_s[r][lane].y;
                total.z += num_s[r][lane].z;
                total.w += num_s[r][lane].w;
                total_den += den_s[r];
            }
            store(g, lane, total, total_den, m);
        }
        __syncthreads();  // num_s and den_s are free for the next head
    }
}

/// o[b, h * G + g, :] for g = g0, g0 + g_step, ... from the world * chunks partials of (b, h)
/// (partials: world slots of [B][Hkv][chunks][G][D + 4]).
template <class In, int D>
__device__ void combine(const float* partials, In* o, int world, const Shape& s, int chunks, int b, int h, int g0,
                        int g_step) {
    const int G = s.group();
    const int64_t per_slot = int64_t(s.b) * s.hkv * chunks * G * kEntry<D>;
    auto entry = [&](int e, int g) {
        return partials + (e / chunks) * per_slot + ((int64_t(b) * s.hkv + h) * chunks + e % chunks) * G * kEntry<D> +
               g * kEntry<D>;
    };
    reduce_entries<D>(entry, world * chunks, G, g0, g_step, [&](int g, int lane, float4 num, float den, float) {
        In* out = o + (int64_t(b) * s.hq + h * G + g) * D + lane * 4;
        out[0] = iris::arch::from_float<In>(num.x / den);
        out[1] = iris::arch::from_float<In>(num.y / den);
        out[2] = iris::arch::from_float<In>(num.z / den);
        out[3] = iris::arch::from_float<In>(num.w / den);
    });
}

/// The conventional decode's local step: this rank's chunks of (b, h) (partials: one slot of
/// [B][Hkv][chunks][G][D + 4]) merged into one entry of query head g at merged[b][h][g], its output
/// normalized and the log-sum-exp (log2 units) in the max's place with a sum of 1: a combine weighs
/// such an entry by exp2(lse - max), as it weighs a chunk's partial by exp2(chunk max - max) x sum.
template <int D>
__device__ void merge(const float* partials, float* merged, const Shape& s, int b, int h, int g) {
    const int G = s.group();
    const float* head = partials + (int64_t(b) * s.hkv + h) * s.chunks() * G * kEntry<D>;
    auto entry = [&](int e, int gq) { return head + (int64_t(e) * G + gq) * kEntry<D>; };
    reduce_entries<D>(entry, s.chunks(), G, g, G, [&](int gq, int lane, float4 num, float den, float m) {
        float* out = merged + ((int64_t(b) * s.hkv + h) * G + gq) * kEntry<D>;
        reinterpret_cast<float4*>(out)[lane] = make_float4(num.x / den, num.y / den, num.z / den, num.w / den);
        if (lane == 0) *reinterpret_cast<float2*>(out + D) = make_float2(m + log2f(den), 1.f);
    });
}

/// How long a combiner waits for its (b, h) before it looks for chunks that nobody has claimed. In a
/// launch whose CTAs all start, every chunk is claimed within microseconds; longer waits are for
/// other ranks, or for chunks of a later wave (a combiner that computes one of those instead of
/// waiting for it saves its CTA the same time) or of CTAs held back by other work.
constexpr uint64_t kStealAfterNs = 20'000;

/// Whether `counter` reaches `target` within `ns` (one thread; acquire when it does). No record
/// when it does not: the caller then waits with a deadline.
__device__ inline bool reaches_within(const uint64_t* counter, uint64_t target, uint64_t ns) {
    const uint64_t start = iris::arch::now_ns();
    do {
        if (iris::arch::load<iris::Order::acquire, iris::Scope::system>(counter) >= target) return true;
    } while (iris::arch::now_ns() - start < ns);
    return false;
}

/// The first of `chunks` chunks (claim words at `claims`) that nobody had claimed, now claimed by
/// this CTA, or -1 when every chunk is claimed. Every thread calls it alike.
__device__ inline int claim_unclaimed(uint64_t* claims, int chunks, uint64_t epoch) {
    __shared__ int s_first;
    for (;;) {
        if (threadIdx.x == 0) s_first = chunks;
        __syncthreads();
        for (int c = threadIdx.x; c < chunks; c += kThreads) {
            if (iris::arch::load<iris::Order::relaxed, iris::Scope::gpu>(claims + c) != epoch) {
                atomicMin(&s_first, c);
                break;
            }
        }
        __syncthreads();
        const int c = s_first;
        if (c == chunks) return -1;
        // Another combiner of (b, h) or the chunk's own CTA may have taken it since: look again.
        if (__syncthreads_or(threadIdx.x == 0 && take_claim(claims + c, epoch))) return c;
    }
}

/// Where a fused CTA publishes, counts and claims, in shared memory and read where used: kept in
/// registers across the partial pass, which a combiner repeats in a loop, they did not fit the 96
/// registers of Hopper's five CTAs per SM (kBlocksPerSm) without spills.
struct Exchange {
    float* slot;         // this rank's partial of chunk 0 of (b, h), in the call's set, as every rank maps it here
    uint64_t* counter;   // arrivals of (b, h), in the call's set
    uint64_t* claims;    // the claims on (b, h)'s chunks
    uint64_t target;     // the arrivals that complete (b, h) in this call
    int chunk;           // the chunk this CTA computes next
};

template <class In, int D>
__device__ void fused(const iris::Ctx& ctx, const In* q, const In* k, const In* v, In* o, float* partials,
                      uint64_t* arrived, uint64_t epoch, const Shape& s, float scale_log2) {
    __shared__ float mine[kMaxGroup * kEntry<D>];
    __shared__ Exchange x;
    if (threadIdx.x == 0) {
        const int chunks = s.chunks();
        const int64_t heads = int64_t(s.b) * s.hkv;
        const int64_t bh = int64_t(blockIdx.z) * s.hkv + blockIdx.y;
        const int64_t per_slot = heads * chunks * s.group() * kEntry<D>;
        const int set = int(epoch & 1);
        x.slot = partials + (set * ctx.world + ctx.rank) * per_slot + bh * chunks * s.group() * kEntry<D>;
        x.counter = arrived + set * heads + bh;
        x.claims = arrived + 2 * heads + bh * chunks;
        x.target = (epoch + 1) / 2 * ctx.world * chunks;
        x.chunk = blockIdx.x;
    }
    __syncthreads();
    // Its own chunk first (if its claim holds), then, in a combiner, those it claims while it waits:
    // one call site, so that the partial pass is compiled once.
    for (;;) {
        const int chunk = x.chunk;
        uint64_t* claim = chunk == int(blockIdx.x) ? x.claims + chunk : nullptr;  // a claimed chunk is already this CTA's
        if (partial<In, D>(q, k, v, s, scale_log2, chunk, claim, epoch, mine)) {
            __syncthreads();
            // x.chunk, not chunk: read again here, so that no register holds it through the pass.
            float* slot = x.slot + int64_t(x.chunk) * s.group() * kEntry<D>;
            for (int p = 0; p < ctx.world; ++p) {
                float* dst = iris::translate(ctx, slot, p);
                for (int i = threadIdx.x; i < s.group() * kEntry<D>; i += kThreads) dst[i] = mine[i];
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                for (int p = 0; p < ctx.world; ++p) iris::signal(ctx, x.counter, 1, p, iris::SignalOp::add);
            }
        }
        if (int(blockIdx.x) >= min(s.chunks(), s.group())) return;  // not a combiner
        if (__syncthreads_or(threadIdx.x == 0 && reaches_within(x.counter, x.target, kStealAfterNs))) break;
        const int next = claim_unclaimed(x.claims, s.chunks(), epoch);
        if (next < 0) {
            // Every local chunk is claimed by a CTA that runs: the rest is theirs and the other ranks'.
            if (threadIdx.x == 0) iris::wait_until(ctx, x.counter, iris::Cmp::ge, x.target, kSiteArrived);
            __syncthreads();
            break;
        }
        if (threadIdx.x == 0) x.chunk = next;
        __syncthreads();
    }
    const int64_t per_slot = int64_t(s.b) * s.hkv * s.chunks() * s.group() * kEntry<D>;
    combine<In, D>(partials + int(epoch & 1) * ctx.world * per_slot, o, ctx.world, s, s.chunks(), blockIdx.z, blockIdx.y,
                   blockIdx.x, min(s.chunks(), s.group()));
}

}  // namespace

using iris::bf16;
using iris::f16;

#define IRIS_FLASH_DECODE_KERNELS(name, In, D)                                                                       \
    extern "C" __global__ void __launch_bounds__(kThreads, kBlocksPerSm) iris_flash_decode_##name##_d##D(            \
        const IRIS_GRID_CONSTANT iris_flash_decode_args a) {                                                         \
        fused<In, D>(a.ctx, static_cast<const In*>(a.q), static_cast<const In*>(a.k), static_cast<const In*>(a.v),   \
                     static_cast<In*>(a.o), static_cast<float*>(a.partials), static_cast<uint64_t*>(a.arrived),      \
                     a.epoch, Shape::of(a), a.scale_log2);                                                           \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kThreads, kBlocksPerSm)                                             \
        iris_flash_decode_partial_##name##_d##D(const IRIS_GRID_CONSTANT iris_flash_decode_args a) {                 \
        const Shape s = Shape::of(a);                                                                                \
        float* out = static_cast<float*>(a.partials) +                                                               \
                     ((int64_t(blockIdx.z) * s.hkv + blockIdx.y) * s.chunks() + blockIdx.x) * s.group() * kEntry<D>; \
        partial<In, D>(static_cast<const In*>(a.q), static_cast<const In*>(a.k), static_cast<const In*>(a.v), s,      \
                       a.scale_log2, blockIdx.x, nullptr, 0, out);                                                   \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kThreads) iris_flash_decode_combine_##name##_d##D(                  \
        const IRIS_GRID_CONSTANT iris_flash_decode_args a) {                                                         \
        const Shape s = Shape::of(a);                                                                                \
        combine<In, D>(static_cast<const float*>(a.partials), static_cast<In*>(a.o), a.world, s, a.slot_chunks,      \
                       blockIdx.y, blockIdx.x, blockIdx.z, s.group());                                               \
    }

IRIS_FLASH_DECODE_KERNELS(bf16, bf16, 128)
IRIS_FLASH_DECODE_KERNELS(bf16, bf16, 64)
IRIS_FLASH_DECODE_KERNELS(f16, f16, 128)
IRIS_FLASH_DECODE_KERNELS(f16, f16, 64)

// The merge reads and writes F32 only: one kernel per head size serves both input types.
extern "C" __global__ void __launch_bounds__(kThreads)
    iris_flash_decode_merge_d128(const IRIS_GRID_CONSTANT iris_flash_decode_args a) {
    merge<128>(static_cast<const float*>(a.partials), static_cast<float*>(a.merged), Shape::of(a), blockIdx.y,
               blockIdx.x, blockIdx.z);
}
extern "C" __global__ void __launch_bounds__(kThreads)
    iris_flash_decode_merge_d64(const IRIS_GRID_CONSTANT iris_flash_decode_args a) {
    merge<64>(static_cast<const float*>(a.partials), static_cast<float*>(a.merged), Shape::of(a), blockIdx.y,
              blockIdx.x, blockIdx.z);
}
