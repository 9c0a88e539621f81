// Native harness: ring attention steps (two ranks simulated on one GPU, checked against the single-GPU
// kernel on the gathered input and a CPU double reference) and flash-decode (world 1: fused vs
// partial + combine, CPU reference; bandwidth of the partial pass).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "attention.cu"
#include "flash_decode.cu"
#include "harness_common.cuh"
static std::mt19937 rng(11);
static std::vector<uint16_t> randv(size_t n) { return random_normal_bf16(n, rng); }
static void* up(const std::vector<uint16_t>& v) { void* d; CK(cudaMalloc(&d, v.size() * 2)); CK(cudaMemcpy(d, v.data(), v.size() * 2, cudaMemcpyHostToDevice)); return d; }
static std::vector<uint16_t> down(const void* d, size_t n) { std::vector<uint16_t> v(n); CK(cudaMemcpy(v.data(), d, n * 2, cudaMemcpyDeviceToHost)); return v; }

// Ring attention, D = 128, B = 1, Hq/Hkv heads, total S, W = 2 ranks simulated; causal = zig-zag.
template <bool C>
static void ring(int Hq, int Hkv, int S, bool cpu) {
  const int W = 2, D = 128, Sl = S / W, cl = S / (2 * W);
  using Cfg = attention::Config<bf16, 128, C>;
  auto kern = C ? iris_ring_attention_step_bf16_d128_causal : iris_ring_attention_step_bf16_d128;
  auto local = C ? iris_attention_fwd_bf16_d128_causal : iris_attention_fwd_bf16_d128;
  CK(cudaFuncSetAttribute((const void*)kern, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  CK(cudaFuncSetAttribute((const void*)local, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  // Global tensors in natural order [H, S, D]
  auto q = randv(size_t(Hq) * S * D), k = randv(size_t(Hkv) * S * D), v = randv(size_t(Hkv) * S * D);
  // global position of rank r's local row i
  auto pos = [&](int r, int i) { if (!C) return r * Sl + i; int c = i / cl; int id = c == 0 ? r : 2 * W - 1 - r; return id * cl + i % cl; };
  auto shard = [&](const std::vector<uint16_t>& g, int H, int r) { std::vector<uint16_t> s(size_t(H) * Sl * D); for (int h = 0; h < H; ++h) for (int i = 0; i < Sl; ++i) memcpy(&s[(size_t(h) * Sl + i) * D], &g[(size_t(h) * S + pos(r, i)) * D], D * 2); return s; };
  std::vector<void*> dq(W), dk(W), dv(W), dO(W); std::vector<float*> acc(W), mx(W), sm(W), lse(W);
  for (int r = 0; r < W; ++r) { dq[r] = up(shard(q, Hq, r)); dk[r] = up(shard(k, Hkv, r)); dv[r] = up(shard(v, Hkv, r));
    CK(cudaMalloc(&dO[r], size_t(Hq) * Sl * D * 2)); CK(cudaMemset(dO[r], 0xFF, size_t(Hq) * Sl * D * 2));
    CK(cudaMalloc(&acc[r], size_t(Hq) * Sl * D * 4)); CK(cudaMalloc(&mx[r], size_t(Hq) * Sl * 4)); CK(cudaMalloc(&sm[r], size_t(Hq) * Sl * 4)); CK(cudaMalloc(&lse[r], size_t(Hq) * Sl * 4)); }
  float sl2 = 1.f / std::sqrt(128.f) * 1.4426950408889634f;
  auto steps = [&](int r) {
    for (int s = 0; s < W; ++s) { int src = ((r - s) % W + W) % W; int mode = (s > 0 ? attention::kLoadState : 0) | (s == W - 1 ? attention::kFinalize : 0);
      iris_attention_args a{};
      a.q_map = map_rows(dq[r], D, size_t(Hq) * Sl); a.k_map = map_rows(dk[src], D, size_t(Hkv) * Sl); a.v_map = map_rows(dv[src], D, size_t(Hkv) * Sl);
      a.o = dO[r]; a.lse = lse[r]; a.o_acc = acc[r]; a.row_max = mx[r]; a.row_sum = sm[r]; a.mode = mode; a.sq = Sl; a.skv = Sl; a.hq = Hq; a.hkv = Hkv; a.scale_log2 = sl2;
      a.q_chunks = {C ? cl : Sl, r, 2 * W - 1 - r}; a.kv_chunks = {C ? cl : Sl, src, 2 * W - 1 - src};
      kern<<<dim3(Sl / 128, Hq, 1), IRIS_ATTENTION_THREADS, Cfg::kSmemBytes>>>(a); CK(cudaGetLastError()); } };
  for (int r = 0; r < W; ++r) steps(r);
  CK(cudaDeviceSynchronize());
  // reference: local kernel on the gathered natural-order inputs (GPU), and CPU double on a sample of rows
  void *gq = up(q), *gk = up(k), *gv = up(v), *gO; CK(cudaMalloc(&gO, q.size() * 2));
  iris_attention_args whole{};
  whole.q_map = map_rows(gq, D, size_t(Hq) * S); whole.k_map = map_rows(gk, D, size_t(Hkv) * S); whole.v_map = map_rows(gv, D, size_t(Hkv) * S);
  whole.o = gO; whole.sq = S; whole.skv = S; whole.hq = Hq; whole.hkv = Hkv; whole.scale_log2 = sl2;
  local<<<dim3(S / 128, Hq, 1), IRIS_ATTENTION_THREADS, Cfg::kSmemBytes>>>(whole);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  auto g = down(gO, q.size());
  long bad = 0, diff = 0; double worst = 0;
  for (int r = 0; r < W; ++r) { auto o = down(dO[r], size_t(Hq) * Sl * D);
    for (int h = 0; h < Hq; ++h) for (int i = 0; i < Sl; ++i) { int p = pos(r, i);
      for (int d = 0; d < D; ++d) { double x = bf2f(o[(size_t(h) * Sl + i) * D + d]), y = bf2f(g[(size_t(h) * S + p) * D + d]); if (x != y) ++diff; double tol = std::ldexp(1.0, -5) * (std::fabs(y) + 0.05); /* P in bf16: about 1e-3 apart on O of about 0.05, see README.md */ double e = std::fabs(x - y); worst = std::max(worst, e / tol); if (!(e <= tol)) { if (bad < 3) printf("  ring vs local (r%d h%d i%d d%d) %g vs %g\n", r, h, i, d, x, y); ++bad; } }
      if (cpu && (i % 37 == 0) && h < 2) { // CPU double on sampled rows
        int hk = h / (Hq / Hkv); std::vector<double> sc(S); double m = -1e300;
        for (int j = 0; j < S; ++j) { if (C && j > p) { sc[j] = -1e300; continue; } double a = 0; for (int d = 0; d < D; ++d) a += (double)bf2f(q[(size_t(h) * S + p) * D + d]) * bf2f(k[(size_t(hk) * S + j) * D + d]); sc[j] = a / std::sqrt(128.0); m = std::max(m, sc[j]); }
        double l = 0; for (int j = 0; j < S; ++j) { sc[j] = (C && j > p) ? 0 : std::exp(sc[j] - m); l += sc[j]; }
        for (int d = 0; d < D; ++d) { double ref = 0; for (int j = 0; j < S; ++j) ref += sc[j] * bf2f(v[(size_t(hk) * S + j) * D + d]); ref /= l; double x = bf2f(o[(size_t(h) * Sl + i) * D + d]);
          if (!(std::fabs(x - ref) <= std::ldexp(1.0, -7) * std::fabs(ref) + 0.01)) { if (bad < 6) printf("  ring vs cpu (r%d h%d row %d d%d) %g vs %g\n", r, h, p, d, x, ref); ++bad; } } } } }
  printf("ring W=2 Hq=%d Hkv=%d S=%d causal=%d: %s (bits differing from local kernel on gathered input: %ld, worst %.3f)\n", Hq, Hkv, S, C, bad ? "FAIL" : "ok", diff, worst);
  // timing: both ranks' steps (run back to back on this GPU) vs the local kernel over the same work
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t1, t2;
  for (int rep = 0; rep < 8; ++rep) { float ms; CK(cudaEventRecord(e0)); steps(0); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); t1.push_back(ms);
    CK(cudaEventRecord(e0)); local<<<dim3(S / 128, Hq, 1), IRIS_ATTENTION_THREADS, Cfg::kSmemBytes>>>(whole); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); t2.push_back(ms / W); }
  std::sort(t1.begin(), t1.end()); std::sort(t2.begin(), t2.end());
  printf("   rank 0's steps %.3f ms; local kernel on everything / W %.3f ms\n", t1[4], t2[4]);
  for (int r = 0; r < W; ++r) { cudaFree(dq[r]); cudaFree(dk[r]); cudaFree(dv[r]); cudaFree(dO[r]); cudaFree(acc[r]); cudaFree(mx[r]); cudaFree(sm[r]); cudaFree(lse[r]); }
  cudaFree(gq); cudaFree(gk); cudaFree(gv); cudaFree(gO);
}

static void decode(int B, int Hq, int Hkv, int L, int chunk, bool cpu) {
  const int D = 128, G = Hq / Hkv; int chunks = (L + chunk - 1) / chunk;
  size_t nkv = size_t(B) * Hkv * L * D;
  auto q = randv(size_t(B) * Hq * D);
  std::vector<uint16_t> k, v; void *dk, *dv;
  if (cpu) { k = randv(nkv); v = randv(nkv); dk = up(k); dv = up(v); }
  else { auto blk = randv(size_t(1) << 24); CK(cudaMalloc(&dk, nkv * 2)); CK(cudaMalloc(&dv, nkv * 2));
    for (size_t off = 0; off < nkv; off += blk.size()) { size_t n = std::min(blk.size(), nkv - off); CK(cudaMemcpy((char*)dk + off * 2, blk.data(), n * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy((char*)dv + off * 2, blk.data() + (blk.size() - n), n * 2, cudaMemcpyHostToDevice)); } }
  void *dq = up(q), *o1, *o2; CK(cudaMalloc(&o1, q.size() * 2)); CK(cudaMalloc(&o2, q.size() * 2)); CK(cudaMemset(o1, 0xFF, q.size() * 2)); CK(cudaMemset(o2, 0xFF, q.size() * 2));
  float* part; size_t np = size_t(B) * Hkv * chunks * G * (D + 4); CK(cudaMalloc(&part, np * 4));
  // world-1 context for the fused kernel: two sets of partials and of counters (odd and even calls),
  // then the claims on the chunks (flash_decode.cu)
  size_t counters = (2 * size_t(B) * Hkv + size_t(B) * Hkv * chunks) * 8;
  char* heap; size_t hb = 2 * np * 4 + counters; CK(cudaMalloc(&heap, hb)); CK(cudaMemset(heap, 0, hb));
  iris::DeviceStatus* st; CK(cudaHostAlloc((void**)&st, sizeof(iris::DeviceStatus), cudaHostAllocMapped)); memset(st, 0, sizeof *st);
  iris::Ctx ctx; memset(&ctx, 0, sizeof ctx); ctx.rank = 0; ctx.world = 1; ctx.heap_size = hb; ctx.timeout_ns = 2000000000ull; CK(cudaHostGetDevicePointer((void**)&ctx.status, st, 0)); ctx.bases[0] = (uint64_t)heap;
  float* fpart = (float*)heap; uint64_t* arrived = (uint64_t*)(heap + 2 * np * 4);
  float sl2 = 1.f / std::sqrt(128.f) * 1.4426950408889634f;
  iris_flash_decode_args fa{};  // fused, one call (epoch 1)
  fa.ctx = ctx; fa.q = dq; fa.k = dk; fa.v = dv; fa.o = o1; fa.partials = fpart; fa.arrived = arrived; fa.epoch = 1;
  fa.b = B; fa.hq = Hq; fa.hkv = Hkv; fa.len = L; fa.chunk_len = chunk; fa.scale_log2 = sl2;
  iris_flash_decode_args pa = fa;  // partial into part, then combine of world 1
  pa.partials = part; pa.o = o2; pa.world = 1; pa.slot_chunks = chunks;
  iris_flash_decode_bf16_d128<<<dim3(chunks, Hkv, B), IRIS_FLASH_DECODE_THREADS>>>(fa); CK(cudaGetLastError());
  iris_flash_decode_partial_bf16_d128<<<dim3(chunks, Hkv, B), IRIS_FLASH_DECODE_THREADS>>>(pa); CK(cudaGetLastError());
  iris_flash_decode_combine_bf16_d128<<<dim3(Hkv, B, G), IRIS_FLASH_DECODE_THREADS>>>(pa); CK(cudaGetLastError());
  CK(cudaDeviceSynchronize()); if (st->code) { printf("device status %u\n", st->code); exit(1); }
  auto a = down(o1, q.size()), bb = down(o2, q.size()); long bad = 0, diff = 0;
  for (size_t i = 0; i < a.size(); ++i) if (a[i] != bb[i]) ++diff;
  if (cpu) for (int b = 0; b < B; ++b) for (int h = 0; h < Hq; ++h) { int hk = h / G; std::vector<double> sc(L); double m = -1e300;
    for (int j = 0; j < L; ++j) { double s = 0; for (int d = 0; d < D; ++d) s += (double)bf2f(q[(size_t(b) * Hq + h) * D + d]) * bf2f(k[((size_t(b) * Hkv + hk) * L + j) * D + d]); sc[j] = s / std::sqrt(128.0); m = std::max(m, sc[j]); }
    double l = 0; for (int j = 0; j < L; ++j) { sc[j] = std::exp(sc[j] - m); l += sc[j]; }
    for (int d = 0; d < D; ++d) { double ref = 0; for (int j = 0; j < L; ++j) ref += sc[j] * bf2f(v[((size_t(b) * Hkv + hk) * L + j) * D + d]); ref /= l; double x = bf2f(a[(size_t(b) * Hq + h) * D + d]);
      if (!(std::fabs(x - ref) <= std::ldexp(1.0, -7) * std::fabs(ref) + 2e-3)) { if (bad < 3) printf("  decode (b%d h%d d%d) %g vs %g\n", b, h, d, x, ref); ++bad; } } }
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t; 
  for (int rep = 0; rep < 10; ++rep) { float ms; CK(cudaEventRecord(e0)); iris_flash_decode_partial_bf16_d128<<<dim3(chunks, Hkv, B), IRIS_FLASH_DECODE_THREADS>>>(pa); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); double gb = 2.0 * B * Hkv * double(L) * D * 2 / 1e9;
  printf("decode B=%d Hq=%d Hkv=%d L=%d chunk=%d: %s (fused vs partial+combine differing bits %ld); partial %.1f us = %.0f GB/s\n", B, Hq, Hkv, L, chunk, bad ? "FAIL" : "ok", diff, t[5] * 1e3, gb / (t[5] * 1e-3));
  cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(o1); cudaFree(o2); cudaFree(part); cudaFree(heap);
}

int main() {
  ring<false>(4, 2, 1024, true); ring<true>(4, 2, 1024, true);
  ring<false>(32, 8, 16384, false); ring<true>(32, 8, 16384, false);
  decode(2, 8, 2, 3000, 512, true); decode(1, 32, 8, 8192, 1024, true);
  decode(1, 32, 8, 16384, 512, false); decode(1, 32, 8, 262144, 1024, false); decode(8, 32, 8, 262144, 1024, false);
  return 0;
}
