// Plain values the evaluator produces and the worker protocol carries: timing options and
// the cuBLAS timings. Kept apart from WorkerClient so the protocol need not include its client.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/core/trial_result.h"

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
  // When asked (PrepareRequest::time_vendor): the vendor calls as contenders for the best
  // (src/core/vendor_call.h), each verified like a kernel and timed interleaved with the others
  // on the same clock: the cuBLAS call above, then cuBLASLt's top heuristic algorithms.
  std::vector<TrialResult> vendor_trials;
};

// The tuned kernel and cuBLAS timed interleaved in one loop (same clock, same inputs).
struct Comparison {
  bool ok = false;
  std::string error;
  double tgemm_median_us = 0, cublas_median_us = 0;
  int runs = 0;
};

// The device's measured roofs (the worker's "ceilings" answer); a rate of 0 was not reached.
struct CeilingMeasurements {
  bool ok = false;
  std::string error;            // why nothing (or not everything) was measured
  double copy_bytes_per_s = 0;  // device-to-device cudaMemcpyAsync, bytes read + written
  std::string copy_detail;
  double ffma_flops = 0;
  std::string ffma_source;  // "nvrtc_ffma_kernel", or "cublasSgemm" when NVRTC failed
  std::string ffma_detail;
  double f16_flops = 0, bf16_flops = 0, tf32_flops = 0;  // cublasGemmEx, the reached rate
  std::string tensor_detail;
};

// The rows of device_ceilings these measurements give (rates of 0 left out).
inline std::vector<DeviceCeiling> ceiling_rows(const CeilingMeasurements& m) {
  std::vector<DeviceCeiling> rows;
  if (m.copy_bytes_per_s > 0)
    rows.push_back({kCopyBandwidthCeiling, m.copy_bytes_per_s, "cudaMemcpyAsync", m.copy_detail});
  if (m.ffma_flops > 0) rows.push_back({kFfmaCeiling, m.ffma_flops, m.ffma_source, m.ffma_detail});
  for (auto [kind, value] :
       {std::pair{"f16", m.f16_flops}, {"bf16", m.bf16_flops}, {"tf32", m.tf32_flops}})
    if (value > 0) rows.push_back({kind, value, "cublasGemmEx", m.tensor_detail});
  return rows;
}

}  // namespace tgemm
