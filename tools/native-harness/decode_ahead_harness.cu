// Flash-decode's L2 prefetch distance: the fused kernel (world 1) and the standalone partial kernel
// at the attention benchmark's ten decode points, built once per distance. build.sh compiles this
// file against copies of flash_decode.cu whose kAheadPasses it rewrites (FLASH_DECODE_SOURCE names
// the copy, VARIANT labels the output). The fused output is compared with partial + combine bit
// for bit; `decode_ahead_harness copy` first times a 2 GiB device-to-device copy (the floor's
// bandwidth); SWEEP=1 times chunk lengths 256..1024 at four points instead.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
#include FLASH_DECODE_SOURCE
#include "harness_common.cuh"

static float median(std::vector<float> t) { std::sort(t.begin(), t.end()); return t[t.size() / 2]; }

static void* kv_pool;       // random K/V of every point, filled once
static size_t kv_pool_bytes;

static void point(int B, int L, int chunk) {
  const int Hq = 32, Hkv = 8, D = 128, G = Hq / Hkv, chunks = (L + chunk - 1) / chunk;
  const size_t nkv = size_t(B) * Hkv * L * D;
  if (nkv * 4 > kv_pool_bytes) { printf("point B%d L%d needs more than the K/V pool\n", B, L); exit(1); }
  void* dk = kv_pool;
  void* dv = static_cast<char*>(kv_pool) + nkv * 2;
  std::mt19937 rng(B * 7 + L);
  auto q = random_normal_bf16(size_t(B) * Hq * D, rng);
  void *dq, *o_fused, *o_parts;
  CK(cudaMalloc(&dq, q.size() * 2));
  CK(cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&o_fused, q.size() * 2));
  CK(cudaMalloc(&o_parts, q.size() * 2));
  const size_t np = size_t(B) * Hkv * chunks * G * (D + 4);
  float* part;
  CK(cudaMalloc(&part, np * 4));
  // World-1 heap of the fused kernel: two sets of partials, two of counters, the claims.
  const size_t heap_bytes = 2 * np * 4 + (2 * size_t(B) * Hkv + size_t(B) * Hkv * chunks) * 8;
  char* heap;
  CK(cudaMalloc(&heap, heap_bytes));
  CK(cudaMemset(heap, 0, heap_bytes));
  iris::DeviceStatus* st;
  CK(cudaHostAlloc((void**)&st, sizeof(iris::DeviceStatus), cudaHostAllocMapped));
  memset(st, 0, sizeof *st);
  iris::Ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.rank = 0; ctx.world = 1; ctx.heap_size = heap_bytes; ctx.timeout_ns = 2000000000ull; ctx.bases[0] = (uint64_t)heap;
  CK(cudaHostGetDevicePointer((void**)&ctx.status, st, 0));
  iris_flash_decode_args fa{};
  fa.ctx = ctx; fa.q = dq; fa.k = dk; fa.v = dv; fa.o = o_fused; fa.partials = heap; fa.arrived = heap + 2 * np * 4;
  fa.b = B; fa.hq = Hq; fa.hkv = Hkv; fa.len = L; fa.chunk_len = chunk; fa.scale_log2 = 1.f / std::sqrt(128.f) * 1.4426950408889634f;
  iris_flash_decode_args pa = fa;
  pa.partials = part; pa.o = o_parts; pa.world = 1; pa.slot_chunks = chunks;
  uint64_t epoch = 0;
  auto fused = [&] { fa.epoch = ++epoch; iris_flash_decode_bf16_d128<<<dim3(chunks, Hkv, B), IRIS_FLASH_DECODE_THREADS>>>(fa); };
  auto partial = [&] { iris_flash_decode_partial_bf16_d128<<<dim3(chunks, Hkv, B), IRIS_FLASH_DECODE_THREADS>>>(pa); };
  auto combine = [&] { iris_flash_decode_combine_bf16_d128<<<dim3(Hkv, B, G), IRIS_FLASH_DECODE_THREADS>>>(pa); };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time = [&](auto&& f) {
    for (int r = 0; r < 3; ++r) f();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0, reps = size_t(B) * L > 1000000 ? 15 : 40; r < reps; ++r) {
      float ms;
      CK(cudaEventRecord(e0)); f(); CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1)); CK(cudaGetLastError()); CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1e3f);
    }
    return median(t);
  };
  const float t_fused = time(fused), t_partial = time(partial), t_both = time([&] { partial(); combine(); });
  if (st->code) { printf("device status %u\n", st->code); exit(1); }
  CK(cudaMemset(o_fused, 0xFF, q.size() * 2));  // poisoned: a call that writes nothing differs everywhere
  CK(cudaMemset(o_parts, 0xFF, q.size() * 2));
  fused(); partial(); combine();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<uint16_t> a(q.size()), b(q.size());
  CK(cudaMemcpy(a.data(), o_fused, a.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), o_parts, b.size() * 2, cudaMemcpyDeviceToHost));
  long differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i] || a[i] == 0xFFFF;
  const double kv_bytes = 2.0 * nkv * 2;
  printf("%s B%d L%-7d chunk %4d x %4d: fused %8.1f  partial %8.1f  partial+combine %8.1f us | fused %5.0f partial %5.0f GB/s | %s\n",
         VARIANT, B, L, chunks, chunk, t_fused, t_partial, t_both, kv_bytes / t_fused / 1e3, kv_bytes / t_partial / 1e3,
         differ ? "FAIL: fused differs from partial + combine" : "ok");
  CK(cudaFree(dq)); CK(cudaFree(o_fused)); CK(cudaFree(o_parts)); CK(cudaFree(part)); CK(cudaFree(heap)); CK(cudaFreeHost(st));
  CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
}

