// WorkerClient: the tuner's side of the evaluation worker (tgemm-worker), a separate
// process that owns the GPU. A kernel that faults or hangs kills only the worker: the
// client records `crashed` / `timeout`, starts a fresh worker and carries on.
// The tuner process itself never initialises CUDA and starts workers with posix_spawn.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

struct TimingOptions {
  int warmup_runs = 3;
  int min_runs = 10;         // timed runs before the median may be called stable
  int max_runs = 200;
  double max_ms = 2000;      // stop timing one kernel after this much GPU time
  double stable_rel = 0.01;  // stop when a batch moves the median by less than this
};

// cuBLAS (FP32, no TF32) on a prepared problem, timed like the kernels.
struct CublasTiming {
  bool ok = false;
  std::string error;
  double min_us = 0, median_us = 0, max_us = 0;
  int runs = 0;
};

// The tuned kernel and cuBLAS timed interleaved in one loop (same clock, same inputs).
struct Comparison {
  bool ok = false;
  std::string error;
  double tgemm_median_us = 0, cublas_median_us = 0;
  int runs = 0;
};

class WorkerClient {
 public:
  // worker_path: the tgemm-worker executable; timeout: the watchdog for one request.
  WorkerClient(std::string worker_path, int device, std::chrono::milliseconds timeout,
               TimingOptions timing = {});
  ~WorkerClient();  // asks the worker to quit, then reaps it
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // The GPU the worker sees, or nullopt with `why` set ("no CUDA driver/device", ...).
  std::optional<DeviceInfo> probe_device(std::string* why);

  // Allocates fresh random inputs for the problem, computes the reference and times cuBLAS.
  // Later evaluate/compare calls use this problem (re-prepared after a worker restart).
  CublasTiming prepare_problem(const Problem& problem);

  // Loads the cubin, verifies against the reference (poisoned C, NaN check, error bound)
  // and, when correct, times it. Never throws for a bad kernel: the status says what happened.
  TrialResult evaluate(const KernelConfig& config, const CompiledKernel& kernel);

  Comparison compare(const KernelConfig& config, const CompiledKernel& kernel);

  int restarts() const { return restarts_; }

 private:
  std::string worker_path_;
  int device_;
  std::chrono::milliseconds timeout_;
  TimingOptions timing_;
  std::optional<Problem> problem_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  int restarts_ = 0;
};

}  // namespace tgemm
