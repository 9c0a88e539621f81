// Native harness: two GPUs in one process with peer access; each fused GEMM + communication kernel
// against cuBLAS then NCCL on the same inputs (bits compared), timed in the same run.
#include <dlfcn.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "gemm_all_scatter.cu"
#include "gemm_reduce.cu"
#include "all_gather_gemm.cu"
#include "harness_common.cuh"

typedef int (*CublasGemmEx)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*, void*, int, int, int, int);
static CublasGemmEx gemmEx;
typedef int (*NcclAG)(const void*, void*, size_t, int, void*, cudaStream_t);
typedef int (*NcclAR)(const void*, void*, size_t, int, int, void*, cudaStream_t);
static NcclAG ncclAllGather; static NcclAR ncclAllReduce, ncclReduceScatter; static int (*ncclGroupStart)(); static int (*ncclGroupEnd)();


constexpr int W = 2;
struct Rank {
  int dev; cudaStream_t s; void* cublas; void* nccl; char* heap; size_t used = 0; size_t heap_bytes; iris::DeviceStatus* status; iris::Ctx ctx;
  cudaEvent_t e0, e1;
  void* alloc(size_t bytes) { void* p = heap + used; used += (bytes + 255) & ~size_t(255); if (used > heap_bytes) { printf("heap full\n"); exit(1);} return p; }
};
static Rank R[W];
static int sms;
static std::mt19937 rng(99);

static void fill_random(void* d, size_t n) { std::vector<uint16_t> h(n); std::uniform_real_distribution<float> U(-1, 1); for (auto& x : h) x = f2bf(U(rng)); CK(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice)); }
static std::vector<uint16_t> fetch(const void* d, size_t n) { std::vector<uint16_t> h(n); CK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost)); return h; }
static void cublas_nk(Rank& r, const void* A, const void* B, void* C, int m, int n, int k, int lda, int ldc) {
  float one = 1, zero = 0;
  int e = gemmEx(r.cublas, 1, 0, n, m, k, &one, B, 14, k, A, 14, lda, &zero, C, 14, ldc, 68, -1); if (e) { printf("cublas %d\n", e); exit(1);} }
static void sync_all() { for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaStreamSynchronize(r.s)); if (r.status->code) { printf("rank %d device status code %u site %d peer %d\n", r.ctx.rank, r.status->code, r.status->site, r.status->peer); exit(1);} } }

// Events on every rank around `enqueue`, which enqueues the work of all ranks (per rank, then a
// group call for NCCL); the max over ranks of each rep, median over reps.
template <class F>
static double time_all(F enqueue, int reps = 12) {
  std::vector<double> t;
  for (int i = 0; i < reps + 3; ++i) {
    sync_all();
    for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaEventRecord(r.e0, r.s)); }
    enqueue();
    for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaEventRecord(r.e1, r.s)); }
    sync_all();
    double mx = 0; for (auto& r : R) { float ms; CK(cudaEventElapsedTime(&ms, r.e0, r.e1)); mx = std::max(mx, (double)ms); }
    if (i >= 3) t.push_back(mx);
  }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
template <class F>
static double time_ms(F launch) { return time_all([&] { for (auto& r : R) { CK(cudaSetDevice(r.dev)); launch(r); } }); }
static int grid_for(int m, int n, int tile_n = 256) { return std::min(sms, ((m + 127) / 128) * ((n + tile_n - 1) / tile_n)); }
template <class K> static void set_smem(K k, int bytes) { for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaFuncSetAttribute((const void*)k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)); } }
constexpr int SMEM = IRIS_GEMM_HOOKS_SHARED_BYTES;
static uint64_t epoch = 0;

// A fused kernel's one argument (iris/abi/fused.h), with the fields every operation reads; the
// caller sets its operation's own (flags, partials, the gathered A). The bias stays null.
static iris_fused_args fused_args(const iris::Ctx& ctx, const TmaDescriptor& am, const TmaDescriptor& bm, void* c, int m,
                                  int n, int k, int ldc) {
  iris_fused_args f{};
  f.a_map = am; f.b_map = bm; f.ctx = ctx; f.c = c; f.epoch = epoch; f.m = m; f.n = n; f.k = k; f.ldc = ldc; f.group_m = 8; f.slices = 1;
  return f;
}
typedef void (*FusedKernel)(iris_fused_args);

