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
#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

struct WorkerRequestOutcome;  // worker_client.cpp: an answer, or how the worker failed

// Not thread-safe: one client per thread (one worker, one GPU, one request at a time).
class WorkerClient {
 public:
  // worker_path: the tgemm-worker executable; timeout: the watchdog for one request.
  // probe_device and prepare_problem wait at least kSlowRequestTimeout (CUDA start-up,
  // allocation, reference GEMM). `timing.max_ms` must leave room inside `timeout`.
  // Throws Error naming the path when it is not an executable file.
  WorkerClient(std::string worker_path, int device, std::chrono::milliseconds timeout,
               TimingOptions timing = {});
  ~WorkerClient();  // asks the worker to quit, then reaps it
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // The GPU the worker sees, or nullopt with `why` set ("no CUDA driver/device", ...).
  std::optional<DeviceInfo> probe_device(std::string* why);

  // Allocates fresh random inputs for the problem, computes the reference and times cuBLAS.
  // Later evaluate/compare calls use this problem (re-prepared after a worker restart).
  // time_vendor: the vendor calls as contenders too (CublasTiming::vendor_trials).
  CublasTiming prepare_problem(const Problem& problem, bool time_vendor = false);

  // Loads the cubin, verifies against the reference (poisoned C, NaN check, error bound)
  // and, when correct, times it. Never throws for a bad kernel: the status says what happened.
  // cutoff_us > 0: a kernel slower than that on two warm runs is reported with the faster
  // (runs == 2) instead of being timed in full.
  TrialResult evaluate(const KernelConfig& config, const CompiledKernel& kernel,
                       double cutoff_us = 0);

  Comparison compare(const KernelConfig& config, const CompiledKernel& kernel);

  // The device's copy bandwidth and peak rates (a few seconds of GPU time; no problem needed).
  CeilingMeasurements measure_ceilings();

  int restarts() const { return restarts_; }

  static constexpr std::chrono::milliseconds kSlowRequestTimeout{120000};

 private:
  std::string worker_path_;
  int device_;
  std::chrono::milliseconds timeout_;
  TimingOptions timing_;
  std::optional<Problem> problem_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  int restarts_ = 0;
  bool started_before_ = false;  // a later start is a restart
  std::string temp_dir_;         // cubins travel to the worker as files in here

  void start_worker();
  // Ends the worker: closes its request pipe, waits up to `grace` for it to exit, then
  // SIGKILLs it; returns how it ended ("exited with status 1", "was killed by signal 9 ...").
  std::string stop_worker(std::chrono::milliseconds grace);
  std::string kill_worker();
  // Starts a worker when none runs (re-preparing the current problem), then exchange().
  // `payload` is an encoded request (worker_protocol.h); `kind` names it in errors.
  WorkerRequestOutcome request(const std::string& kind, const std::string& payload,
                               std::chrono::milliseconds timeout);
  // One request/answer on the running worker, under the watchdog.
  WorkerRequestOutcome exchange(const std::string& kind, const std::string& payload,
                                std::chrono::milliseconds timeout);
  std::string write_cubin(const CompiledKernel& kernel);
};

}  // namespace tgemm
