// Plain values the evaluator produces and the worker protocol carries: timing options and
// the cuBLAS timings. Kept apart from WorkerClient so the protocol need not include its client.
#pragma once

#include <optional>
#include <string>

namespace tgemm {

struct TimingOptions {
  int warmup_runs = 3;
  int min_runs = 10;  // timed runs before the median may be called stable
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
  // f32x3 problems: cuBLAS SGEMM's ||C - C64||_F / ||C64||_F against the FP64 reference on
  // the prepared inputs (what an f32x3 kernel must match); nullopt for other types.
  std::optional<double> sgemm_rel_error;
};

// The tuned kernel and cuBLAS timed interleaved in one loop (same clock, same inputs).
struct Comparison {
  bool ok = false;
  std::string error;
  double tgemm_median_us = 0, cublas_median_us = 0;
  int runs = 0;
};

}  // namespace tgemm
