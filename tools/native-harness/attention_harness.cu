// Native harness: single-GPU attention forward against a CPU double reference; TFLOP/s on large shapes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "attention.cu"
#include "harness_common.cuh"

typedef void (*Kern)(iris_attention_args);

template <int D, bool C> static Kern pick() {
  if constexpr (D == 128) return C ? iris_attention_fwd_bf16_d128_causal : iris_attention_fwd_bf16_d128;
  else return C ? iris_attention_fwd_bf16_d64_causal : iris_attention_fwd_bf16_d64;
}
template <int D, bool C>
static void run(int B, int Hq, int Hkv, int S, bool check, std::mt19937& rng) {
  using Cfg = attention::Config<bf16, D, C>;
  Kern k = pick<D, C>();
  CK(cudaFuncSetAttribute((const void*)k, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  size_t nq = size_t(B) * Hq * S * D, nk = size_t(B) * Hkv * S * D;
  std::vector<uint16_t> q(nq), kk(nk), v(nk), o(nq);
  std::normal_distribution<float> N(0, 1);
  for (auto& x : q) x = f2bf(N(rng)); for (auto& x : kk) x = f2bf(N(rng)); for (auto& x : v) x = f2bf(N(rng));
  void *dq, *dk, *dv, *dO; float* dl;
  CK(cudaMalloc(&dq, nq * 2)); CK(cudaMalloc(&dk, nk * 2)); CK(cudaMalloc(&dv, nk * 2)); CK(cudaMalloc(&dO, nq * 2)); CK(cudaMalloc(&dl, size_t(B) * Hq * S * 4));
  CK(cudaMemcpy(dq, q.data(), nq * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dk, kk.data(), nk * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dv, v.data(), nk * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(dO, 0xFF, nq * 2)); CK(cudaMemset(dl, 0xFF, size_t(B) * Hq * S * 4));
  float scale = 1.f / std::sqrt(float(D)), sl2 = scale * 1.4426950408889634f;
  iris_attention_args a{};
  a.q_map = map_rows(dq, D, nq / D); a.k_map = map_rows(dk, D, nk / D); a.v_map = map_rows(dv, D, nk / D);
  a.o = dO; a.lse = dl; a.sq = S; a.skv = S; a.hq = Hq; a.hkv = Hkv; a.scale_log2 = sl2;
  dim3 grid(S / 128, Hq, B);
  k<<<grid, IRIS_ATTENTION_THREADS, Cfg::kSmemBytes>>>(a); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  if (check) {
    CK(cudaMemcpy(o.data(), dO, nq * 2, cudaMemcpyDeviceToHost)); std::vector<float> lse(size_t(B) * Hq * S); CK(cudaMemcpy(lse.data(), dl, lse.size() * 4, cudaMemcpyDeviceToHost));
    long bad = 0; double worst = 0;
    for (int b = 0; b < B; ++b) for (int h = 0; h < Hq; ++h) { int hk = h / (Hq / Hkv);
      for (int i = 0; i < S; ++i) {
        std::vector<double> sc(S); double mx = -1e300;
        for (int j = 0; j < S; ++j) { if (C && j > i) { sc[j] = -1e300; continue; } double a = 0; for (int d = 0; d < D; ++d) a += (double)bf2f(q[((size_t(b) * Hq + h) * S + i) * D + d]) * bf2f(kk[((size_t(b) * Hkv + hk) * S + j) * D + d]); sc[j] = a * scale; mx = std::max(mx, sc[j]); }
        double l = 0; for (int j = 0; j < S; ++j) { sc[j] = (C && j > i) ? 0 : std::exp(sc[j] - mx); l += sc[j]; }
        double lref = mx + std::log(l);
        double lg = lse[(size_t(b) * Hq + h) * S + i]; if (!(std::fabs(lg - lref) <= 1e-3 * std::fabs(lref) + 1e-3)) { if (bad < 3) printf("  lse (%d,%d,%d) %g vs %g\n", b, h, i, lg, lref); ++bad; }
        for (int d = 0; d < D; ++d) { double ref = 0, mag = 0; for (int j = 0; j < S; ++j) { double vv = bf2f(v[((size_t(b) * Hkv + hk) * S + j) * D + d]); ref += sc[j] * vv; mag += sc[j] * std::fabs(vv); } ref /= l; mag /= l;
          double got = bf2f(o[((size_t(b) * Hq + h) * S + i) * D + d]); double tol = std::ldexp(1.0, -8) * std::fabs(ref) + 2 * std::ldexp(1.0, -8) * mag + 1e-6;
          double err = std::fabs(got - ref); worst = std::max(worst, err / tol); if (!(err <= tol)) { if (bad < 3) printf("  o (%d,%d,%d,%d) %g vs %g\n", b, h, i, d, got, ref); ++bad; } } } }
    printf("check B=%d Hq=%d Hkv=%d S=%d D=%d causal=%d: %s (worst err/tol %.3f)\n", B, Hq, Hkv, S, D, C, bad ? "FAIL" : "ok", worst);
  } else {
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t;
    for (int r = 0; r < 13; ++r) { CK(cudaEventRecord(e0)); k<<<grid, IRIS_ATTENTION_THREADS, Cfg::kSmemBytes>>>(a); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r >= 3) t.push_back(ms); }
    std::sort(t.begin(), t.end()); double ms = t[t.size() / 2];
    double flops = 4.0 * B * Hq * double(S) * S * D * (C ? 0.5 : 1.0);
    printf("time B=%d Hq=%d Hkv=%d S=%d D=%d causal=%d: %.3f ms, %.1f TFLOP/s\n", B, Hq, Hkv, S, D, C, ms, flops / ms / 1e9);
  }
  cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dO); cudaFree(dl);
}
int main() {
  std::mt19937 rng(7);
  run<128, false>(1, 4, 2, 256, true, rng); run<128, true>(1, 4, 2, 256, true, rng);
  run<64, false>(2, 2, 1, 384, true, rng); run<64, true>(2, 2, 1, 384, true, rng);
  run<128, false>(1, 32, 8, 16384, false, rng); run<128, true>(1, 32, 8, 16384, false, rng);
  run<128, false>(1, 32, 8, 4096, false, rng); run<64, false>(1, 32, 8, 16384, false, rng);
  return 0;
}
