// Dispatcher: libtgemm's engine. Picks the kernel for a problem (KernelSelector), gets its
// cubin from the database (NVRTC only when the database has none), loads it once per
// device, caches the choice per problem and launches the plan its template makes; cuBLAS is
// the last resort (for an epilogue: cuBLASLt with the epilogue, else cuBLAS then our epilogue
// pass, src/templates/epilogue_pass.h). A problem whose tuned best is a vendor call (cuBLAS, or
// cuBLASLt with its stored algorithm) is served by that call. Every element and compute type goes
// the same way; the cached path does no allocation, no SQL and no NVRTC. A call on a stream being
// captured into a CUDA graph does nothing a capture forbids: what it would need first (a kernel to
// compile or load, a workspace to allocate, a cuBLAS handle) is NotPreparedError, done ahead by
// prepare().
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

#include "src/core/device_info.h"
#include "src/core/gemm_call.h"
#include "src/core/grouped_call.h"
#include "src/core/tuning_records.h"
#include "src/dispatch/call_problem.h"
#include "src/dispatch/device_workspace.h"
#include "src/dispatch/dispatch_errors.h"
#include "src/dispatch/kernel_selector.h"
#include "src/launch/gemm_kernel.h"
#include "src/launch/launch_plan.h"
#include "tgemm/tgemm.h"

namespace tgemm {

struct VendorCall;

// Opt-in modes in the spirit of cublasSetMathMode.
enum class MathMode {
  standard,       // each call gets exactly the compute type it asks for
  f32_via_3xtf32  // f32 calls may use FP32-accurate 3xTF32 kernels where they were faster
};

// What gemm launches for a call: the path, and the kernel with the types it computes (an f32
// call under MathMode::f32_via_3xtf32 may be served by an f32x3 kernel); no kernel for cuBLAS.
struct ServedBy {
  Selection path = Selection::cublas;
  std::optional<KernelConfig> kernel;
  GemmTypes types;
};

struct DispatcherOptions {
  std::string db_path;                                 // empty: $TGEMM_DB, else "tgemm.db"
  std::optional<std::vector<DefaultKernel>> defaults;  // tests replace the shipped table
  bool cublas_fallback = true;
  // Store the cubins NVRTC compiles on a miss in the database file (when it is writable), so
  // the next process loads them; off unless set here or by $TGEMM_DB_WRITE_BACK=1.
  bool write_back_cubins = false;
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
  // Plans that need a workspace share one per device, grown on demand, and some kernels keep
  // per-call counters in their loaded module (LaunchPlan::module_state): such calls are put in
  // one order across streams (SharedLaunchOrder), so callers may use any streams.
  // On a stream being captured, a call of a problem not prepared (or needing more workspace
  // than is held) throws NotPreparedError, a lent workspace too small WorkspaceTooSmallError.
  void gemm(const GemmCall& call, cudaStream_t stream);
  // A grouped call (cuBLAS's grouped batched GEMM): the kernel chosen for its Problem::grouped
  // bucket computes every problem's tiles, one launch per run of GroupedLaunches (one in all
  // for calls of up to kMaxLaunchGroups groups sharing lda and ldb); else cuBLAS's grouped
  // call, which also serves groups of different layouts. Throws as gemm does (the checks:
  // grouped_problem). Grouped kernels need no workspace: a call on a capturing stream whose
  // bucket is cached (one eager call) only launches.
  void gemm_grouped(const GroupedGemmCall& call, cudaStream_t stream);
  // Does for each request, on the current device and under the current math mode, what the
  // first call of its problem would do besides launching (for beta zero and not): chooses the
  // kernel, compiles or loads it, plans its launches, reserves the workspace it needs (or
  // checks the lent one: WorkspaceTooSmallError) and creates a cuBLAS handle where cuBLAS
  // serves. Afterwards such a call on a capturing stream only launches. Every request is
  // checked before anything is done (InvalidValueError naming the request).
  void prepare(const std::vector<PrepareRequest>& requests);
  // Lends `bytes` of device memory at `ptr` (of the current device, 256-byte aligned) as the
  // current device's workspace, as cublasSetWorkspace: the dispatcher then never allocates
  // one, frees its own, and a plan needing more fails with WorkspaceTooSmallError. A null
  // `ptr` (with 0 bytes) returns to the dispatcher's own, allocated when needed.
  void set_workspace(void* ptr, size_t bytes);
  // Bytes of the device workspace held for the current device (0 before a plan needed one).
  size_t workspace_bytes();
  // The most workspace any problem prepared or called on the current device needed: a buffer
  // of this size serves them all.
  size_t needed_workspace_bytes();
  // The path gemm takes for this call (resolved and cached like gemm does).
  Selection selection(const GemmCall& call);
  // The path and kernel gemm launches for this call, under the current math mode.
  ServedBy served_by(const GemmCall& call);
  // The path and kernel gemm_grouped launches for this call (cuBLAS for groups of different
  // layouts).
  ServedBy served_by(const GroupedGemmCall& call);
  void set_cublas_fallback(bool enabled) { cublas_fallback_ = enabled; }
  // Where workspaces come from (cudaMalloc unless a test injects failures); drops the ones held.
  void set_workspace_allocator(WorkspaceAllocator allocator);
  // f32_via_3xtf32: plain f32 calls use the tuned f32x3 kernel of their shape where it was
  // measured faster than the tuned f32 one (KernelSelector::faster_3xtf32); the choice is
  // cached per call shape and mode, so switching modes costs no lookup after the first call.
  void set_math_mode(MathMode mode) { math_mode_ = mode; }
  MathMode math_mode() const { return math_mode_; }
  // Whether the database opened; why not otherwise.
  bool has_database() const { return db_ != nullptr; }
  const std::string& database_problem() const { return db_problem_; }

