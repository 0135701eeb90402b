#include "tuner/evaluate/interleaved_timer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/cuda/cuda_check.h"
#include "tuner/evaluate/ceiling_probe.h"

namespace tgemm {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

TimingStats stats_of(const std::vector<double>& ms) {
  TimingStats s;
  if (ms.empty()) return s;
  s.min_us = *std::min_element(ms.begin(), ms.end()) * 1e3;
  s.max_us = *std::max_element(ms.begin(), ms.end()) * 1e3;
  s.median_us = median_of(ms) * 1e3;
  s.runs = int(ms.size());
  return s;
}
}  // namespace

InterleavedTimer::InterleavedTimer(cudaStream_t stream, std::function<void()> before_each)
    : stream_(stream), before_each_(std::move(before_each)) {}

CudaEvent& InterleavedTimer::event(size_t i) {
  while (events_.size() <= i) events_.emplace_back();
  return events_[i];
}

std::string InterleavedTimer::rounds(const std::vector<Launcher>& launchers, int iterations,
                                     bool record, std::vector<std::vector<double>>* samples_ms) {
  const size_t count = launchers.size();
  for (int it = 0; it < iterations; ++it)
    for (size_t l = 0; l < count; ++l) {
      if (before_each_) before_each_();
      const size_t e = 2 * (size_t(it) * count + l);
      if (record) event(e).record(stream_);
      std::string error = launchers[l]();
      if (!error.empty()) return error;
      if (record) event(e + 1).record(stream_);
    }
  const cudaError_t err = cudaStreamSynchronize(stream_);
  if (err != cudaSuccess)
    return fmt::format("while timing: {}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
  if (record)
    for (int it = 0; it < iterations; ++it)
      for (size_t l = 0; l < count; ++l) {
        const size_t e = 2 * (size_t(it) * count + l);
        (*samples_ms)[l].push_back(event(e + 1).elapsed_ms_since(event(e)));
      }
  return {};
}

std::string InterleavedTimer::time(const std::vector<Launcher>& launchers, double estimate_ms,
                                   const TimingOptions& t, std::vector<TimingStats>* stats) {
  const double est = std::max(estimate_ms, 1e-3);
  // Warm-up is capped at a quarter of the budget, so slow kernels do not double it.
  const int warmup =
      int(std::clamp(0.25 * t.max_ms / est, 0.0, double(std::max(0, t.warmup_runs))));
  if (warmup > 0) {
    std::string error = rounds(launchers, warmup, false, nullptr);
    if (!error.empty()) return error;
  }
  std::vector<std::vector<double>> samples(launchers.size());
  std::vector<double> previous(launchers.size(), -1);
  const int max_runs = std::max(1, t.max_runs);
  int runs = 0, batch = std::max(1, std::min(t.min_runs, max_runs));
  double total_ms = 0, per_round = est;
  for (;;) {
    const int affordable =
        int(std::clamp((t.max_ms - total_ms) / per_round, 0.0, double(max_runs)));
    if (runs > 0 && affordable < 1) break;
    const int n = std::max(1, std::min({batch, max_runs - runs, std::max(affordable, 1)}));
    const size_t before = samples[0].size();
    std::string error = rounds(launchers, n, true, &samples);
    if (!error.empty()) return error;
    for (const auto& v : samples)
      for (size_t i = before; i < v.size(); ++i) total_ms += v[i];
    runs += n;
    per_round = std::max(total_ms / runs, 1e-3);
    if (runs >= max_runs || total_ms >= t.max_ms) break;
    bool stable = runs >= t.min_runs;
    for (size_t l = 0; l < samples.size(); ++l) {
      const double median = median_of(samples[l]);
      if (previous[l] <= 0 || std::abs(median - previous[l]) > t.stable_rel * previous[l])
        stable = false;
      previous[l] = median;
    }
    if (stable) break;
    batch = std::max(1, t.min_runs / 2);
  }
  stats->clear();
  for (const auto& v : samples) stats->push_back(stats_of(v));
  return {};
}

namespace {

// Every thread reads float4s a grid-stride apart; the store nobody takes keeps the loads.
constexpr const char* kFlushSource = R"cuda(
extern "C" __global__ void l2_flush_read(const float4* p, unsigned long long n, float* sink) {
  float s = 0.0f;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) {
    const float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == -1.2345f) *sink = s;
}
)cuda";

}  // namespace

std::vector<char> L2Flusher::cubin(int major, int minor) {
  return probe_cubin(kFlushSource, "l2_flush_read.cu", major, minor);
}

L2Flusher::L2Flusher(int64_t l2_bytes)
    : buffer_(size_t(std::max<int64_t>(l2_bytes, int64_t(1) << 20)) * 2), sink_(sizeof(float)) {
  int device = 0;
  TGEMM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  TGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  TGEMM_CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));  // defined values, once
  library_ = std::make_unique<CudaLibrary>(cubin(prop.major, prop.minor));
  kernel_ = library_->kernel("l2_flush_read");
  blocks_ = prop.multiProcessorCount * 8;
}

void L2Flusher::flush(cudaStream_t stream) {
  const void* p = buffer_.get();
  unsigned long long n = buffer_.bytes() / 16;
  float* sink = sink_.get<float>();
  void* args[] = {&p, &n, &sink};
  TGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks_),
                                    dim3(256), args, 0, stream));
}

}  // namespace tgemm
