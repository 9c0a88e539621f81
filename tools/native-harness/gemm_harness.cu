// Native harness: the GEMM against a CPU double reference (small, ragged shapes) and against cuBLAS
// (large shapes: same-run timing, CUDA events, median of 30 after 5 warm-ups, rotating inputs).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "gemm.cu"
#include "harness_common.cuh"

struct Problem { int m, n, k; bool kn; };

template <bool KN>
static void launch(const TmaDescriptor& a, const TmaDescriptor& b, void* c, const void* bias, int m, int n, int k, int grid, int group, cudaStream_t s) {
  using Cfg = iris::gemm::Config<bf16, KN ? BLayout::kn : BLayout::nk, bf16>;
  void (*fn)(iris_gemm_args) = KN ? iris_gemm_bf16_kn_bf16 : iris_gemm_bf16_nk_bf16;
  static bool set = false;
  if (!set) { CK(cudaFuncSetAttribute((const void*)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, IRIS_GEMM_SHARED_BYTES)); set = true; }
  iris_gemm_args args{};  // iris/abi/gemm.h: the kernel's one argument
  args.a_map = a; args.b_map = b; args.c = c; args.bias = bias; args.m = m; args.n = n; args.k = k; args.ldc = n; args.group_m = group;
  args.alpha = 1; args.beta = 0;  // the plain product: a zeroed alpha would scale it to 0
  args.c_map = map_output(c, m, n);  // the epilogue's TMA stores
  fn<<<grid, Cfg::kThreads, IRIS_GEMM_SHARED_BYTES, s>>>(args);
  CK(cudaGetLastError());
}

static int sms;
static void run_bf16(const Problem& p, const void* A, const void* B, void* C, const void* bias, int group, cudaStream_t s) {
  TmaDescriptor am = map2d(A, p.k, p.m, uint64_t(p.k) * 2, 64, 128);
  TmaDescriptor bm = p.kn ? map2d(B, p.n, p.k, uint64_t(p.n) * 2, 64, 64) : map2d(B, p.k, p.n, uint64_t(p.k) * 2, 64, 256);
  int tiles = ((p.m + 127) / 128) * ((p.n + 255) / 256);
  int grid = std::min(tiles, sms);
  if (p.kn) launch<true>(am, bm, C, bias, p.m, p.n, p.k, grid, group, s);
  else launch<false>(am, bm, C, bias, p.m, p.n, p.k, grid, group, s);
}