static long compare(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, double rel, double abs_, long* diffbits) {
  long bad = 0; *diffbits = 0;
  for (size_t i = 0; i < a.size(); ++i) { if (a[i] != b[i]) ++*diffbits; double x = bf2f(a[i]), y = bf2f(b[i]); if (!(std::fabs(x - y) <= rel * std::fabs(y) + abs_)) { if (bad < 3) printf("   mismatch at %zu: %g vs %g\n", i, x, y); ++bad; } }
  return bad;
}
static void report(const char* op, int m, int n, int k, double fused, double base, double gemm, long bad, long diff, size_t total) {
  printf("%-16s %5dx%5dx%5d  fused %8.3f ms  cublas+nccl %8.3f ms  cublas alone %8.3f  speedup %5.3f  %s (differing bits %ld of %zu)\n", op, m, n, k, fused, base, gemm, base / fused, bad ? "FAIL" : "ok", diff, total);
}

static void reset_heaps() { for (auto& r : R) r.used = 0; }

static void all_scatter(const char* name, FusedKernel kern, int M, int N, int K) {
  reset_heaps(); epoch = 0; int nl = N / W; int tiles = ((M + 127) / 128) * ((nl + 255) / 256);
  std::vector<void*> A(W), B(W), C(W), Cl(W), G(W); std::vector<uint64_t*> H(W);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); int i = r.ctx.rank;
    A[i] = r.alloc(size_t(M) * K * 2); B[i] = r.alloc(size_t(nl) * K * 2); C[i] = r.alloc(size_t(M) * N * 2); Cl[i] = r.alloc(size_t(M) * nl * 2); G[i] = r.alloc(size_t(M) * N * 2);
    H[i] = (uint64_t*)r.alloc(tiles * 16); CK(cudaMemset(H[i], 0, tiles * 16));
    fill_random(B[i], size_t(nl) * K); }
  fill_random(A[0], size_t(M) * K); CK(cudaMemcpyPeer(A[1], 1, A[0], 0, size_t(M) * K * 2));
  set_smem(kern, SMEM);
  auto fused = [&](Rank& r) { int i = r.ctx.rank; if (i == 0) ++epoch; TmaDescriptor am = map2d(A[i], K, M, size_t(K) * 2, 64, 128), bm = map2d(B[i], K, nl, size_t(K) * 2, 64, 256);
    iris_fused_args f = fused_args(r.ctx, am, bm, C[i], M, nl, K, N); f.flags = H[i];
    kern<<<grid_for(M, nl), IRIS_GEMM_THREADS, SMEM, r.s>>>(f); CK(cudaGetLastError()); };
  double tf = time_ms(fused);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaMemset(C[r.ctx.rank], 0xFF, size_t(M) * N * 2)); }
  auto base = [&](Rank& r) { int i = r.ctx.rank; cublas_nk(r, A[i], B[i], Cl[i], M, nl, K, K, nl); };
  auto base_all = [&] { for (auto& q : R) { CK(cudaSetDevice(q.dev)); base(q); }
    ncclGroupStart(); for (auto& q : R) { CK(cudaSetDevice(q.dev)); ncclAllGather(Cl[q.ctx.rank], G[q.ctx.rank], size_t(M) * nl, 9, q.nccl, q.s);} ncclGroupEnd(); };
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); fused(r); } sync_all();
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); base(r); } sync_all();
  long bad = 0, diff = 0, d;
  for (int i = 0; i < W; ++i) { CK(cudaSetDevice(R[i].dev)); auto c = fetch(C[i], size_t(M) * N);
    for (int src = 0; src < W; ++src) { CK(cudaSetDevice(R[src].dev)); auto cl = fetch(Cl[src], size_t(M) * nl);
      std::vector<uint16_t> part(size_t(M) * nl); for (int row = 0; row < M; ++row) memcpy(&part[size_t(row) * nl], &c[size_t(row) * N + src * nl], nl * 2);
      bad += compare(part, cl, 1.0 / 64, 1e-2, &d); diff += d; } }
  double tb = time_all(base_all), tg = time_ms(base);
  report(name, M, N, K, tf, tb, tg, bad, diff, size_t(M) * N * W);
}