 private:
  // Everything a problem's choice depends on, as plain integers: hashing it allocates nothing.
  struct CallKey {
    int device, m, n, k;
    int lda, ldb, ldc;  // a plan's tensor maps hold the leading dimensions
    uint8_t op_a, op_b, align_a, align_b, align_c, beta_zero;
    int batch;  // the alignments hold what the strides change of the choice
    uint8_t batch_form;
    uint8_t type_a, type_b, type_c, compute;
    uint8_t via_3xtf32;              // 1: an f32 call under MathMode::f32_via_3xtf32
    uint8_t activation, bias_along;  // the epilogue (Problem::epilogue)
    uint8_t epilogue_flags;          // bias_f32 | aux << 1 | separate_d << 2
    bool operator==(const CallKey&) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey& key) const;
  };
  struct Resolved {
    Selection path = Selection::cublas;
    const GemmKernel* kernel = nullptr;  // owned by the DeviceState; null for cuBLAS
    LaunchPlan plan;
    GemmTypes types;  // what the kernel computes (f32x3 for an f32 call it serves)
    // A tuned vendor best (path exact, no kernel): the library call that won the problem's
    // race; owned by the DeviceState.
    const VendorCall* vendor = nullptr;
  };
  struct DeviceState;

  CallKey make_key(int device, const Problem& problem) const;
  // The cached choice, else resolved and cached; a call's stream (`capture_check`) being
  // captured refuses to resolve (NotPreparedError).
  Resolved lookup(int device, const Problem& problem,
                  std::optional<cudaStream_t> capture_check = std::nullopt);
  // Prepares one resolved problem (see prepare()).
  void make_ready(DeviceState& state, const Resolved& r, const Problem& problem, int64_t ldd,
                  int64_t ldaux);
  Resolved resolve(const CallKey& key, const Problem& problem);
  // The chosen kernel loaded with its plan; an empty Resolved when it cannot be loaded.
  Resolved load_choice(DeviceState& state, const KernelChoice& choice, const Problem& problem);
  DeviceState& device_state(int device);
  void read_tuning(const DeviceInfo& info, std::vector<BestEntry>* tuned,
                   std::vector<TrialRecord>* measured, std::vector<DeviceCeiling>* ceilings) const;
  void skip_stale(const DeviceInfo& info, std::vector<BestEntry>* tuned,
                  std::vector<TrialRecord>* measured) const;
  const GemmKernel* load_kernel(DeviceState& state, const KernelChoice& choice,
                                const Problem& problem);
  // cuBLAS's grouped call on `device`; NotSupportedError with the fallback off.
  void cublas_grouped(int device, const GroupedGemmCall& call, cudaStream_t stream);
  static int current_device();

  DispatcherOptions options_;
  std::string db_path_;
  std::unique_ptr<TuningRecords> db_;  // read-only; null when unavailable
  std::string db_problem_;
  std::atomic<bool> cublas_fallback_;
  std::atomic<MathMode> math_mode_{MathMode::standard};
  std::shared_mutex cache_mutex_;  // readers: cached hits; writer: resolving a new key
  std::unordered_map<CallKey, Resolved, CallKeyHash> cache_;
  std::mutex devices_mutex_;
  std::map<int, std::unique_ptr<DeviceState>> devices_;
  WorkspaceAllocator workspace_allocator_;  // guarded by devices_mutex_
};

}  // namespace tgemm