int main(int argc, char** argv) {
  kv_pool_bytes = size_t(34) << 30;  // the largest point, batch 8 at 512K tokens: 16 GiB of K and of V
  CK(cudaMalloc(&kv_pool, kv_pool_bytes));
  {
    std::mt19937 rng(3);
    auto block = random_normal_bf16(size_t(1) << 24, rng);
    const size_t elements = kv_pool_bytes / 2;
    for (size_t off = 0; off < elements; off += block.size())
      CK(cudaMemcpy(static_cast<uint16_t*>(kv_pool) + off, block.data(), std::min(block.size(), elements - off) * 2, cudaMemcpyHostToDevice));
  }
  if (argc > 1 && std::string(argv[1]) == "copy") {
    const size_t n = size_t(2) << 30;
    void* dst;
    CK(cudaMalloc(&dst, n));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = 0; r < 12; ++r) {
      float ms;
      CK(cudaEventRecord(e0)); CK(cudaMemcpyAsync(dst, kv_pool, n, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 2) t.push_back(ms * 1e3f);
    }
    printf("copy 2 GiB: %.1f us, %.0f GB/s read+write\n", median(t), 2.0 * n / median(t) / 1e3);
    CK(cudaFree(dst));
  }
  if (getenv("SWEEP")) {
    const int points[][2] = {{1, 32768}, {1, 131072}, {1, 524288}, {8, 32768}};
    for (auto& p : points)
      for (int c = 256; c <= 1024; c += 64) point(p[0], p[1], c);
    return 0;
  }
  // The benchmark's points with the chunk lengths FlashDecodeProblem.defaultChunkLen takes on 132 SMs.
  const int points[][3] = {{1, 32768, 448}, {1, 65536, 832}, {1, 131072, 832}, {1, 262144, 832}, {1, 524288, 960},
                           {8, 32768, 832}, {8, 65536, 640}, {8, 131072, 1024}, {8, 262144, 1024}, {8, 524288, 1024}};
  for (auto& p : points) point(p[0], p[1], p[2]);
  return 0;
}
