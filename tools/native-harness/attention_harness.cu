// Native harness: the single-GPU attention forward kernels (bf16, head size 64 and 128, causal and
// not), launched as the library launches them, against a CPU double reference; TFLOP/s at the
// benchmark's shapes (B 1, 32 query and 8 K/V heads). ATTENTION_SOURCE names the kernel source
// (default attention.cu), so that build.sh can build variants of it; VARIANT labels the output.
//   attention_harness            checks, then times S 4K-32K
//   attention_harness check      checks only
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef ATTENTION_SOURCE
#define ATTENTION_SOURCE "attention.cu"
#endif
#ifndef VARIANT
#define VARIANT "library"
#endif
#include ATTENTION_SOURCE
#include "harness_common.cuh"

typedef void (*Kern)(iris_attention_args);

template <int D, bool C>
using Cfg = attention::Config<bf16, D, C, attention::kForwardConsumers<D>>;

template <int D, bool C>
static Kern kernel() {
    if constexpr (D == 128) return C ? iris_attention_fwd_bf16_d128_causal : iris_attention_fwd_bf16_d128;
    else return C ? iris_attention_fwd_bf16_d64_causal : iris_attention_fwd_bf16_d64;
}

struct Problem {
    int b, hq, hkv, s;
};

template <int D, bool C>
struct Run {
    Problem pr;
    size_t nq, nk;
    uint16_t *q, *k, *v, *o;
    float* lse;
    iris_attention_args a{};
    dim3 grid;

    explicit Run(Problem p, uint32_t seed) : pr(p) {
        nq = size_t(p.b) * p.hq * p.s * D;
        nk = size_t(p.b) * p.hkv * p.s * D;
        CK(cudaMalloc(&q, nq * 2)); CK(cudaMalloc(&k, nk * 2)); CK(cudaMalloc(&v, nk * 2));
        CK(cudaMalloc(&o, nq * 2)); CK(cudaMalloc(&lse, size_t(p.b) * p.hq * p.s * 4));
        // Variance 1, as the benchmark's standard normal inputs.
        fill_uniform_bf16(q, nq, seed, 1.7320508f);
        fill_uniform_bf16(k, nk, seed * 3 + 1, 1.7320508f);
        fill_uniform_bf16(v, nk, seed * 5 + 2, 1.7320508f);
        CK(cudaMemset(o, 0xFF, nq * 2)); CK(cudaMemset(lse, 0xFF, size_t(p.b) * p.hq * p.s * 4));  // NaN
        const float scale = 1.f / std::sqrt(float(D));
        a.q_map = map_rows(q, D, nq / D); a.k_map = map_rows(k, D, nk / D); a.v_map = map_rows(v, D, nk / D);
        a.o = o; a.lse = lse; a.sq = p.s; a.skv = p.s; a.hq = p.hq; a.hkv = p.hkv;
        a.scale_log2 = scale * 1.4426950408889634f;
        grid = dim3((p.s + Cfg<D, C>::kTileQ - 1) / Cfg<D, C>::kTileQ, p.hq, p.b);
        CK(cudaFuncSetAttribute((const void*)kernel<D, C>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Cfg<D, C>::kSmemBytes));
    }
    ~Run() { cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o); cudaFree(lse); }

    void launch() {
        kernel<D, C>()<<<grid, Cfg<D, C>::kThreads, Cfg<D, C>::kSmemBytes>>>(a);
        CK(cudaGetLastError());
    }

    // Rows `every` apart (every row at 1) of heads `heads` against a CPU double reference; the bound
    // is 2^-8 of the output and 2^-7 of the sum of |p v| (P is rounded to bf16), the lse's 1e-3.
    bool check(const std::vector<int>& heads, int every) {
        CK(cudaDeviceSynchronize());
        const int S = pr.s;
        long bad = 0, checked = 0;
        double worst = 0;
        std::vector<uint16_t> hq(size_t(S) * D), hk(size_t(S) * D), hv(size_t(S) * D), ho(size_t(S) * D);
        std::vector<float> hl(S);
        for (int bh : heads) {
            const int b = bh / pr.hq, h = bh % pr.hq, kvh = b * pr.hkv + h / (pr.hq / pr.hkv);
            CK(cudaMemcpy(hq.data(), q + size_t(bh) * S * D, hq.size() * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(ho.data(), o + size_t(bh) * S * D, ho.size() * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hl.data(), lse + size_t(bh) * S, hl.size() * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hk.data(), k + size_t(kvh) * S * D, hk.size() * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hv.data(), v + size_t(kvh) * S * D, hv.size() * 2, cudaMemcpyDeviceToHost));
            std::vector<double> sc(S);
            for (int i = (bh * 7) % every; i < S; i += every) {
                const int seen = C ? i + 1 : S;
                double mx = -1e300;
                for (int j = 0; j < seen; ++j) {
                    double acc = 0;
                    for (int d = 0; d < D; ++d) acc += double(bf2f(hq[size_t(i) * D + d])) * bf2f(hk[size_t(j) * D + d]);
                    sc[j] = acc / std::sqrt(double(D));
                    mx = std::max(mx, sc[j]);
                }
                double l = 0;
                for (int j = 0; j < seen; ++j) l += (sc[j] = std::exp(sc[j] - mx));
                const double lref = mx + std::log(l);
                ++checked;
                if (!(std::fabs(hl[i] - lref) <= 1e-3 * std::fabs(lref) + 1e-3)) {
                    if (bad++ < 3) printf("  lse head %d row %d: %g, reference %g\n", bh, i, hl[i], lref);
                }
                for (int d = 0; d < D; ++d) {
                    double ref = 0, mag = 0;
                    for (int j = 0; j < seen; ++j) {
                        const double vv = bf2f(hv[size_t(j) * D + d]);
                        ref += sc[j] * vv;
                        mag += sc[j] * std::fabs(vv);
                    }
                    ref /= l;
                    mag /= l;
                    const double got = bf2f(ho[size_t(i) * D + d]);
                    const double tol = std::ldexp(std::fabs(ref), -8) + std::ldexp(mag, -7) + 1e-6;
                    const double err = std::fabs(got - ref);
                    worst = std::max(worst, err / tol);
                    if (!(err <= tol)) {
                        if (bad++ < 3) printf("  o head %d row %d col %d: %g, reference %g\n", bh, i, d, got, ref);
                    }
                }
            }
        }
        printf("check %s D=%d causal=%d B=%d Hq=%d Hkv=%d S=%d: %ld rows, %s (worst error / bound %.3f)\n", VARIANT, D,
               C, pr.b, pr.hq, pr.hkv, S, checked, bad ? "FAIL" : "ok", worst);
        return bad == 0;
    }
};