int main(int argc, char** argv) {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const Cublas cublas = Cublas::load();
  const bool handle = cublas.handle != nullptr;
  cudaStream_t s; CK(cudaStreamCreate(&s));
  if (handle) cublas.set_stream(s);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> U(-1, 1);
  int fails = 0;
  // ---- correctness vs CPU double on small / ragged shapes
  std::vector<Problem> small = {{1, 8, 8, false}, {200, 136, 72, false}, {129, 264, 520, false}, {300, 520, 1000, false},
                                {1, 8, 8, true}, {200, 136, 72, true}, {129, 264, 520, true}, {300, 520, 1000, true},
                                {256, 512, 128, false}, {256, 512, 128, true}};
  for (auto p : small) {
    for (int withBias = 0; withBias < 2; ++withBias) {
    size_t na = size_t(p.m) * p.k, nb = size_t(p.k) * p.n, nc = size_t(p.m) * p.n;
    std::vector<uint16_t> a(na), b(nb), c(nc), bias(p.n);
    for (auto& x : a) x = f2bf(U(rng));
    for (auto& x : b) x = f2bf(U(rng));
    for (auto& x : bias) x = f2bf(U(rng));
    void *dA, *dB, *dC, *dBias;
    CK(cudaMalloc(&dA, na * 2)); CK(cudaMalloc(&dB, nb * 2)); CK(cudaMalloc(&dC, nc * 2)); CK(cudaMalloc(&dBias, p.n * 2));
    CK(cudaMemcpy(dA, a.data(), na * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b.data(), nb * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dBias, bias.data(), p.n * 2, cudaMemcpyHostToDevice));
    CK(cudaMemset(dC, 0xFF, nc * 2));
    run_bf16(p, dA, dB, dC, withBias ? dBias : nullptr, 8, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(c.data(), dC, nc * 2, cudaMemcpyDeviceToHost));
    double worst = 0; long bad = 0;
    for (int i = 0; i < p.m; ++i) for (int j = 0; j < p.n; ++j) {
      double ref = withBias ? bf2f(bias[j]) : 0, mag = std::fabs(ref);
      for (int kk = 0; kk < p.k; ++kk) {
        double av = bf2f(a[size_t(i) * p.k + kk]);
        double bv = p.kn ? bf2f(b[size_t(kk) * p.n + j]) : bf2f(b[size_t(j) * p.k + kk]);
        ref += av * bv; mag += std::fabs(av * bv);
      }
      double got = bf2f(c[size_t(i) * p.n + j]);
      double tol = std::ldexp(1.0, -8) * std::fabs(ref) + p.k * std::ldexp(1.0, -22) * mag + 1e-30;
      double err = std::fabs(got - ref);
      if (!(err <= tol)) { if (bad < 3) printf("  mismatch (%d,%d) got %g ref %g\n", i, j, got, ref); ++bad; }
      worst = std::max(worst, err / tol);
    }
    printf("check %5d x %5d x %5d %s bias=%d: %s (worst err/tol %.3f, bad %ld)\n", p.m, p.n, p.k, p.kn ? "kn" : "nk", withBias, bad ? "FAIL" : "ok", worst, bad);
    fails += bad != 0;
    cudaFree(dA); cudaFree(dB); cudaFree(dC); cudaFree(dBias);
    }
  }
  // ---- timing vs cuBLAS
  std::vector<Problem> big = {{8192, 8192, 8192, false}, {8192, 8192, 8192, true}, {8192, 8192, 4096, false},
                              {8192, 4608, 36864, false}, {4096, 4096, 4096, false}, {1024, 8192, 8192, false}};
  int group = argc > 1 ? atoi(argv[1]) : 8;
  printf("%-22s %9s %9s %9s %7s  %s\n", "shape", "iris ms", "cublas ms", "iris TF", "ratio", "check");
  for (auto p : big) {
    size_t na = size_t(p.m) * p.k, nb = size_t(p.k) * p.n, nc = size_t(p.m) * p.n;
    int sets = (na + nb) * 2 < (size_t)150 << 20 ? 3 : 1;
    std::vector<void*> A(sets), B(sets);
    std::vector<uint16_t> h(std::max(na, nb));
    for (int i = 0; i < sets; ++i) {
      CK(cudaMalloc(&A[i], na * 2)); CK(cudaMalloc(&B[i], nb * 2));
      for (size_t j = 0; j < na; ++j) h[j] = f2bf(U(rng));
      CK(cudaMemcpy(A[i], h.data(), na * 2, cudaMemcpyHostToDevice));
      for (size_t j = 0; j < nb; ++j) h[j] = f2bf(U(rng));
      CK(cudaMemcpy(B[i], h.data(), nb * 2, cudaMemcpyHostToDevice));
    }
    void *C1, *C2; CK(cudaMalloc(&C1, nc * 2)); CK(cudaMalloc(&C2, nc * 2));
    CK(cudaMemset(C1, 0xFF, nc * 2)); CK(cudaMemset(C2, 0xFF, nc * 2));
    run_bf16(p, A[0], B[0], C1, nullptr, group, s);
    if (handle) cublas.gemm_bf16(p.m, p.n, p.k, p.kn, A[0], B[0], C2);
    CK(cudaStreamSynchronize(s));
    std::vector<uint16_t> c1(nc), c2(nc);
    CK(cudaMemcpy(c1.data(), C1, nc * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c2.data(), C2, nc * 2, cudaMemcpyDeviceToHost));
    long bad = 0; double worst = 0;
    for (size_t i = 0; i < nc; ++i) {
      double x = bf2f(c1[i]), y = bf2f(c2[i]);
      double tol = std::ldexp(1.0, -7) * std::fabs(y) + std::sqrt((double)p.k) * 4 * std::ldexp(1.0, -8);
      double err = std::fabs(x - y);
      if (!(err <= tol)) ++bad;
      worst = std::max(worst, err / tol);
    }
    fails += bad != 0;
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> ti, tc;
    for (int rep = 0; rep < 35; ++rep) {
      int i = rep % sets; float ms;
      CK(cudaEventRecord(e0, s)); run_bf16(p, A[i], B[i], C1, nullptr, group, s); CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 5) ti.push_back(ms);
      if (handle) {
        CK(cudaEventRecord(e0, s)); cublas.gemm_bf16(p.m, p.n, p.k, p.kn, A[i], B[i], C2); CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 5) tc.push_back(ms);
      }
    }
    std::sort(ti.begin(), ti.end()); std::sort(tc.begin(), tc.end());
    double mi = ti[ti.size() / 2], mc = tc.empty() ? 0 : tc[tc.size() / 2];
    double tf = 2.0 * p.m * p.n * p.k / (mi * 1e-3) / 1e12;
    char name[64]; snprintf(name, 64, "%dx%dx%d %s", p.m, p.n, p.k, p.kn ? "kn" : "nk");
    printf("%-22s %9.3f %9.3f %9.1f %7.3f  %s (bad %ld, worst %.2f)\n", name, mi, mc, tf, mc / mi, bad ? "FAIL" : "ok", bad, worst);
    for (auto x : A) cudaFree(x); for (auto x : B) cudaFree(x); cudaFree(C1); cudaFree(C2);
  }
  printf(fails ? "FAILURES: %d\n" : "all checks ok\n", fails);
  return fails != 0;
}