template <bool AR>
static void reduce_op(const char* name, FusedKernel kern, int M, int N, int K) {
  reset_heaps(); epoch = 0; int kl = K / W; int tiles_m = (M + 127) / 128, tiles_n = (N + 255) / 256; int rows_owner = (tiles_m + W - 1) / W * 128;
  std::vector<void*> A(W), B(W), C(W), P(W), O(W), WS(W); std::vector<uint64_t*> F(W);
  size_t cm = AR ? size_t(M) : size_t(M / W);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); int i = r.ctx.rank;
    A[i] = r.alloc(size_t(M) * kl * 2); B[i] = r.alloc(size_t(N) * kl * 2); C[i] = r.alloc(cm * N * 2); P[i] = r.alloc(size_t(M) * N * 2); O[i] = r.alloc(cm * N * 2);
    WS[i] = r.alloc(size_t(2 * W) * rows_owner * N * 2); F[i] = (uint64_t*)r.alloc(size_t(W + 1) * tiles_m * tiles_n * 2 * 8);
    fill_random(A[i], size_t(M) * kl); fill_random(B[i], size_t(N) * kl); CK(cudaMemset(F[i], 0, size_t(W + 1) * tiles_m * tiles_n * 16)); }
  set_smem(kern, SMEM);
  auto fused = [&](Rank& r) { int i = r.ctx.rank; if (i == 0) ++epoch; TmaDescriptor am = map2d(A[i], kl, M, size_t(kl) * 2, 64, 128), bm = map2d(B[i], kl, N, size_t(kl) * 2, 64, 256);
    iris_fused_args f = fused_args(r.ctx, am, bm, C[i], M, N, kl, N); f.partials = WS[i]; f.flags = F[i];
    kern<<<grid_for(M, N), IRIS_GEMM_THREADS, SMEM, r.s>>>(f); CK(cudaGetLastError()); };
  auto base = [&] { for (auto& q : R) { CK(cudaSetDevice(q.dev)); int j = q.ctx.rank; cublas_nk(q, A[j], B[j], P[j], M, N, kl, kl, N); }
    ncclGroupStart(); for (auto& q : R) { CK(cudaSetDevice(q.dev)); int j = q.ctx.rank;
      if (AR) ncclAllReduce(P[j], O[j], size_t(M) * N, 9, 0, q.nccl, q.s); else ncclReduceScatter(P[j], O[j], size_t(M / W) * N, 9, 0, q.nccl, q.s); } ncclGroupEnd(); };
  double tf = time_ms(fused);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); CK(cudaMemset(C[r.ctx.rank], 0xFF, cm * N * 2)); }
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); fused(r); } sync_all();
  base(); sync_all();
  long bad = 0, diff = 0, d;
  for (int i = 0; i < W; ++i) { CK(cudaSetDevice(R[i].dev)); auto c = fetch(C[i], cm * N), o = fetch(O[i], cm * N); bad += compare(c, o, 1.0 / 64, 2e-2, &d); diff += d; }
  double tb = time_all(base), tg = time_ms([&](Rank& q) { int j = q.ctx.rank; cublas_nk(q, A[j], B[j], P[j], M, N, kl, kl, N); });
  report(name, M, N, K, tf, tb, tg, bad, diff, cm * N * W);
}

