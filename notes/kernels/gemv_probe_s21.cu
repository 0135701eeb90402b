// Session 21 probe (notes, not product): times cubins of the GEMV family's loop along L (and
// variants that leave one stage out) on C (M x N) = A (M x K) * B (K x N), row-major, beta = 0,
// interleaved, the L2 cleaned by a 256 MB read before each run, medians of 50 runs; a plain
// grid-stride read of B ("read") is the streaming ceiling of the same run.
// Build (here, no GPU needed), with gemv_simt_probe_variants_s21.patch applied to a copy of the
// template as gemv_hooked.cuh and kern.cu holding `#include "gemv_hooked.cuh"`:
//   nvcc -cubin -arch=sm_90 -std=c++17 -O3 -I kernel_templates -I <dir> -DSIDE=0 -DROWS=16 \
//     -DVEC=4 -DWARPS=4 -DKB=256 -DLW=1 -DSPLIT_MODE=0 -DPREFETCH=1 -DSTAGES=0 -DKLANES=32 \
//     -DCLUSTER=1 [-DPROBE_NO_FMA -DPROBE_NO_EMIT -DPROBE_NO_W -DPROBE_EARLY_READY -DCW=2 -DRW=2] \
//     -o C1.cubin kern.cu
//   nvcc -O2 -std=c++17 -arch=sm_90 -I kernel_templates gemv_probe_s21.cu -o probe
// Usage: probe M N K cubin:label:tile_l:kb:smem:threads ... [read:read:0:0:0:0]
// (tile_l: the strip of N one block covers; smem: its dynamic shared memory bytes.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/gemm_params.h"

#include "probe_common.cuh"

static std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), {});
}

int main(int argc, char** argv) {
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  std::vector<float> ha(size_t(m) * k), hb(size_t(k) * n), hc(size_t(m) * n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : ha) v = dist(rng);
  for (auto& v : hb) v = dist(rng);
  std::vector<double> ref(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] += double(ha[size_t(i) * k + kk]) * hb[size_t(kk) * n + j];
  float *a, *b, *c, *sink;
  char* flush;
  const size_t flush_bytes = size_t(256) << 20;
  CK(cudaMalloc(&a, ha.size() * 4));
  CK(cudaMalloc(&b, hb.size() * 4));
  CK(cudaMalloc(&c, hc.size() * 4));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(flush, 0, flush_bytes));
  CK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const double bytes = 4.0 * (double(m) * k + double(k) * n + double(m) * n);

  struct Entry {
    std::string label;
    cudaLibrary_t lib = nullptr;
    const void* fn = nullptr;
    dim3 grid, block;
    int smem = 0;
    std::vector<float> times;
  };
  std::vector<Entry> entries;
  for (int i = 4; i < argc; ++i) {
    // cubin:label:tile_l:kb:smem:threads
    std::string s = argv[i];
    std::vector<std::string> f;
    size_t pos;
    while ((pos = s.find(':')) != std::string::npos) { f.push_back(s.substr(0, pos)); s = s.substr(pos + 1); }
    f.push_back(s);
    Entry e;
    e.label = f[1];
    if (f[0] != "read") {
      const std::vector<char> bin = read_file(f[0]);
      CK(cudaLibraryLoadData(&e.lib, bin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      cudaKernel_t kern;
      CK(cudaLibraryGetKernel(&kern, e.lib, "gemv_simt"));
      e.fn = reinterpret_cast<const void*>(kern);
      const int tile_l = std::atoi(f[2].c_str()), kb = std::atoi(f[3].c_str());
      e.smem = std::atoi(f[4].c_str());
      e.grid = dim3((n + tile_l - 1) / tile_l, k > kb ? (k + kb - 1) / kb : 1);
      e.block = dim3(std::atoi(f[5].c_str()));
      CK(cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, e.smem));
    }
    entries.push_back(std::move(e));
  }
  tgemm::GemmParams p{};
  p.a = a; p.b = b; p.c = c;
  p.lda = k; p.ldb = n; p.ldc = n;
  p.m = m; p.n = n; p.k = k;
  p.alpha = 1.0f; p.beta = 0.0f;
  p.c_aligned16 = 1;
  auto launch = [&](Entry& e) {
    if (!e.fn) {
      read_all<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(b), size_t(k) * n / 4, sink);
      return;
    }
    void* args[] = {&p};
    CK(cudaLaunchKernel(e.fn, e.grid, e.block, args, e.smem, 0));
  };
  // Correctness (garbage is fine for the variants that leave a stage out: printed, not checked).
  for (auto& e : entries) {
    if (!e.fn) continue;
    CK(cudaMemset(c, 0, hc.size() * 4));
    launch(e);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < hc.size(); ++i) { num += (hc[i] - ref[i]) * (hc[i] - ref[i]); den += ref[i] * ref[i]; }
    std::printf("check %-28s rel_error %.2e grid %ux%u block %u smem %d\n", e.label.c_str(),
                std::sqrt(num / den), e.grid.x, e.grid.y, e.block.x, e.smem);
  }
  // Interleaved rounds: every entry once per round, L2 flushed before each run.
  const int rounds = std::getenv("PROBE_ROUNDS") ? std::atoi(std::getenv("PROBE_ROUNDS")) : 60;
  for (int round = 0; round < rounds; ++round)
    for (auto& e : entries) {
      read_all<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(flush), flush_bytes / 16, sink);  // clean L2
      CK(cudaEventRecord(e0));
      launch(e);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (round >= rounds / 6) e.times.push_back(ms * 1000.f);
    }
  std::printf("%-30s %9s %9s %9s %7s\n", "label", "median", "min", "p90", "%copy");
  for (auto& e : entries) {
    std::sort(e.times.begin(), e.times.end());
    const float med = e.times[e.times.size() / 2];
    std::printf("%-30s %9.2f %9.2f %9.2f %7.1f\n", e.label.c_str(), med, e.times[0],
                e.times[e.times.size() * 9 / 10], 100.0 * bytes / (med * 1e-6) / 4.26e12);
  }
  return 0;
}