template <int D, bool C>
static bool check_small() {
    bool ok = true;
    for (Problem p : {Problem{2, 4, 2, 128}, Problem{1, 4, 1, 384}, Problem{1, 2, 2, 640}, Problem{2, 3, 1, 1152}}) {
        Run<D, C> r(p, 11u + p.s);
        r.launch();
        std::vector<int> heads;
        for (int bh = 0; bh < p.b * p.hq; ++bh) heads.push_back(bh);
        ok &= r.check(heads, 1);
    }
    return ok;
}

// Warm-up 3, then 10 launches each between its own events; the median. Then sampled rows checked.
template <int D, bool C>
static bool time_point(int S) {
    Run<D, C> r({1, 32, 8, S}, 1000u + S + D + C);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < 13; ++i) {
        CK(cudaEventRecord(e0)); r.launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    const double ms = t[t.size() / 2];
    const double flops = 4.0 * 32 * double(S) * S * D * (C ? 0.5 : 1.0);
    printf("time %s D=%d S=%d causal=%d: %.4f ms %.1f TFLOP/s\n", VARIANT, D, S, C, ms, flops / ms / 1e9);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
    return r.check({0, 13, 31}, S / 24 + 1);
}

template <int D, bool C>
static bool time_all() {
    bool ok = true;
    for (int S : {4096, 8192, 16384, 32768}) ok &= time_point<D, C>(S);
    return ok;
}

int main(int argc, char** argv) {
    const bool timing = !(argc > 1 && std::strcmp(argv[1], "check") == 0);
    bool ok = check_small<64, false>() & check_small<64, true>() & check_small<128, false>() & check_small<128, true>();
    if (timing) ok &= time_all<64, false>() & time_all<64, true>() & time_all<128, false>() & time_all<128, true>();
    printf("%s: %s\n", VARIANT, ok ? "every check passed" : "CHECKS FAILED");
    return ok ? 0 : 1;
}