// tile_n: 256, or 128 for the kernels the library runs where 128 x 256 tiles would not fill half of
// the SMs (FusedOp.tileN).
static void all_gather_gemm(int M, int N, int K, int tile_n) {
  reset_heaps(); epoch = 0; int nl = N / W, ms = M / W;
  size_t flags = fused::all_gather_flag_words(M, K, W, grid_for(M, nl, tile_n)) * 8;  // a push claim per block
  std::vector<void*> A(W), B(W), C(W), Ag(W), Cb(W); std::vector<uint64_t*> F(W);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); int i = r.ctx.rank;
    A[i] = r.alloc(size_t(M) * K * 2); B[i] = r.alloc(size_t(nl) * K * 2); C[i] = r.alloc(size_t(M) * nl * 2); Ag[i] = r.alloc(size_t(M) * K * 2); Cb[i] = r.alloc(size_t(M) * nl * 2);
    F[i] = (uint64_t*)r.alloc(flags); CK(cudaMemset(F[i], 0, flags));
    fill_random((char*)A[i] + size_t(i) * ms * K * 2, size_t(ms) * K); fill_random(B[i], size_t(nl) * K); CK(cudaMemset(C[i], 0xFF, size_t(M) * nl * 2)); }
  auto kern = tile_n == 128 ? iris_all_gather_gemm_n128_bf16_nk : iris_all_gather_gemm_bf16_nk;
  set_smem(kern, SMEM);
  auto fused = [&](Rank& r) { int i = r.ctx.rank; if (i == 0) ++epoch; TmaDescriptor am = map2d(A[i], K, M, size_t(K) * 2, 64, 128), bm = map2d(B[i], K, nl, size_t(K) * 2, 64, tile_n);
    iris_fused_args f = fused_args(r.ctx, am, bm, C[i], M, nl, K, nl); f.a = A[i]; f.flags = F[i];
    kern<<<grid_for(M, nl, tile_n), IRIS_GEMM_THREADS, SMEM, r.s>>>(f); CK(cudaGetLastError()); };
  auto base = [&] { ncclGroupStart(); for (auto& q : R) { CK(cudaSetDevice(q.dev)); int j = q.ctx.rank;
      ncclAllGather((char*)A[j] + size_t(j) * ms * K * 2, Ag[j], size_t(ms) * K, 9, q.nccl, q.s); } ncclGroupEnd(); for (auto& q : R) { CK(cudaSetDevice(q.dev)); cublas_nk(q, Ag[q.ctx.rank], B[q.ctx.rank], Cb[q.ctx.rank], M, nl, K, K, nl); } };
  double tf = time_ms(fused);
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); int i = r.ctx.rank; CK(cudaMemset(C[i], 0xFF, size_t(M) * nl * 2));
    for (int j = 0; j < W; ++j) if (j != i) CK(cudaMemset((char*)A[i] + size_t(j) * ms * K * 2, 0xFF, size_t(ms) * K * 2)); }
  for (auto& r : R) { CK(cudaSetDevice(r.dev)); fused(r); } sync_all();
  base(); sync_all();
  long bad = 0, diff = 0, d;
  for (int i = 0; i < W; ++i) { CK(cudaSetDevice(R[i].dev)); auto c = fetch(C[i], size_t(M) * nl), o = fetch(Cb[i], size_t(M) * nl); bad += compare(c, o, 1.0 / 64, 1e-2, &d); diff += d;
    auto a = fetch(A[i], size_t(M) * K), g = fetch(Ag[i], size_t(M) * K); long bd = compare(a, g, 0, 0, &d); if (bd) printf("   gathered A differs on rank %d: %ld\n", i, bd); bad += bd; }
  double tb = time_all(base);
  double tg = time_ms([&](Rank& q) { cublas_nk(q, Ag[q.ctx.rank], B[q.ctx.rank], Cb[q.ctx.rank], M, nl, K, K, nl); });
  report(tile_n == 128 ? "ag+gemm 128x128" : "ag+gemm 128x256", M, N, K, tf, tb, tg, bad, diff, size_t(M) * nl * W);
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  void* cb = dlopen("libcublas.so.13", RTLD_NOW); void* nc = dlopen("libnccl.so.2", RTLD_NOW);
  if (!cb || !nc) { printf("dlopen: %s\n", dlerror()); return 1; }
  gemmEx = (CublasGemmEx)dlsym(cb, "cublasGemmEx");
  ncclAllGather = (NcclAG)dlsym(nc, "ncclAllGather"); ncclAllReduce = (NcclAR)dlsym(nc, "ncclAllReduce"); ncclReduceScatter = (NcclAR)dlsym(nc, "ncclReduceScatter");
  ncclGroupStart = (int (*)())dlsym(nc, "ncclGroupStart"); ncclGroupEnd = (int (*)())dlsym(nc, "ncclGroupEnd");
  void* comms[W]; int devs[W] = {0, 1};
  int e = ((int (*)(void**, int, const int*))dlsym(nc, "ncclCommInitAll"))(comms, W, devs); if (e) { printf("nccl init %d\n", e); return 1; }
  size_t heap = size_t(3) << 30;
  for (int i = 0; i < W; ++i) { Rank& r = R[i]; r.dev = i; CK(cudaSetDevice(i)); CK(cudaDeviceEnablePeerAccess(1 - i, 0)); CK(cudaStreamCreate(&r.s));
    ((int (*)(void**))dlsym(cb, "cublasCreate_v2"))(&r.cublas); ((int (*)(void*, cudaStream_t))dlsym(cb, "cublasSetStream_v2"))(r.cublas, r.s);
    r.nccl = comms[i]; CK(cudaMalloc((void**)&r.heap, heap)); r.heap_bytes = heap; CK(cudaHostAlloc((void**)&r.status, sizeof(iris::DeviceStatus), cudaHostAllocMapped)); memset(r.status, 0, sizeof(iris::DeviceStatus));
    CK(cudaEventCreate(&r.e0)); CK(cudaEventCreate(&r.e1)); }
  for (int i = 0; i < W; ++i) { iris::Ctx& c = R[i].ctx; memset(&c, 0, sizeof c); c.rank = i; c.world = W; c.heap_size = heap; c.timeout_ns = 5000000000ull;
    iris::DeviceStatus* ds; CK(cudaHostGetDevicePointer((void**)&ds, R[i].status, 0)); c.status = ds; c.barrier_flags = (uint64_t*)R[i].heap; c.barrier_epoch = (uint64_t*)R[i].heap;
    for (int j = 0; j < W; ++j) c.bases[j] = (uint64_t)R[j].heap; }
  std::string which = argc > 1 ? argv[1] : "all";
  if (which == "all" || which == "as") { for (auto sh : {std::array<int, 3>{8192, 8192, 8192}, {8192, 4608, 36864}}) {
    all_scatter("as epilogue", iris_gemm_all_scatter_epilogue_bf16_nk, sh[0], sh[1], sh[2]); all_scatter("as spare_warps", iris_gemm_all_scatter_spare_warps_bf16_nk, sh[0], sh[1], sh[2]); } }
  if (which == "all" || which == "ar") { for (auto sh : {std::array<int, 3>{8192, 8192, 8192}, {4096, 4096, 4096}}) {
    reduce_op<true>("ar epilogue", iris_gemm_all_reduce_epilogue_bf16_nk, sh[0], sh[1], sh[2]); reduce_op<true>("ar spare_warps", iris_gemm_all_reduce_spare_warps_bf16_nk, sh[0], sh[1], sh[2]); } }
  if (which == "all" || which == "rs") { for (auto sh : {std::array<int, 3>{8192, 8192, 8192}, {8192, 4096, 12288}}) {
    reduce_op<false>("rs epilogue", iris_gemm_reduce_scatter_epilogue_bf16_nk, sh[0], sh[1], sh[2]); reduce_op<false>("rs spare_warps", iris_gemm_reduce_scatter_spare_warps_bf16_nk, sh[0], sh[1], sh[2]); } }
  // 1024 x 3584 x 8192 also with 128 x 256 tiles, for comparison: the library takes 128 x 128 there.
  if (which == "all" || which == "ag") { all_gather_gemm(8192, 8192, 8192, 256); all_gather_gemm(1024, 3584, 8192, 128); all_gather_gemm(1024, 3584, 8192, 256); }
  return 0;
}
