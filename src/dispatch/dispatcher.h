// Dispatcher: libtgemm's engine. Picks the kernel for a problem (KernelSelector), gets its
// cubin from the database (NVRTC only when the database has none), loads it once per
// device, caches the choice per problem and launches it; cuBLAS is the last resort.
// The cached path does no allocation, no SQL and no NVRTC.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/dispatch/kernel_selector.h"
#include "src/launch/gemm_kernel.h"
#include "src/launch/launch_plan.h"
#include "tgemm/tgemm.h"

namespace tgemm {

// Error kinds the C API maps to its status codes; C++ callers see them as tgemm::Error.
struct InvalidValueError : Error {
  using Error::Error;
};
struct NoDeviceError : Error {
  using Error::Error;
};
struct NotSupportedError : Error {
  using Error::Error;
};
struct ExecutionError : Error {
  using Error::Error;
};

struct DispatcherOptions {
  std::string db_path;                                 // empty: $TGEMM_DB, else "tgemm.db"
  std::optional<std::vector<DefaultKernel>> defaults;  // tests replace the shipped table
  bool cublas_fallback = true;
};

// The arguments of one GEMM call, as the C and C++ APIs receive them.
struct GemmCall {
  Op op_a = Op::N, op_b = Op::N;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  float* c = nullptr;
  int ldc = 0;
};

class Dispatcher {
 public:
  // Never throws for the database: a missing or corrupt one leaves defaults and cuBLAS,
  // and is logged once.
  explicit Dispatcher(DispatcherOptions options);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Throws Error for bad arguments (message names the argument), no device, or a failed launch.
  void sgemm(const GemmCall& call, cudaStream_t stream);
  // The path sgemm takes for this call (resolved and cached like sgemm does).
  Selection selection(const GemmCall& call);
  void set_cublas_fallback(bool enabled) { cublas_fallback_ = enabled; }
  // Whether the database opened; why not otherwise.
  bool has_database() const { return db_ != nullptr; }
  const std::string& database_problem() const { return db_problem_; }

 private:
  // Everything a problem's choice depends on, as plain integers: hashing it allocates nothing.
  struct CallKey {
    int device, m, n, k;
    uint8_t op_a, op_b, align_a, align_b, align_c, beta_zero;
    bool operator==(const CallKey&) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey& key) const;
  };
  struct Resolved {
    Selection path = Selection::cublas;
    const GemmKernel* kernel = nullptr;  // owned by the DeviceState; null for cuBLAS
    LaunchPlan plan;
  };
  struct DeviceState;

  // Validates and turns the call into its key and Problem; m/n == 0 leaves `empty` set.
  static Problem to_problem(const GemmCall& call, bool* empty);
  CallKey make_key(int device, const Problem& problem) const;
  Resolved lookup(int device, const Problem& problem);
  Resolved resolve(const CallKey& key, const Problem& problem);
  DeviceState& device_state(int device);
  const GemmKernel* load_kernel(DeviceState& state, const KernelChoice& choice,
                                const Problem& problem);
  void run_cublas(DeviceState& state, const GemmCall& call, cudaStream_t stream);
  static int current_device();

  DispatcherOptions options_;
  std::string db_path_;
  std::unique_ptr<TuningDb> db_;  // read-only; null when unavailable
  std::string db_problem_;
  std::atomic<bool> cublas_fallback_;
  std::shared_mutex cache_mutex_;  // readers: cached hits; writer: resolving a new key
  std::unordered_map<CallKey, Resolved, CallKeyHash> cache_;
  std::mutex devices_mutex_;
  std::map<int, std::unique_ptr<DeviceState>> devices_;
};

}  // namespace tgemm
