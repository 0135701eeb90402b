// InterleavedTimer: times GPU work the way every tgemm measurement does. CUDA events around
// each launch, a hook before each run outside the events (reset C, flush L2), warm-up, then
// batches until every launcher's median is stable. Several launchers run interleaved
// (one run of each in turn), so tgemm and cuBLAS see the same clock and the same GPU state.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/cuda/cuda_event.h"
#include "src/cuda/cuda_library.h"
#include "src/cuda/device_buffer.h"
#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

struct TimingStats {
  double min_us = 0, median_us = 0, max_us = 0;
  int runs = 0;
};

// Enqueues one run on the timer's stream; returns "" or what went wrong.
using Launcher = std::function<std::string()>;

class InterleavedTimer {
 public:
  // `before_each` runs before every launch, outside its events (may be empty).
  InterleavedTimer(cudaStream_t stream, std::function<void()> before_each);

  // `estimate_ms`: one round of all launchers, to size warm-up and batches. Returns "" and
  // one TimingStats per launcher, or the first error.
  std::string time(const std::vector<Launcher>& launchers, double estimate_ms,
                   const TimingOptions& options, std::vector<TimingStats>* stats);

 private:
  std::string rounds(const std::vector<Launcher>& launchers, int iterations, bool record,
                     std::vector<std::vector<double>>* samples_ms);
  CudaEvent& event(size_t i);

  cudaStream_t stream_;
  std::function<void()> before_each_;
  std::vector<CudaEvent> events_;
};

// Evicts everything from L2 by reading a buffer of twice its size (an NVRTC kernel, built
// once): problems that fit in L2 would otherwise be timed from the cache. Reading leaves L2
// full of clean lines. A flush that writes (a memset) leaves it dirty, and the timed kernel
// then pays for writing those lines back: a memory-bound kernel would be timed a fifth or
// more slower than it runs.
class L2Flusher {
 public:
  // The read kernel (`l2_flush_read`) for sm_<major><minor>, through NVRTC; no GPU needed.
  static std::vector<char> cubin(int major, int minor);

  explicit L2Flusher(int64_t l2_bytes);  // on the current device
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer buffer_;
  DeviceBuffer sink_;  // where the read kernel would store a sum nobody takes
  std::unique_ptr<CudaLibrary> library_;
  cudaKernel_t kernel_ = nullptr;
  int blocks_ = 0;
};

}  // namespace tgemm
